"""The real pi 0.73.1, installed with npm into the user cache, for the pi-interop tests.

pi-tui promises that pi opens every session file pi-tui writes (and the other way round). The
only honest check is to run pi itself on our files. :func:`pi_package_dir` installs
``@mariozechner/pi-coding-agent@0.73.1`` once into ``<user cache>/pi-tui-tests/pi-0.73.1`` (npm
must be on PATH; ``.ci/run`` installs node and npm when they are missing) and returns the
package folder; :func:`run_pi` runs its CLI with a private agent dir.

Without node, the tests marked ``pi_interop`` skip on a developer's machine and fail under CI
(``CI`` set), because a test that skips in CI is a test that does not exist.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import platformdirs
import pytest

PI_VERSION = "0.73.1"
PI_PACKAGE = "@mariozechner/pi-coding-agent"


def cache_root() -> Path:
    return Path(platformdirs.user_cache_dir("pi-tui-tests")) / f"pi-{PI_VERSION}"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"pi-interop: {reason} (CI must provide it: see .ci/run)")
    pytest.skip(f"pi-interop: {reason}")


def pi_package_dir() -> Path:
    """The installed package folder (``.../node_modules/@mariozechner/pi-coding-agent``)."""
    root = cache_root()
    package = root / "node_modules" / "@mariozechner" / "pi-coding-agent"
    if (package / "dist" / "cli.js").is_file():
        return package
    if shutil.which("node") is None or shutil.which("npm") is None:
        _unavailable("node and npm are needed to install the real pi")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:  # parallel test processes install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (package / "dist" / "cli.js").is_file():
            done = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--silent", f"{PI_PACKAGE}@{PI_VERSION}"],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0 or not (package / "dist" / "cli.js").is_file():
                _unavailable(f"npm install of {PI_PACKAGE}@{PI_VERSION} failed: {done.stderr[-2000:]}")
    return package


def pi_cli() -> list[str]:
    """argv prefix that runs pi's CLI."""
    return ["node", str(pi_package_dir() / "dist" / "cli.js")]


def write_models_json(
    agent_dir: Path,
    base_url: str,
    api: str = "openai-completions",
    model: str = "m",
    *,
    provider: str = "loop",
    input: Sequence[str] = ("text", "image"),
    reasoning: bool = False,
) -> Path:
    """A models.json for pi with one provider (``loop`` unless told) on the loopback server."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    path = agent_dir / "models.json"
    path.write_text(
        json.dumps(
            {
                "providers": {
                    provider: {
                        "baseUrl": base_url,
                        "api": api,
                        "apiKey": "test-key",
                        "models": [
                            {
                                "id": model,
                                "name": model,
                                "reasoning": reasoning,
                                "input": list(input),
                                "contextWindow": 128000,
                                "maxTokens": 4096,
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            }
                        ],
                    }
                }
            }
        )
    )
    return path


def run_pi(
    args: Sequence[str],
    *,
    agent_dir: Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real pi with ``PI_CODING_AGENT_DIR=agent_dir`` and no terminal."""
    full_env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and key not in ("PI_CODING_AGENT_DIR",)
    }
    full_env.update({"PI_CODING_AGENT_DIR": str(agent_dir), "NO_COLOR": "1", "PI_OFFLINE": "1"})
    if env:
        full_env.update(env)
    return subprocess.run(
        [*pi_cli(), *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
