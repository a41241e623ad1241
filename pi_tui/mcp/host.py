"""What MCP tools need of the manager, as a Protocol: the tools module never imports the manager
(which builds them), so the two stay out of an import circle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from pi_tui.mcp.connection import ServerStatus
    from pi_tui.tools.base import AgentTool

T = TypeVar("T")


class ToolHost(Protocol):
    tool_filter: Callable[[str], bool]
    direct_filter: Callable[[str], bool]
    loaded_names: Callable[[], set[str]]

    def statuses(self) -> list[ServerStatus]: ...

    def agent_tools(self) -> tuple[AgentTool, ...]: ...

    async def wait_all(self, timeout: float = ...) -> None: ...

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        on_progress: Callable[[str], None] | None = None,
    ) -> CallToolResult: ...

    async def request(self, server: str, what: str, make: Callable[[Any], Awaitable[T]]) -> T: ...
