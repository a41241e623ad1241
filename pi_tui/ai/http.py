"""One pooled httpx client per event loop, so turns reuse connections (and TLS sessions).

A new TLS connection costs a round trip or three; an agent makes a request per turn, so reusing
the connection keeps the first token fast. HTTP/2 is used when the ``h2`` package is present.

Also pi 1.x's HTTP settings: ``httpProxy`` (user settings only) becomes ``HTTP_PROXY`` /
``HTTPS_PROXY`` where those are not already set, as pi does, so every httpx client (they read
the environment) and the commands pi-tui starts use it; ``httpIdleTimeoutMs`` (milliseconds, 0
or ``"disabled"`` for none), when the user sets it, is the silence limit of a model reply
before and after its first byte, over ``retry.idleTimeoutSeconds`` /
``retry.firstByteTimeoutSeconds`` (:func:`idle_limits`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import ssl
import threading
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import httpx

NO_LIMIT = 1e9
"""Seconds standing for "no idle limit" (``httpIdleTimeoutMs`` 0 / "disabled"): finite, so it
travels in stall events as a number."""

_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
_CLIENTS = weakref.WeakKeyDictionary()
HTTP2 = importlib.util.find_spec("h2") is not None

_tls: Future[ssl.SSLContext] | None = None
_tls_lock = threading.Lock()


def prepare_tls() -> None:
    """Start making the TLS context (httpx's default one) in a thread.

    Loading the certificate store takes ~50 ms, all of it in OpenSSL with the GIL released, so
    made while startup reads the session it costs the first request nothing.
    """
    global _tls
    with _tls_lock:
        if _tls is not None:
            return
        _tls = Future()
    threading.Thread(target=_make_tls, args=(_tls,), name="pi-tui-tls", daemon=True).start()


def _make_tls(future: Future[ssl.SSLContext]) -> None:
    try:
        future.set_result(httpx.create_ssl_context())
    except BaseException as error:  # given to the client maker, which raises it where httpx would
        future.set_exception(error)


def _tls_context() -> ssl.SSLContext:
    prepare_tls()
    assert _tls is not None
    return _tls.result()


def shared_client() -> httpx.AsyncClient:
    """The client of the running loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _CLIENTS.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            verify=_tls_context(),
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


def apply_http_proxy(proxy: str | None) -> None:
    """``httpProxy`` from the user's settings as ``HTTP_PROXY`` / ``HTTPS_PROXY``; variables the
    user already set win (pi's rule). Call before the first client is made."""
    proxy = (proxy or "").strip()
    if proxy:
        os.environ.setdefault("HTTP_PROXY", proxy)
        os.environ.setdefault("HTTPS_PROXY", proxy)


@dataclass(frozen=True, slots=True)
class IdleLimits:
    """How long a stream may stay silent (seconds), from ``retry.idleTimeoutSeconds`` and
    ``retry.firstByteTimeoutSeconds``."""

    between: float = 90.0
    """After the first byte of the reply."""
    first_byte: float = 120.0
    """From sending the request to the first byte of the reply (headers included)."""
    notice: float = 10.0
    """Silence reported to ``on_stall`` from here on (or half the limit, if that is sooner)."""


def idle_limits(settings: Any) -> IdleLimits:
    """How long a model reply may stay silent: pi 1.x's ``httpIdleTimeoutMs`` for both the wait
    for the first byte and the gaps after it when the settings name it, else pi-tui's
    ``retry.idleTimeoutSeconds`` / ``retry.firstByteTimeoutSeconds``."""
    retry = settings.retry
    if "http_idle_timeout_ms" not in settings.model_fields_set:
        return IdleLimits(between=retry.idle_timeout_seconds, first_byte=retry.first_byte_timeout_seconds)
    value = settings.http_idle_timeout_ms
    if value != "disabled" and value < 0:  # not a timeout pi would take: pi-tui's own limits
        return IdleLimits(between=retry.idle_timeout_seconds, first_byte=retry.first_byte_timeout_seconds)
    seconds = NO_LIMIT if value in ("disabled", 0) else value / 1000
    return IdleLimits(between=seconds, first_byte=seconds)
