"""``find``: list files (and folders) whose path matches a glob.

Walks with :mod:`pi_tui.tools.walk` so .gitignore, ``.git`` and ``node_modules`` are handled
the same way as in grep. Results are relative to the searched folder and sorted, so repeated
calls give the same list and a list cut at ``limit`` is a prefix of the full one. Names that are
not printable UTF-8 are shown escaped (:func:`pi_tui.text_safety.show_name`).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.text_safety import show_name
from pi_tui.tools.arguments import NonEmptyText, OptionalCount, OptionalText, ToolArguments, parse_arguments
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import ESCAPED_NAMES_NOTE, resolve_path
from pi_tui.tools.truncation import MAX_BYTES, format_size, truncate_head
from pi_tui.tools.walk import PathGlob, walk

DEFAULT_LIMIT = 1000

DESCRIPTION = (
    "Find files by glob pattern, e.g. '*.py' (any depth), '**/*.test.ts' or 'src/**/config.*'. "
    "A pattern without '/' matches file names at any depth; with '/' it matches the path "
    "relative to the searched folder. Folders are listed with a trailing '/'. Respects "
    f".gitignore and skips .git and node_modules. At most {DEFAULT_LIMIT} results by default "
    f"(see limit), output cut at {MAX_BYTES // 1024} KB."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob to match, e.g. '*.py' or 'src/**/*.ts'."},
        "path": {"type": "string", "description": "Folder to search (default: working directory)."},
        "limit": {"type": "integer", "description": f"Most results to return (default {DEFAULT_LIMIT})."},
    },
    "required": ["pattern"],
}


class FindArguments(ToolArguments):
    pattern: NonEmptyText
    path: OptionalText = None
    limit: OptionalCount = None


@dataclass(slots=True)
class FindTool:
    cwd: Path = field(default_factory=Path.cwd)
    name: str = "find"
    label: str = "Find"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(FindArguments, self.name, args)
        pattern = arguments.pattern
        raw_path = arguments.path or "."
        limit = arguments.limit or DEFAULT_LIMIT
        root = resolve_path(raw_path, ctx.cwd)
        if not root.exists():
            raise ToolError(f"Path not found: {raw_path}")
        if not root.is_dir():
            raise ToolError(f"{raw_path} is not a folder; find searches inside a folder.")
        stop = threading.Event()
        try:
            found, more = await asyncio.to_thread(find_paths, root, PathGlob(pattern), limit, stop)
        finally:
            stop.set()
        return _format(found, more, limit, pattern)


def find_paths(root: Path, glob: PathGlob, limit: int, stop: threading.Event) -> tuple[list[str], bool]:
    """Matches under ``root`` (folders end in ``/``), at most ``limit``; flag: more exist.

    The walk's order is the sort order: by name within a folder, a folder's contents right
    after it (``a/x`` before ``a-b/x``), the same order grep uses.
    """
    found: list[str] = []
    for rel, is_dir in walk(root, stop):
        if glob.matches(rel):
            if len(found) == limit:
                return found, True
            found.append(f"{rel}/" if is_dir else rel)
    return found, False


def _format(found: list[str], more: bool, limit: int, pattern: str) -> ToolResult:
    if not found:
        return ToolResult.text(f"No files found matching {pattern!r}.")
    shown = [show_name(path) for path in found]
    cut = truncate_head("\n".join(shown), max_lines=len(shown) + 1)
    notes = []
    details: dict[str, Any] = {}
    if more:
        notes.append(
            f"Showing the first {limit} results; there are more. Use a narrower pattern or raise limit."
        )
        details["resultLimitReached"] = limit
    if cut.truncated:
        notes.append(f"Output cut at {format_size(MAX_BYTES)}; use a narrower pattern.")
        details["truncation"] = cut.to_details()
    if shown != found:
        notes.append(ESCAPED_NAMES_NOTE)
    text = cut.content
    if notes:
        text += "\n\n" + "\n".join(f"[{note}]" for note in notes)
    return ToolResult.text(text, details or None)
