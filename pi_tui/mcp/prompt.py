"""The system prompt's note on MCP servers whose tools the model has to search for.

Deferred tools are not declared, and ``tool_search``'s own description names no server (it stays
the same while servers connect), so without this the model would not know what is there to be
found. pi 1.x keeps the same list in its ``mcp_servers`` section: each server with its
``description``, else the first line of the instructions it sent when it connected.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pi_tui.text_safety import clean_text

if TYPE_CHECKING:
    from pi_tui.mcp.connection import ServerStatus

SUMMARY_LIMIT = 200
"""Characters of a server's summary line (instructions can be long)."""


def searchable_servers(statuses: Iterable[ServerStatus]) -> list[ServerStatus]:
    """The enabled servers with deferred tools, in configuration order."""
    found = []
    for status in statuses:
        config = status.config
        words = set(config.tool_exposure.values())
        deferred = (
            config.exposure == "deferred"
            or "deferred" in words
            or any(w.startswith("codemode") for w in words)
        )
        if config.enabled and deferred:
            found.append(status)
    return found


def searchable_servers_section(statuses: Iterable[ServerStatus]) -> str:
    """The section, or "" when no enabled server has deferred tools."""
    lines: list[str] = []
    for status in searchable_servers(statuses):
        config = status.config
        summary = config.description or _first_line(status.instructions)
        summary = clean_text(" ".join(summary.split()))[:SUMMARY_LIMIT]
        lines.append(f"- {config.name}: {summary}" if summary else f"- {config.name}")
    if not lines:
        return ""
    head = (
        "# MCP servers\n\nThese MCP servers' tools are not declared up front: call tool_search with "
        "what you need, and the matching tools are declared for your next call."
    )
    return "\n".join([head, *lines])


def _first_line(text: str | None) -> str:
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
