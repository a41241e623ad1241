"""``edit``: exact search-and-replace, several disjoint replacements in one call.

Every ``oldText`` is looked up in the file as it was *before* the call, must occur exactly
once, and no two may overlap; only when all of them check out is the file written (all or
nothing), so a half-applied edit never leaves the file in a state the model did not ask for.
Matching ignores the difference between CRLF and LF, and the file keeps its own line endings
and byte-order mark.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui import jsonio
from pi_tui.text_safety import clean_text
from pi_tui.tools.arguments import NonEmptyText, ToolArguments, parse_arguments
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import resolve_path
from pi_tui.tools.diff import line_diff

BOM = b"\xef\xbb\xbf"

DESCRIPTION = (
    "Edit a file by exact text replacement. Give one or more edits; each oldText must appear "
    "exactly once in the current file (copy it precisely, whitespace and indentation included) "
    "and the edits must not overlap. All edits are checked against the original file and applied "
    "together, or none is. Include enough surrounding lines to make each oldText unique."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to edit (relative or absolute)."},
        "edits": {
            "type": "array",
            "description": "Replacements, each matched against the original file content.",
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Exact text to replace; must occur once."},
                    "newText": {"type": "string", "description": "Text to put in its place."},
                },
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}


@dataclass(slots=True)
class Replacement:
    old: str
    new: str
    label: str
    """How errors name this edit: ``"edits[1]"``, or ``"oldText"`` when there is only one."""


class EditArguments(ToolArguments):
    """The path; the edits are read by :func:`parse_edits` (they have older spellings too)."""

    path: NonEmptyText


@dataclass(slots=True)
class EditTool:
    cwd: Path = field(default_factory=Path.cwd)
    name: str = "edit"
    label: str = "Edit"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = parse_arguments(EditArguments, self.name, args).path
        replacements = parse_edits(args)
        path = resolve_path(raw, ctx.cwd)
        return await asyncio.to_thread(_edit_file, path, raw, replacements)


def parse_edits(args: dict[str, Any]) -> list[Replacement]:
    """The edits from ``edits``, or from top-level ``oldText``/``newText`` (older pi sessions)."""
    edits = args.get("edits")
    if isinstance(edits, str):  # some models send the array as a JSON string
        try:
            edits = jsonio.loads(edits)
        except ValueError:
            raise ToolError("Argument 'edits' must be an array of {oldText, newText} objects.") from None
    if edits is None and "oldText" in args:
        edits = [{"oldText": args.get("oldText"), "newText": args.get("newText")}]
    if isinstance(edits, dict):
        edits = [edits]
    if not isinstance(edits, list) or not edits:
        raise ToolError("Argument 'edits' must be a non-empty array of {oldText, newText} objects.")
    result = []
    for index, item in enumerate(edits):
        label = "oldText" if len(edits) == 1 else f"edits[{index}]"
        if not isinstance(item, dict):
            raise ToolError(f"{label} must be an object with oldText and newText.")
        old, new = item.get("oldText"), item.get("newText")
        if not isinstance(old, str) or not isinstance(new, str):
            raise ToolError(f"{label} needs both oldText and newText as strings.")
        if old == "":
            raise ToolError(
                f"{label}: oldText is empty; give the exact text to replace (use write for a new file)."
            )
        result.append(Replacement(old.replace("\r\n", "\n"), new.replace("\r\n", "\n"), label))
    return result


def _edit_file(path: Path, raw: str, replacements: list[Replacement]) -> ToolResult:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"File not found: {raw}. Use write to create a new file.") from None
    except IsADirectoryError:
        raise ToolError(f"{raw} is a directory, not a file.") from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {raw}.") from None
    except OSError as error:
        raise ToolError(f"Could not read {raw}: {error.strerror or error}.") from None

    bom = data.startswith(BOM)
    # surrogateescape: bytes that are not UTF-8 survive the round trip untouched.
    text = data[len(BOM) if bom else 0 :].decode("utf-8", "surrogateescape")
    out, result = edit_text(text, raw, replacements)
    try:
        path.write_bytes((BOM if bom else b"") + out.encode("utf-8", "surrogateescape"))
    except OSError as error:
        raise ToolError(f"Could not write {raw}: {error.strerror or error}.") from None
    return result


def edit_text(text: str, raw: str, replacements: list[Replacement]) -> tuple[str, ToolResult]:
    """``text`` with the edits made (its line endings kept) and the tool's result, or a
    :class:`ToolError`. Shared by the file tool and editors' buffers (ACP clients)."""
    crlf = _uses_crlf(text)
    original = text.replace("\r\n", "\n")
    updated = apply_edits(original, replacements, raw)
    if updated == original:
        raise ToolError(f"No change made to {raw}: every newText is the same as its oldText.")
    out = updated.replace("\n", "\r\n") if crlf else updated
    diff = line_diff(original, updated)
    # The diff is shown and saved: bytes that are not UTF-8 read as U+FFFD there, as in read.
    details: dict[str, Any] = {"diff": clean_text(diff.text)}
    if diff.first_changed_line is not None:
        details["firstChangedLine"] = diff.first_changed_line
    count = len(replacements)
    noun = "edit" if count == 1 else "edits"
    return out, ToolResult.text(f"Applied {count} {noun} to {raw}.", details)


def _uses_crlf(text: str) -> bool:
    """Whether the file's line endings are CRLF, judged by its first line break."""
    first = text.find("\n")
    return first > 0 and text[first - 1] == "\r"


def _occurrences(text: str, needle: str) -> list[int]:
    """Start of every occurrence, overlapping ones included (``"aa"`` is twice in ``"aaa"``)."""
    found = []
    start = text.find(needle)
    while start != -1:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


def apply_edits(original: str, replacements: list[Replacement], raw: str) -> str:
    """``original`` with every replacement made, or a :class:`ToolError` for the first bad one."""
    spans: list[tuple[int, int, Replacement]] = []
    for edit in replacements:
        found = _occurrences(original, edit.old)
        if not found:
            raise ToolError(
                f"{edit.label} was not found in {raw}. It must match the file exactly, including "
                "whitespace, indentation and line breaks; read the file again and copy the text."
            )
        if len(found) > 1:
            lines = ", ".join(str(original.count("\n", 0, at) + 1) for at in found[:10])
            raise ToolError(
                f"{edit.label} occurs {len(found)} times in {raw} (starting on lines {lines}); it must "
                "occur exactly once. Add surrounding lines to oldText so it matches only the intended place."
            )
        spans.append((found[0], found[0] + len(edit.old), edit))
    spans.sort(key=lambda span: span[0])
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ToolError(
                f"{first.label} and {second.label} overlap in {raw}. Make them cover separate text, "
                "or merge them into one edit."
            )
    pieces = []
    position = 0
    for start, end, edit in spans:
        pieces.append(original[position:start])
        pieces.append(edit.new)
        position = end
    pieces.append(original[position:])
    return "".join(pieces)
