"""``write``: create or replace a whole file, making any missing parent folders.

The content is written exactly as given (no newline translation), so what the model sends is
what ends up on disk.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.tools.arguments import NonEmptyText, Text, ToolArguments, parse_arguments
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import resolve_path

DESCRIPTION = (
    "Write a file: creates it, or replaces all of its content if it exists. Missing parent folders "
    "are created. Prefer edit for changing part of an existing file."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to write (relative or absolute)."},
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["path", "content"],
}


class WriteArguments(ToolArguments):
    path: NonEmptyText
    content: Text


@dataclass(slots=True)
class WriteTool:
    cwd: Path = field(default_factory=Path.cwd)
    name: str = "write"
    label: str = "Write"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(WriteArguments, self.name, args)
        raw, content = arguments.path, arguments.content
        path = resolve_path(raw, ctx.cwd)
        size = await asyncio.to_thread(_write, path, raw, content)
        return ToolResult.text(f"Wrote {size} bytes to {raw}")


def _write(path: Path, raw: str, content: str) -> int:
    data = content.encode("utf-8", "surrogateescape")
    try:
        if path.is_dir():
            raise ToolError(f"{raw} is a directory; give the path of a file to write.")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except PermissionError:
        raise ToolError(f"Permission denied writing {raw}.") from None
    except NotADirectoryError:
        raise ToolError(f"Cannot write {raw}: a part of its folder path is a file.") from None
    except FileExistsError:
        raise ToolError(f"Cannot write {raw}: a part of its folder path is a file.") from None
    except OSError as error:
        raise ToolError(f"Could not write {raw}: {error.strerror or error}.") from None
    return len(data)
