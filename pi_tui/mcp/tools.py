"""MCP server tools as agent tools, and which of them a branch has on.

Every tool of a connected server becomes an :class:`McpTool` named ``mcp__<server>__<tool>``
(pi's naming, so the same mcp.json gives the model the same names in pi and pi-tui). Its
exposure decides how the model reaches it: ``direct`` tools are declared like built-in ones,
``deferred`` ones only after ``tool_search`` loaded them on the branch (see
:func:`pi_tui.mcp.tool_search.loaded_on_branch`), ``hidden`` ones never. Calls go
through the agent's tool loop like any tool, so extensions' ``tool_call`` / ``tool_result``
handlers see them, with the server's annotations on the tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from pi_tui.mcp.connection import ServerStatus
    from pi_tui.mcp.host import ToolHost

RESOURCE_TOOL_NAMES = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
TOOL_SEARCH_NAME = "tool_search"
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(slots=True, eq=False)
class McpTool:
    """One server tool, callable by the model once it is declared."""

    manager: ToolHost
    server: str
    tool: str
    name: str
    description: str
    parameters: dict[str, Any]
    exposure: str
    annotations: dict[str, bool] = field(default_factory=dict)
    namespace: str = ""
    namespace_description: str = ""

    label: str = ""

    def __post_init__(self) -> None:
        self.label = self.label or f"{self.server}/{self.tool}"

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_tui.mcp.connection import McpCallError
        from pi_tui.mcp.results import convert_result

        loop = asyncio.get_running_loop()

        def progress(text: str) -> None:  # on the MCP thread: hand it to the agent's loop
            loop.call_soon_threadsafe(
                ctx.on_update, ToolResult.text(text, {"server": self.server, "tool": self.tool})
            )

        try:
            result = await self.manager.call_tool(self.server, self.tool, args, progress)
        except McpCallError as error:
            raise ToolError(str(error), {"server": self.server, "tool": self.tool}) from None
        readable = any(s.has_resources for s in self.manager.statuses() if s.name == self.server)
        return convert_result(self.server, self.tool, result, readable_resources=readable)


def build_agent_tools(manager: ToolHost, statuses: list[ServerStatus]) -> list[AgentTool]:
    """The MCP tools of every connected server that the filter allows and exposure does not
    hide, then the resource tools (when a server has resources) and ``tool_search`` (when a
    server's tools are deferred)."""
    from pi_tui.mcp.config import tool_exposure_for
    from pi_tui.mcp.naming import namespace, normalize_input_schema, server_tool_names

    allowed = manager.tool_filter
    taken: set[str] = set()
    tools: list[AgentTool] = []
    deferred_possible = False
    resource_exposures: list[str] = []
    for status in statuses:
        config = status.config
        if not config.enabled:
            continue
        if (
            config.exposure == "deferred"
            or "deferred" in config.tool_exposure.values()
            or any(word.startswith("codemode") for word in config.tool_exposure.values())
        ):
            deferred_possible = True
        if status.state not in ("connected", "disconnected"):  # a dropped server's tools stay:
            continue  # calling one connects it again
        if status.has_resources and config.exposure != "hidden":
            resource_exposures.append(config.exposure)
        summary = config.description or _first_line(status.instructions)
        names = server_tool_names(status.name, [tool.name for tool in status.tools], taken.__contains__)
        taken.update(names.values())
        for tool in status.tools:
            exposure = tool_exposure_for(config, tool.name)
            if exposure == "hidden":
                continue
            name = names[tool.name]
            if not allowed(name):
                continue
            if exposure == "direct" and not manager.direct_filter(name):
                exposure = "deferred"  # a --tools allow-list that does not name it: searchable only
                deferred_possible = True
            title = tool.title or (tool.annotations.title if tool.annotations else None)
            description = (
                (tool.description or "").strip()
                or title
                or f"{tool.name} (a tool of the MCP server {status.name})"
            )
            tools.append(
                McpTool(
                    manager=manager,
                    server=status.name,
                    tool=tool.name,
                    name=name,
                    description=description,
                    parameters=normalize_input_schema(dict(tool.inputSchema or {})),
                    exposure=exposure,
                    annotations=_hints(tool),
                    namespace=namespace(status.name),
                    namespace_description=summary,
                )
            )
    if resource_exposures:
        from pi_tui.mcp.resources import resource_tools

        exposure = "direct" if "direct" in resource_exposures else "deferred"
        for tool in resource_tools(manager, exposure):
            if allowed(tool.name):
                if exposure == "direct" and not manager.direct_filter(tool.name):
                    cast(Any, tool).exposure, deferred_possible = "deferred", True
                tools.append(tool)
    if deferred_possible and allowed(TOOL_SEARCH_NAME):
        tools.append(_tool_search(manager))
    return tools


def _tool_search(manager: ToolHost) -> AgentTool:
    from pi_tui.mcp.tool_search import SearchEntry, ToolSearchTool

    def catalogue() -> list[SearchEntry]:
        loaded = manager.loaded_names()
        return [
            SearchEntry(
                name=tool.name,
                description=tool.description,
                parameters=tool.parameters,
                namespace_name=getattr(tool, "namespace", ""),
                namespace_description=getattr(tool, "namespace_description", ""),
            )
            for tool in manager.agent_tools()
            if getattr(tool, "exposure", "direct") == "deferred" and tool.name not in loaded
        ]

    search: AgentTool = ToolSearchTool(catalogue=catalogue, wait_ready=manager.wait_all)
    return search


def _hints(tool: Any) -> dict[str, bool]:
    annotations = tool.annotations
    if annotations is None:
        return {}
    hints: dict[str, bool] = {}
    for hint in ANNOTATION_HINTS:
        value = getattr(annotations, hint, None)
        if isinstance(value, bool):
            hints[hint] = value
    return hints


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def visible_tools(mcp_tools: Iterable[AgentTool], loaded: set[str]) -> list[AgentTool]:
    """Of the MCP tools, those the model is offered now: direct ones, and deferred ones the
    branch loaded (``tool_search`` and resource tools carry their own exposure)."""
    return [
        tool for tool in mcp_tools if getattr(tool, "exposure", "direct") != "deferred" or tool.name in loaded
    ]
