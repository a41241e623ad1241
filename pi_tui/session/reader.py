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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pi_tui.gc_control import paused_gc, settle
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


def read_session_file(path: str | Path) -> LoadedFile:
    """Load ``path``. Raises :class:`SessionFileError` when it is unreadable or has no header."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise SessionFileError(f"Cannot read session file {path}: {error.strerror}") from error
    with paused_gc():
        loaded = parse_session_bytes(data, str(path))
    settle(len(loaded.entries))
    return loaded


def parse_session_bytes(data: bytes, name: str = "<memory>") -> LoadedFile:
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if not lines and not tail.strip():
        raise SessionFileError(f"{name} is empty, not a session file")

    header_line = lines[0] if lines else tail
    header = parse_header(header_line, name)
    loaded = LoadedFile(header=header, entries=[], size=len(data))

    entries = loaded.entries
    seen: set[str] = set()
    loads = orjson.loads
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            raw = loads(line)
        except orjson.JSONDecodeError:
            loaded.warnings.append(f"{name}:{number}: skipped a line that is not valid JSON")
            continue
        _accept(raw, number, name, entries, seen, loaded.warnings)

    if lines and tail.strip():
        number = len(lines) + 1
        try:
            raw = loads(tail)
        except orjson.JSONDecodeError:
            loaded.torn_offset = len(data) - len(tail)
            loaded.warnings.append(
                f"{name}:{number}: the last line was cut off ({len(tail)} bytes, a crash while "
                "writing); it is kept aside in a .torn file before the next write"
            )
        else:
            loaded.missing_final_newline = True
            _accept(raw, number, name, entries, seen, loaded.warnings)
    elif not lines:
        loaded.missing_final_newline = True
    return loaded


def parse_header(line: bytes, name: str) -> RawEntry:
    """Line 1 of a session file, or :class:`SessionFileError`."""
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise SessionFileError(f"{name} is not a session file: line 1 is not a session header")
    return header


def _accept(
    raw: Any, number: int, name: str, entries: list[RawEntry], seen: set[str], warnings: list[str]
) -> None:
    if type(raw) is not dict or "type" not in raw:
        warnings.append(f"{name}:{number}: skipped a line that is not a session entry")
        return
    entry_id = raw.get("id")
    if entry_id is None:
        # v1 files have no ids; migration assigns them. Keep the line.
        entries.append(raw)
        return
    if entry_id in seen:
        warnings.append(f"{name}:{number}: skipped a second entry with id {entry_id}")
        return
    seen.add(entry_id)
    entries.append(raw)
