"""One MCP server kept connected: the SDK session over stdio or streamable HTTP, on the MCP loop.

The ``mcp`` SDK opens transports and sessions as async context managers that must be entered and
left by the same task, so each connection has a *holder* task that opens them, lists the tools,
then waits until it is told to stop or the connection drops; calls from other tasks use the
session it holds. A call that finds the server gone connects it again first ("reconnects on next
use"). Everything here runs on the manager's loop (see :mod:`pi_tui.mcp.manager`); nothing is
thread-safe on its own.

Stopping a stdio server is the SDK's: it closes the server's stdin, waits, then sends SIGTERM and
SIGKILL to the process group it started the server in (``start_new_session``), which also stops
servers run through wrappers such as ``npx`` or ``uvx``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from pi_tui.mcp.model import ServerConfig

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, ListRootsResult, Tool

    from pi_tui.mcp.mcp_log import McpLog

STATES = ("disabled", "connecting", "connected", "needs-sign-in", "failed", "disconnected")
"""What /mcp and ``pi-tui mcp list`` say about a server."""

STDERR_TAIL = 4000
"""Characters of a failed stdio server's stderr kept for /mcp."""

STDIN_GRACE = 0.5
"""Seconds a stdio server gets to exit after its stdin closed, before SIGTERM to its group (pi's
figure; the SDK's own is 2 s)."""

SSE_READ_TIMEOUT = 300.0
"""Seconds a streamable HTTP server's event stream may stay silent (the SDK's figure)."""

CONNECT_RETRIES = 2
"""Further tries when an HTTP server's connection fails on the network or a passing status."""

RETRY_DELAY = 0.5
"""Seconds before the first retry (doubled for the next)."""

CONNECT_TIMEOUT_FLOOR = 30.0
"""A server gets at least this long to start and answer ``initialize`` (npx may download)."""


class McpCallError(Exception):
    """A call that could not be made or was not answered; the message goes to the model."""


@dataclass(slots=True)
class ServerStatus:
    """A server as /mcp and ``pi-tui mcp list`` show it (a snapshot, safe to read anywhere)."""

    name: str
    state: str
    config: ServerConfig
    error: str | None = None
    tools: list[Any] = field(default_factory=list)
    """The server's ``mcp.types.Tool`` list as last listed."""
    instructions: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    has_resources: bool = False
    stderr_tail: str = ""
    connected_seconds: float | None = None
    """How long the last connection took to be usable (initialize + tools/list)."""


class ServerConnection:
    """The live side of one configured server."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        session_cwd: Path,
        auth_store: Path,
        log: McpLog | None,
        on_change: Callable[[ServerConnection], None],
    ) -> None:
        self.config = config
        self.session_cwd = session_cwd
        self.auth_store = auth_store
        self.log = log
        self.on_change = on_change
        self.state = "connecting" if config.enabled else "disabled"
        self.error: str | None = None
        self.tools: list[Tool] = []
        self.instructions: str | None = None
        self.server_info: tuple[str | None, str | None] = (None, None)
        self.has_resources = False
        self.connected_seconds: float | None = None
        self.session: ClientSession | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        """Set once a connection attempt ended, well or not (what waiters wait for)."""
        self._ended = asyncio.Event()
        """Set when the current connection is over (calls waiting on it end with it)."""
        self._stderr: TextIO | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        """Set when the connection is gone while connected (a stdio server's output ended, an
        HTTP server forgot the session)."""
        self._lost_reason: str | None = None
        self._http_error: tuple[int, str] | None = None

    # --- state --------------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        return ServerStatus(
            name=self.config.name,
            state=self.state,
            config=self.config,
            error=self.error,
            tools=list(self.tools),
            instructions=self.instructions,
            server_name=self.server_info[0],
            server_version=self.server_info[1],
            has_resources=self.has_resources,
            stderr_tail=self.stderr_tail(),
            connected_seconds=self.connected_seconds,
        )

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0, 2)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL))
            return self._stderr.read()
        except (OSError, ValueError):
            return ""

    def _set(self, state: str, error: str | None = None) -> None:
        self.state, self.error = state, error
        self.on_change(self)

    async def wait_settled(self) -> None:
        """Until the current connection attempt has ended (at once for a disabled server)."""
        if self.state == "disabled":
            return
        await self._settled.wait()

    # --- connecting ---------------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting in the background (nothing waits for it)."""
        if not self.config.enabled:
            self._set("disabled")
            self._settled.set()
            return
        if self._holder is not None and not self._holder.done():
            return
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._ended = asyncio.Event()
        self._set("connecting")
        self._holder = asyncio.create_task(self._hold(), name=f"mcp {self.config.name}")

    async def ensure_connected(self) -> ClientSession:
        """The session, connecting first when the server is not connected (a dropped or failed
        server is tried again on use)."""
        if self.state == "disabled":
            raise McpCallError(f"MCP server {self.config.name!r} is disabled (/mcp enables it).")
        if self.state in ("failed", "disconnected", "needs-sign-in") or self._holder is None:
            holder = self._holder
            if holder is not None and not holder.done():  # the dropped connection still closing
                self._stop.set()
                await asyncio.wait({holder}, timeout=10.0)
            self.start()
        await self._settled.wait()
        if self.session is None or self.state != "connected":
            raise McpCallError(f"MCP server {self.config.name!r}: {self.error or 'not connected'}")
        return self.session

    async def _hold(self) -> None:
        try:
            for attempt in range(CONNECT_RETRIES + 1):
                try:
                    await self._connect_and_wait()
                    return
                except asyncio.CancelledError:
                    raise
                except BaseException as error:
                    if self.session is None and attempt < CONNECT_RETRIES and _transient(self.config, error):
                        await asyncio.sleep(RETRY_DELAY * 2**attempt)  # pi: retried twice
                        continue
                    if self.state == "disconnected" and self._lost_reason:
                        pass  # already said why; the transport's own error as it closed adds nothing
                    elif _is_sign_in(error):
                        self._set("needs-sign-in", str(error))
                    else:  # a server's failure is its state, never ours
                        state = "failed" if self.session is None else "disconnected"
                        self._set(state, self._describe(error))
                    return
        finally:
            self.session = None
            self._settled.set()
            self._ended.set()

    async def _connect_and_wait(self) -> None:
        """One connection: open it, then hold it until told to stop or the server goes away."""
        began = time.monotonic()
        self._lost = asyncio.Event()
        self._lost_reason = self._http_error = None
        async with contextlib.AsyncExitStack() as stack:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs _open in a task of
            # its own, and the SDK's cancel scopes must be left by the task that entered them.
            async with asyncio.timeout(max(CONNECT_TIMEOUT_FLOOR, self.config.timeout)):
                session = await self._open(stack)
            self.session = session
            self.connected_seconds = time.monotonic() - began
            self._set("connected")
            self._settled.set()
            stopped = asyncio.ensure_future(self._stop.wait())
            lost = asyncio.ensure_future(self._lost.wait())
            try:
                await asyncio.wait({stopped, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopped.cancel()
                lost.cancel()
            if self._lost.is_set() and not self._stop.is_set():
                gone = self._lost_reason or "the server exited"
                self._set("disconnected", f"{gone}; it is connected again on the next call")
        if self.state == "connected":
            self._set("disconnected", None)

    async def _open(self, stack: contextlib.AsyncExitStack) -> ClientSession:
        from mcp import ClientSession
        from mcp.types import Implementation

        from pi_tui import __version__
        from pi_tui.mcp.config import resolved

        config = self.config
        values = resolved(config, self.session_cwd)
        if config.transport == "stdio":
            from mcp.client import stdio
            from mcp.client.stdio import StdioServerParameters, stdio_client

            # The SDK's grace between closing stdin and SIGTERM is 2 s: half a second is plenty for a
            # server to notice EOF, and every quit of pi-tui would otherwise wait out the rest.
            stdio.PROCESS_TERMINATION_TIMEOUT = STDIN_GRACE

            from pi_tui.secrets.child_env import child_environment

            if self._stderr is None:  # open for the connection's life: /mcp shows its tail
                self._stderr = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
            params = StdioServerParameters(
                command=values.command or "",
                args=list(values.args),
                env=child_environment(values.env),
                cwd=values.cwd,
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=self._stderr))
            read = self._watched(read, stack)
        else:
            import httpx
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            from pi_tui.mcp.oauth import http_auth

            auth = http_auth(config, values.oauth, store_path=self.auth_store)
            limits = httpx.Timeout(max(30.0, config.timeout), read=SSE_READ_TIMEOUT)
            client = await stack.enter_async_context(
                create_mcp_http_client(headers=dict(values.headers), timeout=limits, auth=auth)
            )
            client.event_hooks["response"].append(self._on_http_response)
            read, write, _session_id = await stack.enter_async_context(
                streamable_http_client(values.url or "", http_client=client)
            )
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                message_handler=self._on_message,
                logging_callback=self._on_log,
                list_roots_callback=self._roots,
                client_info=Implementation(name="pi-tui", version=__version__),
            )
        )
        initialized = await session.initialize()
        self.instructions = initialized.instructions
        info = initialized.serverInfo
        self.server_info = (info.name, info.version)
        capabilities = initialized.capabilities
        self.has_resources = capabilities.resources is not None
        self.tools = await _list_tools(session) if capabilities.tools is not None else []
        return session

    async def _on_http_response(self, response: Any) -> None:
        """Every HTTP answer of the server: an error status is kept for the connection's error
        line, and once connected, a 400 or 404 to a request of the session means the server
        forgot it (it restarted): the connection is given up at once, so the waiting call fails
        now instead of after its timeout, and the next call connects again."""
        status = response.status_code
        if status < 400:
            return
        request = response.request
        self._http_error = (status, str(request.url))
        if self.session is not None and request.method == "POST" and status in (400, 404):
            self._lost_reason = f"the server answered HTTP {status} to this session (did it restart?)"
            self._lost.set()

    def _describe(self, error: BaseException) -> str:
        """One line for a failed connection, without the server's name (whoever shows it names
        the server): an exception group is reduced to its first cause; an HTTP status the server
        answered and a stdio server that exited say so."""
        import httpx

        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        config = self.config
        if isinstance(error, TimeoutError):
            return f"did not finish starting within {max(CONNECT_TIMEOUT_FLOOR, config.timeout):g} s"
        if isinstance(error, FileNotFoundError):
            return f"command not found: {config.command}"
        if self._http_error is not None and self.session is None:
            status, url = self._http_error
            hint = " (streamable HTTP servers usually answer at /mcp)" if status in (404, 405) else ""
            return f"HTTP {status} from {url}{hint}"
        if isinstance(error, httpx.ConnectError):
            return f"cannot connect to {config.url}: {_first(error) or 'connection refused'}"
        text = _first(error)
        ended = text in ("", "Connection closed") or type(error).__name__ in _STREAM_ENDS
        if config.transport == "stdio" and ended and self.session is None:
            last = [line for line in self.stderr_tail().splitlines() if line.strip()]
            said = f": {last[-1].strip()[:200]}" if last else ""
            return f"the server exited before it was ready{said}"
        return text or type(error).__name__

    def _watched(self, source: Any, stack: contextlib.AsyncExitStack) -> Any:
        """``source`` passed on through a stream of our own, so that the server's end (its
        stdout closed: it exited or crashed) sets ``_lost`` at once instead of being noticed by
        the next call; /mcp then shows it disconnected."""
        import anyio

        send, receive = anyio.create_memory_object_stream[Any](0)
        lost = self._lost

        async def pump() -> None:
            try:
                async with send:
                    async for item in source:
                        await send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
            finally:
                lost.set()

        task = asyncio.create_task(pump())
        stack.callback(task.cancel)
        return receive

    async def stop(self) -> None:
        """Close the connection (the SDK stops a stdio server: stdin, SIGTERM, SIGKILL)."""
        holder = self._holder
        self._stop.set()
        if holder is not None and not holder.done() and self.session is None:
            holder.cancel()  # still starting: nothing to close politely
            with contextlib.suppress(BaseException):
                await holder
        elif holder is not None and not holder.done():
            try:
                await asyncio.wait_for(asyncio.shield(holder), timeout=6.0)
            except TimeoutError:
                holder.cancel()
                with contextlib.suppress(BaseException):
                    await holder
        self._holder = None

    def drop(self, reason: str) -> None:
        """The connection failed under a call: mark it so the next use connects again."""
        if self.state == "connected":
            self._set("disconnected", reason)
        self._stop.set()

    # --- what the server sends ----------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        from mcp.types import ServerNotification, ToolListChangedNotification

        changed = isinstance(message, ServerNotification) and isinstance(
            message.root, ToolListChangedNotification
        )
        if changed and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = asyncio.create_task(self._refresh_tools())

    async def _refresh_tools(self) -> None:
        session = self.session
        if session is None:
            return
        try:
            self.tools = await _list_tools(session)
        except Exception as error:  # keep the old list, say why
            self.error = f"tools/list after a change failed: {error}"
        self.on_change(self)

    async def _roots(self, context: Any) -> ListRootsResult:
        """``roots/list``: the session's folder, as pi answers (servers such as
        server-filesystem work in the client's roots instead of their arguments)."""
        from mcp.types import ListRootsResult, Root
        from pydantic import FileUrl

        del context  # the answer is the same for every request

        folder = self.session_cwd.resolve()
        return ListRootsResult(roots=[Root(uri=FileUrl(folder.as_uri()), name=folder.name or str(folder))])

    async def _on_log(self, params: Any) -> None:
        if self.log is None:
            return
        data = params.data
        message = data if isinstance(data, str) else _json_text(data)
        self.log.write(self.config.name, str(params.level), params.logger, message)

    # --- calls --------------------------------------------------------------------------------

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], on_progress: Callable[[str], None] | None = None
    ) -> CallToolResult:
        """Call ``tool``; ``timeout`` seconds without an answer or a progress notification end
        it. A dropped connection fails this call and reconnects on the next one."""
        session = await self.ensure_connected()
        last_heard = time.monotonic()

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            nonlocal last_heard
            last_heard = time.monotonic()
            if on_progress is not None:
                amount = f"{progress:g}" if total is None else f"{progress:g}/{total:g}"
                on_progress(message or f"Progress {amount}")

        call = asyncio.create_task(session.call_tool(tool, arguments, progress_callback=progress))
        result: CallToolResult = await self._answered(call, lambda: last_heard, f"tools/call {tool}")
        if self._refreshing is not None and not self._refreshing.done():
            # the call changed the tool list (tools/list_changed came before its result): the
            # next model request must see the new list, so the result waits for it
            await asyncio.wait({self._refreshing}, timeout=self.config.timeout)
        return result

    async def request(self, what: str, make: Callable[[ClientSession], Any]) -> Any:
        """Any other request (resources), under the same timeout; retried once on a dropped
        connection, since reading is safe to repeat."""
        for attempt in (1, 2):
            session = await self.ensure_connected()
            began = time.monotonic()
            try:
                return await self._answered(asyncio.ensure_future(make(session)), _since(began), what)
            except McpCallError:
                if attempt == 2 or self.state == "connected":
                    raise
        raise McpCallError(f"MCP server {self.config.name!r}: {what} failed")

    async def _answered(self, call: asyncio.Future[Any], last_heard: Callable[[], float], what: str) -> Any:
        from mcp.shared.exceptions import McpError

        timeout = self.config.timeout
        # the SDK leaves a request waiting when its connection is closed under it (an HTTP
        # server that forgot the session): the connection's end ends the call too
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            while True:
                remaining = last_heard() + timeout - time.monotonic()
                if remaining <= 0:
                    call.cancel()
                    raise McpCallError(
                        f"MCP server {self.config.name!r} did not answer {what} within {timeout:g} s."
                    )
                await asyncio.wait({call, ended}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                if call.done():
                    return call.result()
                if ended.done():
                    call.cancel()
                    raise McpCallError(
                        f"MCP server {self.config.name!r} closed the connection during {what} "
                        f"({self.error or 'it went away'})."
                    )
        except McpError as error:
            text = str(error.error.message if getattr(error, "error", None) else error)
            if "Connection closed" in text:
                self.drop(text)
                raise McpCallError(
                    f"MCP server {self.config.name!r} closed the connection during {what}; "
                    "it is started again on the next call."
                ) from None
            raise McpCallError(f"MCP server {self.config.name!r}: {text}") from None
        except asyncio.CancelledError:
            call.cancel()
            raise
        except McpCallError:
            raise
        except Exception as error:  # transport errors become the model's message
            self.drop(str(error))
            raise McpCallError(f"MCP server {self.config.name!r}: {self._describe(error)}") from None
        finally:
            ended.cancel()


async def _list_tools(session: ClientSession) -> list[Tool]:
    """Every page of ``tools/list``."""
    tools: list[Tool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            return tools


_STREAM_ENDS = frozenset({"BrokenResourceError", "ClosedResourceError", "EndOfStream"})


def _first(error: BaseException) -> str:
    """The first line of an error's text."""
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def _transient(config: ServerConfig, error: BaseException) -> bool:
    """An HTTP server's network error or passing status (408, 429, 5xx): worth another try."""
    import httpx

    if config.transport != "http":
        return False
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, httpx.HTTPStatusError):
        return error.response.status_code in TRANSIENT_STATUSES or error.response.status_code >= 500
    return isinstance(error, httpx.TransportError)


def _is_sign_in(error: BaseException) -> bool:
    """A server that wants OAuth and has no usable token (only pi_tui.mcp.oauth raises it)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    oauth = sys.modules.get("pi_tui.mcp.oauth")
    return oauth is not None and isinstance(error, oauth.SignInRequired)


def _since(moment: float) -> Callable[[], float]:
    return lambda: moment


def _json_text(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
