"""Every MCP server of a session, on a thread and event loop of their own.

Servers connect in the background the moment the manager starts: a front end never waits for
one, except where pi does (the first prompt waits up to 10 s for servers with ``direct`` tools;
``tool_search`` and the resource tools wait for all). Running them on their own loop keeps the
SDK's task groups away from Textual's and uvicorn's loops, lets startup begin connecting before
any front-end loop exists, and makes every front end (TUI, print, json, rpc, server) the same:
they call the async methods here from their own loop, which hop onto the MCP loop and back.

The tool set the agent sees is a snapshot (:meth:`McpManager.agent_tools`) rebuilt on the MCP
loop whenever a server connects, drops or changes its tool list; readers on other threads only
ever take the current tuple.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pi_tui.mcp.connection import McpCallError, ServerConnection, ServerStatus
from pi_tui.mcp.model import EXPOSURES, Exposure, McpConfig, McpToolRules, ServerConfig

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from pi_tui.tools.base import AgentTool

T = TypeVar("T")

FIRST_PROMPT_WAIT = 10.0
"""Seconds the first prompt waits for servers with ``direct`` tools (pi 1.x's figure)."""

ToolFilter = Callable[[str], bool]


class McpManager:
    """The session's servers: connect, list, call, change, stop."""

    def __init__(
        self,
        config: McpConfig,
        *,
        session_cwd: Path,
        auth_store: Path | None = None,
        log_path: Path | None = None,
        tool_rules: McpToolRules | None = None,
    ) -> None:
        from pi_tui.config.paths import agent_dir

        folder = agent_dir()
        self.config = config
        self.session_cwd = session_cwd
        self.auth_store = auth_store or folder / "mcp-auth.json"
        self.log_path = log_path or folder / "mcp.log"
        rules = tool_rules or McpToolRules(_every, _every)
        self.tool_filter: ToolFilter = rules.present
        """Whether an MCP tool exists for this run (``--tools`` / ``-xt`` / ``--no-tools``)."""
        self.direct_filter: ToolFilter = rules.direct
        """Whether it may be declared up front (else only ``tool_search`` can load it)."""
        self.listeners: list[Callable[[], None]] = []
        """Called (on the MCP thread) after any server's state or tools changed."""
        self.loaded_names: Callable[[], set[str]] = set
        """The deferred tools the current branch loaded (the agent sets it; tool_search reads it)."""
        self.said_notes: set[str] = set()
        """Configuration notes already shown this session (/reload does not repeat them)."""
        self.registered: dict[str, ServerConfig] = {}
        """Servers extensions registered (``register_mcp_server``); files win on a name clash."""
        self._connections: dict[str, ServerConnection] = {}
        self._tools: tuple[AgentTool, ...] = ()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._closed = False
        self._first_wait_done = False
        self._section_key: tuple[tuple[str, str | None], ...] | None = None
        self._section = ""
        self._log: Any = None

    # --- the loop -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the thread and begin connecting every enabled server; returns at once."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._serve, name="pi-tui-mcp", daemon=True)
        self._thread.start()
        self._ready.wait()
        atexit.register(self.close)
        self._submit(self._connect_all())

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._ready.set()
        # Never closed: a stopped server's exit may still be reported to it by asyncio's child
        # watcher after close(), which would warn on a closed loop.
        loop.run_forever()

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if self._loop is None:
            self.start()
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _on_mcp_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` on the MCP loop from any other loop (cancelling this cancels it)."""
        return await asyncio.wrap_future(self._submit(coroutine))

    def run_sync(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run on the MCP loop and block for the answer (shell commands, tests)."""
        return self._submit(coroutine).result(timeout)

    # --- connecting ---------------------------------------------------------------------------

    def _all_configs(self) -> dict[str, ServerConfig]:
        """The files' servers, then the extensions' whose names no file uses (names differing
        only in ``-`` and ``_`` are one server, as in pi: the file's wins)."""
        from pi_tui.mcp.naming import namespace

        servers = dict(self.config.servers)
        taken = {namespace(name) for name in servers}
        for name, server in self.registered.items():
            if namespace(name) not in taken:
                servers[name] = server
        return servers

    async def _connect_all(self) -> None:
        from pi_tui.mcp.mcp_log import McpLog

        if self._log is None:
            self._log = McpLog(self.log_path)
        for name, server in self._all_configs().items():
            if name not in self._connections:
                connection = self._new_connection(server)
                self._connections[name] = connection
                connection.start()
        self._rebuild()

    def _new_connection(self, server: ServerConfig) -> ServerConnection:
        return ServerConnection(
            server,
            session_cwd=self.session_cwd,
            auth_store=self.auth_store,
            log=self._log,
            on_change=lambda _connection: self._rebuild(),
        )

    def reload(self, config: McpConfig) -> None:
        """A new configuration (trust granted, /reload): changed servers reconnect, removed
        ones stop, new ones start; unchanged ones stay connected."""
        self.config = config
        self._submit(self._apply())

    async def _apply(self) -> None:
        wanted = self._all_configs()
        for name in list(self._connections):
            connection = self._connections[name]
            if name not in wanted or _connection_fields(wanted[name]) != _connection_fields(
                connection.config
            ):
                await connection.stop()
                del self._connections[name]
            else:
                connection.config = wanted[name]
        await self._connect_all()

    def register(self, server: ServerConfig) -> None:
        """An extension's server for this session (connects like a configured one)."""
        self.registered[server.name] = server
        if self._thread is not None:
            self._submit(self._apply())

    # --- waiting ------------------------------------------------------------------------------

    def has_direct_servers(self) -> bool:
        return any(_has_direct(server) for server in self._all_configs().values() if server.enabled)

    async def wait_for_direct(self, timeout: float = FIRST_PROMPT_WAIT) -> None:
        """The first prompt's wait, once: for servers with ``direct`` tools, and for those whose
        tools ``tool_search`` loaded on the branch (a resumed session declares them again), up to
        ``timeout`` seconds from the prompt (pi 1.x's rule)."""
        if self._first_wait_done or self._thread is None:
            return
        self._first_wait_done = True
        loaded = tuple(self.loaded_names())

        def needed(server: ServerConfig) -> bool:
            prefix = namespace_prefix(server.name)
            return _has_direct(server) or any(name.startswith(prefix) for name in loaded)

        if any(needed(server) for server in self._all_configs().values() if server.enabled):
            await self._on_mcp_loop(self._wait(needed, timeout))

    async def wait_all(self, timeout: float = FIRST_PROMPT_WAIT) -> None:
        """Up to ``timeout`` for every enabled server (tool_search and the resource tools)."""
        if self._thread is not None:
            await self._on_mcp_loop(self._wait(lambda _server: True, timeout))

    async def _wait(self, which: Callable[[ServerConfig], bool], timeout: float) -> None:
        waits = [
            asyncio.ensure_future(connection.wait_settled())
            for connection in self._connections.values()
            if connection.config.enabled and which(connection.config)
        ]
        if waits:
            _done, pending = await asyncio.wait(waits, timeout=timeout)
            for task in pending:
                task.cancel()

    # --- what the agent sees ------------------------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        """Every server, in configuration order (a snapshot)."""
        return [connection.status() for connection in list(self._connections.values())]

    def prompt_section(self) -> str:
        """The system prompt's list of servers to search (pi_tui/mcp/prompt.py), made when that set
        of servers changes and kept otherwise: a server connecting (its instructions arriving)
        must not change the prompt under the provider's cache at every request."""
        from pi_tui.mcp.prompt import searchable_servers, searchable_servers_section

        statuses = self.statuses()
        key = tuple((s.name, s.config.description) for s in searchable_servers(statuses))
        if key != self._section_key:
            self._section_key, self._section = key, searchable_servers_section(statuses)
        return self._section

    def agent_tools(self) -> tuple[AgentTool, ...]:
        """Every reachable MCP tool (direct and deferred), resource tools and ``tool_search``."""
        return self._tools

    def _rebuild(self) -> None:
        from pi_tui.mcp.tools import build_agent_tools

        self._tools = tuple(build_agent_tools(self, [c.status() for c in self._connections.values()]))
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a listener's failure never stops the servers
                listener()

    # --- calls --------------------------------------------------------------------------------

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        on_progress: Callable[[str], None] | None = None,
    ) -> CallToolResult:
        """Call a server's tool from any loop (progress is reported on the MCP thread)."""
        return await self._on_mcp_loop(self._connection(server).call_tool(tool, arguments, on_progress))

    async def request(self, server: str, what: str, make: Callable[[Any], Awaitable[T]]) -> T:
        """Another request to ``server`` (``make`` gets its ClientSession)."""
        result: T = await self._on_mcp_loop(self._connection(server).request(what, make))
        return result

    def _connection(self, server: str) -> ServerConnection:
        connection = self._connections.get(server)
        if connection is None:
            raise McpCallError(f"No MCP server named {server!r}.")
        return connection

    # --- changes from /mcp --------------------------------------------------------------------

    async def reconnect(self, name: str) -> ServerStatus:
        async def again() -> ServerStatus:
            connection = self._connection(name)
            await connection.stop()
            connection.start()
            await connection.wait_settled()
            return connection.status()

        return await self._on_mcp_loop(again())

    async def set_enabled(self, name: str, enabled: bool) -> ServerStatus:
        async def change() -> ServerStatus:
            connection = self._connection(name)
            connection.config.enabled = enabled
            if enabled:
                connection.start()
                await connection.wait_settled()
            else:
                await connection.stop()
                connection.start()  # a disabled server settles as "disabled"
            return connection.status()

        return await self._on_mcp_loop(change())

    def set_exposure(self, name: str, exposure: str) -> None:
        if exposure not in EXPOSURES:
            raise ValueError(f"exposure must be one of {', '.join(EXPOSURES)}")
        connection = self._connection(name)
        connection.config.exposure = cast(Exposure, exposure)
        connection.config.written_exposure = exposure
        self._submit(_call(self._rebuild))

    # --- stopping -----------------------------------------------------------------------------

    def close(self, timeout: float = 8.0) -> None:
        """Stop every server (stdin closed, SIGTERM, SIGKILL to its group) and the thread."""
        if self._closed or self._loop is None:
            return
        self._closed = True
        loop = self._loop

        async def stop_all() -> None:
            await asyncio.gather(*(c.stop() for c in self._connections.values()), return_exceptions=True)

        with contextlib.suppress(Exception):  # best effort: the process is ending
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)


async def _call(function: Callable[[], None]) -> None:
    function()


def _every(_name: str) -> bool:
    return True


def namespace_prefix(server: str) -> str:
    """How the names of a server's tools begin (``mcp__<server>__``, sanitised as pi does)."""
    from pi_tui.mcp.naming import tool_name

    return tool_name(server, "")


def _has_direct(server: ServerConfig) -> bool:
    return server.exposure == "direct" or "direct" in server.tool_exposure.values()


def _connection_fields(server: ServerConfig) -> tuple[Any, ...]:
    """What needs a new connection when it changes (not exposure or the description)."""
    return (
        server.transport,
        server.command,
        tuple(server.args),
        tuple(sorted(server.env.items())),
        server.cwd,
        server.url,
        tuple(sorted(server.headers.items())),
        repr(server.oauth),
        server.enabled,
        server.timeout,
    )
