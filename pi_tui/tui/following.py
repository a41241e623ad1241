"""Following another agent's transcript in the app: a timer (and a file watch, where there is
one) looks at the file and the chat shows what it gained, until the user continues here or
another session opens. What "catching up" means is :mod:`pi_tui.tui.follow`'s; this module only
schedules it and keeps the footer's "following" status.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_tui.tui.follow import POLL_SECONDS, FileWatch, Follow, catch_up

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from pi_tui.tui.host import CommandHost


class TranscriptFollowing:
    """The app's one followed transcript (or none)."""

    def __init__(self, app: App[Any], host: CommandHost, show_status: Callable[[str | None], None]) -> None:
        self.app = app
        """For the timer and the workers."""
        self.host = host
        """The same app as commands see it (what :func:`catch_up` draws on)."""
        self.show_status = show_status
        """Puts the footer's "following ..." status (None clears it)."""
        self.current: Follow | None = None
        self._timer: Timer | None = None
        self._watch: FileWatch | None = None

    def start(self, follow: Follow) -> None:
        """Look at ``follow.source`` once a second and show what it gains (read-only until the
        user continues the conversation here)."""
        self.stop()
        self.current = follow
        self._timer = self.app.set_interval(POLL_SECONDS, self._check)
        self._watch = FileWatch.start(follow.source, self._wake)
        self.show_status(f"following {follow.name} (live)")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._watch is not None:
            self._watch.close()
        self._timer = self._watch = None
        if self.current is not None:
            self.current = None
            self.show_status(None)

    def _wake(self) -> None:
        """The file changed (the watch calls this on the loop): catch up now, not at the next tick."""
        self.app.run_worker(self._check())

    async def _check(self) -> None:
        if self.current is not None:
            await catch_up(self.host, self.current)
