"""grep's Python fallback streams files: real files, ripgrep hidden from the tool.

A sparse file (a few lines of text, then a 3 GB hole) shows the search stops reading at the match
limit: the bytes the process read (``rchar`` in ``/proc/self/io``, where Linux has it) stay
small. A tiny ``BLOCK`` puts matches and their context on both sides of block borders, checked
against a plain whole-file reference; a multi-MB line without a newline is searched in windows
with a small memory peak.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import regex

import pi_tui.tools.grep as grep_module
from pi_tui.messages import TextContent
from pi_tui.tools import ToolContext
from pi_tui.tools.grep import GrepTool
from pi_tui.tools.truncation import MAX_LINE_CHARS

MB = 1024 * 1024


@pytest.fixture(autouse=True)
def no_ripgrep(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "rg" else real_which(name))


def grep(cwd: Path, **args: Any) -> str:
    result = asyncio.run(GrepTool().execute("call_1", args, ToolContext(cwd=cwd)))
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


def rchar() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def reference(name: str, data: bytes, pattern: str, context: int, limit: int) -> list[str]:
    """What grep prints for one small file, computed on the whole decoded text."""
    lines = data.decode("utf-8", "replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    hits = [index for index, line in enumerate(lines) if regex.search(pattern, line)][:limit]
    shown = sorted(
        {i for hit in hits for i in range(max(0, hit - context), min(len(lines), hit + context + 1))}
    )
    shown = [i for i in shown if i <= hits[-1]] if len(hits) == limit else shown  # stops at the limit
    out: list[str] = []
    for position, index in enumerate(shown):
        if context and position and index != shown[position - 1] + 1:
            out.append("--")
        mark = ":" if index in hits else "-"
        out.append(f"{name}{mark}{index + 1}{mark}{lines[index].removesuffix(chr(13))}")
    return out


def test_search_stops_reading_at_the_match_limit(tmp_path: Path) -> None:
    with open(tmp_path / "big.log", "wb") as out:
        out.write(b"".join(b"needle %d\n" % n for n in range(1, 2001)))  # 8 KB and more: not binary
        out.truncate(3 * 1024 * MB)  # a 3 GB hole the search must not read
    before = rchar()
    text = grep(tmp_path, pattern="needle", limit=5)
    after = rchar()
    assert text.split("\n\n")[0].split("\n") == [f"big.log:{n}:needle {n}" for n in range(1, 6)]
    assert "Stopped at 5 matches" in text
    if before is not None and after is not None:
        assert after - before < 8 * MB


@pytest.mark.parametrize("context", [0, 1, 2, 5])
def test_context_across_block_borders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, context: int) -> None:
    monkeypatch.setattr(grep_module, "BLOCK", 8192 + 3)  # the binary check still sees its 8 KB
    rng = random.Random(context)
    lines = [
        rng.choice([b"plain text %d" % n, b"a match %d\r" % n, b"caf\xc3\xa9 \xff %d" % n])
        for n in range(3000)
    ]
    data = b"\n".join(lines)  # no final newline
    (tmp_path / "f.txt").write_bytes(data)
    for pattern, limit in (("match", 1000), ("match", 7), ("\ufffd 1.*7", 1000), ("^a match 29", 1000)):
        text = grep(tmp_path, pattern=pattern, context=context, limit=limit)
        shown = text.split("\n\n")[0].split("\n")
        expected = reference("f.txt", data, pattern, context, limit)
        assert shown == expected[: len(shown)]
        assert len(shown) == len(expected) or "[Output cut at 50.0 KB" in text


def test_binary_files_are_skipped_from_their_first_block(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"needle\x00\x01" + b"needle\n" * 10)
    (tmp_path / "b.txt").write_bytes(b"no\nneedle here\n")
    (tmp_path / "c.txt").write_bytes(b"x\n" * 5000 + b"needle after \x00 past 8 KB\n")
    assert grep(tmp_path, pattern="needle").split("\n") == [
        "b.txt:2:needle here",
        "c.txt:5001:needle after \x00 past 8 KB",
    ]


def test_a_huge_line_without_newline_is_not_held_whole(tmp_path: Path) -> None:
    body = b"a" * (20 * MB)
    (tmp_path / "min.js").write_bytes(b"start " + body + b" needle" + body)
    (tmp_path / "other.txt").write_bytes(b"needle\n")
    tracemalloc.start()
    try:
        found = grep(tmp_path, pattern="needle")
        nothing = grep(tmp_path, pattern="zzz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 * MB  # the line is 40 MB
    assert found.split("\n\n")[0].split("\n") == [
        "min.js:1:start " + "a" * (MAX_LINE_CHARS - 6) + " [line cut]",
        "other.txt:1:needle",
    ]
    assert "Lines longer than 500 characters were cut" in found
    assert nothing == "No matches found."


def test_long_lines_are_searched_in_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_module, "BLOCK", 4096)
    monkeypatch.setattr(grep_module, "LONG_LINE", 4096)
    monkeypatch.setattr(grep_module, "OVERLAP", 64)
    line = b"x" + b"q" * 4090 + b"needle" + b"q" * 9000 + b"\xe2\x82\xac" * 2000 + b"end"
    (tmp_path / "f.txt").write_bytes(b"first\n" + line + b"\n" + line + b"\nlast q\n")

    def numbers(pattern: str) -> list[str]:
        """``"2:"`` for a matching line 2, ``"1-"`` for a context line 1."""
        out = grep(tmp_path, pattern=pattern, context=1)
        return [m[1] + m[2] for m in regex.finditer(r"^f\.txt([:-])(\d+)[:-]", out, regex.M)]

    assert numbers("needle") == ["-1", ":2", ":3", "-4"]  # it straddles the first block border
    assert numbers("€end$") == ["-1", ":2", ":3", "-4"]
    assert numbers("q$") == ["-3", ":4"]  # only "last q": a window's end is not the line's end
    assert numbers("^q") == []  # nor is a window's start the line's start
    assert numbers("^first") == [":1", "-2"]
