"""Where a subscription sign-in's authorization response arrives: a loopback HTTP callback on the
port pi uses (RFC 8252), or what the user pastes when the browser runs on another machine.

The callback server runs on a thread of its own, not on the event loop of the sign-in, so a
browser (or a test playing one) that follows the redirect while the loop is busy is still
answered. A request with another ``state`` gets a 400 page and the wait goes on: any program on
the machine can reach a loopback port, so a stray request must not end the sign-in. A pasted
value with another ``state`` is refused at once, since the user can only paste again.

pi's providers register fixed redirect URIs: Anthropic accepts any loopback port (so a busy
53692 falls back to a free one), OpenAI only ``localhost:1455`` (so a busy port means the
pasted URL is the only way back). :func:`start_callback` says which by ``any_port``.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from pi_tui.ai.oauth.callback_http import CallbackHttp, PageHandler, settle_from_thread
from pi_tui.ai.oauth.login_errors import LoginError

"""How often the callback thread looks for a shutdown: closing it waits up to this long."""


class CallbackError(LoginError):
    """The authorization response refused the sign-in or does not belong to it (one line)."""


@dataclass(frozen=True, slots=True)
class Pasted:
    """What a pasted redirect URL, ``code#state`` or bare code holds (pi's reading of it)."""

    code: str | None
    state: str | None
    params: dict[str, str] = field(default_factory=dict)
    """Every query parameter of a pasted URL or query string."""


def parse_pasted(text: str) -> Pasted:
    """The code and state in what the user pasted: a redirected URL (its query), ``code#state``
    (Anthropic's code page), a query string, or the code alone."""
    value = text.strip()
    if not value:
        return Pasted(None, None)
    parts = urlsplit(value)
    if parts.scheme in ("http", "https") and parts.netloc:
        query = parse_qs(parts.query)
        return Pasted(_first(query, "code"), _first(query, "state"), _flat(query))
    if "#" in value:
        code, _, state = value.partition("#")
        return Pasted(code or None, state or None)
    if "code=" in value:
        query = parse_qs(value.lstrip("?"))
        return Pasted(_first(query, "code"), _first(query, "state"), _flat(query))
    return Pasted(value, None)


def _flat(query: dict[str, list[str]]) -> dict[str, str]:
    return {name: values[0] for name, values in query.items() if values}


def _first(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values and values[0] else None


def callback_host() -> str:
    """The address the callback listens on: pi's ``PI_OAUTH_CALLBACK_HOST`` (a container or an
    SSH forward may need 0.0.0.0), else 127.0.0.1."""
    return os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"


class LoopbackCallback:
    """The callback server of one sign-in; close it when the sign-in ends (``with``)."""

    def __init__(
        self,
        host: str,
        port: int,
        path: str,
        state: str | None,
        provider_name: str,
        redirect_host: str,
        required: tuple[str, ...] = (),
    ) -> None:
        self.path = path
        self.state = state
        self.required = required
        """Query parameters a response must carry besides the code to be accepted."""
        self.params: dict[str, str] = {}
        """The query of the response that was accepted (ChatGPT's names the issued client id)."""
        self.provider_name = provider_name
        self._loop = asyncio.get_running_loop()
        self._future: asyncio.Future[str] = self._loop.create_future()
        self._http = CallbackHttp(host, port, self._handler(), "pi-tui-login-callback")
        self.port = self._http.port
        shown = f"[{redirect_host}]" if ":" in redirect_host else redirect_host
        self.redirect_uri = f"http://{shown}:{self.port}{path}"

    def __enter__(self) -> LoopbackCallback:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening (the port is free again when this returns)."""
        self._http.close()
        if not self._future.done():
            self._future.cancel()

    async def wait(self) -> str:
        """The authorization code the browser brought back."""
        return await asyncio.shield(self._future)

    def _deliver(self, result: str | CallbackError) -> None:
        settle_from_thread(self._loop, self._future, result)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        callback = self

        class Handler(PageHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != callback.path:
                    self.reply(404, "Not found", "This is pi-tui's sign-in callback.")
                    return
                query = parse_qs(parts.query)
                if _first(query, "state") != callback.state:
                    self.reply(400, "State mismatch", "This response belongs to no sign-in in progress.")
                    return
                if callback._future.done():
                    self.reply(409, "Already handled", "This sign-in has already been handled.")
                    return
                error = _first(query, "error")
                name = callback.provider_name
                if error:
                    why = _first(query, "error_description") or error
                    callback._deliver(CallbackError(f"{name} refused the sign-in: {why}"))
                    self.reply(400, f"{name} sign-in failed", why)
                    return
                code = _first(query, "code")
                if code is None:
                    self.reply(400, "Missing authorization code", "The response has no code.")
                    return
                missing = next((name for name in callback.required if not _first(query, name)), None)
                if missing is not None:
                    self.reply(400, f"Missing {missing}", f"The response has no {missing}.")
                    return
                callback.params = _flat(query)
                callback._deliver(code)
                self.reply(200, "Signed in", f"Signed in to {name}. You may close this page.")

        return Handler


def start_callback(
    port: int,
    path: str,
    state: str | None,
    provider_name: str,
    *,
    any_port: bool,
    redirect_host: str = "localhost",
    required: tuple[str, ...] = (),
) -> LoopbackCallback | None:
    """The callback server on ``port`` (or, with ``any_port``, a free port when that one is
    taken); None when none can listen, and the sign-in goes on with the pasted URL alone. A
    ``state`` of None takes responses without one (OpenRouter sends none; its callback path ends
    in a random id instead)."""
    host = callback_host()
    tries = [port, 0] if any_port and port != 0 else [port]
    for candidate in tries:
        try:
            return LoopbackCallback(host, candidate, path, state, provider_name, redirect_host, required)
        except OSError:
            continue
    return None
