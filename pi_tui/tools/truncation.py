"""Output limits shared by the tools, and the helpers that cut text to them.

Everything a tool returns lands in the model's context, so every tool keeps its text under the
same two limits: ``MAX_LINES`` lines and ``MAX_BYTES`` bytes (UTF-8), whichever is hit first.
``read`` keeps the *head* (the start of a file, and tells the model how to read on);
``bash`` keeps the *tail* (errors and summaries come last). Both cut at line boundaries so the
model never sees half a line, except in the one case where a single line is bigger than the
whole byte budget (tail: the end of that line is kept; head: nothing is kept and the caller
says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_LINE_CHARS = 500
"""Longest single line grep shows; a minified file would otherwise eat the whole budget."""


@dataclass(slots=True)
class Truncation:
    """What a cut kept and what it dropped."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    max_lines: int
    max_bytes: int
    last_line_partial: bool = False
    """Tail only: the kept text starts inside a line longer than the byte budget."""
    first_line_exceeds_limit: bool = False
    """Head only: the first line alone is over the byte budget, so nothing was kept."""

    def to_details(self) -> dict[str, Any]:
        """The camelCase dict stored in a result's ``details`` (without the text itself)."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


def _split(text: str) -> tuple[list[str], str]:
    """Lines of ``text`` plus the final newline, kept aside so it is not counted as a line."""
    if not text:
        return [], ""
    if text.endswith("\n"):
        return text[:-1].split("\n"), "\n"
    return text.split("\n"), ""


def truncate_head(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the first whole lines of ``text`` that fit both limits."""
    lines, _ending = _split(text)
    total_bytes = _utf8_len(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(
            text, False, None, len(lines), total_bytes, len(lines), total_bytes, max_lines, max_bytes
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for line in lines:
        if len(kept) >= max_lines:
            break
        size = _utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    content = "\n".join(kept)
    return Truncation(
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        total_lines=len(lines),
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_utf8_len(content),
        max_lines=max_lines,
        max_bytes=max_bytes,
        first_line_exceeds_limit=not kept and bool(lines),
    )


def truncate_tail(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the last whole lines of ``text`` that fit both limits.

    If even the last line is over the byte budget, its end is kept (cut at a character
    boundary) so the model still sees how the output finished.
    """
    lines, ending = _split(text)
    total_bytes = _utf8_len(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(
            text, False, None, len(lines), total_bytes, len(lines), total_bytes, max_lines, max_bytes
        )
    kept: list[str] = []
    used = _utf8_len(ending)
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = _utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                kept.append(_tail_bytes(line, max_bytes - used))
                partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    content = "\n".join(kept) + ending if kept else ""
    return Truncation(
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        total_lines=len(lines),
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_utf8_len(content),
        max_lines=max_lines,
        max_bytes=max_bytes,
        last_line_partial=partial,
    )


def _tail_bytes(line: str, budget: int) -> str:
    """The longest end of ``line`` that is at most ``budget`` UTF-8 bytes."""
    data = line.encode("utf-8", "surrogateescape")[-budget:] if budget > 0 else b""
    # Drop continuation bytes of a character cut in half at the front.
    start = 0
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogateescape")


def truncate_line(line: str, max_chars: int = MAX_LINE_CHARS) -> tuple[str, bool]:
    """``line`` cut to ``max_chars`` characters with a marker; the flag says if it was cut."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + " [line cut]", True


def format_size(size: int) -> str:
    """A byte count for humans and models: ``512 B``, ``50.0 KB``, ``1.2 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
