"""npm packages the tests need (reference MCP servers, the ACP TypeScript SDK), installed once.

Each set goes into a folder of the test cache (``<user cache>/pi-tui-tests/<name>``) under a file
lock, so parallel xdist workers install it once, and is reused offline afterwards: ``.installed``
names what was installed, and a half-written install (a package without its ``package.json``) is
done again. Without npm the tests that need it skip on a developer's machine and fail under CI
(:func:`tests.support.requires.unavailable`).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from tests.support.requires import unavailable


def npm_install_once(root: Path, packages: Sequence[str], names: Sequence[str], what: str) -> Path:
    """``npm install packages`` into ``root`` unless done; returns ``root/node_modules``.

    ``names`` are the package folders that must exist afterwards; ``what`` names the set in the
    messages ("acp", "mcp")."""
    modules = root / "node_modules"
    marker = root / ".installed"
    wanted = " ".join(packages)

    def installed() -> bool:
        return (
            marker.is_file()
            and marker.read_text() == wanted
            and all((modules / name / "package.json").is_file() for name in names)
        )

    if installed():
        return modules
    if shutil.which("npm") is None:
        unavailable(f"{what}: node and npm are needed to install {wanted}")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:  # parallel test processes install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return modules
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", *packages],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0:
            unavailable(f"{what}: npm install of {wanted} failed: {done.stderr[-2000:]}")
        marker.write_text(wanted)
    if not installed():
        unavailable(f"{what}: npm installed {wanted} without their package.json files")
    return modules
