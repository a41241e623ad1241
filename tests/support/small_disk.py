"""A small disk that tests can fill and free: a real 64 KB tmpfs when this process may mount one
(root with CAP_SYS_ADMIN, as in CI's container), otherwise ENOSPC injected at ``os.write``.

The choice is made at run time (``disk.real`` says which), so CI runs the real one when it can.
``PI_TUI_TEST_INJECT_DISK_FULL=1`` forces the injected one (to test that path too).

Filled, the real tmpfs has no free page left: a write that needs a new page stops short at the
end of the last one and the next write fails with ENOSPC, which is exactly the partial line a
full disk leaves. The injected disk does the same to files under its folder: half of the first
write lands, then ENOSPC.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SIZE = "64k"


class SmallDisk:
    def __init__(self, path: Path, real: bool) -> None:
        self.path = path
        self.real = real
        self.full = False
        self._half_written: set[int] = set()
        self.failed_writes = 0

    @property
    def filler(self) -> Path:
        return self.path / "filler.bin"

    def fill(self) -> None:
        """Use up every free byte."""
        self.full = True
        if not self.real:
            return
        block = b"\0" * 4096
        with open(self.filler, "ab", buffering=0) as out:
            while True:
                try:
                    out.write(block)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, error
                    break
        with contextlib.suppress(OSError), open(self.path / "filler-tail.bin", "ab", buffering=0) as out:
            for _ in range(4096):  # what is left of the filler's last page, byte by byte
                out.write(b"\0")

    def free(self) -> None:
        self.full = False
        for name in ("filler.bin", "filler-tail.bin"):
            with contextlib.suppress(FileNotFoundError):
                (self.path / name).unlink()

    def injected_write(self, real_write: object) -> object:
        """An ``os.write`` that fails as a full disk would for files under this disk."""

        def write(fd: int, data: bytes | memoryview) -> int:
            if self.full and self._is_ours(fd):
                if fd not in self._half_written and len(data) > 1:
                    self._half_written.add(fd)
                    return real_write(fd, bytes(data)[: len(data) // 2])  # type: ignore[operator]
                self._half_written.discard(fd)
                self.failed_writes += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)  # type: ignore[operator]

        return write

    def _is_ours(self, fd: int) -> bool:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return False
        return target.startswith(str(self.path) + os.sep)


def try_mount(folder: Path) -> bool:
    if os.environ.get("PI_TUI_TEST_INJECT_DISK_FULL") == "1" or os.geteuid() != 0:
        return False
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0755", "tmpfs", str(folder)],
        capture_output=True,
        timeout=30,
    )
    return result.returncode == 0


@contextlib.contextmanager
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    folder = tmp_path / "disk"
    folder.mkdir()
    real = try_mount(folder)
    disk = SmallDisk(folder, real)
    if not real:
        monkeypatch.setattr(os, "write", disk.injected_write(os.write))
    try:
        yield disk
    finally:
        if real:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)
