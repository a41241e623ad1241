"""Crash safety on real files and real processes: SIGKILL, torn tails, damage, a second writer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_tui.session import SessionLockedError, SessionManager
from tests.support.builders import assistant, user
from tests.support.waiting import poll_until

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys
    from pi_tui.session import SessionManager
    from tests.support.builders import assistant, user

    manager = SessionManager.create("/project", sys.argv[1])
    manager.append_message(user("start"))
    manager.append_message(assistant("ready"))
    print(manager.session_file, flush=True)
    filler = "x" * int(sys.argv[2])
    number = 0
    while True:
        number += 1
        manager.append_message(user(f"{number} {filler}"))
    """
)


def run_writer(folder: Path, size: int) -> tuple[subprocess.Popen, Path]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), str(size)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def complete_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return data.split(b"\n")[:-1]  # everything before the last newline


@pytest.mark.parametrize("size", [10, 20_000])
def test_sigkill_mid_append_keeps_every_completed_line(tmp_path: Path, size: int) -> None:
    process, path = run_writer(tmp_path / "sessions", size)
    poll_until(lambda: len(complete_lines(path)) >= 3000, "3000 lines written", timeout=20)
    process.send_signal(signal.SIGKILL)
    process.wait()

    finished = complete_lines(path)
    assert len(finished) >= 3000
    manager = SessionManager.open(path)  # the dead writer's lock is gone with it
    entries = manager.get_entries()
    assert len(entries) == len(finished) - 1  # every completed line except the header
    assert [e.id for e in entries] == [json.loads(line)["id"] for line in finished[1:]]
    numbers = [int(e.message.content[0].text.split()[0]) for e in entries[2:]]
    assert numbers == list(range(1, len(numbers) + 1))  # nothing lost in between, nothing repeated
    assert manager.get_leaf_id() == entries[-1].id
    manager.append_message(assistant("after the crash"))
    manager.close()
    reopened = SessionManager.open(path)
    assert reopened.warnings == []
    assert reopened.get_leaf_entry().message.content[0].text == "after the crash"
    reopened.close()


def make_session(tmp_path: Path) -> Path:
    manager = SessionManager.create("/project", tmp_path)
    manager.append_message(user("one"))
    manager.append_message(assistant("two"))
    path = manager.session_file
    manager.close()
    return path


def test_torn_tail_is_moved_aside_before_next_append(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    torn = b'{"type":"message","id":"deadbeef","parentId":null,"timestamp":"2026-01-0'
    with open(path, "ab") as handle:
        handle.write(torn)
    before = path.read_bytes()

    manager = SessionManager.open(path)
    assert len(manager) == 2
    assert any("cut off" in warning for warning in manager.warnings)
    assert path.read_bytes() == before  # opening alone changes nothing
    manager.append_message(user("three"))
    manager.close()

    torn_file = path.with_name(path.name + ".torn")
    assert torn_file.read_bytes() == torn
    after = path.read_bytes()
    assert after.startswith(before[: -len(torn)]) and torn not in after
    reopened = SessionManager.open(path)
    assert reopened.warnings == []
    assert [e.message.content[0].text for e in reopened.get_entries()] == ["one", "two", "three"]
    reopened.close()


def test_complete_last_line_without_newline(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    manager = SessionManager.open(path)
    assert len(manager) == 2 and manager.warnings == []
    manager.append_message(user("three"))
    manager.close()
    assert len(SessionManager.open(path, read_only=True)) == 3
    assert not path.with_name(path.name + ".torn").exists()


def test_malformed_lines_are_skipped_and_never_deleted(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    lines = path.read_bytes().split(b"\n")
    damaged = [lines[0], lines[1], b"{not json at all", b"[1, 2, 3]", *lines[2:]]
    path.write_bytes(b"\n".join(damaged))
    manager = SessionManager.open(path)
    assert len(manager.warnings) == 2
    assert all(":3:" in w or ":4:" in w for w in manager.warnings)
    assert [e.message.content[0].text for e in manager.get_entries()] == ["one", "two"]
    manager.append_message(user("three"))
    manager.close()
    data = path.read_bytes()
    assert b"{not json at all\n" in data and b"[1, 2, 3]\n" in data


def test_not_a_session_file(tmp_path: Path) -> None:
    from pi_tui.session import SessionFileError

    for content in (b"", b"hello\n", b'{"type":"message"}\n'):
        path = tmp_path / "bad.jsonl"
        path.write_bytes(content)
        with pytest.raises(SessionFileError):
            SessionManager.open(path)
        assert path.read_bytes() == content
    with pytest.raises(SessionFileError, match="Cannot read"):
        SessionManager.open(tmp_path / "missing.jsonl")


def test_second_writer_in_another_process_is_refused(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    holder = textwrap.dedent(
        f"""
        import sys, time
        from pi_tui.session import SessionManager
        manager = SessionManager.open({str(path)!r})
        print("locked", flush=True)
        time.sleep(60)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout.readline().strip() == "locked"
        before = path.read_bytes()
        with pytest.raises(SessionLockedError) as caught:
            SessionManager.open(path)
        message = str(caught.value)
        assert str(process.pid) in message and "--fork" in message and str(path) in message
        assert path.read_bytes() == before
        # Reading and forking still work while it is locked.
        assert len(SessionManager.open(path, read_only=True)) == 2
        fork = SessionManager.fork_from(path, "/project", tmp_path / "forks")
        assert len(fork) == 2
        fork.close()
    finally:
        process.kill()
        process.wait()
    SessionManager.open(path).close()  # free again once the holder is gone


def test_second_writer_in_same_process_is_refused(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    first = SessionManager.open(path)
    with pytest.raises(SessionLockedError):
        SessionManager.open(path)
    first.close()
    SessionManager.open(path).close()


def test_new_session_takes_lock_when_file_appears(tmp_path: Path) -> None:
    manager = SessionManager.create("/project", tmp_path)
    manager.append_message(user("one"))
    manager.append_message(assistant("two"))
    with pytest.raises(SessionLockedError):
        SessionManager.open(manager.session_file)
    manager.close()


def test_sync_and_close_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd)))
    manager = SessionManager.create("/project", tmp_path)
    manager.append_message(user("one"))
    manager.append_message(assistant("two"))
    assert calls == []  # appends are written (flushed to the OS) but not fsynced one by one
    manager.sync()
    assert len(calls) == 1
    manager.sync()
    assert len(calls) == 1  # nothing new to sync
    manager.append_message(user("three"))
    manager.close()
    assert len(calls) == 2
