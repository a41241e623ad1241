"""``pi-tui acp``: the Agent Client Protocol's methods, as the SDK calls them.

``initialize`` is answered from here, with only the SDK loaded; everything else goes to the
:class:`~pi_tui.acp.core.AcpCore`, imported right after that answer has been written (while the
editor gets ready to open a session), so the editor's first question does not wait for the bulk
of pi-tui to load.

Answers are the SDK's models (the SDK serialises them); mistakes a client or user can fix are
JSON-RPC errors with one clear line as their message, never a traceback.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from acp import PROTOCOL_VERSION
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from pi_tui import __version__
from pi_tui.acp.errors import user_error
from pi_tui.start_options import StartOptions

if TYPE_CHECKING:
    from pi_tui.acp.core import AcpCore

Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Any]])


def answered_before_exit(method: Handler) -> Handler:
    """Count the request as in flight until its answer is written: requests read before the
    input ended (a script piping a file in) are answered before the agent exits."""

    @functools.wraps(method)
    async def wrapper(self: PiAcpAgent, *args: Any, **kwargs: Any) -> Any:
        task = asyncio.current_task()
        if task is not None:
            self.in_flight.add(task)
            task.add_done_callback(self.in_flight.discard)
        return await method(self, *args, **kwargs)

    return cast(Handler, wrapper)


class PiAcpAgent:
    """The ACP agent: one per ``pi-tui acp`` process, any number of sessions."""

    def __init__(self, options: StartOptions, start_mode: str = "code") -> None:
        self.options = options
        self.start_mode = start_mode
        self.conn: Any = None
        self.client_capabilities: Any = None
        self._core: AcpCore | None = None
        self.in_flight: set[asyncio.Task[Any]] = set()
        """The request handlers running, each until its answer is written (see ``finish``)."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def core(self) -> AcpCore:
        """The session side, loaded on first use (or just after ``initialize``)."""
        if self._core is None:
            from pi_tui.acp.core import AcpCore

            self._core = AcpCore(self.options, self.start_mode, self.conn, self.client_capabilities)
        return self._core

    # --- set-up ---------------------------------------------------------------------------

    @answered_before_exit
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        if self._core is not None:
            self._core.client_capabilities = client_capabilities
        else:  # after this answer is on its way (the SDK writes it when this returns)
            asyncio.get_running_loop().call_later(0.02, self.core)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True, audio=False),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="pi-tui", title="pi-tui", version=__version__),
            auth_methods=[],
        )

    @answered_before_exit
    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise user_error("pi-tui needs no sign-in here: it uses your keys and logins (pi-tui auth login)")

    # --- the rest: the core ---------------------------------------------------------------

    @answered_before_exit
    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        return await self.core().new_session(cwd, mcp_servers)

    @answered_before_exit
    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        return await self.core().load_session(cwd, session_id, mcp_servers)

    @answered_before_exit
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        return await self.core().list_sessions(cwd, cursor)

    @answered_before_exit
    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        return await self.core().set_session_mode(session_id, mode_id)

    @answered_before_exit
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        return await self.core().set_config_option(config_id, session_id, value)

    @answered_before_exit
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        return await self.core().prompt(session_id, prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if self._core is not None:
            self._core.cancel(session_id)

    @answered_before_exit
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.core().ext_method(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # --- the end --------------------------------------------------------------------------

    async def finish(self, timeout: float) -> None:
        """The input ended (or a signal came): replies stop, other requests read before the end
        are answered, at most ``timeout`` seconds."""
        if self._core is not None:
            self._core.cancel_all()
        running = {task for task in self.in_flight if task is not asyncio.current_task()}
        if running:
            await asyncio.wait(running, timeout=timeout)

    async def close_all(self) -> None:
        if self._core is not None:
            await self._core.close_all()
