"""The HTTP surface (Starlette): sessions, their commands, their event streams, the web page.

Every route answers JSON (the page and the event stream aside), every failure is
``{"error": message}`` with a status that says whose fault it was, and no request ever sees a
traceback. The token check is a plain ASGI middleware in front of everything: cheap enough for
the event-stream clients and unable to be bypassed by a route that forgets it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import sys
import time
import traceback
from collections.abc import AsyncIterator
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from pi_tui import jsonio
from pi_tui.server.event_log import HEARTBEAT_SECONDS
from pi_tui.server.hub import HubError, SessionHub
from pi_tui.server.live import LiveSession

IDLE_CLOSE_SECONDS = 600.0
"""A session nobody follows or uses is closed after this long (its file free for the TUI)."""


class JSONBody(Response):
    """JSON through the project's encoder (lone surrogates from a session file included)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return jsonio.dumps(content, default=str)


def error(status: int, message: str, **extra: Any) -> JSONBody:
    return JSONBody({"error": message, **extra}, status_code=status)


def page_cookie(scope: Scope) -> str:
    """The page's cookie name: with the port in it, since browsers share cookies between the
    ports of one host (two servers side by side must not log each other out)."""
    server = scope.get("server") or ("", 0)
    return f"pi-tui-serve-{server[1]}"


class TokenGate:
    """``Authorization: Bearer <token>`` on every request. The page's address (``/``) may carry
    it as ``?token=`` instead (a browser cannot add a header to the address it opens), and then
    as the cookie the page's answer sets, so a reload or a new tab still opens it."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        cookies = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    given = credentials.strip()
            elif name == b"cookie":
                cookies = value
        if not given and scope.get("path") == "/":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = (query.get("token") or [""])[0].encode()
            if not given and cookies:
                jar = SimpleCookie()
                with contextlib.suppress(CookieError):
                    jar.load(cookies.decode("latin-1"))
                morsel = jar.get(page_cookie(scope))
                given = morsel.value.encode() if morsel is not None else b""
        if given and hmac.compare_digest(given, self.token):
            await self.app(scope, receive, send)
            return
        message = "Wrong token" if given else "Missing token: send Authorization: Bearer <token>"
        response = error(401, message)
        response.headers["WWW-Authenticate"] = "Bearer"
        await response(scope, receive, send)


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        value = jsonio.loads(raw)
    except ValueError as problem:
        raise HubError(400, f"The body is not JSON: {problem}") from None
    if not isinstance(value, dict):
        raise HubError(400, "The body must be a JSON object")
    return value


def build_app(
    hub: SessionHub,
    token: str,
    *,
    heartbeat: float = HEARTBEAT_SECONDS,
    idle_close: float = IDLE_CLOSE_SECONDS,
) -> ASGIApp:
    """The ASGI application for ``hub``, behind the token check; sessions unused for
    ``idle_close`` seconds are closed (0: never)."""

    async def session_of(request: Request) -> LiveSession:
        return await hub.get(request.path_params["session_id"])

    async def page(request: Request) -> Response:
        from pi_tui.server.page import render_page

        html, policy = render_page(token)  # only ever sent to a request that showed the token
        response = HTMLResponse(
            html,
            headers={
                "Content-Security-Policy": policy,
                "Cache-Control": "no-store",
                "Referrer-Policy": "no-referrer",
            },
        )
        response.set_cookie(page_cookie(request.scope), token, httponly=True, samesite="strict")
        return response

    async def list_sessions(request: Request) -> Response:
        rows = await hub.listing(request.query_params.get("q", ""))
        return JSONBody({"sessions": rows})

    async def create_session(request: Request) -> Response:
        body = await _body(request)
        if "path" in body:
            if not isinstance(body["path"], str) or not body["path"]:
                raise HubError(400, '"path" must be a session file path')
            live = await hub.open_path(body["path"])
        elif "id" in body:
            if not isinstance(body["id"], str) or not body["id"]:
                raise HubError(400, '"id" must be a session id')
            live = await hub.get(body["id"])
        else:
            cwd = body.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise HubError(400, '"cwd" must be a folder path')
            live = await hub.create(cwd)
            return JSONBody(live.describe(), status_code=201)
        return JSONBody(live.describe())

    async def show_session(request: Request) -> Response:
        live = await session_of(request)
        return JSONBody({**live.describe(), "state": live.commands.state_now()})

    async def delete_session(request: Request) -> Response:
        path = await hub.delete(request.path_params["session_id"])
        return JSONBody({"deleted": True, "path": str(path) if path else None})

    async def fork_session(request: Request) -> Response:
        live = await session_of(request)
        body = await _body(request)
        forked = await hub.fork(live, body.get("entryId"))
        return JSONBody({**forked.live.describe(), "text": forked.text}, status_code=201)

    async def clone_session(request: Request) -> Response:
        live = await session_of(request)
        forked = await hub.clone(live)
        return JSONBody(forked.live.describe(), status_code=201)

    async def messages(request: Request) -> Response:
        live = await session_of(request)
        return JSONBody({"messages": [m.to_json_dict() for m in live.agent.messages]})

    async def tree(request: Request) -> Response:
        from pi_tui.server.tree_view import ENTRY_CHOICES, tree_json

        live = await session_of(request)
        entries = request.query_params.get("entries", "")
        if entries not in ENTRY_CHOICES:
            raise HubError(400, f"entries= takes all, path or 0, not {entries!r}")
        return JSONBody(tree_json(live.agent.manager, entries=entries))

    async def models(request: Request) -> Response:
        live = await session_of(request)
        commands = live.commands
        return JSONBody(
            {
                "current": live.agent.model.model_dump(by_alias=True, exclude_none=True, mode="json"),
                "thinkingLevel": live.agent.thinking_level,
                "models": (await commands.cmd_get_available_models({}))["models"],
            }
        )

    async def post_command(request: Request) -> Response:
        live = await session_of(request)
        status, record = await live.submit(await _body(request))
        return JSONBody(record, status_code=status)

    async def events(request: Request) -> Response:
        live = await session_of(request)
        since = request.headers.get("last-event-id") or request.query_params.get("since")
        after: int | None = None
        if since:
            try:
                after = int(since)
            except ValueError:
                return error(400, f"Last-Event-ID / since must be a sequence number, not {since!r}")
        return StreamingResponse(
            _event_stream(live, after, heartbeat),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/sessions", list_sessions, methods=["GET"]),
        Route("/sessions", create_session, methods=["POST"]),
        Route("/sessions/{session_id}", show_session, methods=["GET"]),
        Route("/sessions/{session_id}", delete_session, methods=["DELETE"]),
        Route("/sessions/{session_id}/fork", fork_session, methods=["POST"]),
        Route("/sessions/{session_id}/clone", clone_session, methods=["POST"]),
        Route("/sessions/{session_id}/messages", messages, methods=["GET"]),
        Route("/sessions/{session_id}/tree", tree, methods=["GET"]),
        Route("/sessions/{session_id}/models", models, methods=["GET"]),
        Route("/sessions/{session_id}/commands", post_command, methods=["POST"]),
        Route("/sessions/{session_id}/events", events, methods=["GET"]),
    ]

    async def hub_error(request: Request, problem: Exception) -> Response:
        assert isinstance(problem, HubError)
        return error(problem.status, str(problem))

    async def http_error(request: Request, problem: Exception) -> Response:
        assert isinstance(problem, HTTPException)
        text = {404: "No such resource", 405: "Method not allowed here"}.get(
            problem.status_code, problem.detail
        )
        return error(problem.status_code, f"{text}: {request.method} {request.url.path}")

    async def bug(request: Request, problem: Exception) -> Response:
        print(f"pi-tui serve: {request.method} {request.url.path} failed:", file=sys.stderr)
        traceback.print_exception(problem, file=sys.stderr)
        return error(500, f"Internal error: {type(problem).__name__}: {problem}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        closer = asyncio.create_task(hub.close_idle_forever(idle_close)) if idle_close > 0 else None
        try:
            yield
        finally:
            if closer is not None:
                closer.cancel()

    app = Starlette(
        routes=routes,
        exception_handlers={HubError: hub_error, HTTPException: http_error, Exception: bug},
        lifespan=lifespan,
    )
    return TokenGate(app, token)


async def _event_stream(live: LiveSession, after: int | None, heartbeat: float) -> AsyncIterator[bytes]:
    """A snapshot first (unless every missed event can be replayed), then events as they come."""
    live.followers += 1
    try:
        if after is None or not live.log.can_replay_after(after):
            frame = live.snapshot_frame()  # and its seq, with nothing in between
            after = live.log.seq
            yield frame
        async for chunk in live.log.follow(after, live.snapshot_frame, heartbeat):
            yield chunk
    finally:
        live.followers -= 1
        live.last_used = time.monotonic()
