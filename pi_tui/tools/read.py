"""``read``: a text file with line numbers, or an image the model can look at.

Line numbers (``cat -n`` style) let the model point at places and pick the ``offset`` to read on
from. A big file is cut at the shared limits and ends with a note that names the next
``offset``, so the model can page through it instead of guessing.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.session.messages import ImageContent, TextContent
from pi_tui.text_safety import decode_text, show_name
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import is_binary, optional_int, require_str, resolve_path
from pi_tui.tools.truncation import MAX_BYTES, MAX_LINES, format_size, truncate_head

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Providers refuse bigger images (Anthropic: 5 MB); we cannot scale them down without Pillow."""

DESCRIPTION = (
    "Read a file. Text comes back with line numbers (number, tab, line). At most "
    f"{MAX_LINES} lines or {MAX_BYTES // 1024} KB are returned per call; when a file is longer the "
    "output ends with a note giving the offset to continue from. Use offset (1-based line number) "
    "and limit to read a part of a large file. Images (PNG, JPEG, GIF, WebP) are returned as "
    "images. Paths may be relative to the working directory, absolute, or start with ~."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read (relative or absolute)."},
        "offset": {"type": "integer", "description": "First line to show, counting from 1."},
        "limit": {"type": "integer", "description": "Largest number of lines to show."},
    },
    "required": ["path"],
}


def image_mime_type(head: bytes) -> str | None:
    """The image type from the file's first bytes; the name's extension can lie."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(slots=True)
class ReadTool:
    """Reads files below ``ctx.cwd`` (or anywhere, given an absolute path)."""

    cwd: Path = field(default_factory=Path.cwd)
    name: str = "read"
    label: str = "Read"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = require_str(args, "path", allow_empty=False)
        offset = optional_int(args, "offset")
        limit = optional_int(args, "limit", minimum=1)
        path = resolve_path(raw, ctx.cwd)
        data = await asyncio.to_thread(_load, path, raw)
        mime = image_mime_type(data[:16])
        if mime is not None:
            return _image_result(raw, data, mime)
        if is_binary(data):
            raise ToolError(
                f"{raw} is a binary file ({format_size(len(data))}), not text; "
                "inspect it with bash (for example `file` or `xxd | head`)."
            )
        return _text_result(raw, data, offset, limit)


def _load(path: Path, raw: str) -> bytes:
    try:
        if path.is_dir():
            raise ToolError(f"{raw} is a directory, not a file; use ls to list it.")
        return path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"File not found: {raw} (looked at {show_name(path)}).") from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {raw}.") from None
    except IsADirectoryError:
        raise ToolError(f"{raw} is a directory, not a file; use ls to list it.") from None
    except OSError as error:
        raise ToolError(f"Could not read {raw}: {error.strerror or error}.") from None


def _image_result(raw: str, data: bytes, mime: str) -> ToolResult:
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{raw} is a {format_size(len(data))} image; images over {format_size(MAX_IMAGE_BYTES)} "
            "cannot be sent to the model. Make a smaller copy first (for example with ImageMagick)."
        )
    encoded = base64.b64encode(data).decode("ascii")
    return ToolResult(
        [
            TextContent(text=f"Image {raw} [{mime}], {format_size(len(data))}"),
            ImageContent(data=encoded, mime_type=mime),
        ]
    )


def _text_result(raw: str, data: bytes, offset: int | None, limit: int | None) -> ToolResult:
    text = decode_text(data).removeprefix("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    total = len(lines)
    if total == 0:
        return ToolResult.text(f"({raw} is empty)")
    start = max(offset or 1, 1)
    if start > total:
        raise ToolError(f"Offset {start} is past the end of {raw}, which has {total} lines.")
    end = total if limit is None else min(total, start + limit - 1)
    width = max(6, len(str(end)))
    numbered = "\n".join(
        f"{number:>{width}}\t{lines[number - 1].removesuffix(chr(13))}" for number in range(start, end + 1)
    )
    cut = truncate_head(numbered)
    if cut.first_line_exceeds_limit:
        size = format_size(len(lines[start - 1].encode("utf-8")))
        return ToolResult.text(
            f"[Line {start} of {raw} alone is {size}, more than the "
            f"{format_size(MAX_BYTES)} a read may return. "
            f"Look at a piece of it with bash, for example: sed -n '{start}p' {raw} | cut -c1-2000]",
            {"truncation": cut.to_details()},
        )
    if cut.truncated:
        shown_end = start + cut.output_lines - 1
        reason = f"{MAX_LINES} lines" if cut.truncated_by == "lines" else f"{format_size(MAX_BYTES)}"
        note = (
            f"\n\n[Shown: lines {start}-{shown_end} of {total} (read limit {reason}). "
            f"To read on, call read with offset={shown_end + 1}.]"
        )
        return ToolResult.text(cut.content + note, {"truncation": cut.to_details()})
    if end < total:
        note = (
            f"\n\n[{total - end} more lines after line {end}. To read on, call read with offset={end + 1}.]"
        )
        return ToolResult.text(numbered + note)
    return ToolResult.text(numbered)
