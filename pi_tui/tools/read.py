"""``read``: a text file with line numbers, or an image the model can look at.

Line numbers (``cat -n`` style) let the model point at places and pick the ``offset`` to read on
from. A big file is cut at the shared limits and ends with a note that names the next
``offset``, so the model can page through it instead of guessing.

The file is read forward in blocks and never more of it is held than one call returns: a 2 GB
log costs a fraction of a second and a few MB, not the whole file decoded in memory. The note
names the file's total line count when the rest of the file is small enough to count quickly
(:data:`LINE_COUNT_LIMIT`); past that it says more lines follow, since a count would cost more
time than the read itself.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import io
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.messages import ImageContent, TextContent
from pi_tui.text_safety import decode_text, show_name
from pi_tui.tools.arguments import NonEmptyText, OptionalCount, OptionalInt, ToolArguments, parse_arguments
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import is_binary, resolve_path
from pi_tui.tools.truncation import MAX_BYTES, MAX_LINES, format_size, truncate_head

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Providers refuse bigger images (Anthropic: 5 MB); we cannot scale them down without Pillow."""

BLOCK = 1024 * 1024
"""Bytes read at a time. The first block decides image / binary / text."""

LINE_COUNT_LIMIT = 128 * 1024 * 1024
"""Most bytes after the shown lines that are scanned to count the file's lines (about 30 ms);
counting a 2 GB file would take longer than the whole read is allowed to."""

_BOM = b"\xef\xbb\xbf"
_MIN_PREFIX = 7
"""Bytes of the narrowest line-number prefix: six digits and a tab."""

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


class ReadArguments(ToolArguments):
    path: NonEmptyText
    offset: OptionalInt = None
    limit: OptionalCount = None


@dataclass(slots=True)
class ReadTool:
    """Reads files below ``ctx.cwd`` (or anywhere, given an absolute path)."""

    cwd: Path = field(default_factory=Path.cwd)
    name: str = "read"
    label: str = "Read"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(ReadArguments, self.name, args)
        raw, offset, limit = arguments.path, arguments.offset, arguments.limit
        path = resolve_path(raw, ctx.cwd)
        return await asyncio.to_thread(_read, path, raw, max(offset or 1, 1), limit)


def _read(path: Path, raw: str, start: int, limit: int | None) -> ToolResult:
    try:
        if path.is_dir():
            raise ToolError(f"{raw} is a directory, not a file; use ls to list it.")
        with open(path, "rb") as handle:
            return _read_open(handle, raw, start, limit)
    except FileNotFoundError:
        raise ToolError(f"File not found: {raw} (looked at {show_name(path)}).") from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {raw}.") from None
    except IsADirectoryError:
        raise ToolError(f"{raw} is a directory, not a file; use ls to list it.") from None
    except OSError as error:
        raise ToolError(f"Could not read {raw}: {error.strerror or error}.") from None


def text_read_result(text: str, raw: str, offset: int | None, limit: int | None) -> ToolResult:
    """The tool's answer for text held elsewhere (an editor's unsaved buffer, over ACP): the
    same lines, numbering and limits as a file on disk."""
    data = text.encode("utf-8", "surrogateescape")
    if not data:
        return ToolResult.text(f"({raw} is empty)")
    handle = io.BytesIO(data)
    head = handle.read(BLOCK)
    return _text_result(raw, _Lines(handle, head), max(offset or 1, 1), limit, len(data))


def _read_open(handle: io.BufferedIOBase, raw: str, start: int, limit: int | None) -> ToolResult:
    """Image, binary or text, told from the first block; only a text file is read further."""
    info = os.fstat(handle.fileno())
    size = info.st_size if stat.S_ISREG(info.st_mode) else None
    head = handle.read(BLOCK)
    mime = image_mime_type(head[:16])
    if mime is not None:
        return _image_result(raw, handle, head, mime, size)
    if is_binary(head):
        shown = f" ({format_size(size)})" if size is not None else ""
        raise ToolError(
            f"{raw} is a binary file{shown}, not text; "
            "inspect it with bash (for example `file` or `xxd | head`)."
        )
    if len(head) < BLOCK and head in (b"", _BOM):  # a short buffered read is the whole file
        return ToolResult.text(f"({raw} is empty)")
    return _text_result(raw, _Lines(handle, head), start, limit, size)


def _image_result(
    raw: str, handle: io.BufferedIOBase, head: bytes, mime: str, size: int | None
) -> ToolResult:
    data = head
    if size is None or size <= MAX_IMAGE_BYTES:
        data += handle.read(max(0, MAX_IMAGE_BYTES + 1 - len(head)))
    total = size if size is not None else len(data)
    if total > MAX_IMAGE_BYTES or len(data) > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{raw} is a {format_size(max(total, len(data)))} image; images over "
            f"{format_size(MAX_IMAGE_BYTES)} cannot be sent to the model. "
            "Make a smaller copy first (for example with ImageMagick)."
        )
    encoded = base64.b64encode(data).decode("ascii")
    return ToolResult(
        [
            TextContent(text=f"Image {raw} [{mime}], {format_size(len(data))}"),
            ImageContent(data=encoded, mime_type=mime),
        ]
    )


class _Lines:
    """A file read forward one block at a time: whole lines up to a cap, and fast skipping and
    counting of lines by scanning raw bytes for newlines (nothing is decoded that is not shown).

    Lines end at ``\\n`` only, as ``str.split("\\n")`` would cut the decoded file; a final piece
    without a newline is a line when it is not empty. Scans read into one reused buffer: fresh
    1 MB ``bytes`` per block would cost twice the time in page faults.
    """

    def __init__(self, handle: io.BufferedIOBase, head: bytes) -> None:
        self._handle = handle
        self._buffer = head
        self._pos = 0
        self._read = len(head)
        self._last = head[-1:]
        self._ended = False
        self._scratch: bytearray | None = None

    def _fill(self) -> bool:
        """Append the next block to what is left unread; ``False`` at the end of the file."""
        if self._ended:
            return False
        block = self._handle.read(BLOCK)
        if not block:
            self._ended = True
            return False
        self._buffer = self._buffer[self._pos :] + block
        self._pos = 0
        self._read += len(block)
        self._last = block[-1:]
        return True

    def _scan(self) -> Iterator[bytearray]:
        """The blocks after the buffer (which must be used up), each valid until the next one."""
        if self._scratch is None:
            self._scratch = bytearray(BLOCK)
        while not self._ended:
            count = self._handle.readinto(self._scratch)
            if not count:
                self._ended = True
                return
            self._read += count
            self._last = bytes(self._scratch[count - 1 : count])
            yield self._scratch if count == len(self._scratch) else self._scratch[:count]

    def _keep(self, block: bytearray, start: int) -> None:
        """Make the rest of a scanned block the buffer again, for the line reads that follow."""
        self._buffer = bytes(block[start:])
        self._pos = 0

    def at_end(self) -> bool:
        while self._pos >= len(self._buffer):
            if not self._fill():
                return True
        return False

    def next_line(self, cap: int) -> bytes | None:
        """The next line without its newline, or ``None`` at the end of the file.

        A line longer than ``cap`` bytes is not consumed: its first ``cap + 1`` bytes come back,
        so the caller sees it is too long and can still measure it with :meth:`line_size`.
        """
        while True:
            newline = self._buffer.find(b"\n", self._pos, self._pos + cap + 1)
            if newline != -1:
                line = self._buffer[self._pos : newline]
                self._pos = newline + 1
                return line
            if len(self._buffer) - self._pos > cap:
                return self._buffer[self._pos : self._pos + cap + 1]
            if not self._fill():
                if self._pos >= len(self._buffer):
                    return None
                line = self._buffer[self._pos :]
                self._pos = len(self._buffer)
                return line

    def skip_lines(self, count: int) -> int:
        """Pass over ``count`` lines; fewer (the number passed) when the file ends first."""
        found = self._buffer.count(b"\n", self._pos)
        if found >= count:
            self._pos = _after_newlines(self._buffer, self._pos, count)
            return count
        passed = found
        self._pos = len(self._buffer)
        for block in self._scan():
            found = block.count(b"\n")
            if passed + found >= count:
                self._keep(block, _after_newlines(block, 0, count - passed))
                return count
            passed += found
        return passed + (1 if self._last != b"\n" else 0)  # a last line without a newline

    def count_rest(self, most_bytes: int, size: int | None) -> int | None:
        """How many lines follow, or ``None`` when more than ``most_bytes`` bytes are left."""
        scanned = len(self._buffer) - self._pos
        if size is not None and scanned + max(0, size - self._read) > most_bytes:
            return None
        lines = self._buffer.count(b"\n", self._pos)
        self._pos = len(self._buffer)
        for block in self._scan():
            scanned += len(block)
            if scanned > most_bytes:
                return None
            lines += block.count(b"\n")
        return lines + (1 if scanned and self._last != b"\n" else 0)

    def line_size(self) -> int:
        """UTF-8 bytes of the next line once decoded (invalid bytes count as U+FFFD), read
        through to its newline a block at a time, so a 2 GB line costs no more memory."""
        size = _Utf8Size()
        newline = self._buffer.find(b"\n", self._pos)
        if newline != -1:
            size.add(self._buffer, self._pos, newline)
            self._pos = newline + 1
            return size.total()
        size.add(self._buffer, self._pos)
        self._pos = len(self._buffer)
        for block in self._scan():
            newline = block.find(b"\n")
            if newline != -1:
                size.add(block, 0, newline)
                self._keep(block, newline + 1)
                break
            size.add(block)
        return size.total()


def _after_newlines(data: bytes | bytearray, start: int, count: int) -> int:
    """The position just after the ``count``-th newline from ``start`` (there are enough)."""
    for _ in range(count):
        start = data.index(b"\n", start) + 1
    return start


class _Utf8Size:
    """Counts the UTF-8 size of bytes decoded piece by piece with U+FFFD for invalid bytes (3
    bytes each), without keeping the text. Pieces are taken 64 KB at a time, so the temporary
    copies stay small; ASCII is counted without decoding."""

    _STEP = 64 * 1024

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._size = 0

    def add(self, data: bytes | bytearray, start: int = 0, end: int | None = None) -> None:
        """Count ``data[start:end]``."""
        view = memoryview(data)[start:end]
        for low in range(0, len(view), self._STEP):
            piece = bytes(view[low : low + self._STEP])
            if not self._decoder.getstate()[0] and piece.isascii():
                self._size += len(piece)
            else:
                self._size += len(self._decoder.decode(piece).encode("utf-8"))

    def total(self) -> int:
        return self._size + len(self._decoder.decode(b"", final=True).encode("utf-8"))


@dataclass(slots=True)
class _Window:
    """The lines read from ``start`` on, and what is known of the rest of the file."""

    lines: list[str]
    total: int | None
    """Lines in the whole file; ``None`` when too much followed to count them."""
    too_long: bool = False
    """``lines`` ends with the first bytes of a line too long to show."""


def _collect(reader: _Lines, start: int, limit: int | None, size: int | None) -> _Window:
    """Decode only the lines a read can show: up to ``limit`` and the shared limits, plus the
    first line that is over them (it tells the cut where to stop)."""
    want = MAX_LINES + 1 if limit is None else min(limit, MAX_LINES + 1)
    lines: list[str] = []
    used = -1  # bytes of the numbered text with the narrowest prefix; no newline before line 1
    while len(lines) < want and used <= MAX_BYTES:
        data = reader.next_line(MAX_BYTES)
        if data is None:
            return _Window(lines, start - 1 + len(lines))
        if len(data) > MAX_BYTES:  # left unread: counted with the rest, or measured if it is first
            lines.append(decode_text(data))
            if len(lines) == 1:
                return _Window(lines, None, too_long=True)
            rest = reader.count_rest(LINE_COUNT_LIMIT, size)
            return _Window(lines, None if rest is None else start - 2 + len(lines) + rest, too_long=True)
        text = decode_text(data)
        if start + len(lines) == 1:
            text = text.removeprefix("\ufeff")
        lines.append(text)
        used += _MIN_PREFIX + 1 + len(text.removesuffix("\r").encode("utf-8"))
    if reader.at_end():
        return _Window(lines, start - 1 + len(lines))
    rest = reader.count_rest(LINE_COUNT_LIMIT, size)
    return _Window(lines, None if rest is None else start - 1 + len(lines) + rest)


def _text_result(raw: str, reader: _Lines, start: int, limit: int | None, size: int | None) -> ToolResult:
    """Numbered lines from ``start``, cut at ``limit`` and the shared limits, with the note to read on.

    ``details["truncation"]`` describes the cut; its ``totalLines`` is the number of lines in the
    requested range (``None`` when they were not counted) and ``totalBytes`` the file's size,
    since the numbered text of a range that is not shown is never built.
    """
    passed = reader.skip_lines(start - 1)
    if passed < start - 1:
        raise ToolError(f"Offset {start} is past the end of {raw}, which has {passed} lines.")
    window = _collect(reader, start, limit, size)
    lines = window.lines
    if not lines:
        raise ToolError(f"Offset {start} is past the end of {raw}, which has {start - 1} lines.")
    if window.too_long and len(lines) == 1:
        bom = len(_BOM) if start == 1 and lines[0].startswith("\ufeff") else 0
        line_size = reader.line_size() - bom
        rest = reader.count_rest(LINE_COUNT_LIMIT, size)
        in_range = None if rest is None else rest + 1 if limit is None else min(rest + 1, limit)
        cut = truncate_head(f"{start:>6}\t{lines[0]}")
        details = {"truncation": cut.to_details() | {"totalLines": in_range, "totalBytes": size}}
        return _first_line_too_long(raw, start, line_size, details)
    total = window.total
    seen = start - 1 + len(lines) - (1 if window.too_long else 0)
    if total is not None:
        end: int | None = total if limit is None else min(total, start + limit - 1)
    else:
        end = start + limit - 1 if limit is not None and start + limit - 1 <= seen else None
    width = max(6, len(str(end if end is not None else start + len(lines) - 1)))
    shown = lines if end is None else lines[: end - start + 1]
    numbered = "\n".join(
        f"{start + index:>{width}}\t{line.removesuffix(chr(13))}" for index, line in enumerate(shown)
    )
    cut = truncate_head(numbered)
    details = {
        "truncation": cut.to_details()
        | {"totalLines": None if end is None else end - start + 1, "totalBytes": size}
    }
    if cut.first_line_exceeds_limit:
        return _first_line_too_long(raw, start, len(lines[0].encode("utf-8")), details)
    if cut.truncated:
        shown_end = start + cut.output_lines - 1
        reason = f"{MAX_LINES} lines" if cut.truncated_by == "lines" else f"{format_size(MAX_BYTES)}"
        if total is not None:
            note = f"[Shown: lines {start}-{shown_end} of {total} (read limit {reason})."
        else:
            note = f"[Shown: lines {start}-{shown_end} (read limit {reason}); {_uncounted(size)}."
        note += f" To read on, call read with offset={shown_end + 1}.]"
        return ToolResult.text(cut.content + "\n\n" + note, details)
    last = start + len(shown) - 1
    if total is None:
        note = f"[More lines after line {last}; {_uncounted(size)}."
        note += f" To read on, call read with offset={last + 1}.]"
        return ToolResult.text(numbered + "\n\n" + note)
    if last < total:
        note = f"[{total - last} more lines after line {last}. To read on, call read with offset={last + 1}.]"
        return ToolResult.text(numbered + "\n\n" + note)
    return ToolResult.text(numbered)


def _uncounted(size: int | None) -> str:
    if size is None:
        return "more lines follow (too many to count)"
    return f"more lines follow (the file is {format_size(size)}, too big to count its lines)"


def _first_line_too_long(raw: str, start: int, line_size: int, details: dict[str, Any] | None) -> ToolResult:
    return ToolResult.text(
        f"[Line {start} of {raw} alone is {format_size(line_size)}, more than the "
        f"{format_size(MAX_BYTES)} a read may return. "
        f"Look at a piece of it with bash, for example: sed -n '{start}p' {raw} | cut -c1-2000]",
        details,
    )
