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
import ipaddress
import sys
import time
import traceback
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from pi_tui import jsonio
from pi_tui.server.event_log import HEARTBEAT_SECONDS, Cursor
from pi_tui.server.hub import HubError, SessionHub
from pi_tui.server.live import LiveSession

IDLE_CLOSE_SECONDS = 600.0
"""A session nobody follows or uses is closed after this long (its file free for the TUI)."""
MAX_BODY_BYTES = 32_000_000
"""The largest request body read (32 MB); a larger one is answered 413, unread."""
BODY_TIMEOUT_SECONDS = 60.0
"""The most a request body may take to arrive, from the end of its headers."""
CLIENT_BUDGET_BYTES = 4 * 1024 * 1024
"""Events (bytes) an event-stream client may fall behind while its connection accepts nothing
before it is cut off (4 MB). It reconnects with ``Last-Event-ID`` and is given what it missed
from the ring, or a snapshot."""
TRANSPORT_KEY = "pi_tui.transport"
"""Where the server puts the connection's transport in the ASGI scope (see command.py), so an
event stream can drop a client that stopped reading (closing would wait for it to read)."""


class JSONBody(Response):
    """JSON through the project's encoder (lone surrogates from a session file included)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return jsonio.dumps(content, default=str)


def error(status: int, message: str, **extra: Any) -> JSONBody:
    return JSONBody({"error": message, **extra}, status_code=status)


def host_allowed(host: str, extra: Iterable[str] = ()) -> bool:
    """Whether a ``Host`` header names this server without DNS: an IP address, ``localhost``
    (or a name under it), or a name the user listed. Any other name could be a DNS-rebinding
    page whose name now points here; its requests are refused."""
    if not host or any(char in host for char in "@/\\?#"):
        return False
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:  # "[not an address]"
        return False
    if not name:
        return False
    if name == "localhost" or name.endswith(".localhost") or name in extra:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class TokenGate:
    """In front of everything: the ``Host`` check, the body limit by ``Content-Length``, the
    ``Origin`` check, then ``Authorization: Bearer <token>`` on every request but the page.

    The page (``/``) holds no secret: its script takes the token from the address it was opened
    with (``?token=``, checked here too) and keeps it in the tab's ``sessionStorage``, which
    browsers keep per origin, port included. No cookie: a browser sends a cookie of
    127.0.0.1 to every port of that host, so any other local server would receive it.
    """

    def __init__(
        self, app: ASGIApp, token: str, *, max_body: int = MAX_BODY_BYTES, hosts: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.token = token.encode()
        self.max_body = max_body
        self.hosts = frozenset(host.lower() for host in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        host = origin = ""
        length = -1
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    given = credentials.strip()
            elif name == b"host":
                host = value.decode("latin-1").lower()
            elif name == b"origin":
                origin = value.decode("latin-1").lower()
            elif name == b"content-length":
                length = int(value) if value.isdigit() else length
        problem = self.refusal(scope, host, origin, length)
        if problem is not None:
            await problem(scope, receive, send)
            return
        if not given and scope.get("path") == "/":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            shown = query.get("token")
            if shown is None:  # the page alone, to a tab that keeps its token (or will be told)
                await self.app(scope, receive, send)
                return
            given = shown[0].encode()
        if given and hmac.compare_digest(given, self.token):
            await self.app(scope, receive, send)
            return
        message = "Wrong token" if given else "Missing token: send Authorization: Bearer <token>"
        response = error(401, message)
        response.headers["WWW-Authenticate"] = "Bearer"
        await response(scope, receive, send)

    def refusal(self, scope: Scope, host: str, origin: str, length: int) -> Response | None:
        """The answer to a request refused before its token is looked at, or None."""
        if host and not host_allowed(host, self.hosts):
            return error(
                403,
                f"Host {host!r} is not this server's: use its address or localhost "
                "(names listed with --allow-host are accepted too)",
            )
        if (
            scope.get("method") not in ("GET", "HEAD", "OPTIONS")
            and origin
            and origin not in (f"http://{host}", f"https://{host}")
        ):
            return error(403, f"Cross-origin request refused (Origin {origin!r})")
        if length > self.max_body:
            response = error(413, f"The body is {length} bytes; the limit is {self.max_body}")
            response.headers["Connection"] = "close"
            return response
        return None


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object body: counted as it streams in (413 past the limit, unread
    beyond), given a deadline (408), and parsed to one 400 line whatever is wrong with it."""
    limit: int = request.app.state.max_body
    deadline = asyncio.get_running_loop().time() + request.app.state.body_timeout
    parts: list[bytes] = []
    size = 0
    chunks = request.stream().__aiter__()
    while True:
        left = deadline - asyncio.get_running_loop().time()
        try:
            if left <= 0:
                raise TimeoutError
            chunk = await asyncio.wait_for(chunks.__anext__(), left)
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise HubError(408, "The body did not arrive in time") from None
        size += len(chunk)
        if size > limit:
            raise HubError(413, f"The body is over the limit of {limit} bytes")
        parts.append(chunk)
    raw = b"".join(parts)
    del parts
    if not raw.strip():
        return {}
    try:
        value = jsonio.loads(raw)
    except RecursionError:
        raise HubError(400, "The body is not JSON we take: nested too deeply") from None
    except ValueError as problem:
        raise HubError(400, f"The body is not JSON: {str(problem).splitlines()[0][:200]}") from None
    if not isinstance(value, dict):
        raise HubError(400, "The body must be a JSON object")
    return value


def build_app(
    hub: SessionHub,
    token: str,
    *,
    heartbeat: float = HEARTBEAT_SECONDS,
    idle_close: float = IDLE_CLOSE_SECONDS,
    max_body: int = MAX_BODY_BYTES,
    body_timeout: float = BODY_TIMEOUT_SECONDS,
    client_budget: int = CLIENT_BUDGET_BYTES,
    hosts: Iterable[str] = (),
) -> ASGIApp:
    """The ASGI application for ``hub``, behind the token check; sessions unused for
    ``idle_close`` seconds are closed (0: never). ``max_body`` and ``body_timeout`` bound a
    request body, ``client_budget`` how far an event-stream client may fall behind, ``hosts``
    the names besides IP addresses and localhost the ``Host`` header may carry."""

    async def session_of(request: Request) -> LiveSession:
        return await hub.get(request.path_params["session_id"])

    async def page(request: Request) -> Response:
        from pi_tui.server.page import render_page

        # The token only when the address showed it (the gate checked it); else the script
        # takes it from the tab's sessionStorage.
        shown = token if "token" in request.query_params else ""
        html, policy = render_page(shown)
        return HTMLResponse(
            html,
            headers={
                "Content-Security-Policy": policy,
                "X-Frame-Options": "DENY",
                "Cache-Control": "no-store",
                "Referrer-Policy": "no-referrer",
                "X-Content-Type-Options": "nosniff",
            },
        )

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
        return EventStream(live, after, heartbeat, client_budget)

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
        response = error(problem.status, str(problem))
        if problem.status in (408, 413):  # the rest of the body is never read
            response.headers["Connection"] = "close"
        return response

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
    app.state.max_body = max_body
    app.state.body_timeout = body_timeout
    return TokenGate(app, token, max_body=max_body, hosts=hosts)


async def _event_stream(
    live: LiveSession, after: int | None, heartbeat: float, cursor: Cursor
) -> AsyncGenerator[bytes, None]:
    """A snapshot first (unless every missed event can be replayed), then events as they come."""
    live.followers += 1
    try:
        if after is None or not live.log.can_replay_after(after):
            frame = live.snapshot_frame()  # and its seq, with nothing in between
            after = live.log.seq
            cursor.seq = after
            yield frame
        async for chunk in live.log.follow(after, live.snapshot_frame, heartbeat, cursor):
            yield chunk
    finally:
        live.followers -= 1
        live.last_used = time.monotonic()


class EventStream(Response):
    """A session's SSE stream, which drops a client that stops reading.

    A connection that accepts nothing makes each write wait; meanwhile the session goes on. Once
    the events published past what the client was handed exceed ``budget`` bytes (or have left
    the ring), the connection is aborted: the client reconnects with ``Last-Event-ID`` and gets
    the missed events from the ring, or a snapshot. The server holds at most one chunk of the
    log (:data:`~pi_tui.server.event_log.CHUNK_BYTES`) per stuck client, whatever it misses.
    """

    media_type = "text/event-stream"
    CHECK_SECONDS = 0.1
    """How often a write that waits looks at how far behind its client has fallen."""

    def __init__(self, live: LiveSession, after: int | None, heartbeat: float, budget: int) -> None:
        super().__init__(headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.raw_headers = [(name, value) for name, value in self.raw_headers if name != b"content-length"]
        self.live, self.after, self.heartbeat, self.budget = live, after, heartbeat, budget

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        pump = asyncio.create_task(self._pump(scope, send))
        listen = asyncio.create_task(_until_disconnect(receive))
        done, pending = await asyncio.wait({pump, listen}, return_when=asyncio.FIRST_COMPLETED)
        if pump in done and not pump.result():  # cut off: end once the server saw the connection go
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(listen), 5)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if pump in done and pump.result():
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, scope: Scope, send: Send) -> bool:
        """Write events until the log closes (True) or the client is cut off (False)."""
        cursor = Cursor(self.after if self.after is not None else self.live.log.seq)
        log = self.live.log
        stream = _event_stream(self.live, self.after, self.heartbeat, cursor)
        writing: asyncio.Future[None] | None = None
        try:
            async for chunk in stream:
                writing = asyncio.ensure_future(
                    send({"type": "http.response.body", "body": chunk, "more_body": True})
                )
                while True:
                    done, _ = await asyncio.wait({writing}, timeout=self.CHECK_SECONDS)
                    if done:
                        writing.result()
                        break
                    behind = log.bytes_after(cursor.seq)
                    if behind is None or behind > self.budget:
                        writing.cancel()
                        transport = scope.get(TRANSPORT_KEY)
                        if transport is not None:
                            transport.abort()  # close() would wait to flush to a client that never reads
                        return False
        finally:
            if writing is not None and not writing.done():
                writing.cancel()
            await stream.aclose()
        return True


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
