"""Inside tmux, Shift+Enter only reaches a program when tmux passes modified keys on
(``extended-keys``); otherwise it arrives as a plain Enter and sends the prompt. pi checks this
at start and says how to fix it; so do we, in our own words, with our own fallbacks named."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping

TMUX_TIMEOUT = 2.0


def tmux_option(name: str) -> str | None:
    """``tmux show -gv NAME`` for the tmux this process runs in; None when it cannot be asked."""
    try:
        done = subprocess.run(
            ["tmux", "show", "-gv", name],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TMUX_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def tmux_keys_hint(
    env: Mapping[str, str] | None = None, option: Callable[[str], str | None] = tmux_option
) -> str | None:
    """One line for the chat when tmux will swallow Shift+Enter, else None."""
    env = os.environ if env is None else env
    if not env.get("TMUX"):
        return None
    extended = option("extended-keys")
    if extended is None:
        return None  # tmux could not be asked (a sandbox, an old tmux): say nothing
    if extended not in ("on", "always"):
        return (
            "tmux has extended-keys off, so Shift+Enter arrives as Enter: use Alt+Enter or Ctrl+J for "
            "a new line, or add `set -g extended-keys on` to ~/.tmux.conf and restart tmux."
        )
    if option("extended-keys-format") == "xterm":
        return (
            "tmux sends modified keys in the xterm format; Shift+Enter works best with "
            "`set -g extended-keys-format csi-u` in ~/.tmux.conf (then restart tmux)."
        )
    return None
