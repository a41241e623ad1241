"""What every extension module shares, below all of them: the error an extension is told,
the abort signal, what ``pi.exec`` returns, and the runner as ``pi`` and ``ctx`` see it.

``pi`` (:mod:`pi_tui.extensions.api`), ``ctx`` (:mod:`pi_tui.extensions.context`), session
moves and renderers are made by :class:`~pi_tui.extensions.runner.ExtensionRunner` and call
back into it. They name it through :class:`Runner`, a protocol, rather than importing the
runner: the runner is built from them, so importing it back closed a circle of type imports
across the package. This module imports nothing of pi-tui's at run time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_tui.extensions.tool import RegisteredTool
    from pi_tui.extensions.ui import ExtensionUI


class ExtensionError(Exception):
    """A misuse of the API (an unknown event name, a bad tool...): raised to the extension."""


class AbortSignal:
    """Set when the user stops the run (Escape, Ctrl+C, rpc ``abort``)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()


@dataclass(slots=True)
class ExecResult:
    """What ``pi.exec`` ran: its output, exit code and whether it was killed."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool = False


class Runner(Protocol):
    """The runner's members that ``pi``, ``ctx``, session moves and renderers use; the
    :class:`~pi_tui.extensions.runner.ExtensionRunner` has them all."""

    registry: Any
    ui: ExtensionUI
    signal: AbortSignal
    channels: dict[str, list[Callable[[Any], Any]]]

    def live_agent(self) -> Any: ...
    def failed(self, extension: str, where: str, error: BaseException) -> None: ...
    def call_quietly(self, function: Callable[..., Any], *args: Any) -> None: ...

    # registering (what ``pi.register_*`` and ``pi.on`` hand over)
    def add_handler(self, extension: str, event: str, function: Callable[..., Any]) -> None: ...
    def add_tool(self, tool: RegisteredTool) -> None: ...
    def add_command(
        self,
        extension: str,
        name: str,
        handler: Callable[..., Any],
        description: str,
        usage: str,
        completions: Callable[[str], Sequence[str] | None] | None,
    ) -> None: ...
    def add_shortcut(
        self, extension: str, key: str, handler: Callable[..., Any], description: str
    ) -> None: ...
    def add_flag(self, extension: str, name: str, description: str, kind: str, default: Any) -> None: ...
    def flag_value(self, name: str) -> Any: ...
    def add_renderer(self, extension: str, custom_type: str, renderer: Callable[..., Any]) -> None: ...
    def add_provider(self, extension: str, name: str, config: dict[str, Any]) -> None: ...
    def all_tool_names(self) -> list[str]: ...
    def all_tool_info(self) -> list[dict[str, Any]]: ...
    def tool_info(self, name: str) -> dict[str, Any] | None: ...
    def add_mcp_server(self, extension: str, name: str, config: Any) -> None: ...
    def mcp_server_list(self) -> list[dict[str, Any]]: ...
    def set_active_tools(self, names: list[str]) -> None: ...
    def command_list(self) -> list[dict[str, Any]]: ...

    # acting on the session
    def send_message(self, extension: str, message: Any, deliver: str, trigger_turn: bool) -> None: ...
    def send_user_message(self, content: Any, deliver: str | None) -> None: ...
    def set_label(self, entry_id: str, label: str | None) -> None: ...
    def set_session_name(self, name: str) -> None: ...
    def request_shutdown(self) -> None: ...
    async def exec(
        self, command: str, args: list[str], *, cwd: str | None = None, timeout: float | None = None
    ) -> ExecResult: ...
    async def wait_for_idle(self) -> None: ...
    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        files: str = "keep",
        force: bool = False,
        keep_edited: bool = False,
    ) -> Any: ...
    async def undo_file_restore(self) -> Any: ...
    async def before(self, event: str, **fields: Any) -> dict[str, Any] | None: ...
    async def session_start(self, reason: str, previous_session_file: str | None = None) -> None: ...
    async def session_shutdown(
        self, reason: str = "quit", target_session_file: str | None = None
    ) -> None: ...
