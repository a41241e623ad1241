"""Leaving on a signal (SIGTERM, SIGHUP, SIGINT in print mode) the same way in every mode.

The order matters and is the same everywhere: first every running shell command is killed with
all it started (synchronously, in the handler, so nothing can outlive us even if what follows
hangs); then the mode is asked to wind down in its usual way (abort the run, record it, close
the session file: flush, fsync, unlock; restore the terminal); the exit code is the
conventional ``128 + signal`` (143 for SIGTERM, 129 for SIGHUP, 130 for SIGINT).

If the orderly way does not finish within :data:`FORCE_AFTER` seconds (a hung terminal, a stuck
request), or a second signal comes, the last-resort cleanup runs and the process ends at once
with the same code. That deadline is kept by a thread, not the event loop: a write to a terminal
that went away can block the loop itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pi_tui.tools.bash import kill_running_commands

FORCE_AFTER = 3.0
"""Seconds the orderly exit may take after a signal before the process ends regardless."""

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end every mode (SIGINT is Ctrl+C: each mode decides what it means)."""


def exit_code_for(signum: int) -> int:
    """The shell's convention for "ended by a signal"."""
    return 128 + signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class ExitSignals:
    """Installs the handlers; ``received`` is the first signal that came.

    The handlers are plain ``signal.signal`` ones, not the event loop's: Python runs them in the
    main thread even while it is blocked (a TUI whose terminal was closed blocks in a write, and
    its loop never wakes), so the commands are killed and the watchdog armed in every case. The
    orderly part is then handed to the loop with ``call_soon_threadsafe``.
    """

    def __init__(
        self,
        on_signal: Callable[[int], None],
        *,
        signals: Iterable[int] = STOP_SIGNALS,
        last_resort: Callable[[], None] | None = None,
        force_after: float = FORCE_AFTER,
    ) -> None:
        self.on_signal = on_signal
        self.signals = tuple(signals)
        self.last_resort = last_resort
        self.force_after = force_after
        self.received: int | None = None
        self._previous: dict[int, Any] = {}
        self._timer: threading.Timer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def exit_code(self) -> int | None:
        return None if self.received is None else exit_code_for(self.received)

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Handle the signals for ``loop`` (default: the running one; a loop not yet running is
        fine). Only possible in the main thread; elsewhere nothing is installed."""
        self._loop = loop or asyncio.get_running_loop()
        for signum in self.signals:
            with contextlib.suppress(ValueError, OSError):
                self._previous[signum] = signal.signal(signum, self._handle)

    def remove(self) -> None:
        """The orderly exit is done: no forced exit any more, the former handlers back."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for signum, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

    def _handle(self, signum: int, _frame: Any) -> None:
        kill_running_commands()
        if self.received is not None:
            self.force()  # asked twice: the user does not want to wait
            return
        self.received = signum
        self._timer = threading.Timer(self.force_after, self.force)
        self._timer.daemon = True
        self._timer.start()
        try:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._orderly, signum)
        except Exception:  # the loop is closed: nothing orderly left to do
            self.force()

    def _orderly(self, signum: int) -> None:
        try:
            self.on_signal(signum)
        except Exception:  # the orderly way failed at once: take the short one
            self.force()

    def force(self) -> None:
        """Last resort: kill the commands again, run the final cleanup, end the process now."""
        kill_running_commands()
        if self.last_resort is not None:
            with contextlib.suppress(Exception):
                self.last_resort()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if not stream.isatty():  # a stalled terminal could hold the exit; a pipe or file won't
                    stream.flush()
        os._exit(self.exit_code or 1)


def say(message: str) -> None:
    """One line on stderr, unless stderr is gone (a closed terminal): never an error on exit."""
    with contextlib.suppress(OSError, ValueError):
        print(f"pi-tui: {message}", file=sys.stderr, flush=True)
