"""Starting a session's MCP servers from the command line's choices.

Kept apart from ``startup`` so every front end (and ``pi-tui mcp list``) builds the manager the
same way: which files (project ones only when trusted), which tools ``--tools`` / ``-xt`` /
``--no-tools`` allow (pi 1.x's rule: ``--tools`` filters MCP tools only once one of its entries
starts with ``mcp__``), and nothing at all under ``--no-mcp``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.mcp.model import McpToolRules
from pi_tui.tools.name_patterns import name_matcher

if TYPE_CHECKING:
    from pi_tui.mcp.manager import McpManager
    from pi_tui.mcp.model import McpConfig

MCP_PREFIX = "mcp__"
MCP_SUPPORT_TOOLS = frozenset(
    {"tool_search", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}
)


def is_mcp_tool_name(name: str) -> bool:
    """A name (or pattern) ``--tools`` may give that only MCP provides."""
    return name.startswith(MCP_PREFIX) or name in MCP_SUPPORT_TOOLS


def mcp_tool_rules(
    tools: list[str] | None, exclude: list[str] | None, *, no_tools: bool = False
) -> McpToolRules:
    """``-xt`` removes what it matches (``'mcp__*'``: every server tool). ``--tools`` removes MCP
    tools only once an entry starts with ``mcp__`` (then only matching ones stay; the resource
    tools count as MCP tools), but as an allow-list it declares directly only what it names.
    ``tool_search`` stays unless an allow-list leaves it out. ``--no-tools`` alone: none."""
    excluded = name_matcher(list(exclude or []))
    entries = [entry.lstrip("+") for entry in tools or [] if not entry.startswith("-")]
    plain = [entry for entry in tools or [] if not entry.startswith(("+", "-"))]
    chosen = name_matcher(entries)
    filters_mcp = any(entry.startswith(MCP_PREFIX) for entry in entries)
    allow_list = bool(plain) or (no_tools and tools is not None)

    def present(name: str) -> bool:
        if excluded(name) or (no_tools and not tools):
            return False
        if name == "tool_search":
            return chosen(name) or not allow_list
        if filters_mcp or (no_tools and tools is not None):
            return chosen(name)
        return True

    def direct(name: str) -> bool:
        return present(name) and (chosen(name) or not allow_list)

    return McpToolRules(present, direct, allow_list, filters_mcp)


def unreachable_line(rules: McpToolRules) -> str | None:
    """pi's one warning: an allow-list that declares no MCP tool and leaves ``tool_search`` out
    makes the servers' other tools unreachable."""
    if rules.allow_list and not rules.names_mcp and not rules.present("tool_search"):
        return (
            "MCP tools that --tools does not name are not declared, and without tool_search in "
            "--tools they cannot be reached (name them, e.g. 'mcp__<server>__*', or add tool_search)."
        )
    return None


def load_config(cwd: str | Path, *, trusted: bool) -> McpConfig:
    """The merged mcp.json files for ``cwd`` (the project's only when ``trusted``)."""
    from pi_tui.mcp.config import load_mcp_config

    return load_mcp_config(Path(cwd), project_trusted=trusted)


def start_mcp(
    cwd: str | Path,
    *,
    trusted: bool,
    tools: list[str] | None = None,
    exclude: list[str] | None = None,
    no_tools: bool = False,
) -> tuple[McpManager | None, list[str]]:
    """The started manager (None when no server is configured) and the lines to show once:
    configuration problems and notes."""
    from pi_tui.mcp.manager import McpManager

    config = load_config(cwd, trusted=trusted)
    lines = [problem.line() for problem in config.problems] + list(config.notes)
    if not config.servers:
        return None, lines
    rules = mcp_tool_rules(tools, exclude, no_tools=no_tools)
    warning = unreachable_line(rules)
    manager = McpManager(config, session_cwd=Path(cwd), tool_rules=rules)
    manager.start()
    manager.said_notes.update(config.notes)
    return manager, lines + ([warning] if warning else [])


@dataclass(frozen=True, slots=True)
class McpChoices:
    """The command line's MCP choices, kept for a manager made after startup: an extension may
    register a server in a session whose files configure none (startup then made no manager)."""

    enabled: bool = True
    """False under ``--no-mcp``: no server connects, an extension's neither."""
    tools: list[str] | None = None
    exclude: list[str] | None = None
    no_tools: bool = False


def ensure_manager(agent: Any, cwd: str | Path, choices: McpChoices | None = None) -> McpManager | None:
    """``agent.mcp``; when the session has none, a new manager (no configured server, the same
    tool filter as startup's) started and attached to ``agent``. None under ``--no-mcp``."""
    from pi_tui.mcp.manager import McpManager
    from pi_tui.mcp.model import McpConfig

    existing: McpManager | None = agent.mcp
    if existing is not None:
        return existing
    choices = choices or McpChoices()
    if not choices.enabled:
        return None
    rules = mcp_tool_rules(choices.tools, choices.exclude, no_tools=choices.no_tools)
    manager = McpManager(McpConfig(), session_cwd=Path(cwd), tool_rules=rules)
    manager.loaded_names = agent.mcp_loaded_names
    manager.start()
    agent.mcp = manager
    return manager


def reload_mcp(agent: Any, cwd: str | Path, *, trusted: bool, choices: McpChoices | None = None) -> list[str]:
    """Read the mcp.json files again (``/reload``, or the folder just became trusted): changed
    servers reconnect, removed ones stop, new ones (a trusted project's) start. Returns the
    configuration's problems and notes, one line each."""
    choices = choices or McpChoices()
    if not choices.enabled:
        return []
    config = load_config(cwd, trusted=trusted)
    said: set[str] = agent.mcp.said_notes if agent.mcp is not None else set()
    lines = [problem.line() for problem in config.problems] + [n for n in config.notes if n not in said]
    if agent.mcp is None and not config.servers:
        return lines
    manager = ensure_manager(agent, cwd, choices)
    if manager is not None:
        manager.said_notes.update(config.notes)  # a note is said once a session, problems each time
        manager.reload(config)
    return lines
