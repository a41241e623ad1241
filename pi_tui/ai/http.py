"""One pooled httpx client per event loop, so turns reuse connections (and TLS sessions).

A new TLS connection costs a round trip or three; an agent makes a request per turn, so reusing
the connection keeps the first token fast. HTTP/2 is used when the ``h2`` package is present.
"""

from __future__ import annotations

import asyncio
import importlib.util
import weakref

import httpx

_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
_CLIENTS = weakref.WeakKeyDictionary()
HTTP2 = importlib.util.find_spec("h2") is not None


def shared_client() -> httpx.AsyncClient:
    """The client of the running loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _CLIENTS.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            http2=HTTP2,
            # No read timeout: a model stream is watched for silence by pi_tui.ai.stream.
            timeout=httpx.Timeout(None, connect=30.0),
            limits=httpx.Limits(max_keepalive_connections=8, keepalive_expiry=120.0),
        )
        _CLIENTS[loop] = client
    return client


async def close_shared_client() -> None:
    """Close the running loop's client (call before the loop ends, e.g. on exit)."""
    client = _CLIENTS.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()
