"""The built-in tools, and the sets the agent starts with.

``read``, ``bash``, ``edit`` and ``write`` are on by default (as in pi); ``grep``, ``find`` and
``ls`` can be switched on with ``--tools``. Each tool takes the working directory it was made
for, but paths are resolved against ``ctx.cwd`` at call time, which the agent sets to the same
folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult
from pi_tui.tools.bash import BashTool
from pi_tui.tools.edit import EditTool
from pi_tui.tools.find import FindTool
from pi_tui.tools.grep import GrepTool
from pi_tui.tools.ls import LsTool
from pi_tui.tools.read import ReadTool
from pi_tui.tools.write import WriteTool

__all__ = [
    "ALL_TOOL_NAMES",
    "DEFAULT_TOOL_NAMES",
    "AgentTool",
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "LsTool",
    "ReadTool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "WriteTool",
    "all_tools",
    "default_tools",
    "tools_by_name",
]

_FACTORIES: dict[str, Callable[[Path], AgentTool]] = {
    "read": lambda cwd: ReadTool(cwd=cwd),
    "bash": lambda cwd: BashTool(cwd=cwd),
    "edit": lambda cwd: EditTool(cwd=cwd),
    "write": lambda cwd: WriteTool(cwd=cwd),
    "grep": lambda cwd: GrepTool(cwd=cwd),
    "find": lambda cwd: FindTool(cwd=cwd),
    "ls": lambda cwd: LsTool(cwd=cwd),
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
