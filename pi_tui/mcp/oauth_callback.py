"""Where the authorization response of an MCP sign-in arrives: a loopback HTTP callback
(RFC 8252), or the redirected URL the user pastes when the browser runs on another machine.

The callback server runs on a thread of its own, not on the event loop of the sign-in, so a
caller whose ``open_url`` blocks while a browser (or a test) follows the URL cannot hold it up.
A request with another ``state`` gets a 400 page and the wait goes on (anyone on the machine can
reach a loopback port, so a stray request must not end the sign-in); a pasted URL with another
``state`` is refused at once, since the user can only paste again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit, urlunsplit

from pi_tui.ai.oauth.callback_http import CallbackHttp, PageHandler, settle_from_thread

CALLBACK_HOST = "127.0.0.1"
CALLBACK_PATH = "/callback"
"""How often the callback thread looks for a shutdown: closing it waits up to this long."""


class CallbackError(Exception):
    """The authorization response refused the sign-in or does not belong to it (one line)."""


@dataclass(frozen=True, slots=True)
class AuthorizationResponse:
    code: str
    iss: str | None


@dataclass(frozen=True, slots=True)
class LoopbackPlan:
    """Where to listen and what redirect URI to send, from ``callbackUrl`` / ``callbackPort``."""

    host: str
    """The address to bind (``localhost`` is served on 127.0.0.1)."""
    port: int | None
    """None: the port of a stored client's redirect URI if free, else any free port."""
    path: str
    written: str | None
    """``callbackUrl`` as configured."""

    def redirect_uri(self, bound_port: int) -> str:
        """``callbackUrl`` exactly as written when it names a port; else with the port added."""
        if self.written is None:
            return f"http://{CALLBACK_HOST}:{bound_port}{CALLBACK_PATH}"
        parts = urlsplit(self.written)
        if parts.port is not None:
            return self.written
        return urlunsplit(
            (parts.scheme, f"{parts.netloc}:{bound_port}", parts.path, parts.query, parts.fragment)
        )


def loopback_plan(callback_url: str | None, callback_port: int | None) -> LoopbackPlan:
    if callback_url is None:
        return LoopbackPlan(CALLBACK_HOST, callback_port, CALLBACK_PATH, None)
    parts = urlsplit(callback_url)
    host = (parts.hostname or "").lower()
    bind = CALLBACK_HOST if host == "localhost" else host.strip("[]")
    return LoopbackPlan(bind, parts.port or callback_port, parts.path or "/", callback_url)


class LoopbackCallback:
    """The callback server of one sign-in; close it when the sign-in ends (``with``)."""

    def __init__(self, plan: LoopbackPlan, preferred_port: int | None) -> None:
        self.plan = plan
        self._expected: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: asyncio.Future[AuthorizationResponse] | None = None
        handler = self._handler()
        port = plan.port if plan.port is not None else preferred_port
        try:
            self._http = CallbackHttp(plan.host, port or 0, handler, "mcp-oauth-callback")
        except OSError:
            if plan.port is not None or not port:
                raise  # a configured port is required; a stored client's port is only preferred
            self._http = CallbackHttp(plan.host, 0, handler, "mcp-oauth-callback")
        self.port = self._http.port
        self.redirect_uri = plan.redirect_uri(self.port)

    def __enter__(self) -> LoopbackCallback:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def expect(self, state: str) -> asyncio.Future[AuthorizationResponse]:
        """The response carrying ``state``, once the browser brings it."""
        self._loop = asyncio.get_running_loop()
        self._future = self._loop.create_future()
        self._expected = state
        return self._future

    def _deliver(self, result: AuthorizationResponse | CallbackError) -> None:
        future, loop = self._future, self._loop
        if future is None or loop is None:
            return
        settle_from_thread(loop, future, result)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        callback = self

        class Handler(PageHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != callback.plan.path:
                    self.reply(404, "Not found", "This is pi-tui's sign-in callback.")
                    return
                query = {name: values[0] for name, values in parse_qs(parts.query).items()}
                if callback._expected is None or query.get("state") != callback._expected:
                    self.reply(
                        400, "Invalid or expired sign-in", "This response belongs to no sign-in in progress."
                    )
                    return
                try:
                    response = response_from_query(query)
                except CallbackError as error:
                    callback._deliver(error)
                    self.reply(400, "Sign-in failed", str(error))
                    return
                callback._deliver(response)
                self.reply(200, "Signed in", "Signed in to the MCP server. You may close this page.")

        return Handler


def response_from_query(query: dict[str, str]) -> AuthorizationResponse:
    """The code (and RFC 9207 ``iss``) of a response whose ``state`` was already checked."""
    error = query.get("error")
    if error:
        raise CallbackError(f"the authorization server refused: {query.get('error_description') or error}")
    code = query.get("code")
    if not code:
        raise CallbackError("the authorization response has no code")
    return AuthorizationResponse(code, query.get("iss") or None)


def response_from_pasted(text: str, redirect_uri: str, state: str) -> AuthorizationResponse:
    """The response in a redirected URL the user pasted from the browser's address bar."""
    try:
        parts = urlsplit(text.strip())
        expected = urlsplit(redirect_uri)
        same_place = (
            parts.scheme.lower() == expected.scheme.lower()
            and (parts.hostname or "").lower() == (expected.hostname or "").lower()
            and parts.port == expected.port
            and (parts.path or "/") == (expected.path or "/")
        )
    except ValueError:
        same_place = False
    if not same_place:
        raise CallbackError(f"the pasted URL is not the redirect URI of this sign-in ({redirect_uri})")
    query = {name: values[0] for name, values in parse_qs(parts.query).items()}
    if query.get("state") != state:
        raise CallbackError("the pasted URL belongs to a different sign-in (its state does not match)")
    return response_from_query(query)
