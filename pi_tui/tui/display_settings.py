"""pi 1.x's display settings that act on the running screen: ``outputPad``,
``fullscreenScrollbar`` and ``terminal.showTerminalProgress`` (and, for ``tuiMode`` "regular",
the inline app's chat, sized to its live content, with :mod:`pi_tui.tui.scrollback` started).

The app calls :func:`apply_display_settings` at start and after every /settings or /reload
change, so a change shows at once. The rules live in app.tcss; each setting only switches a
class on the chat, which restyles every block already drawn and every block to come.

Terminal progress is pi's OSC 9;4: "busy" (indeterminate) when a turn or a compaction starts,
cleared when the run or the compaction ends. The setting is read at each event, so switching it
off in /settings takes effect at the next event (and clears what is shown). The sequence is
written through Textual's own driver, as one whole write between its frames; nothing but these
two fixed sequences is ever written this way.
"""

from __future__ import annotations

import weakref
from typing import Any

PROGRESS_BUSY = "\x1b]9;4;3\x07"
"""OSC 9;4, state 3: an indeterminate progress indicator in the terminal's tab or title."""
PROGRESS_CLEAR = "\x1b]9;4;0\x07"
"""OSC 9;4, state 0: no progress shown."""

_STARTS = frozenset({"turn_start", "compaction_start"})
_ENDS = frozenset({"agent_end", "compaction_end"})
_watched: weakref.WeakSet[Any] = weakref.WeakSet()


def apply_display_settings(app: Any, settings: Any) -> None:
    """Put ``outputPad``, ``fullscreenScrollbar`` and terminal progress into effect (a class
    switch restyles only when it changes something: nothing to re-parse at start)."""
    chat = app.chat
    chat.set_class(settings.output_pad == 0, "-output-pad-0")
    chat.set_class(settings.fullscreen_scrollbar == "hidden", "-scrollbar-hidden")
    chat.set_class(settings.fullscreen_scrollbar == "always", "-scrollbar-always")
    if getattr(app, "is_inline", False):
        inline_chat(app)
    agent = getattr(app, "agent", None)
    if agent is not None and agent not in _watched:
        agent.subscribe(TerminalProgress(app, agent).handle)
        _watched.add(agent)


REGULAR_CHAT_MAX_HEIGHT = "60vh"
"""Regular mode: the most of the terminal the live part of the chat may take (a long streaming
reply scrolls inside it); the editor, status and footer stay on screen under it."""


def inline_chat(app: Any) -> None:
    """``tuiMode`` "regular": the chat holds only what is live, as tall as it is (the inline
    block follows its content), and finished items go into the terminal's scrollback."""
    from pi_tui.tui.scrollback import start_scrollback

    chat = app.chat
    chat.styles.height = "auto"
    chat.styles.max_height = REGULAR_CHAT_MAX_HEIGHT
    app.call_later(start_scrollback, app)  # after the session is shown (the caller goes on to it)


class TerminalProgress:
    """OSC 9;4 progress while the agent works, when ``terminal.showTerminalProgress`` is on."""

    def __init__(self, app: Any, agent: Any) -> None:
        self._app = weakref.ref(app)
        self._agent = weakref.ref(agent)
        self.shown = False

    def handle(self, event: Any) -> None:
        """Agent events: a start shows progress, an end clears it."""
        kind = getattr(event, "type", None)
        if kind not in _STARTS and kind not in _ENDS:
            return
        agent = self._agent()
        enabled = agent is not None and agent.settings.terminal.show_terminal_progress
        if kind in _STARTS and enabled:
            self._write(PROGRESS_BUSY)
            self.shown = True
        elif self.shown and (kind in _ENDS or not enabled):
            self._write(PROGRESS_CLEAR)
            self.shown = False

    def _write(self, sequence: str) -> None:
        app = self._app()
        driver = getattr(app, "_driver", None) if app is not None else None
        if driver is None or getattr(app, "is_headless", False):
            return
        driver.write(sequence)
        driver.flush()
