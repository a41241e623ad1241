"""Reading a session file into raw JSON dicts, tolerating damage.

Entries stay as the dicts orjson produced: that is the cheapest possible representation (the
floor for opening a file is parsing every line) and it keeps every field of every line exactly
as written. Typed models are made from these dicts on demand.

Damage handling:
- a last line without its newline that does not parse is a *torn tail* (a crash mid-write); its
  byte offset is reported so the writer can move it aside before the next append;
- any other line that does not parse, is not an object, or lacks ``type``/``id`` is skipped with a
  warning (and left in the file);
- a second line with an id already seen is skipped with a warning (pi #3930 wrote duplicates).

What other writers put in files is accepted as pi accepts it: a UTF-8 byte-order mark before the
header, oh-my-pi's fixed-width title slot (``{"type":"title",...}``) as line 1 with the header on
line 2, lone surrogate escapes and invalid UTF-8 (see :mod:`pi_tui.jsonio`). The structural
fields are made safe in memory, with a warning, so that no line can break the tree: an ``id``
that is not text gets a stand-in id, and a ``parentId`` that is not text (or is the entry's own
id) makes the entry a root, which is how pi shows it. Every other field stays exactly as read.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pi_tui.gc_control import paused_gc, settle
from pi_tui.jsonio import MAX_DEPTH, JSONDecodeError, loads, too_deep
from pi_tui.session.errors import SessionFileError

RawEntry = dict[str, Any]


@dataclass(slots=True)
class LoadedFile:
    """What is on disk: the header, the usable entries in file order, and what was wrong."""

    header: RawEntry
    entries: list[RawEntry]
    warnings: list[str] = field(default_factory=list)
    torn_offset: int | None = None
    """Byte offset where a torn last line starts; None when the file ends cleanly."""
    missing_final_newline: bool = False
    """The last line is complete but lacks ``\\n``; the writer adds one before appending."""
    size: int = 0
    first_line: int = 2
    """Line number of the first entry (3 when an oh-my-pi title slot precedes the header)."""
    line_numbers: dict[int, int] | None = None
    """``id(raw entry) -> line number`` for entries after a skipped line (else line = position +
    first_line); see :meth:`line_of`."""
    title_slot: RawEntry | None = None
    """oh-my-pi's title line before the header, when the file has one (a rewrite keeps it)."""

    @property
    def title(self) -> str | None:
        """The title oh-my-pi keeps in its title slot, if any."""
        title = self.title_slot.get("title") if self.title_slot is not None else None
        return title.strip() if isinstance(title, str) else None

    def line_of(self, raw: RawEntry) -> int | None:
        """The line ``raw`` was read from (for warnings that name file and line)."""
        if self.line_numbers is not None and id(raw) in self.line_numbers:
            return self.line_numbers[id(raw)]
        for position, entry in enumerate(self.entries):
            if entry is raw:
                return position + self.first_line
        return None


def read_session_file(path: str | Path) -> LoadedFile:
    """Load ``path``. Raises :class:`SessionFileError` when it is unreadable or has no header.

    The file is read in blocks and parsed line by line, so reading it never holds its bytes
    whole beside the entries made of them (on a 70 MB session that was 150 MB of the peak).
    """
    try:
        with open(path, "rb") as handle, paused_gc():
            loaded = _parse_blocks(iter(lambda: handle.read(READ_BLOCK), b""), str(path))
            # Still paused: the first collection after a resume would otherwise walk every
            # object made while paused (0.07 s on a 50k-entry session) before they are frozen.
            settle(len(loaded.entries))
    except OSError as error:
        raise SessionFileError(f"Cannot read session file {path}: {error.strerror}") from error
    return loaded


READ_BLOCK = 1 << 20


def parse_session_bytes(data: bytes, name: str = "<memory>") -> LoadedFile:
    return _parse_blocks((data,), name)


Line = bytes | memoryview


def split_lines(blocks: Iterable[bytes]) -> Iterator[tuple[Line, bool]]:
    """``(line without its newline, complete)`` for each line of the concatenated ``blocks``; the
    last item is the text after the final newline (``complete`` False, possibly empty).

    Lines inside a block are views of it (no copy); only a line cut by a block boundary is
    joined, and its pieces are joined once, so a line of any length costs its own bytes.
    """
    for line, complete, _maybe_deep in _marked_lines(blocks):
        yield line, complete


NOT_OPENING = bytes(byte for byte in range(256) if byte not in b"[{\n")
"""Every byte but the opening brackets and the newline: deleted, a block leaves per line as
many bytes as the line has opening brackets."""


def _marked_lines(blocks: Iterable[bytes]) -> Iterator[tuple[Line, bool, bool]]:
    """:func:`split_lines` with a third item: True when the line has more opening brackets than
    :data:`MAX_DEPTH` (in strings or not), the only lines that can nest too deep. The brackets are
    counted a block at a time (one ``translate``, a third of the cost of two ``count`` calls
    per line, so reading stays as fast)."""
    pending: list[bytes] = []
    pending_opening = 0
    for block in blocks:
        view = memoryview(block)
        opening = block.translate(None, NOT_OPENING).split(b"\n")
        piece = 0
        start = 0
        end = block.find(b"\n")
        if pending and end >= 0:
            pending.append(block[:end])
            yield b"".join(pending), True, pending_opening + len(opening[0]) > MAX_DEPTH
            pending = []
            pending_opening = 0
            piece = 1
            start = end + 1
            end = block.find(b"\n", start)
        while end >= 0:
            yield view[start:end], True, len(opening[piece]) > MAX_DEPTH
            piece += 1
            start = end + 1
            end = block.find(b"\n", start)
        if start < len(block):
            pending.append(block[start:])
            pending_opening += len(opening[piece])
    yield b"".join(pending), False, pending_opening > MAX_DEPTH


def _blank(line: Line) -> bool:
    return not bytes(line).strip()


def _parse_blocks(blocks: Iterable[bytes], name: str) -> LoadedFile:
    size = 0

    def counted() -> Iterator[bytes]:
        nonlocal size
        for block in blocks:
            size += len(block)
            yield block

    lines = _marked_lines(counted())
    first_line, first_complete, _ = next(lines)
    if bytes(first_line[:3]) == BOM:
        first_line = first_line[3:]
    if not first_complete and not bytes(first_line).strip():
        raise SessionFileError(f"{name} is empty, not a session file")
    header_line, header_complete, header_number = first_line, first_complete, 1
    title: RawEntry | None = None
    if first_complete:
        slot = _title_slot(first_line)
        second, second_complete, second_deep = next(lines)
        if slot is not None and second_complete:
            title, header_line, header_complete, header_number = slot, second, True, 2
            following = [next(lines)]
        else:
            following = [(second, second_complete, second_deep)]
    else:
        following = []
    header = parse_header(bytes(header_line), name, header_number)
    loaded = LoadedFile(header=header, entries=[], first_line=header_number + 1, title_slot=title)
    if not header_complete:
        loaded.missing_final_newline = True
        for _ in lines:  # drain: the size counts every byte
            pass
        loaded.size = size
        return loaded

    seen: set[str] = set()
    keep = loaded.entries.append
    skipped = False
    for number, (line, complete, maybe_deep) in enumerate(
        itertools.chain(following, lines), start=header_number + 1
    ):
        if not complete:
            if len(line):
                _accept_tail(line, number, name, loaded, seen, skipped, size)
            break
        if maybe_deep and too_deep(line):  # parsed, it would be walked recursively everywhere (see jsonio)
            loaded.warnings.append(
                f"{name}:{number}: skipped a line nested more than {MAX_DEPTH} levels deep"
            )
            skipped = True
            continue
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError:
            try:
                raw = loads(line)  # what Node reads and orjson does not (see jsonio)
            except JSONDecodeError:
                if not _blank(line):
                    loaded.warnings.append(f"{name}:{number}: skipped a line that is not valid JSON")
                skipped = True
                continue
        # The usual line, accepted inline (a call per line is a tenth of the read); anything
        # else goes through _accept, which says what was wrong.
        if not skipped and type(raw) is dict and "type" in raw:
            entry_id = raw.get("id")
            if type(entry_id) is str and entry_id not in seen:
                parent = raw.get("parentId")
                if parent is None or (type(parent) is str and parent != entry_id):
                    seen.add(entry_id)
                    keep(raw)
                    continue
        skipped = not _accept(raw, number, name, loaded, seen, skipped) or skipped
    loaded.size = size
    return loaded


def _accept_tail(
    tail: Line, number: int, name: str, loaded: LoadedFile, seen: set[str], skipped: bool, size: int
) -> None:
    """The text after the last newline: a complete entry whose newline is missing, blank
    space, or a line cut off by a crash (kept aside by the writer before the next append)."""
    if _blank(tail):
        return
    try:
        raw = loads(tail)
    except JSONDecodeError:
        loaded.torn_offset = size - len(tail)
        loaded.warnings.append(
            f"{name}:{number}: the last line was cut off ({len(tail)} bytes, a crash while "
            "writing); it is kept aside in a .torn file before the next write"
        )
    else:
        loaded.missing_final_newline = True
        _accept(raw, number, name, loaded, seen, skipped)


BOM = b"\xef\xbb\xbf"


def _title_slot(line: Line) -> RawEntry | None:
    """oh-my-pi's title line (rewritten in place, so it comes before the header), if ``line`` is one."""
    if b'"title"' not in bytes(line[:4096]):
        return None
    try:
        slot = loads(line)
    except JSONDecodeError:
        return None
    return slot if isinstance(slot, dict) and slot.get("type") == "title" else None


def parse_header(line: bytes, name: str, number: int = 1) -> RawEntry:
    """The header line of a session file, or :class:`SessionFileError`."""
    if number == 1 and line.startswith(BOM):
        line = line[len(BOM) :]
    try:
        header = loads(line)
    except JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise SessionFileError(f"{name} is not a session file: line {number} is not a session header")
    return header


def header_of(first_lines: bytes, name: str) -> RawEntry:
    """The header from the first bytes of a file (BOM and oh-my-pi's title slot allowed)."""
    if first_lines.startswith(BOM):
        first_lines = first_lines[len(BOM) :]
    lines = first_lines.split(b"\n", 2)
    if len(lines) > 1 and _title_slot(lines[0]) is not None:
        return parse_header(lines[1], name, 2)
    return parse_header(lines[0], name)


def _accept(raw: Any, number: int, name: str, loaded: LoadedFile, seen: set[str], after_skip: bool) -> bool:
    """Keep ``raw`` as an entry if it can be one; False when the line was skipped."""
    warnings = loaded.warnings
    if type(raw) is not dict or "type" not in raw:
        warnings.append(f"{name}:{number}: skipped a line that is not a session entry")
        return False
    entry_id = raw.get("id")
    if entry_id is not None and type(entry_id) is not str:
        raw["id"] = entry_id = f"line-{number}"
        warnings.append(f"{name}:{number}: the entry's id is not text; it is called {entry_id} here")
    if entry_id is None and _has_ids(loaded.header):
        # Only version 1 files have no ids (migration gives them some); anywhere else the
        # entry has no place in the tree.
        warnings.append(f"{name}:{number}: skipped an entry without an id")
        return False
    if entry_id is not None:
        if entry_id in seen:
            warnings.append(f"{name}:{number}: skipped a second entry with id {entry_id}")
            return False
        seen.add(entry_id)
        parent = raw.get("parentId")
        if parent is not None and (type(parent) is not str or parent == entry_id):
            raw["parentId"] = None
            why = "its own id" if parent == entry_id else "not an entry id"
            warnings.append(f"{name}:{number}: the entry's parentId is {why}; it is shown as a root")
    # (v1 files have no ids; migration assigns them.)
    if after_skip:
        if loaded.line_numbers is None:
            loaded.line_numbers = {}
        loaded.line_numbers[id(raw)] = number
    loaded.entries.append(raw)
    return True


def _has_ids(header: dict[str, Any]) -> bool:
    """Entries carry ids from session version 2 on."""
    version = header.get("version")
    return isinstance(version, int) and version >= 2
