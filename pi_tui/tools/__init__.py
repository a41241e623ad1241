"""The built-in tools, and the sets the agent starts with.

``read``, ``bash``, ``edit`` and ``write`` are on by default (as in pi); ``grep``, ``find`` and
``ls`` can be switched on with ``--tools``. Each tool takes the working directory it was made
for, but paths are resolved against ``ctx.cwd`` at call time, which the agent sets to the same
folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult

__all__ = [
    "ALL_TOOL_NAMES",
    "DEFAULT_TOOL_NAMES",
    "AgentTool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "all_tools",
    "default_tools",
    "tools_by_name",
]

# Nothing heavy is imported with this package: it is also the way to ``process_tree``, which
# every pi-tui command imports at start (the tool modules and the message models behind
# ``base``, 130 ms, would delay the TUI's first frame and an editor's ``initialize``). Each
# tool's module is imported when a tool is made; ``base``'s names on first use.
_BASE_NAMES = frozenset({"AgentTool", "ToolContext", "ToolError", "ToolResult"})


def __getattr__(name: str) -> Any:
    if name in _BASE_NAMES:
        from pi_tui.tools import base

        return getattr(base, name)
    raise AttributeError(f"module 'pi_tui.tools' has no attribute {name!r}")


def _read(cwd: Path) -> AgentTool:
    from pi_tui.tools.read import ReadTool

    return ReadTool(cwd=cwd)


def _bash(cwd: Path) -> AgentTool:
    from pi_tui.tools.bash import BashTool

    return BashTool(cwd=cwd)


def _edit(cwd: Path) -> AgentTool:
    from pi_tui.tools.edit import EditTool

    return EditTool(cwd=cwd)


def _write(cwd: Path) -> AgentTool:
    from pi_tui.tools.write import WriteTool

    return WriteTool(cwd=cwd)


def _grep(cwd: Path) -> AgentTool:
    from pi_tui.tools.grep import GrepTool

    return GrepTool(cwd=cwd)


def _find(cwd: Path) -> AgentTool:
    from pi_tui.tools.find import FindTool

    return FindTool(cwd=cwd)


def _ls(cwd: Path) -> AgentTool:
    from pi_tui.tools.ls import LsTool

    return LsTool(cwd=cwd)


_FACTORIES: dict[str, Callable[[Path], AgentTool]] = {
    "read": _read,
    "bash": _bash,
    "edit": _edit,
    "write": _write,
    "grep": _grep,
    "find": _find,
    "ls": _ls,
}

DEFAULT_TOOL_NAMES = ("read", "bash", "edit", "write")
ALL_TOOL_NAMES = tuple(_FACTORIES)


def tools_by_name(names: Iterable[str], cwd: Path | str) -> list[AgentTool]:
    """Fresh tools for ``names`` in the given order; duplicates are kept once.

    Raises ``ValueError`` naming the unknown tools and the valid names, which the CLI shows
    as is (``--tools read,grpe``).
    """
    wanted = list(dict.fromkeys(name.strip() for name in names if name.strip()))
    unknown = [name for name in wanted if name not in _FACTORIES]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise ValueError(
            f"Unknown tool{plural}: {', '.join(unknown)}. Available tools: {', '.join(ALL_TOOL_NAMES)}."
        )
    folder = Path(cwd)
    return [_FACTORIES[name](folder) for name in wanted]


def default_tools(cwd: Path | str) -> list[AgentTool]:
    """read, bash, edit, write."""
    return tools_by_name(DEFAULT_TOOL_NAMES, cwd)


def all_tools(cwd: Path | str) -> list[AgentTool]:
    """The default tools plus grep, find and ls."""
    return tools_by_name(ALL_TOOL_NAMES, cwd)
