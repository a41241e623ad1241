"""Sessions in pi's folder (``~/.pi/agent/sessions``) beside ours: listed, found by id prefix,
continued in their own file, indexed like ours; and a shared session folder as pi reads it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pi_tui.config.paths import encode_cwd, session_dir_for_cwd
from pi_tui.config.pi_folder import PI_FOLDER_ENV
from pi_tui.messages import AssistantMessage, TextContent, Usage, UserMessage
from pi_tui.session import SessionManager, index
from pi_tui.session.listing import list_all_sessions, list_sessions, most_recent_session
from pi_tui.startup import StartOptions, find_session

PI15 = Path(__file__).resolve().parents[1] / "data" / "pi15-sessions" / "01-print-continue"
PI15_ID = "01a2182f-adb6-70ed-a012-96055e935ddf"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def pi_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pi's sessions folder, found through HOME as a pi user has it."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(PI_FOLDER_ENV)
    return home / ".pi" / "agent" / "sessions"


def pi_session(pi_sessions: Path, cwd: Path, *, age_seconds: float = 0) -> Path:
    """The session pi 1.5.2 wrote, placed in pi's folder for ``cwd`` (its cwd made ``cwd``)."""
    folder = pi_sessions / encode_cwd(str(cwd))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-11-26T14-08-27-576Z_{PI15_ID}.jsonl"
    text = (PI15 / "session.jsonl").read_text(encoding="utf-8")
    path.write_text(text.replace("/home/user/project", str(cwd)), encoding="utf-8")
    moment = path.stat().st_mtime - age_seconds
    os.utime(path, (moment, moment))
    return path


def our_session(cwd: Path, prompt: str, *, folder: Path | None = None, age_seconds: float = 0) -> Path:
    manager = SessionManager.create(str(cwd), folder)
    manager.append_message(UserMessage(content=prompt))
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text="ok")], provider="t", model="m", usage=Usage(), stop_reason="stop"
        )
    )
    path = manager.session_file
    manager.close()
    assert path is not None
    moment = path.stat().st_mtime - age_seconds
    os.utime(path, (moment, moment))
    return path


def test_a_project_lists_its_sessions_of_both_folders(
    pi_sessions: Path, project: Path, tmp_path: Path
) -> None:
    theirs = pi_session(pi_sessions, project)
    ours = our_session(project, "ours")
    elsewhere = our_session(tmp_path, "another project")
    assert {info.path for info in SessionManager.list(str(project))} == {theirs, ours}
    assert {info.path for info in list_sessions(theirs.parent)} == {theirs, ours}  # from either side
    assert {info.path for info in list_all_sessions()} == {theirs, ours, elsewhere}
    found = next(info for info in SessionManager.list(str(project)) if info.path == theirs)
    assert (found.id, found.message_count, found.first_message) == (PI15_ID, 4, "Hello, who are you?")


def test_continue_takes_the_newest_of_both_and_appends_to_pis_file(
    pi_sessions: Path, project: Path, agent_dir: Path
) -> None:
    ours = our_session(project, "older, ours", age_seconds=600)
    theirs = pi_session(pi_sessions, project, age_seconds=60)
    folder = session_dir_for_cwd(str(project))
    assert most_recent_session(folder, str(project)) == theirs
    lines = len(theirs.read_text().splitlines())
    manager = SessionManager.continue_recent(str(project))
    assert manager.session_file == theirs.resolve()
    manager.append_message(UserMessage(content="next"))
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text="on")], provider="loop", model="m", usage=Usage(), stop_reason="stop"
        )
    )
    manager.close()
    assert len(theirs.read_text().splitlines()) == lines + 2
    assert sorted(folder.iterdir()) == [ours]  # nothing new in ours
    later = theirs.stat().st_mtime + 10  # now ours is the newest (utime to "now" could tie
    os.utime(ours, (later, later))  # with the append just made, at the clock's resolution)
    assert most_recent_session(folder, str(project)) == ours


def test_session_id_prefix_finds_a_session_in_pis_folder(
    pi_sessions: Path, project: Path, tmp_path: Path
) -> None:
    theirs = pi_session(pi_sessions, project)
    assert find_session(PI15_ID[:8], StartOptions(cwd=str(project))) == theirs
    other = tmp_path / "other"
    other.mkdir()
    assert find_session(PI15_ID[:8], StartOptions(cwd=str(other))) == theirs  # any folder, after ours


def test_pis_folder_is_indexed_like_ours(
    pi_sessions: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = pi_session(pi_sessions, project)
    reads: list[tuple[Path, int]] = []
    monkeypatch.setattr(index, "on_read", lambda path, offset: reads.append((path, offset)))
    list_all_sessions()
    assert [path for path, _ in reads] == [theirs]
    reads.clear()
    assert [info.path for info in list_all_sessions()] == [theirs]
    assert reads == []  # unchanged: answered from the index
    with theirs.open("a") as handle:
        handle.write(
            '{"type":"session_info","id":"aa11bb22","parentId":"fff9b13b",'
            '"timestamp":"2026-11-26T14:09:00.000Z","name":"Named later"}\n'
        )
    assert SessionManager.list(str(project))[0].name == "Named later"
    assert len(reads) == 1 and reads[0][1] > 0  # only the appended line was read


def test_no_pi_folder_when_it_is_ours(
    pi_sessions: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = pi_session(pi_sessions, project)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi_sessions.parent))
    assert [info.path for info in list_all_sessions()] == [theirs]  # listed once


def test_a_shared_session_folder_shows_this_projects_sessions(
    pi_sessions: Path, project: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-sessions"
    other = tmp_path / "other"
    other.mkdir()
    mine = our_session(project, "mine", folder=shared, age_seconds=60)
    theirs = our_session(other, "theirs", folder=shared)
    assert mine.parent == shared == theirs.parent  # flat, as pi writes them
    assert [info.path for info in SessionManager.list(str(project), shared)] == [mine]
    manager = SessionManager.continue_recent(str(project), shared)
    assert manager.session_file == mine.resolve()
    manager.close()
    assert (
        find_session(theirs.name.split("_")[1][:13], StartOptions(cwd=str(project), session_dir=str(shared)))
        == theirs
    )
    shutil.rmtree(shared)
    assert SessionManager.list(str(project), shared) == []


def test_sessions_made_from_a_pi_session_go_to_our_folder(pi_sessions: Path, project: Path) -> None:
    theirs = pi_session(pi_sessions, project)
    manager = SessionManager.open(theirs)
    ours = session_dir_for_cwd(str(project))
    assert manager.session_dir == ours
    leaf = manager.get_leaf_id()
    assert leaf is not None
    fork = manager.create_branched_session(leaf)
    manager.close()
    assert fork is not None and fork.parent == ours
    assert sorted(path.name for path in theirs.parent.iterdir() if path.suffix == ".jsonl") == [theirs.name]
