"""The resource tools: list and read what MCP servers offer as resources.

The three names and shapes are the ones Codex, OpenCode and pi 1.x give models
(``list_mcp_resources``, ``list_mcp_resource_templates``, ``read_mcp_resource``), so prompts and
habits carry over. They reach every connected, non-hidden server that has resources, after
waiting for the servers still connecting. Resources of MCP Apps (``ui://`` or
``text/html;profile=mcp-app``) are left out: nothing here draws them; icons too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from pi_tui.mcp.host import ToolHost

READ_ONLY = {"readOnlyHint": True}


def _is_app(item: dict[str, Any]) -> bool:
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    mime = str(item.get("mimeType") or "").replace(" ", "").lower()
    return uri.startswith("ui://") or mime.startswith("text/html;profile=mcp-app")


def _rows(server: str, items: list[Any]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        data = item.model_dump(mode="json", exclude_none=True, by_alias=True)
        data.pop("icons", None)
        data.pop("_meta", None)
        if not _is_app(data):
            rows.append({"server": server, **data})
    return rows


@dataclass(slots=True, eq=False)
class _ResourceTool:
    manager: ToolHost
    exposure: str
    name: str = ""
    label: str = ""
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, bool] = field(default_factory=dict)

    def _servers(self, wanted: str | None) -> list[str]:
        names = [s.name for s in self.manager.statuses() if s.state == "connected" and s.has_resources]
        if wanted is None:
            return names
        if wanted not in names:
            raise ToolError(
                f"No connected MCP server named {wanted!r} has resources"
                + (f" (servers with resources: {', '.join(names)})." if names else ".")
            )
        return [wanted]


class _ListTool(_ResourceTool):
    kind = "resources"

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_tui.mcp.connection import McpCallError

        await self.manager.wait_all()
        server = args.get("server")
        cursor = args.get("cursor")
        if server is not None and not isinstance(server, str):
            raise ToolError("server must be a string")
        if cursor is not None and (not isinstance(cursor, str) or server is None):
            raise ToolError("cursor needs the server whose listing it continues")
        listing: dict[str, Any] = {"server": server} if server else {}
        rows: list[dict[str, Any]] = []
        try:
            for name in self._servers(server):
                next_cursor = cursor if server else None
                while True:
                    page = await self.manager.request(name, f"{self._method()}", self._page(next_cursor))
                    rows.extend(_rows(name, self._items(page)))
                    next_cursor = page.nextCursor
                    if server or not next_cursor:
                        break
                if server and next_cursor:
                    listing["nextCursor"] = next_cursor
        except McpCallError as error:
            raise ToolError(str(error)) from None
        listing[self._key()] = rows
        return ToolResult.text(json.dumps(listing, ensure_ascii=False, indent=2), {"count": len(rows)})

    def _method(self) -> str:
        return "resources/list"

    def _key(self) -> str:
        return "resources"

    def _page(self, cursor: str | None) -> Any:
        return lambda session: session.list_resources(cursor) if cursor else session.list_resources()

    def _items(self, page: Any) -> list[Any]:
        return list(page.resources)


class _TemplatesTool(_ListTool):
    def _method(self) -> str:
        return "resources/templates/list"

    def _key(self) -> str:
        return "resourceTemplates"

    def _page(self, cursor: str | None) -> Any:
        return lambda session: (
            session.list_resource_templates(cursor) if cursor else session.list_resource_templates()
        )

    def _items(self, page: Any) -> list[Any]:
        return list(page.resourceTemplates)


class _ReadTool(_ResourceTool):
    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pydantic import AnyUrl

        from pi_tui.mcp.connection import McpCallError
        from pi_tui.mcp.results import convert_resource_contents

        server, uri = args.get("server"), args.get("uri")
        if not isinstance(server, str) or not isinstance(uri, str) or not uri:
            raise ToolError("read_mcp_resource needs a server and a uri")
        await self.manager.wait_all()
        self._servers(server)
        try:
            result = await self.manager.request(
                server, "resources/read", lambda session: session.read_resource(AnyUrl(uri))
            )
        except McpCallError as error:
            raise ToolError(str(error)) from None
        return convert_resource_contents(server, uri, list(result.contents))


_SERVER = {"type": "string", "description": "Only this server's resources (one page; see cursor)."}
_CURSOR = {"type": "string", "description": "Continue a server's listing where nextCursor said."}


def resource_tools(manager: ToolHost, exposure: str) -> list[AgentTool]:
    """The three resource tools, with the widest exposure among the servers that have resources."""
    listing = {
        "type": "object",
        "properties": {"server": _SERVER, "cursor": _CURSOR},
        "additionalProperties": False,
    }
    return [
        _ListTool(
            manager,
            exposure,
            "list_mcp_resources",
            "list_mcp_resources",
            "List the resources MCP servers offer (files, records, documents) as JSON: server, uri, "
            "name, mimeType... Without a server, every server's resources.",
            listing,
            READ_ONLY,
        ),
        _TemplatesTool(
            manager,
            exposure,
            "list_mcp_resource_templates",
            "list_mcp_resource_templates",
            "List the URI templates of resources MCP servers can produce on request but do not list.",
            listing,
            READ_ONLY,
        ),
        _ReadTool(
            manager,
            exposure,
            "read_mcp_resource",
            "read_mcp_resource",
            "Read one resource of an MCP server by its uri: text comes back as text, images as "
            "images, other binary content as a file path.",
            {
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The server that offers the resource."},
                    "uri": {"type": "string", "description": "The resource's uri."},
                },
                "required": ["server", "uri"],
                "additionalProperties": False,
            },
            READ_ONLY,
        ),
    ]
