"""The session index: what the session picker shows of every session file, without parsing them.

``/resume`` and ``-r`` used to parse every session file each time; over a few GB of sessions that
took minutes and could run out of memory. The index keeps, per file, what :class:`SessionInfo`
holds plus a bounded search text, in one SQLite file in the user cache folder
(:func:`pi_tui.config.paths.cache_dir`), and brings it up to date on every listing:

- a file whose size, mtime, inode and device are unchanged is not opened;
- a file that grew, whose first bytes (the header) and the bytes just before the stored offset
  are unchanged, is read only from that offset (the end of its last complete line), and its
  summary is carried on from the state stored with it (line number, seen entry ids, name,
  counts, last message time, text);
- a file that shrank, was replaced, or changed in place is read whole; deleted files drop out.

Files are read in 1 MB blocks, so a 100 MB file never sits in memory. The answers are the same
as :func:`pi_tui.session.info.session_info` gives (same skipping of damaged lines, duplicate
ids, title slot), except the search text, which is bounded (see :data:`HEAD_CHARS`), and a first
message longer than :data:`FIRST_MESSAGE_CHARS`, which is cut there. A duplicate entry
id is what makes a later line not count; to know that after an append the index keeps a 32-bit
hash of every id seen, and a new id whose hash is already known makes the file be read whole.

SQLite gives atomic, crash-safe updates and lets two pi-tui processes update the index at once
(the second waits briefly, or skips saving; answers are always computed from the files). A
corrupt or older index file is deleted and rebuilt; when no index file can be used at all, an
in-memory one serves the call.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from pi_tui.config.paths import cache_dir
from pi_tui.jsonio import MAX_DEPTH, JSONDecodeError, dumps, loads, too_deep
from pi_tui.session.errors import SessionFileError
from pi_tui.session.ids import parse_iso
from pi_tui.session.info import SessionInfo, counted_message, session_name
from pi_tui.session.reader import BOM, NOT_OPENING, parse_header
from pi_tui.session.reader import _title_slot as title_slot

INDEX_VERSION = 1
INDEX_NAME = "session-index.sqlite3"

MESSAGE_CHARS = 2_000
"""Search text kept of one message (its start, lower-cased, whitespace collapsed)."""
HEAD_CHARS = 8_000
TAIL_CHARS = 8_000
"""A session keeps the first ``HEAD_CHARS`` and the last ``TAIL_CHARS`` of its search text: 16K
characters at most. The bound is set by search speed, not memory: a word found nowhere makes
search scan all the text, at 1 to 1.4 GB/s on the 2-core machine measured, and 2,000 sessions
of 16K characters (32 MB) take 25 to 45 ms of the 50 ms a key may cost. The start says what the
session was about; the end is what the user did last."""
FIRST_MESSAGE_CHARS = 4_000
"""The first user message is kept exactly up to this length (rows show 200 characters)."""
READ_BYTES = 1 << 20
OPEN_BRACE = ord("{")
EDGE_BYTES = 64
"""Bytes before the stored offset that must be unchanged for an append to be read alone."""
SAVE_EVERY_BYTES = 64_000_000
"""A long build saves what it has read every so often, so an interrupted build is not lost."""

on_read: Callable[[Path, int], None] | None = None
"""Called with (file, offset) whenever a session file is read from ``offset``; lets tests see
which files the index opened and from where."""


# --- the summary of one file ------------------------------------------------------------------


@dataclass(slots=True)
class Summary:
    """Everything the index keeps of one session file, and the state to carry on reading it."""

    valid: bool = False
    id: str = ""
    cwd: str = ""
    title: str | None = None
    parent: Any = None
    created: datetime | None = None
    name: str | None = None
    count: int = 0
    first_message: str = ""
    last_time: datetime | None = None
    head: str = ""
    tail: str = ""
    line: int = 2
    """Number of the next line to read (1-based, as the reader counts)."""
    resume_at: int | None = None
    """End of the last complete line read; None when the file must be read whole next time."""
    prefix: bytes = b""
    """Digest of the bytes up to the end of the header (title slot included)."""
    prefix_len: int = 0
    edge: bytes = b""
    edge_len: int = 0
    seen: set[int] = field(default_factory=set)
    _tail_parts: list[str] = field(default_factory=list)
    """Message texts for ``tail`` not yet cleaned and cut to size: only the newest of them end up
    in it, so they are cleaned (the costly part) in batches, newest first, as far as needed."""
    _tail_added: int = 0

    def add(self, raw: dict[str, Any]) -> None:
        """Fold one accepted entry in, as ``info.session_info`` does."""
        kind = raw.get("type")
        if kind == "session_info":
            self.name = session_name(raw)
        elif kind == "message" and (counted := counted_message(raw)) is not None:
            role, text, moment = counted
            self.count += 1
            if text:
                self._add_text(text)
            if role == "user" and not self.first_message:
                self.first_message = text[:FIRST_MESSAGE_CHARS]
            if moment is not None:
                self.last_time = moment

    def _add_text(self, text: str) -> None:
        text = text[: MESSAGE_CHARS * 2]
        if len(self.head) < HEAD_CHARS:
            piece = _searchable(text)
            if not piece:
                return
            piece = f" {piece}" if self.head else piece
            room = HEAD_CHARS - len(self.head)
            self.head += piece[:room]
            text = piece[room:]
            if not text:
                return
        self._tail_parts.append(text)
        self._tail_added += len(text)
        if self._tail_added > 16 * TAIL_CHARS:
            self.settle_tail()

    def settle_tail(self) -> None:
        """Clean the texts added since the last call, newest first, until ``tail`` is full."""
        if not self._tail_parts:
            return
        pieces: list[str] = []
        length = 0
        for text in reversed(self._tail_parts):
            piece = _searchable(text)
            if piece:
                pieces.append(piece)
                length += len(piece) + 1
                if length > TAIL_CHARS:
                    break
        else:
            if self.tail:
                pieces.append(self.tail)
        self.tail = " ".join(reversed(pieces))[-TAIL_CHARS:]
        self._tail_parts.clear()
        self._tail_added = 0

    @property
    def text(self) -> str:
        self.settle_tail()
        return f"{self.head} {self.tail}" if self.tail else self.head

    def info(self, path: Path, mtime: float) -> SessionInfo:
        stamp = datetime.fromtimestamp(mtime, UTC)
        return SessionInfo(
            path=path,
            id=self.id,
            cwd=self.cwd,
            name=self.name or self.title or None,
            parent_session=self.parent,
            created=self.created or stamp,
            modified=self.last_time or stamp,
            message_count=self.count,
            first_message=self.first_message,
            all_messages_text=self.text,
        )


def _searchable(text: str) -> str:
    """A message's search text: whitespace collapsed, lower-cased, its start only."""
    return " ".join(text.split())[:MESSAGE_CHARS].lower()


# --- reading files ------------------------------------------------------------------------------


class _MaybeDuplicate(Exception):
    """An appended entry's id hashes like one already seen: the file is read whole instead."""


def _id_hash(entry_id: str) -> int:
    return zlib.crc32(entry_id.encode("utf-8", "surrogatepass"))


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def read_whole(path: Path) -> Summary:
    """Summarise ``path`` from its first byte (``valid`` False when it is not a session file)."""
    try:
        with open(path, "rb") as handle:
            if on_read is not None:
                on_read(path, 0)
            return _read_from_start(handle, str(path))
    except (OSError, SessionFileError):
        return Summary()


def _read_from_start(handle: IO[bytes], name: str) -> Summary:
    first = handle.readline()
    body = first[len(BOM) :] if first.startswith(BOM) else first
    summary = Summary()
    if not body.endswith(b"\n"):  # the only line: a header at most, no entries
        if not body.strip():
            raise SessionFileError(f"{name} is empty")
        _set_header(summary, parse_header(body, name), None)
        return summary
    prefix = first
    slot = title_slot(body[:-1])
    if slot is not None:
        second = handle.readline()
        if not second.endswith(b"\n"):
            raise SessionFileError(f"{name} has a title slot but no header line")
        header = parse_header(second[:-1], name, 2)
        prefix += second
        summary.line = 3
    else:
        header = parse_header(body[:-1], name, 1)
        slot = None
    _set_header(summary, header, slot)
    summary.prefix, summary.prefix_len = _digest(prefix), len(prefix)
    summary.resume_at = len(prefix)
    _read_entries(handle, summary, set())
    _note_edge(handle, summary)
    return summary


def _set_header(summary: Summary, header: dict[str, Any], slot: dict[str, Any] | None) -> None:
    summary.valid = True
    summary.id = str(header.get("id", ""))
    summary.cwd = str(header.get("cwd", ""))
    summary.parent = header.get("parentSession")
    summary.created = parse_iso(str(header.get("timestamp", "")))
    title = slot.get("title") if slot is not None else None
    summary.title = title.strip() if isinstance(title, str) else None


def _read_entries(handle: IO[bytes], summary: Summary, exact: set[str] | None) -> None:
    """Read lines from the handle's position (``summary.resume_at``) to the end.

    ``exact`` holds every id read so far when reading from the start; when carrying on after an
    append it is None and the stored id hashes stand in (a hash already seen raises
    :class:`_MaybeDuplicate`). The file is read in big blocks and each line parsed in place (a
    view, not a copy): line-by-line reads cost more than the parsing.
    """
    assert summary.resume_at is not None
    position = summary.resume_at
    pending = bytearray()
    carried = 0  # opening brackets in what was left over (see reader._marked_lines)
    while True:
        block = handle.read(READ_BYTES)
        searched = len(pending)  # what was left over holds no newline
        pending += block
        opening = block.translate(None, NOT_OPENING).split(b"\n")
        piece = 0
        start = 0
        with memoryview(pending) as view:
            end = pending.find(b"\n", searched)
            while end >= 0:
                deep = carried + len(opening[piece]) > MAX_DEPTH
                carried, piece = 0, piece + 1
                if not (deep and too_deep(pending[start:end])):  # skipped as the reader skips it
                    _take(view, start, end + 1, summary, exact)
                position += end + 1 - start
                summary.line += 1
                if summary.resume_at is not None:
                    summary.resume_at = position
                start = end + 1
                end = pending.find(b"\n", start)
            if not block:
                if (
                    start < len(pending)
                    and not too_deep(pending[start:])
                    and _take(view, start, len(pending), summary, exact)
                ):
                    summary.resume_at = None  # folded a line that may still grow: read whole next time
                return
        carried += len(opening[piece])
        del pending[:start]


def _take(view: memoryview, start: int, end: int, summary: Summary, exact: set[str] | None) -> bool:
    """Parse the line ``view[start:end]`` and fold it in if it is an entry; True if it was one.

    The line keeps its newline (JSON allows it). A blank line, a line that is not JSON (a torn
    last line among them) or not an entry is skipped, as the reader skips it.
    """
    if view[start] != OPEN_BRACE and view[start:end].tobytes().isspace():
        return False
    line = view[start:end]
    try:
        try:
            raw = orjson.loads(line)
        except JSONDecodeError:
            raw = loads(line.tobytes())  # lone surrogates, invalid UTF-8: parsed as the reader does
    except JSONDecodeError:
        return False
    finally:
        line.release()
    if type(raw) is not dict or "type" not in raw:
        return False
    _accept(raw, summary.line, summary, exact, summary.seen)
    return True


def _accept(
    raw: dict[str, Any], number: int, summary: Summary, exact: set[str] | None, seen: set[int]
) -> None:
    entry_id = raw.get("id")
    if entry_id is not None:
        if type(entry_id) is not str:
            entry_id = f"line-{number}"
        hashed = _id_hash(entry_id)
        if exact is not None:
            if entry_id in exact:
                return
            exact.add(entry_id)
        elif hashed in seen:
            raise _MaybeDuplicate
        seen.add(hashed)
    summary.add(raw)


def _note_edge(handle: IO[bytes], summary: Summary) -> None:
    if summary.resume_at is None:
        return
    size = min(EDGE_BYTES, summary.resume_at)
    handle.seek(summary.resume_at - size)
    summary.edge, summary.edge_len = _digest(handle.read(size)), size


def read_appended(path: Path, stored: Summary) -> Summary | None:
    """Carry ``stored`` on over the bytes appended since; None when the file must be read whole."""
    if stored.resume_at is None or not stored.valid:
        return None
    try:
        with open(path, "rb") as handle:
            if _digest(handle.read(stored.prefix_len)) != stored.prefix:
                return None
            handle.seek(stored.resume_at - stored.edge_len)
            if _digest(handle.read(stored.edge_len)) != stored.edge:
                return None
            if on_read is not None:
                on_read(path, stored.resume_at)
            try:
                _read_entries(handle, stored, None)
            except _MaybeDuplicate:
                return None
            _note_edge(handle, stored)
    except OSError:
        return None
    return stored


# --- the index file -----------------------------------------------------------------------------

_COLUMNS = (
    "valid, id, cwd, title, parent, created, name, count, first_message, last_time, head, tail, "
    "line, resume_at, prefix, prefix_len, edge, edge_len"
)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    path TEXT PRIMARY KEY, folder TEXT NOT NULL,
    dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,
    {_COLUMNS.replace(",", " ,")}, ids BLOB
);
CREATE INDEX IF NOT EXISTS sessions_by_folder ON sessions (folder);
"""
_INSERT = (
    f"INSERT OR REPLACE INTO sessions (path, folder, dev, ino, size, mtime_ns, {_COLUMNS}, ids)"
    f" VALUES ({', '.join('?' * 25)})"
)


Progress = Callable[[list[SessionInfo], int, int], None]
"""Sessions known so far, files read, files to read (see :meth:`SessionIndex.sessions`)."""
FIRST_REPORT_SECONDS = 0.15
REPORT_EVERY_SECONDS = 0.5


@dataclass(slots=True)
class _Stat:
    path: Path
    key: tuple[int, int, int, int]
    """(device, inode, size, mtime in ns)."""
    mtime: float


_Row = tuple[tuple[int, int, int, int], Summary]
"""A stored file: (device, inode, size, mtime in ns) when it was read, and its summary."""


def index_file() -> Path:
    return cache_dir() / INDEX_NAME


class SessionIndex:
    """One open index file; use as a context manager (``with SessionIndex() as index:``)."""

    def __init__(self, file: Path | None = None) -> None:
        self.file = file or index_file()
        self.db = self._open()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _open(self) -> sqlite3.Connection:
        """The index file, rebuilt when it is corrupt or of another version; in memory if need be.

        A file that is busy beyond the wait (another process writing for long) or not writable is
        not damage: it is left alone and this call works in memory.
        """
        for attempt in range(2):
            try:
                self.file.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.file, timeout=5.0)
            except (OSError, sqlite3.Error):
                break
            try:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version != INDEX_VERSION:
                    db.executescript("DROP TABLE IF EXISTS sessions;")
                    db.executescript(_SCHEMA)
                    db.execute(f"PRAGMA user_version = {INDEX_VERSION}")
                    db.commit()
                db.execute("SELECT path FROM sessions LIMIT 1").fetchall()
                return db
            except sqlite3.OperationalError:
                db.close()
                break
            except sqlite3.Error:  # not a database, or a damaged one
                db.close()
                if attempt == 0:
                    self._remove_file()
        db = sqlite3.connect(":memory:")
        db.executescript(_SCHEMA)
        return db

    def _remove_file(self) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{self.file}{suffix}")

    # --- listing --------------------------------------------------------------------------------

    def sessions(self, folders: Iterable[Path], progress: Progress | None = None) -> list[SessionInfo]:
        """Every session file directly in ``folders``, brought up to date; in no particular order.

        Files to (re)read are read newest first; while that takes long (a first build over a big
        folder) ``progress`` is called now and then with the sessions known so far, the number of
        files read and the number to read, so a picker can show the newest sessions at once.
        """
        began = time.monotonic()
        infos: list[SessionInfo] = []
        listed: set[str] = set()
        work: list[tuple[str, _Stat, _Row | None]] = []
        for folder in folders:
            key = _folder_key(folder)
            listed.add(key)
            stored = self._stored(key)
            for path, stat in _stat_files(folder).items():
                row = stored.pop(path, None)
                if row is None or row[0] != stat.key:
                    work.append((key, stat, row))
                elif row[1].valid:
                    infos.append(row[1].info(stat.path, stat.mtime))
            self._save([], list(stored))
        work.sort(key=lambda item: item[1].mtime, reverse=True)
        changed: list[tuple[str, _Stat, Summary]] = []
        pending = 0
        report_at = began + FIRST_REPORT_SECONDS
        for done, (key, stat, row) in enumerate(work, start=1):
            summary = self._update(stat, row)
            changed.append((key, stat, summary))
            if summary.valid:
                infos.append(summary.info(stat.path, stat.mtime))
            pending += stat.key[2]
            if pending >= SAVE_EVERY_BYTES:
                self._save(changed, [])
                changed, pending = [], 0
            if progress is not None and done < len(work) and time.monotonic() >= report_at:
                progress(list(infos), done, len(work))
                report_at = time.monotonic() + REPORT_EVERY_SECONDS
        self._save(changed, [])
        self._forget_missing_folders(listed)
        return infos

    def _update(self, stat: _Stat, row: _Row | None) -> Summary:
        """A changed file: carry on over an append when that is safe, else read it whole."""
        if row is not None:
            (dev, ino, size, _mtime), stored = row
            grew = stat.key[:2] == (dev, ino) and stat.key[2] > size
            seen = self._seen(stat.path) if grew and stored.resume_at is not None else None
            if seen is not None:
                stored.seen = seen
                carried = read_appended(stat.path, stored)
                if carried is not None:
                    return carried
        return read_whole(stat.path)

    def _stored(self, folder: str) -> dict[str, _Row]:
        """The rows of ``folder``; none when the index cannot be read (then every file is read)."""
        query = f"SELECT path, dev, ino, size, mtime_ns, {_COLUMNS} FROM sessions WHERE folder = ?"
        try:
            rows = self.db.execute(query, (folder,)).fetchall()
        except sqlite3.Error:
            return {}
        return {
            path: ((dev, ino, size, mtime_ns), _summary_of(values))
            for path, dev, ino, size, mtime_ns, *values in rows
        }

    def _seen(self, path: Path) -> set[int] | None:
        """The id hashes stored for ``path``; None when they cannot be read."""
        try:
            row = self.db.execute("SELECT ids FROM sessions WHERE path = ?", (_path_key(path),)).fetchone()
        except sqlite3.Error:
            return None
        hashes = array("I")
        if row is not None and row[0]:
            hashes.frombytes(row[0])
        return set(hashes)

    def _save(self, changed: list[tuple[str, _Stat, Summary]], gone: list[str]) -> None:
        """Write changed rows and drop deleted files; a busy or read-only index just is not saved."""
        if not changed and not gone:
            return
        try:
            with self.db:
                self.db.executemany("DELETE FROM sessions WHERE path = ?", [(path,) for path in gone])
                rows = [
                    (_path_key(stat.path), key, *stat.key, *_values_of(summary))
                    for key, stat, summary in changed
                ]
                self.db.executemany(_INSERT, rows)
        except sqlite3.Error:
            pass
        for _key, _stat, summary in changed:
            summary.seen = set()  # only needed while reading; the rows keep them

    def _forget_missing_folders(self, listed: set[str]) -> None:
        """Drop the rows of folders that no longer exist (removed projects, test folders)."""
        try:
            known = [row[0] for row in self.db.execute("SELECT DISTINCT folder FROM sessions")]
            gone = [(folder,) for folder in known if folder not in listed and not os.path.isdir(folder)]
            if gone:
                with self.db:
                    self.db.executemany("DELETE FROM sessions WHERE folder = ?", gone)
        except sqlite3.Error:
            pass


def indexed_sessions(
    folders: Iterable[Path], progress: Progress | None = None, file: Path | None = None
) -> list[SessionInfo]:
    """The sessions of ``folders`` from the index (updated first), in no particular order."""
    with SessionIndex(file) as index:
        return index.sessions(folders, progress)


def _folder_key(folder: Path) -> str:
    return os.path.abspath(folder)


def _path_key(path: Path) -> str:
    return os.path.abspath(path)


def _stat_files(folder: Path) -> dict[str, _Stat]:
    """The ``*.jsonl`` files of ``folder`` (following links, as listing does) by absolute path."""
    files: dict[str, _Stat] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return files
    for entry in entries:
        if not entry.name.endswith(".jsonl") or entry.name == ".jsonl":
            continue
        try:
            if not entry.is_file():
                continue
            stat = entry.stat()
        except OSError:
            continue
        path = Path(folder) / entry.name
        key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        files[_path_key(path)] = _Stat(path, key, stat.st_mtime)
    return files


def _values_of(summary: Summary) -> tuple[Any, ...]:
    summary.settle_tail()
    return (
        int(summary.valid),
        _text_in(summary.id),
        _text_in(summary.cwd),
        _text_in(summary.title),
        dumps(summary.parent) if summary.parent is not None else None,
        summary.created.isoformat() if summary.created else None,
        _text_in(summary.name),
        summary.count,
        _text_in(summary.first_message),
        summary.last_time.isoformat() if summary.last_time else None,
        _text_in(summary.head),
        _text_in(summary.tail),
        summary.line,
        summary.resume_at,
        summary.prefix,
        summary.prefix_len,
        summary.edge,
        summary.edge_len,
        array("I", summary.seen).tobytes(),
    )


def _text_in(text: str | None) -> str | bytes | None:
    """Text as SQLite can hold it: lone surrogates (which session files may hold) go in as bytes."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _text_out(value: str | bytes | None) -> str | None:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def _summary_of(values: Sequence[Any]) -> Summary:
    (valid, id_, cwd, title, parent, created, name, count, first, last, head, tail,
     line, resume_at, prefix, prefix_len, edge, edge_len) = values  # fmt: skip
    return Summary(
        valid=bool(valid),
        id=_text_out(id_) or "",
        cwd=_text_out(cwd) or "",
        title=_text_out(title),
        parent=loads(parent) if parent is not None else None,
        created=datetime.fromisoformat(created) if created else None,
        name=_text_out(name),
        count=count or 0,
        first_message=_text_out(first) or "",
        last_time=datetime.fromisoformat(last) if last else None,
        head=_text_out(head) or "",
        tail=_text_out(tail) or "",
        line=line or 2,
        resume_at=resume_at,
        prefix=prefix or b"",
        prefix_len=prefix_len or 0,
        edge=edge or b"",
        edge_len=edge_len or 0,
    )


# --- search -------------------------------------------------------------------------------------


class TextSearch:
    """Which texts hold every word of a query, fast enough to run on every key.

    Each item is a few lower-cased strings (a name, the search text); a word matches an item when
    it is in one of them (words never span two, since a query word has no whitespace). When the
    new query only narrows the previous one (typing on), just the previous matches are searched;
    recent answers are remembered for backspace.
    """

    REMEMBERED = 64

    def __init__(self, items: Sequence[Sequence[str]]) -> None:
        self.items = items
        self._answers: dict[tuple[str, ...], list[int]] = {}
        self._last: tuple[tuple[str, ...], list[int]] | None = None

    def find(self, query: str) -> list[int]:
        """Positions of the matching items, in order."""
        words = tuple(query.lower().split())
        if not words:
            return list(range(len(self.items)))
        known = self._answers.get(words)
        if known is not None:
            self._last = (words, known)
            return known
        candidates: Iterable[int] = range(len(self.items))
        if self._last is not None:
            before, matched = self._last
            if all(any(old in new for new in words) for old in before):
                candidates = matched
        items = self.items
        found = [
            position
            for position in candidates
            if all(any(word in part for part in items[position]) for word in words)
        ]
        if len(self._answers) >= self.REMEMBERED:
            self._answers.clear()
        self._answers[words] = found
        self._last = (words, found)
        return found
