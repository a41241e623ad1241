"""A ``<file>.lock`` folder held while a shared file is changed.

pi guards the files it shares with other processes (auth.json, trust.json) with a lock folder
next to the file: creating a folder either succeeds or fails in one step, so two programs never
both believe they hold it. pi-tui takes the same folder, so a pi and a pi-tui changing the same
file one after the other never lose each other's change. A folder older than
:data:`STALE_SECONDS` was left by a process that died and is taken over.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

STALE_SECONDS = 10.0
"""A lock folder older than this was left by a process that died (pi's lock library agrees)."""
WAIT_SECONDS = 2.0


class LockBusy(Exception):
    """Another program held the lock for longer than we wait."""


@contextmanager
def lock_folder(target: Path, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold ``<target>.lock`` for the body. Raises :class:`LockBusy` after ``wait`` seconds and
    OSError when the folder cannot be created at all (read-only disk, no permission)."""
    lock = target.with_name(target.name + ".lock")
    deadline = time.monotonic() + wait
    while True:
        try:
            lock.mkdir()
            break
        except FileExistsError:
            try:
                stale = time.time() - lock.stat().st_mtime > STALE_SECONDS
            except FileNotFoundError:
                continue  # released just now: try again
            if stale:
                with suppress(OSError):
                    lock.rmdir()
                continue
            if time.monotonic() > deadline:
                raise LockBusy(f"{target}: another program is changing it (lock {lock.name})") from None
            time.sleep(0.02)
    try:
        yield
    finally:
        with suppress(OSError):
            lock.rmdir()
