"""``grep``: search file contents with a regular expression.

Uses ripgrep when it is installed (fast, honours .gitignore exactly); otherwise walks the tree
in Python (:mod:`pi_tui.tools.walk`) and matches with the ``regex`` module, whose syntax is
close to ripgrep's. Both backends produce the same records and the same ``path:line:text``
output, sorted by path, so the model sees no difference except speed.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import json
import os
import shutil
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import regex

from pi_tui.text_safety import decode_text, show_name
from pi_tui.tools.arguments import (
    Flag,
    NonEmptyText,
    OptionalCount,
    OptionalNonNegative,
    OptionalText,
    ToolArguments,
    parse_arguments,
)
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.common import ESCAPED_NAMES_NOTE, is_binary, resolve_path
from pi_tui.tools.truncation import MAX_BYTES, MAX_LINE_CHARS, format_size, truncate_head, truncate_line
from pi_tui.tools.walk import SKIP_DIRS, PathGlob, walk

DEFAULT_LIMIT = 100

BLOCK = 1024 * 1024
"""Bytes the Python search reads at a time; the first block decides whether a file is binary."""
LONG_LINE = 1024 * 1024
"""A line longer than this many bytes is searched in windows instead of being held whole."""
OVERLAP = 16 * 1024
"""Characters each window of a long line repeats from the one before."""

DESCRIPTION = (
    "Search file contents for a regular expression (ripgrep syntax; set literal for plain text). "
    "Returns matching lines as path:line:text, paths relative to the searched folder; with "
    "context, neighbouring lines are shown as path-line-text. Respects .gitignore and skips "
    f".git and node_modules. At most {DEFAULT_LIMIT} matches by default (see limit), output "
    f"cut at {MAX_BYTES // 1024} KB, long lines cut at {MAX_LINE_CHARS} characters."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Regular expression (or plain text with literal)."},
        "path": {"type": "string", "description": "Folder or file to search (default: working directory)."},
        "glob": {
            "type": "string",
            "description": "Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'.",
        },
        "ignoreCase": {"type": "boolean", "description": "Match without regard to case."},
        "literal": {"type": "boolean", "description": "Treat pattern as plain text, not a regex."},
        "context": {"type": "integer", "description": "Lines to show before and after each match."},
        "limit": {"type": "integer", "description": f"Most matches to return (default {DEFAULT_LIMIT})."},
    },
    "required": ["pattern"],
}


class Line(NamedTuple):
    path: str
    number: int
    text: str
    is_match: bool


@dataclass(slots=True)
class Search:
    pattern: str
    root: Path
    """Folder the paths are relative to."""
    target: str | None
    """A single file name inside ``root`` when the user gave a file, else ``None``."""
    glob: str | None
    ignore_case: bool
    literal: bool
    context: int
    limit: int


@dataclass(slots=True)
class Found:
    lines: list[Line] = field(default_factory=list)
    matches: int = 0
    limit_reached: bool = False

    def add(self, line: Line, limit: int) -> bool:
        """Record ``line``; ``False`` once the match limit is reached and searching should stop."""
        self.lines.append(line)
        if line.is_match:
            self.matches += 1
            if self.matches >= limit:
                self.limit_reached = True
                return False
        return True


class GrepArguments(ToolArguments):
    pattern: NonEmptyText
    path: OptionalText = None
    glob: OptionalText = None
    ignoreCase: Flag = False  # the schema's spelling
    literal: Flag = False
    context: OptionalNonNegative = None
    limit: OptionalCount = None


@dataclass(slots=True)
class GrepTool:
    cwd: Path = field(default_factory=Path.cwd)
    name: str = "grep"
    label: str = "Grep"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(GrepArguments, self.name, args)
        pattern = arguments.pattern
        raw_path = arguments.path or "."
        path = resolve_path(raw_path, ctx.cwd)
        if not path.exists():
            raise ToolError(f"Path not found: {raw_path}")
        root, target = (path.parent, path.name) if path.is_file() else (path, None)
        search = Search(
            pattern=pattern,
            root=root,
            target=target,
            glob=arguments.glob,
            ignore_case=arguments.ignoreCase,
            literal=arguments.literal,
            context=arguments.context or 0,
            limit=arguments.limit or DEFAULT_LIMIT,
        )
        rg = shutil.which("rg")
        found = await (_search_rg(rg, search) if rg else _search_python(search))
        return _format(found, search)


# --- ripgrep --------------------------------------------------------------------------------


def _rg_args(rg: str, search: Search) -> list[str]:
    args = [rg, "--json", "--hidden", "--no-require-git", "--sort", "path", "--no-config"]
    for name in sorted(SKIP_DIRS):
        args += ["--glob", f"!{name}"]
    if search.glob:
        args += ["--glob", search.glob]
    if search.ignore_case:
        args.append("--ignore-case")
    if search.literal:
        args.append("--fixed-strings")
    if search.context:
        args += ["--context", str(search.context)]
    args += ["--regexp", search.pattern]
    if search.target:
        args += ["--", search.target]
    return args


def _rg_text(data: dict[str, Any]) -> str:
    """A line ripgrep reported: JSON text, or base64 bytes when it was not UTF-8."""
    if "text" in data:
        return str(data["text"])
    return decode_text(base64.b64decode(data.get("bytes", "")))


def _rg_path(data: dict[str, Any]) -> str:
    """A path ripgrep reported, as the OS string the Python walk would give (bytes kept)."""
    if "text" in data:
        return str(data["text"])
    return os.fsdecode(base64.b64decode(data.get("bytes", "")))


async def _search_rg(rg: str, search: Search) -> Found:
    process = await asyncio.create_subprocess_exec(
        *_rg_args(rg, search),
        cwd=str(search.root),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=64 * 1024 * 1024,  # one JSON line holds a whole matched line, however long
    )
    assert process.stdout is not None and process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    found = Found()
    try:
        while line := await process.stdout.readline():
            message = json.loads(line)
            kind = message.get("type")
            if kind not in ("match", "context"):
                continue
            data = message["data"]
            text = _rg_text(data["lines"]).rstrip("\n").removesuffix("\r")
            record = Line(_rg_path(data["path"]), data["line_number"], text, kind == "match")
            if not found.add(record, search.limit):
                break
    except BaseException:
        _kill(process)
        errors.cancel()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(process.wait(), 0.1)  # reap it: rg dies at once on SIGKILL
        raise
    if found.limit_reached:
        _kill(process)
    code = await process.wait()
    stderr = (await errors).decode("utf-8", "replace").strip()
    if code == 2 and not found.lines and not found.limit_reached:
        if "regex" in stderr.lower():
            raise ToolError(f"Invalid regular expression: {stderr}")
        raise ToolError(f"Search failed: {stderr or 'ripgrep exited with code 2'}")
    return found


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()


# --- pure Python ----------------------------------------------------------------------------


def _compile(search: Search) -> regex.Pattern[str]:
    source = regex.escape(search.pattern) if search.literal else search.pattern
    flags = regex.IGNORECASE if search.ignore_case else 0
    try:
        return regex.compile(source, flags)
    except regex.error as error:
        raise ToolError(f"Invalid regular expression {search.pattern!r}: {error}") from None


async def _search_python(search: Search) -> Found:
    compiled = _compile(search)
    stop = threading.Event()
    try:
        return await asyncio.to_thread(_python_search, search, compiled, stop)
    finally:
        stop.set()  # a cancelled caller leaves the thread running: tell it to stop


def _python_files(search: Search, stop: threading.Event) -> Iterator[str]:
    """Files to search, relative to ``search.root``, in path order."""
    if search.target:
        yield search.target
        return
    only = PathGlob(search.glob) if search.glob else None
    for path, is_dir in walk(search.root, stop, only.matches if only else None):
        if not is_dir and (only is None or only.matches(path)):
            yield path


def _python_search(search: Search, compiled: regex.Pattern[str], stop: threading.Event) -> Found:
    found = Found()
    prefilter = _is_literal(search)
    for rel in _python_files(search, stop):
        if stop.is_set():
            break
        try:
            with open(search.root / rel, "rb") as handle:
                if not _search_file(handle, rel, compiled, prefilter, search, found, stop):
                    break
        except OSError:
            continue
    return found


def _is_literal(search: Search) -> bool:
    """Whether the pattern is plain text: then a block of lines without a match anywhere has no
    matching line either, and the per-line search can be skipped for it."""
    return search.literal or not any(char in _REGEX_SPECIAL for char in search.pattern)


_REGEX_SPECIAL = frozenset("\\.^$*+?{}[]|()")


def _search_file(
    handle: BinaryIO,
    rel: str,
    compiled: regex.Pattern[str],
    prefilter: bool,
    search: Search,
    found: Found,
    stop: threading.Event,
) -> bool:
    """Add one file's matches with their context, reading it a block at a time; ``False`` when
    the match limit stops the search. Binary files (a NUL in the first block) are skipped."""
    head = handle.read(BLOCK)
    if is_binary(head):
        return True
    state = _Context(rel, search, found)
    for lines, hits in _blocks(handle, head, compiled, prefilter):
        if stop.is_set() or not state.add_block(lines, hits):
            return False
    return True


class _Context:
    """Turns the matches of each block into records, with ``context`` lines before and after.

    Only what a later match could still show is kept: the last ``context`` unshown lines and the
    count of after-lines still owed, so a file of any size costs one block of memory.
    """

    def __init__(self, rel: str, search: Search, found: Found) -> None:
        self._rel = rel
        self._search = search
        self._found = found
        self._before: deque[tuple[int, str]] = deque(maxlen=search.context)
        self._after = 0
        self._number = 0
        """Lines of the file before the current block."""

    def add_block(self, lines: list[str], hits: list[int]) -> bool:
        """Record ``lines`` (the next lines of the file) whose ``hits`` matched; ``False`` at the limit."""
        done = 0
        for hit in hits:
            self._pass(lines, done, hit)
            for number, text in self._before:
                self._found.add(Line(self._rel, number, text.removesuffix("\r"), False), self._search.limit)
            self._before.clear()
            record = Line(self._rel, self._number + hit + 1, lines[hit].removesuffix("\r"), True)
            if not self._found.add(record, self._search.limit):
                return False
            self._after = self._search.context
            done = hit + 1
        self._pass(lines, done, len(lines))
        self._number += len(lines)
        return True

    def _pass(self, lines: list[str], low: int, high: int) -> None:
        """Lines ``low`` to ``high`` (exclusive) did not match: owed after-lines, then remembered."""
        shown = min(self._after, high - low)
        for index in range(low, low + shown):
            record = Line(self._rel, self._number + index + 1, lines[index].removesuffix("\r"), False)
            self._found.add(record, self._search.limit)
        self._after -= shown
        if self._search.context:
            first = max(low + shown, high - self._search.context)
            self._before.extend((self._number + index + 1, lines[index]) for index in range(first, high))


def _blocks(
    handle: BinaryIO, head: bytes, compiled: regex.Pattern[str], prefilter: bool
) -> Iterator[tuple[list[str], list[int]]]:
    """The file's lines a block at a time, with the indexes of those that match.

    Lines end at ``\\n`` only; each block is cut after its last newline and decoded at once (an
    invalid UTF-8 sequence never spans a newline, so this equals decoding the whole file). A line
    longer than :data:`LONG_LINE` bytes is searched piece by piece (:func:`_long_line`) instead
    of being held whole.
    """
    carry = b""
    block = head
    while block:
        data = carry + block if carry else block
        end = data.rfind(b"\n")
        if end == -1:
            if len(data) > LONG_LINE:
                carry = block = b""  # held only by data now
                text, matched, carry = _long_line(data, handle, compiled)
                yield [text], [0] if matched else []
            else:
                carry = data
            block = handle.read(BLOCK)
            continue
        yield _matches(data[:end], compiled, prefilter)
        carry = data[end + 1 :]
        block = handle.read(BLOCK)
    if carry:  # the last line has no newline, or a long line left whole lines behind
        yield _matches(carry.removesuffix(b"\n"), compiled, prefilter)


def _matches(data: bytes, compiled: regex.Pattern[str], prefilter: bool) -> tuple[list[str], list[int]]:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if prefilter and compiled.search(text) is None:
        return lines, []
    return lines, [index for index, line in enumerate(lines) if compiled.search(line)]


def _long_line(data: bytes, handle: BinaryIO, compiled: regex.Pattern[str]) -> tuple[str, bool, bytes]:
    """Search one huge line (``data`` is its start, without a newline) a block at a time.

    Returns the line's first :data:`MAX_LINE_CHARS` + 1 characters (all that the output can show,
    and enough to show that it was cut), whether it matched, and the bytes read past its end.
    Each window repeats the last :data:`OVERLAP` characters of the one before, so a match across
    a block border is found unless it is longer than that; a match that ends at the end of a
    window that is not the line's last is not trusted (``$`` or a lookahead could be fooled) and
    is looked for again in the next window.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    head: str | None = None
    matched = False
    tail = ""
    chunk = data
    while True:
        newline = chunk.find(b"\n")
        last = newline != -1 or not chunk
        if head is None or not matched:
            text = decoder.decode(chunk if newline == -1 else chunk[:newline], final=last)
            if head is None:
                head = text[: MAX_LINE_CHARS + 1]
            window = tail + text
            hit = compiled.search(window, 1 if tail else 0)
            matched = hit is not None and (last or hit.end() < len(window))
            tail = window[-OVERLAP:]
        if last:
            return head, matched, chunk[newline + 1 :] if newline != -1 else b""
        chunk = handle.read(BLOCK)


# --- output ---------------------------------------------------------------------------------


def _format(found: Found, search: Search) -> ToolResult:
    if not found.lines:
        return ToolResult.text("No matches found.")
    out: list[str] = []
    previous: Line | None = None
    cut_lines = False
    escaped = False
    for line in found.lines:
        if (
            search.context
            and previous is not None
            and (previous.path != line.path or line.number != previous.number + 1)
        ):
            out.append("--")
        text, cut = truncate_line(line.text)
        cut_lines = cut_lines or cut
        path = show_name(line.path)
        escaped = escaped or path != line.path
        out.append(f"{path}{':' if line.is_match else '-'}{line.number}{':' if line.is_match else '-'}{text}")
        previous = line
    page = truncate_head("\n".join(out), max_lines=len(out) + 1)
    notes = []
    details: dict[str, Any] = {}
    if found.limit_reached:
        notes.append(
            f"Stopped at {search.limit} matches; there may be more. "
            "Narrow the pattern or path, or raise limit."
        )
        details["matchLimitReached"] = search.limit
    if page.truncated:
        notes.append(f"Output cut at {format_size(MAX_BYTES)}; narrow the search to see the rest.")
        details["truncation"] = page.to_details()
    if cut_lines:
        notes.append(f"Lines longer than {MAX_LINE_CHARS} characters were cut; use read to see them whole.")
        details["linesTruncated"] = True
    if escaped:
        notes.append(ESCAPED_NAMES_NOTE)
    text = page.content
    if notes:
        text += "\n\n" + "\n".join(f"[{note}]" for note in notes)
    return ToolResult.text(text, details or None)
