"""The real pi, installed with npm into the user cache, for the pi-interop tests.

pi-tui promises that pi opens every session file pi-tui writes (and the other way round). The
only honest check is to run pi itself on our files, and pi users run two lines of it:

- ``"0.73.1"`` (the default): ``@mariozechner/pi-coding-agent@0.73.1``, needs node >= 20.6;
- ``"1.5.2"``: ``@earendil-works/pi-coding-agent@1.5.2``, needs node >= 22.19.

Every function takes the version as ``version`` (``run_pi`` as ``pi=``) and defaults to 0.73.1,
so a caller written before 1.5.2 existed keeps meaning 0.73.1::

    pi_cli()                      # ["node", ".../pi-0.73.1/.../dist/cli.js"]
    pi_cli("1.5.2")               # [".../node-22/.../node", ".../pi-1.5.2/.../dist/bundle/cli.js"]
    run_pi([...], agent_dir=..., cwd=..., pi="1.5.2")
    pi_env(agent_dir, home=..., version="1.5.2")   # the environment run_pi uses, for Popen

:func:`pi_package_dir` installs a version once into ``<user cache>/pi-tui-tests/pi-<version>``
(npm must be on PATH; ``.ci/run`` installs node and npm when they are missing), under a file
lock so parallel test processes install it once. :func:`node_for` is the node that runs it: the
one on PATH when it is new enough, else npm installs the registry's ``node`` package (the
official binary) of the needed major into ``<user cache>/pi-tui-tests/node-<major>`` and that
one runs pi (``.ci/run`` does the same before the tests, so CI finds it there).

Without node, the tests marked ``pi_interop`` skip on a developer's machine and fail under CI
(``CI`` set), because a test that skips in CI is a test that does not exist.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from tests.support.requires import unavailable


@dataclass(frozen=True)
class PiRelease:
    version: str
    package: str
    min_node: tuple[int, int]
    """The oldest node it runs on (its package.json ``engines``)."""


RELEASES: dict[str, PiRelease] = {
    "0.73.1": PiRelease("0.73.1", "@mariozechner/pi-coding-agent", (20, 6)),
    "1.5.2": PiRelease("1.5.2", "@earendil-works/pi-coding-agent", (22, 19)),
}
PI_VERSIONS = tuple(RELEASES)
"""Every pi the interop tests run, oldest first."""
DEFAULT_VERSION = "0.73.1"
PI_VERSION = DEFAULT_VERSION
PI_PACKAGE = RELEASES[DEFAULT_VERSION].package
QUIET_ENV = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "NO_COLOR": "1"}
"""What every pi run gets: no network of its own (catalogs, version check, telemetry)."""


def release(version: str = DEFAULT_VERSION) -> PiRelease:
    try:
        return RELEASES[version]
    except KeyError:
        raise ValueError(f"no pi {version!r} in the interop tests; known: {', '.join(RELEASES)}") from None


def tests_cache() -> Path:
    """``<user cache>/pi-tui-tests`` (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, as .ci/run)."""
    return Path(platformdirs.user_cache_dir("pi-tui-tests"))


def cache_root(version: str = DEFAULT_VERSION) -> Path:
    """The npm prefix one pi version is installed in."""
    return tests_cache() / f"pi-{release(version).version}"


def _unavailable(reason: str) -> None:
    unavailable(f"pi-interop: {reason}")


def _npm_install(root: Path, spec: str, ready: Path) -> None:
    """``npm install spec`` into ``root`` once, whatever the number of test processes asking:
    under a file lock, and done only once ``.installed`` names ``spec`` (a half-written
    node_modules of an interrupted install is installed again)."""
    marker = root / ".installed"

    def installed() -> bool:
        return ready.exists() and marker.is_file() and marker.read_text() == spec

    if installed():
        return
    if shutil.which("npm") is None:
        _unavailable("node and npm are needed to install the real pi")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:  # parallel test processes install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", spec],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0 or not ready.exists():
            _unavailable(f"npm install of {spec} failed: {done.stderr[-2000:]}")
        marker.write_text(spec)


def _node_version(node: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    major, _, rest = done.stdout.strip().lstrip("v").partition(".")
    minor = rest.partition(".")[0]
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


@functools.cache
def node_for(version: str = DEFAULT_VERSION) -> str:
    """The node binary that runs pi ``version``: the one on PATH when it is new enough, else
    the registry's ``node@<major>`` installed into the test cache (once)."""
    needed = release(version).min_node
    system = shutil.which("node")
    found = _node_version(system) if system else None
    if system and found is not None and found >= needed:
        return system
    major = needed[0]
    root = tests_cache() / f"node-{major}"
    binary = root / "node_modules" / ".bin" / "node"
    _npm_install(root, f"node@{major}", binary)
    found = _node_version(str(binary))
    if found is None or found < needed:
        _unavailable(f"pi {version} needs node >= {needed[0]}.{needed[1]}; {binary} is {found}")
    return str(binary)


def pi_package_dir(version: str = DEFAULT_VERSION) -> Path:
    """The installed package folder (``.../node_modules/<package>``)."""
    pi = release(version)
    package = cache_root(version) / "node_modules" / pi.package
    _npm_install(cache_root(version), f"{pi.package}@{pi.version}", package / "package.json")
    return package


def pi_cli_script(version: str = DEFAULT_VERSION) -> Path:
    """The script of pi's ``pi`` command (package.json ``bin``: 1.x runs a bundle)."""
    package = pi_package_dir(version)
    bin_ = json.loads((package / "package.json").read_text())["bin"]
    script = package / (bin_["pi"] if isinstance(bin_, dict) else bin_)
    if not script.is_file():
        _unavailable(f"pi {version} is installed without its CLI ({script})")
    return script


def pi_cli(version: str = DEFAULT_VERSION) -> list[str]:
    """argv prefix that runs pi's CLI: ``[node, script]``."""
    script = pi_cli_script(version)
    return [node_for(version), str(script)]


def pi_env(
    agent_dir: Path,
    *,
    home: Path | None = None,
    version: str = DEFAULT_VERSION,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a pi run: this process's without API keys, ``PI_CODING_AGENT_DIR``,
    :data:`QUIET_ENV`, ``HOME`` when given, and pi's node first on PATH (a child that runs
    ``node`` gets the same one), then ``env`` on top."""
    full = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and key != "PI_CODING_AGENT_DIR"
    }
    full.update(QUIET_ENV)
    full["PI_CODING_AGENT_DIR"] = str(agent_dir)
    if home is not None:
        full["HOME"] = str(home)
    node_dir = str(Path(node_for(version)).parent)
    full["PATH"] = os.pathsep.join([node_dir, full.get("PATH", os.defpath)])
    if env:
        full.update(env)
    return full


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
    pi: str = DEFAULT_VERSION,
) -> subprocess.CompletedProcess[str]:
    """Run the real pi ``pi`` (a version of :data:`RELEASES`) with ``PI_CODING_AGENT_DIR=agent_dir``
    and no terminal."""
    return subprocess.run(
        [*pi_cli(pi), *args],
        cwd=cwd,
        env=pi_env(agent_dir, version=pi, env=env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
