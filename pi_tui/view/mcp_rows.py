"""PURE: what ``/mcp`` says about each MCP server, as plain text rows.

The screen (pi_tui/tui/screens/mcp_screen.py) draws these; keeping the wording here means the
order of the list, the state words and what counts as "needs attention" are one set of rules a
unit test can read without a terminal. Nothing here draws or escapes: every string that comes
from a server or a file (names, errors, stderr, tool descriptions) is data the screen passes
through :func:`~pi_tui.text_safety.for_terminal` before it reaches the terminal.

What a row never shows: header values and env values (API keys live there), only their names.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pi_tui.mcp.config import tool_exposure_for
from pi_tui.mcp.connection import ServerStatus
from pi_tui.mcp.naming import tool_name

ATTENTION = ("failed", "needs-sign-in", "disconnected")
"""States that want the user: listed first, and reported once after startup (not disconnected:
a dropped server reconnects on its next call by itself)."""

REPORTED = ("failed", "needs-sign-in")
"""States the one-time chat line after startup names."""

EXPOSURE_WORDS: dict[str, str] = {
    "direct": "declared to the model like a built-in tool",
    "deferred": "declared once tool_search loads it for the next call",
    "hidden": "unreachable",
}
"""The exposures ``/mcp`` offers, with what each means (pi's codemode is read as deferred)."""

STDERR_LINES = 10
"""Lines of a failed server's stderr the server's view shows: its end, where the reason is."""

STATE_MARKS: dict[str, str] = {
    "connected": "●",
    "connecting": "◌",
    "disabled": "○",
    "failed": "✗",
    "needs-sign-in": "!",
    "disconnected": "✗",
}


@dataclass(frozen=True, slots=True)
class ServerRow:
    """One line of the server list: the name and what follows it."""

    name: str
    state: str
    mark: str
    detail: str
    """State, tool count, exposure and source, joined with `` · ``."""

    @property
    def attention(self) -> bool:
        return self.state in ATTENTION


@dataclass(frozen=True, slots=True)
class ToolRow:
    """One tool of a server in the server's view."""

    tool: str
    """The name the server gives it."""
    mcp_name: str
    """``mcp__<server>__<tool>``, as the model sees it."""
    exposure: str
    differs: bool
    """Its ``toolExposure`` gives it another exposure than the server's."""
    description: str


def ordered(statuses: Iterable[ServerStatus]) -> list[ServerStatus]:
    """Servers that need attention first, then the others; configuration order within each."""
    listed = list(statuses)
    return [s for s in listed if s.state in ATTENTION] + [s for s in listed if s.state not in ATTENTION]


def tool_count(status: ServerStatus) -> str:
    """``3 tools`` for a connected server; nothing for one whose tools are not known."""
    if status.state != "connected":
        return ""
    count = len(status.tools)
    return f"{count} tool{'s' if count != 1 else ''}"


def server_row(status: ServerStatus) -> ServerRow:
    config = status.config
    parts = [status.state, tool_count(status), config.exposure, scope_label(status)]
    return ServerRow(
        name=status.name,
        state=status.state,
        mark=STATE_MARKS.get(status.state, "?"),
        detail=" · ".join(part for part in parts if part),
    )


def scope_label(status: ServerStatus) -> str:
    """Which kind of file defines the server (``user``, ``project``...), for the list: the
    paths are in the server's view, where a long one does not push the state off the row."""
    config = status.config
    label = config.source.label() if config.source.scope == "extension" else config.source.scope
    return f"{label}, project override" if config.override_source is not None else label


def source_label(status: ServerStatus) -> str:
    """Where the server is defined, and the project override when one changes it."""
    config = status.config
    label = config.source.label()
    if config.override_source is not None:
        label += f" (override: {config.override_source.label()})"
    return label


def transport_lines(status: ServerStatus) -> list[str]:
    """How pi-tui reaches the server: the command line or the URL, and the names (only) of the
    environment variables and headers it sets."""
    config = status.config
    lines: list[str] = []
    if config.transport == "stdio":
        words = [config.command, *config.args] if config.command else config.args
        lines.append(f"Command: {shlex.join(words)}")  # as a shell needs it: pasted, it runs the same
        if config.cwd:
            lines.append(f"Folder: {config.cwd}")
        if config.env:
            lines.append(f"Environment: {', '.join(config.env)} (values hidden)")
    else:
        lines.append(f"URL: {config.url or ''}")
        if config.headers:
            lines.append(f"Headers: {', '.join(config.headers)} (values hidden)")
        if config.oauth:
            lines.append("OAuth: configured client settings")
    return lines


def detail_lines(status: ServerStatus) -> list[str]:
    """The server view's heading lines: state, source, transport, what the server said it is."""
    config = status.config
    state = status.state
    if state == "connected":
        count = tool_count(status)
        took = f", in {status.connected_seconds:.1f} s" if status.connected_seconds is not None else ""
        state = f"connected ({count}{took})"
    lines = [f"State: {state}", f"Defined in: {source_label(status)}", *transport_lines(status)]
    lines.append(f"Exposure: {config.exposure} ({EXPOSURE_WORDS.get(config.exposure, '')})")
    if config.tool_exposure:
        lines.append("Some tools set their own exposure (toolExposure).")
    if status.server_name:
        version = f" {status.server_version}" if status.server_version else ""
        lines.append(f"Server: {status.server_name}{version}")
    return lines


def problem_text(status: ServerStatus) -> str:
    """The full error, then the tail of a stdio server's stderr (empty when all is well)."""
    if status.state == "connected":
        return ""
    parts = [status.error] if status.error else []
    tail = "\n".join(status.stderr_tail.strip("\n").splitlines()[-STDERR_LINES:])
    if tail and status.state in ("failed", "disconnected"):
        parts.append(f"stderr (last lines):\n{tail}")
    return "\n".join(parts)


def tool_rows(status: ServerStatus, names: Mapping[str, str] | None = None) -> list[ToolRow]:
    """The server's tools with their effective exposure; ``names`` maps a server tool name to
    the agent's name for it (collisions get a hash suffix there), else pi's plain name."""
    rows = []
    for tool in status.tools:
        exposure = tool_exposure_for(status.config, tool.name)
        description = (tool.description or "").strip().splitlines()
        rows.append(
            ToolRow(
                tool=tool.name,
                mcp_name=(names or {}).get(tool.name) or tool_name(status.name, tool.name),
                exposure=exposure,
                differs=exposure != status.config.exposure,
                description=description[0] if description else "",
            )
        )
    return rows


def report_line(status: ServerStatus) -> str:
    """The one chat line after startup for a server that failed or needs sign-in."""
    if status.state == "needs-sign-in":
        return f'MCP server "{status.name}" needs sign-in: /mcp login {status.name} (or /mcp to see it).'
    lines = (status.error or "").strip().splitlines()
    error = lines[0] if lines else "it did not connect"
    for prefix in (f"MCP server {status.name!r}: ", f'MCP server "{status.name}": '):
        error = error.removeprefix(prefix)
    return f'MCP server "{status.name}" failed: {error} (/mcp shows the details)'


def no_servers_text(agent_dir: Path, *, no_mcp: bool) -> str:
    """What ``/mcp`` says when there is nothing to list."""
    if no_mcp:
        return "MCP is off for this run (--no-mcp): no server was read or started."
    return (
        f"No MCP servers are configured. Add them to {agent_dir / 'mcp.json'}, or to "
        ".agent/mcp.json in a trusted project: pi-tui mcp add <name> -- <command> [args...] "
        "(or --url URL). pi's own mcp.json files are read too."
    )


def unknown_server_text(name: str, known: Iterable[str]) -> str:
    names = ", ".join(known)
    return f'No MCP server named "{name}". Known: {names or "none"}.'
