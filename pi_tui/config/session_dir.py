"""Which folder holds the sessions when the user chose one, as pi 1.x decides it.

pi takes, in this order: ``--session-dir``, then ``$PI_CODING_AGENT_SESSION_DIR`` (``~``
expanded), then the ``sessionDir`` setting (``~`` expanded; a relative path is relative to the
working folder). A chosen folder holds session files directly (no ``--<cwd>--`` folders), so it
may hold the sessions of several projects: listing, ``-c`` and ``--session PREFIX`` then see only
the sessions started in this project (:func:`pi_tui.session.listing.list_sessions`).

This is read before the agent starts (the interactive mode's first frame shows the session it
continues), so the setting is taken from the raw files, not from the validated settings.

The project's ``sessionDir`` is read here before project trust is decided, as pi reads it: the
session has to be found first. It is the one key of an untrusted project's settings that
counts (it only chooses where session files go); everything else in that file waits for trust
(:mod:`pi_tui.config.project_trust`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
SETTING = "sessionDir"


def chosen_session_dir(cwd: str, flag: str | None) -> str | None:
    """The folder the user chose for sessions, or None for the per-project folders."""
    if flag:
        return flag
    from_env = os.environ.get(SESSION_DIR_ENV)
    if from_env:
        return os.path.expanduser(from_env)
    setting = session_dir_setting(cwd)
    if setting:
        return os.path.join(cwd, os.path.expanduser(setting))  # an absolute setting stays as is
    return None


def session_dir_setting(cwd: str) -> str | None:
    """``sessionDir`` from the settings files (project over ours over pi's); a file that cannot
    be read is passed over here (starting reports it with its line)."""
    from pi_tui.config.paths import global_settings_path, project_settings_path
    from pi_tui.config.pi_folder import pi_file

    value: Any = None
    for path in (pi_file("settings.json"), global_settings_path(), project_settings_path(cwd)):
        found = _setting_in(path) if path is not None else None
        if found is not None:
            value = found
    return value if isinstance(value, str) and value.strip() else None


def _setting_in(path: Path) -> Any:
    from pi_tui.jsonio import parse_object_file

    try:
        text = path.read_text(encoding="utf-8")
        data = parse_object_file(text, path, "settings must be a JSON object")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data.get(SETTING) if isinstance(data, dict) else None
