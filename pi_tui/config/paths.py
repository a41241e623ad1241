"""Where pi-tui keeps things: the agent dir, session folders, settings files."""

from __future__ import annotations

import os
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
CACHE_DIR_ENV = "PI_TUI_CACHE_DIR"


def agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR``, else ``~/.agent``."""
    configured = os.environ.get(AGENT_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".agent"


def cache_dir() -> Path:
    """``$PI_TUI_CACHE_DIR``, else the user cache folder (``~/.cache/pi-tui`` on Linux).

    Only things that can be rebuilt live here (the session index); tests and benchmarks point
    the variable at a temp folder.
    """
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("pi-tui")


def sessions_root() -> Path:
    return agent_dir() / "sessions"


def encode_cwd(cwd: str) -> str:
    """Folder name of a working directory: ``/home/ann/app`` -> ``--home-ann-app--``.

    One leading ``/`` or ``\\`` is dropped and every ``/``, ``\\`` and ``:`` becomes ``-``.
    """
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    for separator in ("/", "\\", ":"):
        trimmed = trimmed.replace(separator, "-")
    return f"--{trimmed}--"


def session_dir_for_cwd(cwd: str, sessions_dir: str | Path | None = None) -> Path:
    """The folder holding the sessions of ``cwd``.

    With ``--session-dir`` the sessions live directly in that folder (as in pi); otherwise in
    ``<agent dir>/sessions/--<cwd>--/``.
    """
    if sessions_dir is not None:
        return Path(sessions_dir).expanduser()
    return sessions_root() / encode_cwd(os.path.abspath(cwd))


def global_settings_path() -> Path:
    return agent_dir() / "settings.json"


def project_settings_path(cwd: str) -> Path:
    return Path(cwd) / ".agent" / "settings.json"
