"""Where a streamed markdown text can be cut into "finished" and "still growing".

A reply is streamed into a Textual ``Markdown`` widget, whose work per append grows with the
number of blocks it holds. Finished blocks never change, so the live reply periodically hands
its settled prefix to a static rendering and keeps only the tail live. The cut must fall between
top-level blocks: after a blank line, outside a fenced code block, not before an indented line
(which would continue a list item or an indented code block) and not before a list item (after a
blank line it may continue a loose list: cut there, one list would be drawn as two).

A chunk after the first is drawn as it reads in the whole reply with :func:`lead_in`: the blank
line Rich puts between two blocks depends on the block before, which is in another chunk.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r" {0,3}([-*+]|\d{1,9}[.)])( |\t|$)")
_RULE = re.compile(r" {0,3}([-*_])( *\1){2,} *")


def freeze_point(text: str, keep: int = 0) -> int:
    """The largest index ``i`` where ``text[:i]`` ends with whole top-level blocks, leaving at
    least ``keep`` characters after it; 0 when there is none."""
    limit = len(text) - keep
    best = 0
    fence: str | None = None
    position = 0
    previous_blank = False
    for line in text.splitlines(keepends=True):
        start = position
        position += len(line)
        stripped = line.strip()
        match = _FENCE.match(line)
        if fence is not None:
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and (not line.strip()[len(match.group(1)) :].strip())
            ):
                fence = None
            previous_blank = False
            continue
        starts_block = previous_blank and stripped and not line[:1].isspace()
        if starts_block and start <= limit and not _LIST_ITEM.match(line):
            best = start
        if match:
            fence = match.group(1)
            previous_blank = False
            continue
        previous_blank = not stripped and line.endswith("\n")
    return best


def lead_in(before: str) -> str:
    """Markdown that, drawn before a chunk cut at a :func:`freeze_point` and then dropped from
    the rendering, leaves the chunk drawn exactly as it is in the whole text after ``before``.

    Rich separates two blocks with a blank line unless the first is a thematic break (which
    ends its own rendering with one); a chunk drawn alone gets neither. So the lead-in is a rule
    after a rule, any one-line paragraph after anything else, and nothing for the first chunk."""
    if not before.strip():
        return ""
    lines = before.rstrip("\n").split("\n")
    after_blank = len(lines) == 1 or not lines[-2].strip()  # else "---" underlines a heading
    return "---" if after_blank and _RULE.fullmatch(lines[-1]) else "x"
