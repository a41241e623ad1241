"""Opening the sign-in page in a browser, only where one can show it.

Over SSH, or on Linux without a display, ``webbrowser`` would start a console browser inside the
terminal pi-tui draws on (or fail after a delay): there the URL is only shown, for the user to
open on their own machine, and the pasted redirect URL or a device code finishes the sign-in.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading


def headless_reason() -> str | None:
    """Why no browser can be opened here (``"an SSH session"``, ``"no display"``), or None."""
    if any(os.environ.get(name) for name in ("SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY")):
        return "an SSH session"
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return "no display"
    return None


def open_browser(url: str) -> bool:
    """Ask the system browser for ``url`` on a thread of its own (a slow browser never holds the
    sign-in up; a failure only means the user opens the URL shown). False when headless."""
    if headless_reason() is not None or not url.startswith(("https://", "http://")):
        return False

    def run() -> None:
        import webbrowser

        with contextlib.suppress(Exception):
            webbrowser.open(url)

    threading.Thread(target=run, name="pi-tui-browser", daemon=True).start()
    return True
