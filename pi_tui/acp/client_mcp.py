"""The MCP servers an ACP client hands over in ``session/new`` / ``session/load``.

Editors pass the MCP servers their user configured (Zed's context servers, say) so the agent
can use them. They join the session like an extension's ``pi.register_mcp_server``: checked by
mcp.json's rules, connected by the session's MCP manager on its own thread, their tools named
``mcp__<server>__<tool>``. ACP gives environment variables and headers as name/value lists;
mcp.json has objects, so they are turned into those. SSE servers are refused, as in mcp.json:
the capability is not offered in ``initialize``, so a client sending one anyway is told why.
"""

from __future__ import annotations

import re
from typing import Any

from pi_tui.mcp.config import check_entry, server_from_entry
from pi_tui.mcp.model import ConfigSource, ServerConfig

NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


class ClientMcpError(ValueError):
    """A server the client sent that cannot be used (an invalid-params answer, one line)."""


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _pairs(items: Any) -> dict[str, str]:
    return {str(_field(item, "name")): str(_field(item, "value")) for item in items or ()}


def server_name(name: str) -> str:
    """An editor's display name ("GitHub Tools") as an MCP server name pi accepts."""
    cleaned = NAME_CHARS.sub("-", name.strip()).strip("-")
    return cleaned or "client"


def client_servers(servers: list[Any] | None) -> list[ServerConfig]:
    """The client's servers as pi-tui server configs; :class:`ClientMcpError` for one that is not
    usable (nothing is connected then)."""
    out: list[ServerConfig] = []
    for server in servers or ():
        raw_name = str(_field(server, "name") or "")
        name = server_name(raw_name)
        kind = _field(server, "type")
        if kind == "sse":
            raise ClientMcpError(
                f"MCP server {raw_name!r}: SSE servers are not supported; use streamable HTTP"
            )
        if kind == "http":
            entry: dict[str, Any] = {"type": "http", "url": _field(server, "url")}
            headers = _pairs(_field(server, "headers"))
            if headers:
                entry["headers"] = headers
        else:
            entry = {"command": _field(server, "command"), "args": list(_field(server, "args") or [])}
            env = _pairs(_field(server, "env"))
            if env:
                entry["env"] = env
        problem = check_entry(name, entry)
        if problem is not None:
            raise ClientMcpError(f"MCP server {raw_name!r}: {problem}")
        out.append(server_from_entry(name, entry, ConfigSource("client")))
    return out
