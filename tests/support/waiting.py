"""Waiting on a condition, never on the clock: the one set of polling helpers the tests share.

A test that sleeps a fixed time and then looks is either slow (the time is generous) or flaky
(a loaded machine needs longer). These helpers look again and again until the condition holds
and give up only at a deadline far beyond any normal run, failing with a message that says what
was awaited (and, through ``detail``, what was seen instead).

- :func:`wait_until` inside a Textual ``run_test()``: each look follows ``pilot.pause()``, which
  lets the app process its queued messages and repaint (it returns once the process is idle).
- :func:`async_wait_until` in plain asyncio code (an agent session, a server part).
- :func:`poll_until` for what happens in other processes or threads: files, pids, sockets.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
S = TypeVar("S")

#: Long enough for a loaded CI machine; a passing run never comes near it.
DEFAULT_TIMEOUT = 10.0
#: How often the synchronous and plain-asyncio helpers look (pilot waits pace themselves).
POLL_SECONDS = 0.01


def _timeout_message(what: str, timeout: float, detail: Callable[[], object] | None) -> str:
    message = f"waited {timeout}s for {what}"
    if detail is not None:
        message += f"; instead: {detail()}"
    return message


async def _until(
    pause: Callable[[], Awaitable[object]],
    condition: Callable[[], T],
    what: str,
    timeout: float,
    detail: Callable[[], object] | None,
) -> T:
    """``await pause()`` then look, until ``condition()`` is truthy or the deadline passed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        await pause()
        found = condition()
        if found:
            return found
        if loop.time() > deadline:
            raise AssertionError(_timeout_message(what, timeout, detail))


async def wait_until(
    pilot: Any,
    condition: Callable[[], T],
    what: str,
    timeout: float = DEFAULT_TIMEOUT,
    detail: Callable[[], object] | None = None,
) -> T:
    """Let the app run (``pilot.pause()``) until ``condition()`` is truthy; return its value."""
    return await _until(pilot.pause, condition, what, timeout, detail)


async def async_wait_until(
    condition: Callable[[], T],
    what: str,
    timeout: float = DEFAULT_TIMEOUT,
    detail: Callable[[], object] | None = None,
) -> T:
    """Yield to the event loop until ``condition()`` is truthy; return its value."""
    if found := condition():
        return found
    return await _until(lambda: asyncio.sleep(POLL_SECONDS), condition, what, timeout, detail)


def poll_until(
    condition: Callable[[], T],
    what: str,
    timeout: float = DEFAULT_TIMEOUT,
    detail: Callable[[], object] | None = None,
    interval: float = POLL_SECONDS,
) -> T:
    """Look at ``condition()`` every ``interval`` seconds until it is truthy; return its value."""
    found = poll_for(condition, timeout, interval)
    if not found:
        raise AssertionError(_timeout_message(what, timeout, detail))
    return found


def poll_for(condition: Callable[[], T], timeout: float, interval: float = POLL_SECONDS) -> T | None:
    """Like :func:`poll_until` but return the last (falsy) value at the deadline instead of failing,
    for tests that assert on it themselves with a message of their own."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(interval)


async def wait_for_screen(pilot: Any, app: Any, kind: type[S], timeout: float = DEFAULT_TIMEOUT) -> S:
    """Let a Textual app run until its active screen is a ``kind``; return that screen."""

    def opened() -> S | None:
        screen = app.screen
        return screen if isinstance(screen, kind) else None

    found = await wait_until(
        pilot,
        opened,
        f"{kind.__name__} to open",
        timeout,
        detail=lambda: f"the screen is {type(app.screen).__name__}",
    )
    assert found is not None
    return found
