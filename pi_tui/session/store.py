"""The one place that writes session files.

A :class:`SessionFileWriter` owns one open session file for appending:

- it holds an exclusive advisory lock (``<file>.lock``, ``flock``) for its whole life, so a second
  pi-tui process gets :class:`SessionLockedError` instead of interleaving lines; the kernel drops
  the lock when the process dies, even by SIGKILL, so a crash never leaves a stale lock behind.
  The holder removes the lock file on release; a process that opened the old file just before
  that would hold a lock on a file no one else can see, so every acquirer checks, after locking,
  that its descriptor is still the file at the path, and starts again if not (see ``acquire``);
- every entry is one ``write`` of the complete line on an ``O_APPEND`` descriptor (no user-space
  buffer, so each entry is flushed to the OS as it is written); ``sync()`` fsyncs, and is called
  at the end of every turn and on close;
- a write that fails half way (disk full, I/O error) is cut back to the end of the last complete
  line before anything else is written, so a partial line never stays and is never glued to the
  next one; :class:`SessionWriteError` says how many entries made it, and the caller keeps the
  rest for a later try;
- before its first append it repairs the tail: a torn last line is copied to ``<file>.torn`` and
  cut off; a complete last line missing its newline gets one.

Session, lock and torn files are opened without following a symbolic link at their own name (a
link there is refused, never written through), and are created 0600 in folders created 0700:
conversations are private. Files and folders that already exist keep their mode.

:func:`atomic_rewrite` is the only way a file is ever rewritten (migration).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pi_tui import jsonio
from pi_tui.session.errors import SessionError, SessionLockedError, SessionWriteError
from pi_tui.text_safety import show_name

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, single-writer not enforced
    fcntl = None  # type: ignore[assignment]

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
LOCK_ATTEMPTS = 50
"""How often ``acquire`` starts again when the lock file it locked was replaced meanwhile; each
restart needs another process to release and a third to lock in between, so a handful is plenty."""


def encode_line(entry: dict[str, Any]) -> bytes:
    """One JSONL line for ``entry``, newline included (lone surrogates as Node writes them)."""
    return jsonio.dumps(entry) + b"\n"


def write_error(
    path: Path, error: OSError, session: Path | None = None, *, written: int = 0
) -> SessionWriteError:
    """The one-line error for a failed open or write of ``path`` (a file of ``session``)."""
    reason = error.strerror or str(error)
    if error.errno == errno.ELOOP and os.path.islink(path):
        return SessionWriteError(
            f"Refusing to write {show_name(path)}: it is a symbolic link "
            "(remove it, or open the file it points to)",
            written=written,
            reason="a symbolic link",
        )
    session = session or path
    where = "" if path == session else f" ({show_name(path.name)})"
    return SessionWriteError(
        f"Cannot write session file {show_name(session)}{where}: {reason}", written=written, reason=reason
    )


def open_no_follow(path: Path, flags: int, session: Path | None = None) -> int:
    """``os.open`` that refuses a symbolic link at ``path`` and anything but a regular file;
    a file it creates is 0600."""
    try:
        fd = os.open(path, flags | _NO_FOLLOW, PRIVATE_FILE)
    except OSError as error:
        raise write_error(path, error, session) from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as error:
        os.close(fd)
        raise write_error(path, error, session) from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SessionWriteError(
            f"Refusing to write {show_name(path)}: it is not a regular file", reason="not a file"
        )
    return fd


def make_private_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0700; folders that exist keep their mode."""
    missing: list[Path] = []
    current = folder
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_FOLDER)
        except FileExistsError:
            pass
        except OSError as error:
            reason = error.strerror or str(error)
            raise SessionWriteError(
                f"Cannot create session folder {show_name(path)}: {reason}", reason=reason
            ) from None
    if not os.path.isdir(folder):
        raise SessionWriteError(
            f"Cannot write sessions in {show_name(folder)}: it is not a folder", reason="not a folder"
        )


def check_folder_writable(folder: Path, session: Path) -> None:
    """Create ``folder`` (0700) if needed and prove a file can be created in it, or raise
    :class:`SessionWriteError`; used at start for a session whose file does not exist yet."""
    make_private_folders(folder)
    probe = folder / f".{session.name}.{os.getpid()}.check"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW, PRIVATE_FILE)
    except OSError as error:
        reason = error.strerror or str(error)
        raise SessionWriteError(
            f"Cannot create session files in {show_name(folder)}: {reason}", reason=reason
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def _is_file_at(fd: int, path: Path) -> bool:
    """True when ``fd`` is the very file now named ``path`` (not one that was removed)."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (named.st_dev, named.st_ino)


class SessionLock:
    """Exclusive ``flock`` on ``<session file>.lock``; the lock file records the owner's pid."""

    def __init__(self, session_path: Path) -> None:
        self.session_path = session_path
        self.path = session_path.with_name(session_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Lock, or raise :class:`SessionLockedError` naming the holder.

        The holder unlinks the lock file on release. Between our open and our flock that can
        happen, and then a third process creates and locks a new file at the name while we lock
        the old one: two writers. So after locking we check that our descriptor is still the
        file at the name, and start over when it is not; since files are only unlinked by a
        process that holds their lock, a lock that passes the check excludes every other one.
        """
        if self._fd is not None or fcntl is None:
            return
        make_private_folders(self.path.parent)
        for _attempt in range(LOCK_ATTEMPTS):
            fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT, self.session_path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fd)
                os.close(fd)
                raise SessionLockedError(str(self.session_path), pid) from None
            except OSError as error:
                os.close(fd)
                raise write_error(self.path, error, self.session_path) from None
            if _is_file_at(fd, self.path):
                break
            os.close(fd)  # its holder released and removed it meanwhile: lock what is there now
        else:
            raise SessionError(
                f"Cannot lock session file {show_name(self.session_path)}: its lock file keeps changing"
            )
        with contextlib.suppress(OSError):  # the pid is only a hint (and the disk may be full)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            if _is_file_at(self._fd, self.path):  # never remove a file someone else created
                os.unlink(self.path)  # while still locked: see acquire
        except OSError:
            pass
        finally:
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
        self._good_size = 0
        """Where the last complete line ends: a failed write is cut back to here."""
        self._cut_needed = False

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def open(self) -> None:
        """Take the lock and open for appending (creating the file and its folder if needed).

        Raises :class:`SessionWriteError` (one line) when the file or folder cannot be written.
        """
        if self._fd is not None:
            return
        self.lock.acquire()
        try:
            self._fd = open_no_follow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            self._good_size = os.fstat(self._fd).st_size
            if self._torn_offset is not None:  # the torn tail will go there: refuse a link now
                torn_path = self.path.with_name(self.path.name + ".torn")
                if os.path.islink(torn_path):
                    raise write_error(torn_path, OSError(errno.ELOOP, os.strerror(errno.ELOOP)), self.path)
        except BaseException:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self.lock.release()
            raise

    def expect_tail(self, *, torn_offset: int | None, missing_final_newline: bool) -> None:
        """Tell the writer what the reader found at the end of the file (see ``_repair_tail``)."""
        self._torn_offset = torn_offset
        self._missing_final_newline = missing_final_newline

    def append(self, entries: Iterable[dict[str, Any]]) -> None:
        """Write each entry as its own complete line.

        On a failed write the file is cut back to the end of the last complete line and
        :class:`SessionWriteError` says how many of ``entries`` were written.
        """
        self.open()
        self._cut_back()
        self._repair_tail()
        for written, entry in enumerate(entries):
            line = encode_line(entry)
            try:
                self._write_all(line)
            except OSError as error:
                self._cut_needed = True
                with contextlib.suppress(SessionWriteError):
                    self._cut_back()  # now if we can; else before the next write
                raise write_error(self.path, error, written=written) from None
            self._good_size += len(line)
            self._dirty = True

    def sync(self) -> None:
        """fsync what was written since the last sync (end of a turn, close)."""
        if self._fd is not None and self._dirty:
            try:
                os.fsync(self._fd)
            except OSError as error:
                raise write_error(self.path, error) from None
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
            if written == 0:  # pragma: no cover - regular files never do this
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            view = view[written:]

    def _cut_back(self) -> None:
        """Remove what a failed write left after the last complete line."""
        if not self._cut_needed:
            return
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, self._good_size)
        except OSError as error:
            raise write_error(self.path, error) from None
        self._cut_needed = False
        self._dirty = True

    def _repair_tail(self) -> None:
        if self._torn_offset is None and not self._missing_final_newline:
            return
        assert self._fd is not None
        try:
            if self._torn_offset is not None:
                move_torn_tail(self.path, self._torn_offset)
                self._torn_offset = None
            if self._missing_final_newline:
                self._write_all(b"\n")
                self._missing_final_newline = False
        except OSError as error:
            raise write_error(self.path, error) from None
        finally:
            with contextlib.suppress(OSError):
                self._good_size = os.fstat(self._fd).st_size
            self._dirty = True


def move_torn_tail(path: Path, offset: int) -> None:
    """Append the bytes of ``path`` from ``offset`` to ``<path>.torn``, then cut them off.

    Neither file is opened through a symbolic link; a failed copy is cut back out of the torn
    file, and the session file is cut only after the copy is safely on disk.
    """
    source = open_no_follow(path, os.O_RDWR)
    try:
        size = os.fstat(source).st_size
        if size <= offset:
            return
        torn = os.pread(source, size - offset, offset)
        torn_path = path.with_name(path.name + ".torn")
        aside = open_no_follow(torn_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, path)
        try:
            before = os.fstat(aside).st_size
            try:
                view = memoryview(torn)
                while view:
                    view = view[os.write(aside, view) :]
                os.fsync(aside)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(aside, before)
                raise
        finally:
            os.close(aside)
        os.ftruncate(source, offset)
    finally:
        os.close(source)


def atomic_rewrite(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Replace ``path`` with ``lines`` so a crash leaves either the old or the new file.

    The new file keeps the old one's mode (a new temporary file would be 0600)."""
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(handle, stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode))
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
