"""What pi 1.x does when pi-tui is not talking to a terminal.

``git diff | pi-tui "review this"`` and ``pi-tui "..." > answer.md`` are one-shot uses: with
either standard stream redirected (and no ``--mode json|rpc``) the run is print mode, and text
piped in goes before the first message (pi's rule). Only a pipe or a file is read from: a
terminal is the user, and a device such as ``/dev/null`` has nothing to say, so neither is
waited on.
"""

from __future__ import annotations

import os
import stat
import sys

from pi_tui.text_safety import decode_text

READ_CHUNK = 1 << 16


def streams_are_terminals() -> bool:
    """Both stdin and stdout are a terminal: the interactive mode can run."""
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # closed or replaced streams
        return False


def piped_stdin() -> str | None:
    """The text piped into pi-tui (trimmed), or None when stdin is no pipe or file, or empty.

    Read from file descriptor 0 itself (``sys.stdin`` may be a stand-in), to its end; bytes that
    are not UTF-8 become U+FFFD as in every other text pi-tui reads.
    """
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    chunks: list[bytes] = []
    while chunk := os.read(0, READ_CHUNK):
        chunks.append(chunk)
    text = decode_text(b"".join(chunks)).strip()
    return text or None


def with_piped_text(piped: str, first: str | None) -> str:
    """The first prompt with the piped text before it (a blank line between, so the model sees
    where the piped text ends and the request starts)."""
    return piped if not first else f"{piped}\n\n{first}"
