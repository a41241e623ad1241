"""The line diff shown for an edit, in the format pi stores in ``details.diff``.

Each line is a marker (``" "`` unchanged, ``"-"`` removed, ``"+"`` added), the line number
right-aligned to the widest number (old numbers for removed and unchanged lines, new numbers
for added ones), a space and the text. Up to ``context`` unchanged lines surround each change;
longer unchanged stretches are folded to a ``...`` line. UIs colour it by the first character,
so the format has to stay exactly this.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import NamedTuple

CONTEXT_LINES = 4


class Diff(NamedTuple):
    text: str
    first_changed_line: int | None
    """Line number in the new text where the first change starts (``None`` if nothing changed)."""


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_diff(old: str, new: str, context: int = CONTEXT_LINES) -> Diff:
    """Diff ``old`` against ``new`` line by line (both with ``\\n`` line ends)."""
    old_lines, new_lines = _lines(old), _lines(new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    # Common head and tail first: SequenceMatcher is slow on big files, edits are small.
    head = 0
    limit = min(len(old_lines), len(new_lines))
    while head < limit and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (
        tail < limit - head and old_lines[len(old_lines) - 1 - tail] == new_lines[len(new_lines) - 1 - tail]
    ):
        tail += 1
    middle = SequenceMatcher(
        None, old_lines[head : len(old_lines) - tail], new_lines[head : len(new_lines) - tail], autojunk=False
    )
    ops: list[tuple[str, int, int, int, int]] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    for op, i1, i2, j1, j2 in middle.get_opcodes():
        ops.append((op, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", len(old_lines) - tail, len(old_lines), len(new_lines) - tail, len(new_lines)))

    out: list[str] = []
    first_changed: int | None = None
    blank = " " * width

    def emit(marker: str, number: int, text: str) -> None:
        out.append(f"{marker}{number:>{width}} {text}")

    for index, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            before = index > 0
            after = index < len(ops) - 1
            count = i2 - i1
            if not before and not after:
                continue
            show_head = min(count, context) if before else 0
            show_tail = min(count - show_head, context) if after else 0
            for k in range(show_head):
                emit(" ", i1 + 1 + k, old_lines[i1 + k])
            if show_head + show_tail < count:
                out.append(f" {blank} ...")
            for k in range(count - show_tail, count):
                emit(" ", i1 + 1 + k, old_lines[i1 + k])
            continue
        if first_changed is None:
            first_changed = j1 + 1
        for k in range(i1, i2):
            emit("-", k + 1, old_lines[k])
        for k in range(j1, j2):
            emit("+", k + 1, new_lines[k])
    return Diff("\n".join(out), first_changed)
