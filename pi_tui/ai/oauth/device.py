"""Polling a device authorization (RFC 8628) until the user has entered the code: the pace the
server asks for, ``slow_down`` honoured, the code's expiry respected.

The interval is the server's (GitHub says 5 s; Codex sends it as a string). RFC 8628 section
3.5: ``slow_down`` adds 5 s, unless the answer names the new interval (GitHub does, and pi uses
it: a client-side count drifts under WSL or VM clocks). A server that names no interval, or 0,
gets RFC 8628's 5 s and pi's 1 s floor. Cancelling the awaiting task stops the polling at once:
the waits are ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pi_tui.ai.oauth.login_errors import LoginError

DEFAULT_INTERVAL = 5.0
"""RFC 8628 section 3.2: the interval when the server names none."""
ZERO_INTERVAL_FLOOR = 1.0
"""pi's minimum, for a server that says 0."""
SLOW_DOWN_STEP = 5.0
TIMEOUT_MESSAGE = "The device code expired before the sign-in was completed: run the login again"
SLOW_DOWN_TIMEOUT_MESSAGE = (
    "The device code expired after the server asked to slow down; this often comes from a clock "
    "that drifted (WSL, a VM): sync the clock and run the login again"
)


@dataclass(frozen=True, slots=True)
class DevicePoll:
    """One poll's outcome: ``pending``, ``slow_down``, ``complete`` (``value``) or ``failed``
    (``message``, one line)."""

    status: str
    value: Any = None
    message: str = ""
    interval: float | None = None
    """With ``slow_down``: the interval the server now asks for, when it says."""


def _pace(seconds: float | None) -> float:
    if seconds is None:
        return DEFAULT_INTERVAL
    return seconds if seconds > 0 else ZERO_INTERVAL_FLOOR


async def poll_device_flow(
    poll: Callable[[], Awaitable[DevicePoll]],
    interval: float | None,
    expires_in: float,
    *,
    wait_first: bool,
) -> Any:
    """Poll until ``complete`` (its value is returned); raises ``LoginError`` when the server
    says the sign-in failed or the code expired."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + expires_in
    pace = _pace(interval)
    slowed = False
    if wait_first:
        await asyncio.sleep(min(pace, max(0.0, deadline - loop.time())))
    while loop.time() < deadline:
        outcome = await poll()
        if outcome.status == "complete":
            return outcome.value
        if outcome.status == "failed":
            raise LoginError(outcome.message)
        if outcome.status == "slow_down":
            slowed = True
            pace = _pace(outcome.interval) if outcome.interval else pace + SLOW_DOWN_STEP
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        await asyncio.sleep(min(pace, remaining))
    raise LoginError(SLOW_DOWN_TIMEOUT_MESSAGE if slowed else TIMEOUT_MESSAGE)
