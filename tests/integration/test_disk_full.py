"""A disk that fills up in the middle of a print-mode run (issue 11, acceptance 3).

The session lives on a real 64 KB tmpfs when the test may mount one, else ENOSPC is injected at
``os.write`` (see tests/support/small_disk.py). The run must say the failure once, keep going,
leave no partial line, and write every waiting entry, in order, once space is back; the model
then gets every earlier turn, in this run and after the file is reopened.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.cli import main
from pi_tui.session import SessionManager
from pi_tui.session.store import SessionFileWriter
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, text_reply
from tests.support.small_disk import SmallDisk, small_disk

SECOND = "second question " + "x" * 6000  # bigger than a tmpfs page: the write is cut short


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    with small_disk(tmp_path, monkeypatch) as small:
        yield small


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as running:
        (agent_dir / "models.json").write_text(json.dumps(running.models_json()))
        yield running


def user_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        texts.append(content if isinstance(content, str) else "".join(part["text"] for part in content))
    return texts


def assistant_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def only_session(folder: Path) -> Path:
    [path] = [p for p in folder.rglob("*.jsonl")]
    return path


def check_file(path: Path) -> list[dict[str, Any]]:
    """Every line complete JSON, no torn copy, and the file reopens without a warning."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    lines = [json.loads(line) for line in data.splitlines()]
    assert not path.with_name(path.name + ".torn").exists()
    reopened = SessionManager.open(path)
    assert reopened.warnings == []
    reopened.close()
    return lines


def test_print_mode_survives_a_full_disk_and_saves_everything_once_space_is_back(
    disk: SmallDisk,
    server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    sessions = disk.path / "sessions"
    common = ["--session-dir", str(sessions), "--model", "test/m", "--no-tools"]

    server.queue(text_reply("answer one"))
    assert main([*common, "-p", "first question"]) == 0
    capsys.readouterr()
    path = only_session(sessions)
    size_before = path.stat().st_size

    disk.fill()

    def free_then_answer(_request: RecordedRequest) -> Scripted:
        assert path.stat().st_size == size_before  # no partial line was left behind meanwhile
        disk.free()
        return text_reply("answer three")

    server.queue(text_reply("answer two"), free_then_answer)
    code = main([*common, "-c", "-p", SECOND, "third question"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "answer three\n"
    failure, recovered = err.splitlines()  # said once, though three appends failed
    assert failure.startswith(f"pi-tui: Cannot write session file {path}: No space left on device.")
    assert "kept in memory" in failure
    assert recovered == f"pi-tui: Session saved again: every entry is now in {path}"

    # The second run's request already held every turn (from memory).
    third = server.requests[-1].body
    assert user_texts(third) == ["first question", SECOND, "third question"]
    lines = check_file(path)
    messages = [line for line in lines if line["type"] == "message"]
    roles = [(line["message"]["role"], line["id"], line["parentId"]) for line in messages]
    assert [role for role, _, _ in roles] == ["user", "assistant"] * 3
    ids = {line["id"] for line in lines[1:]}
    assert all(line["parentId"] in ids or line["parentId"] is None for line in lines[1:])  # parents first

    # Reopened in a new process-like run: the model receives every earlier turn.
    server.queue(text_reply("answer four"))
    assert main([*common, "-c", "-p", "fourth question"]) == 0
    _, err = capsys.readouterr()
    assert err == ""
    body = server.requests[-1].body
    assert user_texts(body) == ["first question", SECOND, "third question", "fourth question"]
    assert assistant_texts(body) == ["answer one", "answer two", "answer three"]
    check_file(path)


def test_entries_still_waiting_at_exit_are_said_lost_and_the_file_stays_whole(
    disk: SmallDisk,
    server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    sessions = disk.path / "sessions"
    common = ["--session-dir", str(sessions), "--model", "test/m", "--no-tools"]
    server.queue(text_reply("answer one"))
    assert main([*common, "-p", "first question"]) == 0
    path = only_session(sessions)
    before = path.read_bytes()
    capsys.readouterr()

    disk.fill()
    server.queue(text_reply("answer two"))
    assert main([*common, "-c", "-p", SECOND]) == 2  # the answer is printed, but entries were lost
    _, err = capsys.readouterr()
    failure, lost = err.splitlines()
    assert "No space left on device" in failure
    assert lost == f"pi-tui: Lost on exit: 2 session entries that could not be saved to {path}"
    disk.free()
    assert path.read_bytes() == before  # cut back to the last complete line
    check_file(path)


def test_a_new_session_whose_header_cannot_be_written_leaves_no_empty_file(
    disk: SmallDisk,
    server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    sessions = disk.path / "sessions"
    sessions.mkdir(mode=0o700)
    disk.fill()
    server.queue(text_reply("answer " + "y" * 5000))
    code = main(["--session-dir", str(sessions), "--model", "test/m", "--no-tools", "-p", SECOND])
    _, err = capsys.readouterr()
    assert code == 2  # nothing of the session could be saved: the user must hear it in the code too
    assert "No space left on device" in err and "Lost on exit" in err and "Traceback" not in err
    assert list(sessions.glob("*.jsonl")) == [] and list(sessions.iterdir()) == []


def test_a_failed_cut_back_is_retried_before_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EIO on the write and on the truncate: nothing is appended after the partial bytes until
    they are gone."""
    path = tmp_path / "s.jsonl"
    writer = SessionFileWriter(path)
    writer.append([{"type": "session", "id": "h"}])
    good = path.read_bytes()
    real_write, real_truncate = os.write, os.ftruncate
    state = {"fail": True}

    def write(fd: int, data: bytes | memoryview) -> int:
        if state["fail"]:
            real_write(fd, bytes(data)[:7])
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_write(fd, data)

    def ftruncate(fd: int, size: int) -> None:
        if state["fail"]:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_truncate(fd, size)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "ftruncate", ftruncate)
    with pytest.raises(Exception, match="Input/output error"):
        writer.append([{"type": "message", "id": "a"}])
    assert path.read_bytes() == good + b'{"type"'  # the cut failed too
    state["fail"] = False
    writer.append([{"type": "message", "id": "b"}])
    assert path.read_bytes() == good + b'{"type":"message","id":"b"}\n'
    writer.close()
