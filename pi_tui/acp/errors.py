"""How ``pi-tui acp`` answers a request the client or user can fix."""

from __future__ import annotations

from acp import RequestError

INVALID_PARAMS = -32602


def user_error(message: str) -> RequestError:
    """A request the client or user can fix: JSON-RPC's invalid params, with one line saying
    what is wrong as the message (editors show the message)."""
    return RequestError(INVALID_PARAMS, message)
