"""``read`` streams: it reads no more of a file than it returns, on real (some sparse) files.

A sparse file holds a few KB of text followed by a 3 GB hole: reading it whole would take seconds
and gigabytes, so the bytes the process read (``rchar`` in ``/proc/self/io``, where Linux has it)
and the Python memory peak (``tracemalloc``) show what the tool touched. Small files with a tiny
``BLOCK`` put every line and count across block borders.
"""

from __future__ import annotations

import asyncio
import os
import threading
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import pi_tui.tools.read as read_module
from pi_tui.messages import TextContent
from pi_tui.tools import ToolContext, ToolError, ToolResult
from pi_tui.tools.read import ReadTool
from pi_tui.tools.truncation import MAX_BYTES, format_size

HOLE = 3 * 1024 * 1024 * 1024
MB = 1024 * 1024


def run(cwd: Path, **args: Any) -> ToolResult:
    return asyncio.run(ReadTool().execute("call_1", args, ToolContext(cwd=cwd)))


def text_of(cwd: Path, **args: Any) -> str:
    content = run(cwd, **args).content[0]
    assert isinstance(content, TextContent)
    return content.text


def fails(cwd: Path, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        run(cwd, **args)
    return str(info.value)


def rows(count: int) -> bytes:
    return "".join(f"row {number} {'.' * 70}\n" for number in range(1, count + 1)).encode()


def with_hole(path: Path, head: bytes, size: int = HOLE) -> Path:
    """``head`` then zero bytes up to ``size``, as a sparse file (no disk space, no writing)."""
    with open(path, "wb") as out:
        out.write(head)
        out.truncate(size)
    return path


def reference(data: bytes, start: int = 1) -> str:
    """The numbered lines a read of a small file shows: the rule the streaming code must keep."""
    lines = data.decode("utf-8", "replace").removeprefix("\ufeff").split("\n")
    if lines[-1] == "":
        lines.pop()
    width = max(6, len(str(len(lines))))
    return "\n".join(
        f"{n:>{width}}\t{lines[n - 1].removesuffix(chr(13))}" for n in range(start, len(lines) + 1)
    )


def _rchar() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


@dataclass
class Usage:
    read_bytes: int | None = None
    peak: int = 0


@contextmanager
def usage() -> Iterator[Usage]:
    """Bytes the process read (None without /proc) and the Python allocation peak in the block."""
    seen = Usage()
    before = _rchar()
    tracemalloc.start()
    try:
        yield seen
    finally:
        seen.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        after = _rchar()
        seen.read_bytes = None if before is None or after is None else after - before


def assert_light(seen: Usage) -> None:
    assert seen.peak < 8 * MB
    assert seen.read_bytes is None or seen.read_bytes < 8 * MB


def test_read_stops_after_the_lines_it_returns(tmp_path: Path) -> None:
    with_hole(tmp_path / "big.log", rows(3000))
    with usage() as seen:
        text = text_of(tmp_path, path="big.log")
    assert_light(seen)
    body, note = text.split("\n\n")
    shown = body.count("\n") + 1
    assert body.startswith("     1\trow 1 ...") and len(body.encode()) <= MAX_BYTES
    assert note == (
        f"[Shown: lines 1-{shown} (read limit 50.0 KB); more lines follow (the file is "
        f"{format_size(HOLE)}, too big to count its lines). To read on, call read with offset={shown + 1}.]"
    )

    with usage() as seen:
        text = text_of(tmp_path, path="big.log", offset=2990, limit=5)
    assert_light(seen)
    body, note = text.split("\n\n")
    assert body.split("\n")[0] == "  2990\trow 2990 " + "." * 70 and body.count("\n") == 4
    assert note.startswith("[More lines after line 2994; more lines follow") and "offset=2995" in note


def test_binary_and_images_are_told_from_the_first_block(tmp_path: Path) -> None:
    with_hole(tmp_path / "disk.img", b"\x00\x01boot")
    with_hole(tmp_path / "huge.png", b"\x89PNG\r\n\x1a\n" + bytes(64))
    with usage() as seen:
        assert f"binary file ({format_size(HOLE)})" in fails(tmp_path, path="disk.img")
        assert f"{format_size(HOLE)} image" in fails(tmp_path, path="huge.png")
    assert_light(seen)

    late = b"text\n" * 2000 + b"\x00 after the first 8 KB\n"  # git and ripgrep look no further
    (tmp_path / "late.txt").write_bytes(late)
    assert text_of(tmp_path, path="late.txt", offset=2001) == "  2001\t\x00 after the first 8 KB"


def test_first_line_over_the_limit_is_measured_without_holding_it(tmp_path: Path) -> None:
    line = b"\xef\xbb\xbf" + b"x" * (4 * MB) + b"\xff\xe2\x82" + b"y" * (4 * MB) + b"\r"
    (tmp_path / "min.js").write_bytes(line + b"\nnext\n")
    decoded = line.decode("utf-8", "replace").removeprefix("\ufeff")
    with usage() as seen:
        text = text_of(tmp_path, path="min.js")
    assert seen.peak < 4 * MB  # the line is 8 MB
    assert text.startswith(f"[Line 1 of min.js alone is {format_size(len(decoded.encode()))}, more than")
    assert "sed -n '1p' min.js" in text
    assert text_of(tmp_path, path="min.js", offset=2) == "     2\tnext"


def test_lines_and_counts_across_block_borders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_module, "BLOCK", 8192 + 7)  # binary check still sees its 8 KB
    data = b"\xef\xbb\xbfcaf\xc3\xa9\r\n" + b"".join(
        b"line %d \xe2\x82\xac \xff\xe2\x82 end\r\n" % n for n in range(2, 3001)
    )
    (tmp_path / "mixed.txt").write_bytes(data)
    whole = reference(data)
    text = text_of(tmp_path, path="mixed.txt")
    body, note = text.split("\n\n")
    assert whole.startswith(body) and body.startswith("     1\tcafé\n     2\tline 2 € \ufffd\ufffd end")
    assert note.startswith(f"[Shown: lines 1-{body.count(chr(10)) + 1} of 3000 (read limit 50.0 KB).")
    assert text_of(tmp_path, path="mixed.txt", offset=2990) == reference(data, 2990)
    assert text_of(tmp_path, path="mixed.txt", offset=1500, limit=2).endswith(
        "[1499 more lines after line 1501. To read on, call read with offset=1502.]"
    )
    assert "which has 3000 lines" in fails(tmp_path, path="mixed.txt", offset=3001)

    (tmp_path / "open.txt").write_bytes(data + b"last line without newline")
    assert text_of(tmp_path, path="open.txt", offset=3001) == "  3001\tlast line without newline"
    assert "which has 3001 lines" in fails(tmp_path, path="open.txt", offset=3003)


def test_a_million_lines_are_counted_and_widen_the_numbers(tmp_path: Path) -> None:
    (tmp_path / "tall.txt").write_bytes(b"x\n" * 1_000_000)
    body, note = text_of(tmp_path, path="tall.txt").split("\n\n")
    assert body.split("\n")[0] == "      1\tx"  # seven wide: the range ends at line 1000000
    assert note.startswith("[Shown: lines 1-2000 of 1000000 (read limit 2000 lines).")


def test_only_a_small_rest_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "log.txt").write_bytes(rows(3000))
    size = format_size(len(rows(3000)))
    monkeypatch.setattr(read_module, "LINE_COUNT_LIMIT", 10_000)
    assert f"more lines follow (the file is {size}, too big" in text_of(tmp_path, path="log.txt")
    assert text_of(tmp_path, path="log.txt", limit=3).endswith(
        f"[More lines after line 3; more lines follow (the file is {size}, too big to count its lines). "
        "To read on, call read with offset=4.]"
    )
    near_end = text_of(tmp_path, path="log.txt", offset=2900, limit=10)  # 101 rows left: counted
    assert near_end.endswith("[91 more lines after line 2909. To read on, call read with offset=2910.]")


def test_a_pipe_is_read_like_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as out:
            out.write(b"one\ntwo\nthree\n")

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        assert text_of(tmp_path, path="pipe", limit=2) == (
            "     1\tone\n     2\ttwo\n\n[1 more lines after line 2. To read on, call read with offset=3.]"
        )
    finally:
        writer.join(timeout=10)


def test_empty_and_bom_only_files(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbf")
    (tmp_path / "bom-newline").write_bytes(b"\xef\xbb\xbf\n")
    assert text_of(tmp_path, path="empty", offset=4) == "(empty is empty)"
    assert text_of(tmp_path, path="bom") == "(bom is empty)"
    assert text_of(tmp_path, path="bom-newline") == "     1\t"
