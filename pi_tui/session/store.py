"""The one place that writes session files.

A :class:`SessionFileWriter` owns one open session file for appending:

- it holds an exclusive advisory lock (``<file>.lock``, ``flock``) for its whole life, so a second
  pi-tui process gets :class:`SessionLockedError` instead of interleaving lines; the kernel drops
  the lock when the process dies, even by SIGKILL, so a crash never leaves a stale lock behind;
- every entry is one ``write`` of the complete line on an ``O_APPEND`` descriptor (no user-space
  buffer, so each entry is flushed to the OS as it is written); ``sync()`` fsyncs, and is called
  at the end of every turn and on close;
- before its first append it repairs the tail: a torn last line is copied to ``<file>.torn`` and
  cut off; a complete last line missing its newline gets one.

:func:`atomic_rewrite` is the only way a file is ever rewritten (migration).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pi_tui import jsonio
from pi_tui.session.errors import SessionError, SessionLockedError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, single-writer not enforced
    fcntl = None  # type: ignore[assignment]


def encode_line(entry: dict[str, Any]) -> bytes:
    """One JSONL line for ``entry``, newline included (lone surrogates as Node writes them)."""
    return jsonio.dumps(entry) + b"\n"


class SessionLock:
    """Exclusive ``flock`` on ``<session file>.lock``; the lock file records the owner's pid."""

    def __init__(self, session_path: Path) -> None:
        self.session_path = session_path
        self.path = session_path.with_name(session_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None or fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise SessionLockedError(str(self.session_path), pid) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)  # closing drops the flock
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


class SessionFileWriter:
    """Appends lines to one session file; see the module docstring for the guarantees."""

    def __init__(
        self,
        path: Path,
        *,
        torn_offset: int | None = None,
        missing_final_newline: bool = False,
    ) -> None:
        self.path = path
        self.lock = SessionLock(path)
        self._fd: int | None = None
        self._torn_offset = torn_offset
        self._missing_final_newline = missing_final_newline
        self._dirty = False

    def open(self) -> None:
        """Take the lock and open for appending (creating the file and its folder if needed)."""
        if self._fd is not None:
            return
        self.lock.acquire()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            self.lock.release()
            raise SessionError(f"Cannot write session file {self.path}: {error.strerror}") from error

    def expect_tail(self, *, torn_offset: int | None, missing_final_newline: bool) -> None:
        """Tell the writer what the reader found at the end of the file (see ``_repair_tail``)."""
        self._torn_offset = torn_offset
        self._missing_final_newline = missing_final_newline

    def append(self, entries: Iterable[dict[str, Any]]) -> None:
        """Write each entry as its own complete line."""
        self.open()
        self._repair_tail()
        for entry in entries:
            self._write_all(encode_line(entry))
        self._dirty = True

    def sync(self) -> None:
        """fsync what was written since the last sync (end of a turn, close)."""
        if self._fd is not None and self._dirty:
            os.fsync(self._fd)
            self._dirty = False

    def close(self) -> None:
        if self._fd is None:
            self.lock.release()
            return
        try:
            self.sync()
        finally:
            os.close(self._fd)
            self._fd = None
            self.lock.release()

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def _repair_tail(self) -> None:
        if self._torn_offset is not None:
            offset, self._torn_offset = self._torn_offset, None
            move_torn_tail(self.path, offset)
        if self._missing_final_newline:
            self._missing_final_newline = False
            self._write_all(b"\n")


def move_torn_tail(path: Path, offset: int) -> None:
    """Append the bytes of ``path`` from ``offset`` to ``<path>.torn``, then cut them off."""
    with open(path, "rb") as source:
        source.seek(offset)
        torn = source.read()
    if not torn:
        return
    torn_path = path.with_name(path.name + ".torn")
    with open(torn_path, "ab") as aside:
        aside.write(torn)
        aside.flush()
        os.fsync(aside.fileno())
    os.truncate(path, offset)


def atomic_rewrite(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Replace ``path`` with ``lines`` so a crash leaves either the old or the new file."""
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as temp:
            for line in lines:
                temp.write(encode_line(line))
            temp.flush()
            os.fsync(temp.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
