"""The status line between the chat and the editor: what the agent is doing right now.

A spinner with "Working... (esc to interrupt)" while a run goes (with the time the model's reply
has taken so far, and "no data for 14 s - Esc to stop" when the server has gone silent, so a stall
does not look like a slow model), a countdown in whole seconds while a request waits to be
retried, "Compacting..." during a summary, a hint after one Ctrl+C, and the queued
steering/follow-up messages. Empty (one blank line) when idle.
"""

from __future__ import annotations

import math
import time

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from pi_tui.text_safety import for_terminal

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class StatusLine(Static):
    activity: reactive[str | None] = reactive(None)
    """What the agent is doing ("Working...", "Compacting..."), None when idle."""
    hint: reactive[str | None] = reactive(None)
    retry_until: reactive[float | None] = reactive(None)
    retry_text: reactive[str] = reactive("")
    reply_started: reactive[float | None] = reactive(None)
    """When the model's running reply was requested (``time.monotonic``), None between replies."""
    stalled: reactive[int] = reactive(0)
    """Whole seconds the server has sent nothing (0: data flows)."""
    steering: reactive[tuple[str, ...]] = reactive(())
    dequeue_key = ""
    """The key that brings queued messages back (pi's hint under them); set by the app."""
    follow_ups: reactive[tuple[str, ...]] = reactive(())

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._frame = 0
        self._timer: Timer | None = None
        self._hint_timer: Timer | None = None
        """Clears the hint shown last; a newer hint stops it, so an old timer never cuts a new hint short."""
        self._rows = -1
        """Rows the last drawing took when none of its lines could wrap (-1: unknown)."""

    def on_mount(self) -> None:
        self._timer = self.set_interval(0.1, self._tick, pause=True)
        self._draw()

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        self._draw()

    def watch_activity(self, activity: str | None) -> None:
        if self._timer is not None:
            if activity is None and self.retry_until is None:
                self._timer.pause()
            else:
                self._timer.resume()
        self._draw()

    def watch_retry_until(self) -> None:
        self.watch_activity(self.activity)

    def watch_stalled(self) -> None:
        self._draw()

    def watch_hint(self) -> None:
        self._draw()

    def show_hint(self, text: str | None, seconds: float | None = None) -> None:
        """Show ``text`` (None: nothing) for ``seconds`` (None: until replaced)."""
        if self._hint_timer is not None:
            self._hint_timer.stop()
            self._hint_timer = None
        self.hint = text
        if text is not None and seconds is not None:
            self._hint_timer = self.set_timer(seconds, self._clear_hint)

    def _clear_hint(self) -> None:
        self._hint_timer = None
        self.hint = None

    def watch_steering(self) -> None:
        self._draw()

    def watch_follow_ups(self) -> None:
        self._draw()

    def _draw(self) -> None:
        lines: list[Content] = []
        now = time.monotonic()
        if self.retry_until is not None and self.retry_until > now:
            # Rounded up: "in 0 s" would be shown while the wait still runs. Once the wait is
            # over the next attempt is running, and the line says so (below).
            left = max(1, math.ceil(self.retry_until - now - 0.05))
            why = for_terminal(self.retry_text)  # a provider's words
            lines.append(
                Content.styled(
                    f"{SPINNER[self._frame]} Retrying in {left} s - Esc to cancel · {why}",
                    "$pi-warning",
                )
            )
        elif self.activity:
            elapsed = f"{elapsed_text(now - self.reply_started)} " if self.reply_started is not None else ""
            if self.stalled:
                tail = Content.styled(f"· no data for {self.stalled} s - Esc to stop", "$pi-warning")
            else:
                tail = Content.styled("(esc to interrupt)", "$pi-dim")
            lines.append(
                Content.assemble(
                    Content.styled(f"{SPINNER[self._frame]} ", "$pi-accent"),
                    Content.styled(f"{self.activity} {elapsed}", "$pi-muted"),
                    tail,
                )
            )
        for text in self.steering:
            lines.append(Content.styled(f"↳ steering: {for_terminal(_first_line(text))}", "$pi-muted"))
        for text in self.follow_ups:
            lines.append(Content.styled(f"↳ follow-up: {for_terminal(_first_line(text))}", "$pi-muted"))
        if (self.steering or self.follow_ups) and self.dequeue_key:
            lines.append(Content.styled(f"↳ {self.dequeue_key} to edit all queued messages", "$pi-dim"))
        if self.hint:
            lines.append(Content.styled(self.hint, "$pi-warning"))
        self.display = bool(lines)
        # A spinner frame or a new second keeps the line's height: redrawn without a layout of
        # the screen (Static's default), which at 10 frames a second re-arranged the whole chat.
        width = self.content_size.width
        fits = bool(width) and all(line.cell_length <= width for line in lines)
        self.update(Content("\n").join(lines), layout=not (fits and len(lines) == self._rows))
        self._rows = len(lines) if fits else -1


def elapsed_text(seconds: float) -> str:
    """``7s``, ``1m 05s``: whole seconds, minutes once there are some."""
    whole = max(0, int(seconds))
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


def _first_line(text: str, limit: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
