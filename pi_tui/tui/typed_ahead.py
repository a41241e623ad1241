"""Messages typed before the app was ready are sent, not dropped.

A pi user types ``pi-tui``, Enter, and the first message at once. Two things used to lose it:
the terminal-colour query (:mod:`pi_tui.view.terminal_colours`) read those keys with its answers
and threw them away, and an Enter pressed while the agent was still starting only put the text
back with "send again in a moment". Now the query hands the keys over (:func:`split_typed` turns
them into finished lines and the unfinished rest for the editor), and lines submitted before the
agent exists wait in the app and go out, in order, once it is ready (:func:`send_when_idle`).
"""

from __future__ import annotations

import asyncio
import re
from typing import Protocol

from pi_tui.view.terminal_colours import take_typed_ahead

_SEQUENCE_RE = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|O.|\][^\x07\x1b]*(?:\x07|\x1b\\)|.)?", re.DOTALL)
"""Escape sequences (arrows, function keys, stray replies) and a lone Escape: not text."""


class EarlySender(Protocol):
    """The app as seen here: whether a run is going, and what Enter does with a text."""

    @property
    def busy(self) -> bool:
        """A run (or a cancellable command) is going."""

    def submit_prompt(self, text: str) -> None:
        """Send ``text`` as Enter would: a prompt, a /command or a !command."""


def split_typed(data: bytes) -> tuple[list[str], str]:
    """Keys typed ahead as (lines ended with Enter, the unfinished rest).

    Enter is CR (raw mode) or LF (the terminal was still in line mode, which turns CR into LF);
    Backspace (DEL or BS) removes the character before it; escape sequences and other control
    characters are dropped, since the editor they were meant for did not exist yet.
    """
    text = _SEQUENCE_RE.sub("", data.decode("utf-8", errors="replace"))
    lines: list[str] = []
    current: list[str] = []
    for char in text:
        if char in "\r\n":
            if current:
                lines.append("".join(current))
            current = []
        elif char in "\x7f\b":
            if current:
                current.pop()
        elif char == "\t" or char >= " ":
            current.append(char)
    return lines, "".join(current)


def typed_ahead() -> tuple[list[str], str]:
    """The keys the terminal query read before the app took the terminal, as :func:`split_typed`."""
    return split_typed(take_typed_ahead())


async def send_when_idle(app: EarlySender, texts: list[str]) -> None:
    """Send each text once the app is not running anything, in the order they were typed."""
    while texts:
        while app.busy:
            await asyncio.sleep(0.05)
        app.submit_prompt(texts.pop(0))
        await asyncio.sleep(0)  # let the run start before the next one checks ``busy``
