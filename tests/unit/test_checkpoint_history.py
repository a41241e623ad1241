"""FileHistory's protection of work it did not write, on real files, a real store and real
session managers: a file the session did not write (by hand, by another session) is asked about
before a restore replaces or deletes it, also after an undo brought it back; ``keep_edited``
leaves such files alone; an undo of an undo is a redo."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pi_tui.checkpoints.history import FileHistory, FileRestoreConflict
from pi_tui.checkpoints.store import ShadowStore, Snapshot
from pi_tui.checkpoints.timeline import CHECKPOINT_TYPE
from pi_tui.session import SessionManager


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "base.txt").write_text("base\n")
    return folder


@pytest.fixture
def history(project: Path, tmp_path: Path) -> Iterator[FileHistory]:
    store = ShadowStore(project, tmp_path / "store")
    yield FileHistory(store)
    store.close()


def turn(
    history: FileHistory, manager: SessionManager, change: Callable[[], None]
) -> tuple[Snapshot, Snapshot]:
    """One turn of this session whose tools make ``change``, recorded as the agent records it."""
    session = manager.session_id
    before = history.snapshot(session)
    change()
    after = history.snapshot(session)
    data = history.turn_entry(session, None, before, after)
    assert data is not None
    manager.append_custom_entry(CHECKPOINT_TYPE, data)
    return before, after


def test_a_hand_made_file_brought_back_by_undo_is_still_asked_about(
    project: Path, history: FileHistory
) -> None:
    manager = SessionManager.in_memory(str(project))
    before, after = turn(history, manager, lambda: (project / "a.txt").write_text("agent\n"))
    (project / "mine.txt").write_text("by hand\n")
    with pytest.raises(FileRestoreConflict) as refused:
        history.restore_commit(manager, before.commit, force=False)
    assert refused.value.paths == ["mine.txt"] and (project / "mine.txt").exists()
    history.restore_commit(manager, before.commit, force=True)
    assert not (project / "mine.txt").exists() and not (project / "a.txt").exists()
    history.undo(manager)
    assert (project / "mine.txt").read_text() == "by hand\n"
    # mine.txt came back through the undo: still the user's, so going to the leaf asks again
    with pytest.raises(FileRestoreConflict) as again:
        history.restore_commit(manager, after.commit, force=False)
    assert again.value.paths == ["mine.txt"]
    # undo twice is redo: the forced restore's files, then the hand edit again
    history.undo(manager)
    assert not (project / "mine.txt").exists()
    history.undo(manager)
    assert (project / "mine.txt").read_text() == "by hand\n"


def test_another_sessions_work_is_asked_about_and_can_be_kept(project: Path, history: FileHistory) -> None:
    first = SessionManager.in_memory(str(project))
    second = SessionManager.in_memory(str(project))
    before_a, _after_a = turn(history, first, lambda: (project / "from_a.txt").write_text("a\n"))

    def second_session_works() -> None:
        (project / "from_b.txt").write_text("b\n")
        (project / "base.txt").write_text("base, edited by the second session\n")

    turn(history, second, second_session_works)
    with pytest.raises(FileRestoreConflict) as refused:
        history.restore_commit(first, before_a.commit, force=False)
    assert refused.value.paths == ["base.txt", "from_b.txt"]
    assert (project / "from_a.txt").exists()  # nothing moved
    done = history.restore_commit(first, before_a.commit, force=False, keep_edited=True)
    assert done.deleted == ["from_a.txt"] and sorted(done.kept) == ["base.txt", "from_b.txt"]
    assert (project / "from_b.txt").read_text() == "b\n"
    assert (project / "base.txt").read_text() == "base, edited by the second session\n"
