"""``ls``: the entries of one folder, sorted, folders marked with a trailing ``/``.

Unlike ``find`` this shows everything in the folder, dotfiles and ignored files included:
the model asks for a listing when it wants to see what is really there. Names that are not
printable UTF-8 are shown escaped (:func:`pi_tui.text_safety.show_name`), one entry per line.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.text_safety import show_name
from pi_tui.tools.arguments import OptionalCount, OptionalText, ToolArguments, parse_arguments
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import ESCAPED_NAMES_NOTE, resolve_path
from pi_tui.tools.truncation import MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List the entries of a folder (default: the working directory), sorted by name, folders "
    "with a trailing '/', hidden entries included. Not recursive; use find for that. At most "
    f"{DEFAULT_LIMIT} entries by default (see limit), output cut at {MAX_BYTES // 1024} KB."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Folder to list (default: working directory)."},
        "limit": {"type": "integer", "description": f"Most entries to return (default {DEFAULT_LIMIT})."},
    },
    "required": [],
}


class LsArguments(ToolArguments):
    path: OptionalText = None
    limit: OptionalCount = None


@dataclass(slots=True)
class LsTool:
    cwd: Path = field(default_factory=Path.cwd)
    name: str = "ls"
    label: str = "List"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(LsArguments, self.name, args)
        raw_path = arguments.path or "."
        limit = arguments.limit or DEFAULT_LIMIT
        folder = resolve_path(raw_path, ctx.cwd)
        entries = await asyncio.to_thread(list_folder, folder, raw_path)
        if not entries:
            return ToolResult.text(f"({raw_path} is empty)")
        raw_shown = entries[:limit]
        shown = [show_name(name) for name in raw_shown]
        cut = truncate_head("\n".join(shown), max_lines=len(shown) + 1)
        notes = []
        details: dict[str, Any] = {}
        if len(entries) > limit:
            notes.append(f"Showing {limit} of {len(entries)} entries. Raise limit to see more.")
            details["entryLimitReached"] = limit
        if cut.truncated:
            notes.append(f"Output cut at {format_size(MAX_BYTES)}.")
            details["truncation"] = cut.to_details()
        if any(name != raw_name for name, raw_name in zip(shown, raw_shown, strict=True)):
            notes.append(ESCAPED_NAMES_NOTE)
        text = cut.content
        if notes:
            text += "\n\n" + "\n".join(f"[{note}]" for note in notes)
        return ToolResult.text(text, details or None)


def list_folder(folder: Path, raw: str) -> list[str]:
    """Entry names sorted case-insensitively, folders (and links to folders) ending in ``/``."""
    try:
        if not folder.exists():
            raise ToolError(f"Path not found: {raw}")
        if not folder.is_dir():
            raise ToolError(f"{raw} is not a folder; use read to see a file.")
        with os.scandir(folder) as scan:
            names = [entry.name + ("/" if _is_dir(entry) else "") for entry in scan]
    except PermissionError:
        raise ToolError(f"Permission denied listing {raw}.") from None
    except OSError as error:
        raise ToolError(f"Could not list {raw}: {error.strerror or error}.") from None
    return sorted(names, key=lambda name: (name.lower(), name))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
