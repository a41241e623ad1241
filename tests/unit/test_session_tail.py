"""The tail preview: the end of the current branch from the last bytes of a file, or nothing."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.session import SessionManager
from pi_tui.session.tail import read_tail_branch
from tests.unit.test_odd_lines import HEADER, entry, reply, user, write


def _turns(count: int, *, first_parent: str | None = None) -> list[dict]:
    lines, parent = [], first_parent
    for turn in range(count):
        lines.append(entry(f"u{turn}", parent, user(f"question {turn}"), second=turn))
        lines.append(entry(f"a{turn}", f"u{turn}", reply(f"answer {turn}"), second=turn))
        parent = f"a{turn}"
    return lines


def _ids(tail) -> list[str]:
    return [typed.id for typed in tail.entries]


def test_the_branch_end_matches_what_the_full_load_shows(tmp_path: Path) -> None:
    lines = _turns(300)
    # An abandoned branch from u150 and a label, then the branch the file ends on.
    lines.append(entry("x1", "u150", reply("abandoned"), second=400))
    lines.append(entry("lb", "a299", type="label", targetId="a298", label=" keep "))
    lines.append(entry("u300", "lb", user("last question"), second=500))
    path = write(tmp_path / "s.jsonl", HEADER, *lines)
    tail = read_tail_branch(path, max_entries=40, tail_bytes=8_000)
    assert tail is not None and not tail.complete
    manager = SessionManager.open(path, read_only=True)
    full = [typed.id for typed in manager.get_branch()]
    assert _ids(tail) == full[-len(tail.entries) :]
    assert len(tail.entries) < 40  # 8 KB holds fewer than 40 entries: the walk stops at the cut
    assert tail.label_of("a298") == "keep"
    manager.close()


def test_a_small_file_is_its_whole_branch(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", HEADER, *_turns(3), b"not json", entry("z", "a2", user("end")))
    tail = read_tail_branch(path, max_entries=100)
    assert tail is not None and tail.complete
    assert _ids(tail) == ["u0", "a0", "u1", "a1", "u2", "a2", "z"]


def test_max_entries_keeps_the_newest(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", HEADER, *_turns(10))
    tail = read_tail_branch(path, max_entries=3)
    assert tail is not None and _ids(tail) == ["a8", "u9", "a9"]


def test_files_only_the_full_load_can_read_give_nothing(tmp_path: Path) -> None:
    old = write(tmp_path / "v1.jsonl", {**HEADER, "version": 1}, {"type": "message", "message": user("hi")})
    assert read_tail_branch(old, max_entries=10) is None
    assert read_tail_branch(write(tmp_path / "bad.jsonl", b"garbage"), max_entries=10) is None
    assert read_tail_branch(tmp_path / "missing.jsonl", max_entries=10) is None
    only_header = tmp_path / "h.jsonl"
    only_header.write_text(json.dumps(HEADER) + "\n")
    assert read_tail_branch(only_header, max_entries=10) is None
