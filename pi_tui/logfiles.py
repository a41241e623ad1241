"""pi-tui's log files: the user's alone (0600 in a 0700 folder), with no credential in them.

A traceback can quote a request, an exception message or a models.json header, so every text
is passed through :func:`pi_tui.redact.redact_secrets` before it is written.
"""

from __future__ import annotations

import os
from pathlib import Path

LOG_DIR_ENV = "PI_TUI_LOG_DIR"


def log_dir() -> Path:
    """``$PI_TUI_LOG_DIR``, else the user log folder (``~/.local/state/pi-tui/log`` on Linux)."""
    configured = os.environ.get(LOG_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_log_dir("pi-tui"))


def append_log(name: str, text: str) -> str:
    """Append ``text`` (redacted) to the log ``name``; returns its path, or "no log written"."""
    from pi_tui.redact import redact_secrets

    folder = log_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / name
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(path, flags, 0o600)
        os.fchmod(descriptor, 0o600)  # a log made by an older version may be readable by others
        with os.fdopen(descriptor, "a", encoding="utf-8") as log:
            log.write(redact_secrets(text).rstrip("\n") + "\n")
        return str(path)
    except OSError:
        return "no log written"
