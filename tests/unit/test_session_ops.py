"""The shared session moves (pi_tui.agent.session_ops) on real session files in tmp_path.

Every front end (TUI, rpc, server, extensions) runs these; what they all rely on is checked
here once: which folder and cwd a new session gets, what a fork or clone holds, that extensions
can cancel, that a failed open leaves the current session usable, and that deleting refuses a
file another writer holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.session_ops import (
    SessionOpError,
    SessionOps,
    delete_session_file,
    import_session_file,
    name_session_file,
)
from pi_tui.session import SessionManager
from pi_tui.session.errors import SessionLockedError
from tests.support.builders import assistant, user


@dataclass
class Holder:
    """The agent as the moves see it (pi_tui.agent.session_ops.SessionHolder)."""

    manager: SessionManager
    cwd: Path
    adopted: list[tuple[SessionManager, str, bool, Path | None]] = field(default_factory=list)
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answer: bool = True

    async def adopt(self, manager: SessionManager, reason: str, restore: bool, previous: Path | None) -> None:
        self.adopted.append((manager, reason, restore, previous))
        if manager is not self.manager:
            self.manager.close()
        self.manager = manager

    async def allow(self, event: str, **fields: Any) -> bool:
        self.asked.append((event, fields))
        return self.answer

    def ops(self) -> SessionOps:
        return SessionOps(self, self.adopt, self.allow)


def saved_session(folder: Path, cwd: Path, *turns: str) -> SessionManager:
    """A session on disk with one user prompt and one reply per turn."""
    manager = SessionManager.create(str(cwd), folder)
    for text in turns:
        manager.append_message(user(text))
        manager.append_message(assistant(f"echo: {text}"))
    assert manager.session_file is not None and manager.session_file.is_file()
    return manager


def user_texts(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        raw = json.loads(line)
        message = raw.get("message") if raw.get("type") == "message" else None
        if message and message["role"] == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def holder(project: Path, sessions: Path) -> Holder:
    holder = Holder(saved_session(sessions, project, "first", "second"), project)
    yield holder
    holder.manager.close()


async def test_new_session_goes_to_the_session_folder_with_the_agents_cwd(
    holder: Holder, sessions: Path, tmp_path: Path
) -> None:
    previous = holder.manager.session_file
    holder.cwd = tmp_path  # the agent's folder, not the one recorded in the old file's header
    moved = await holder.ops().new_session(setup=lambda manager: manager.append_session_info("fresh"))

    assert holder.asked == [("session_before_switch", {"reason": "new"})]
    (manager, reason, restore, told_previous) = holder.adopted[0]
    assert (reason, restore, told_previous) == ("new", False, previous)
    assert not moved.cancelled and moved.session_file == manager.session_file
    assert manager.session_file is not None and manager.session_file.parent == sessions
    assert manager.cwd == str(tmp_path)
    assert manager.get_session_name() == "fresh"


async def test_new_session_stays_in_memory_without_a_session_file(project: Path) -> None:
    holder = Holder(SessionManager.in_memory(str(project)), project)
    moved = await holder.ops().new_session()
    assert moved.session_file is None and holder.manager.session_file is None


async def test_an_extension_can_cancel_every_move(holder: Holder) -> None:
    holder.answer = False
    ops = holder.ops()
    first = holder.manager.get_entries()[0].id
    for move in (
        ops.new_session(),
        ops.fork(first),
        ops.clone(),
        ops.switch_session(holder.manager.session_file),
    ):
        assert (await move).cancelled
    assert holder.adopted == []
    assert [event for event, _ in holder.asked] == [
        "session_before_switch",
        "session_before_fork",
        "session_before_fork",
        "session_before_switch",
    ]


async def test_fork_before_a_prompt_keeps_the_path_up_to_it_and_gives_its_text_back(holder: Holder) -> None:
    original = holder.manager.session_file
    assert original is not None
    prompts = [e for e in holder.manager.get_entries() if getattr(e, "message", None) is not None]
    second = [e for e in prompts if e.message.role == "user"][1]
    moved = await holder.ops().fork(second.id)

    assert holder.asked == [("session_before_fork", {"entry_id": second.id, "position": "before"})]
    assert moved.editor_text == "second"
    assert moved.session_file is not None and moved.session_file != original
    assert moved.session_file.parent == original.parent
    assert user_texts(moved.session_file) == ["first"]
    assert user_texts(original) == ["first", "second"]  # the original is never touched
    assert holder.adopted[0][1:] == ("fork", False, original)


async def test_fork_before_the_first_entry_is_an_empty_session_beside_the_old_one(holder: Holder) -> None:
    first = holder.manager.get_entries()[0]
    assert first.parent_id is None
    moved = await holder.ops().fork(first.id)
    assert moved.editor_text == "first"
    assert len(holder.manager) == 0
    assert moved.session_file is not None and moved.session_file.parent == holder.adopted[0][3].parent


async def test_clone_holds_the_whole_branch(holder: Holder) -> None:
    moved = await holder.ops().clone()
    assert moved.editor_text is None
    assert moved.session_file is not None
    assert user_texts(moved.session_file) == ["first", "second"]
    assert holder.asked[0] == (
        "session_before_fork",
        {"entry_id": holder.manager.get_leaf_id(), "position": "at"},
    )


async def test_bad_forks_are_one_line_errors(holder: Holder, project: Path) -> None:
    with pytest.raises(SessionOpError, match="no entry nope in this session"):
        await holder.ops().fork("nope")
    with pytest.raises(SessionOpError, match='position is "before" or "at"'):
        await holder.ops().fork(holder.manager.get_leaf_id(), "after")
    empty = Holder(SessionManager.in_memory(str(project)), project)
    with pytest.raises(SessionOpError, match="Nothing to clone"):
        await empty.ops().clone()
    assert holder.adopted == [] and empty.adopted == []


async def test_switch_opens_the_file_with_its_model_and_reopens_the_current_one(
    holder: Holder, sessions: Path, project: Path
) -> None:
    other = saved_session(sessions, project, "elsewhere")
    other_file = other.session_file
    other.close()
    current = holder.manager.session_file

    moved = await holder.ops().switch_session(other_file)
    assert moved.session_file == other_file
    assert holder.adopted[-1][1:] == ("resume", True, current)
    assert holder.asked[-1] == (
        "session_before_switch",
        {"reason": "resume", "target_session_file": str(other_file)},
    )

    # switching to the session one is in: our own lock must not refuse it
    again = await holder.ops().switch_session(other_file)
    assert again.session_file == other_file
    holder.manager.append_message(user("still writable"))
    holder.manager.append_message(assistant("yes"))
    assert user_texts(other_file)[-1] == "still writable"


async def test_a_failed_switch_leaves_the_current_session_in_use(holder: Holder, tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text("this is not a session\n")
    with pytest.raises(SessionOpError):
        await holder.ops().switch_session(junk)
    with pytest.raises(SessionOpError, match=r"Cannot open session|not found|No such"):
        await holder.ops().switch_session(tmp_path / "missing.jsonl")
    assert holder.adopted == []
    holder.manager.append_message(user("third"))
    holder.manager.append_message(assistant("ok"))
    assert user_texts(holder.manager.session_file) == ["first", "second", "third"]


def test_delete_refuses_a_file_another_writer_holds(holder: Holder, sessions: Path, project: Path) -> None:
    path = holder.manager.session_file
    assert path is not None
    with pytest.raises(SessionLockedError):
        delete_session_file(path)
    assert path.is_file()
    holder.manager.close()
    delete_session_file(path)
    assert not path.exists()
    assert not path.with_name(path.name + ".lock").exists()
    with pytest.raises(OSError, match=path.name):
        delete_session_file(path)
    delete_session_file(path, missing_ok=True)


def test_import_copies_beside_a_different_file_of_the_same_name(
    holder: Holder, sessions: Path, tmp_path: Path
) -> None:
    source = holder.manager.session_file
    assert source is not None
    holder.manager.close()
    folder = tmp_path / "imported"
    folder.mkdir()
    (folder / source.name).write_text("someone else's session\n")

    manager = import_session_file(source, folder)
    try:
        assert manager.session_file == folder / f"{source.stem}-imported-1{source.suffix}"
        assert manager.session_file.read_bytes() == source.read_bytes()
        assert (manager.session_file.stat().st_mode & 0o777) == 0o600
    finally:
        manager.close()
    again = import_session_file(manager.session_file, folder)  # the same bytes: reused, no new copy
    again.close()
    assert sorted(p.name for p in folder.glob("*.jsonl")) == sorted(
        [source.name, f"{source.stem}-imported-1{source.suffix}"]
    )


def test_import_of_a_file_that_will_not_open_leaves_no_copy(tmp_path: Path) -> None:
    source = tmp_path / "broken.jsonl"
    source.write_text("not json at all\n")
    folder = tmp_path / "into"
    with pytest.raises(SessionOpError):
        import_session_file(source, folder)
    assert list(folder.glob("*.jsonl")) == []


def test_name_session_file_appends_a_name(holder: Holder) -> None:
    path = holder.manager.session_file
    assert path is not None
    holder.manager.close()
    name_session_file(path, "renamed")
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.get_session_name() == "renamed"
