"""The reader parses a file block by block; a line cut by a block boundary (anywhere, a UTF-8
character included) must give exactly what reading the whole file at once gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.session import reader
from pi_tui.session.reader import parse_session_bytes, read_session_file, split_lines

ODD = Path(__file__).resolve().parents[1] / "data" / "odd-sessions"
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "pi-sessions"


def _facts(loaded: reader.LoadedFile) -> tuple:
    return (
        loaded.header,
        loaded.entries,
        [warning.split(":", 1)[1] for warning in loaded.warnings],
        loaded.torn_offset,
        loaded.missing_final_newline,
        loaded.size,
        loaded.first_line,
        loaded.title_slot,
        [loaded.line_of(raw) for raw in loaded.entries],
    )


def test_split_lines_joins_lines_cut_anywhere() -> None:
    data = "ab\n\nçé€\r\nlast".encode()
    for size in range(1, len(data) + 1):
        blocks = [data[i : i + size] for i in range(0, len(data), size)]
        lines = [(bytes(line), complete) for line, complete in split_lines(blocks)]
        assert lines == [(b"ab", True), (b"", True), ("çé€\r".encode(), True), (b"last", False)]


def _session_files() -> list[Path]:
    vendored = sorted(FIXTURES.rglob("*.jsonl"))[:10]
    assert vendored, f"the vendored pi sessions are missing from {FIXTURES}"  # fail, never shrink
    return sorted(ODD.rglob("*.jsonl")) + vendored


@pytest.mark.parametrize("path", _session_files(), ids=lambda path: path.name)
def test_small_blocks_read_as_the_whole_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = path.read_bytes()
    try:
        whole = _facts(parse_session_bytes(data, str(path)))
    except reader.SessionFileError as error:
        whole = str(error)
    for block in (1, 7, 64, 4096):
        monkeypatch.setattr(reader, "READ_BLOCK", block)
        try:
            blocked = _facts(read_session_file(path))
        except reader.SessionFileError as error:
            blocked = str(error)
        assert blocked == whole, f"block size {block}"


def test_a_torn_tail_after_a_bom_is_cut_at_its_real_offset(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(reader.BOM + header + b'{"type":"message","id":"a"')
    loaded = read_session_file(path)
    assert loaded.size == path.stat().st_size
    assert path.read_bytes()[loaded.torn_offset :] == b'{"type":"message","id":"a"'
