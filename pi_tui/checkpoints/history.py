"""A session's file history: the shadow store read through the session tree.

:class:`FileHistory` answers "which files stood at this entry" (:mod:`timeline`), restores them
and keeps the undo point, for one project (the store) and whichever session the agent has now
(the manager is passed in: new, switch and fork change it). Every method blocks on git; the
agent calls them through ``asyncio.to_thread``.

Never lose work: a restore first records the files as they are (hand edits included) and keeps
that as the undo point; a file changed outside pi-tui since pi-tui last recorded or restored the
files, which the restore would overwrite, stops it with :class:`FileRestoreConflict` unless
forced (the TUI asks, rpc answers with the paths).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.checkpoints.store import CheckpointError, FileChange, ShadowStore, Snapshot, safe_name
from pi_tui.checkpoints.timeline import (
    TurnCheckpoint,
    checkpoint_data,
    checkpoints,
    first_state_below,
    is_commit,
    latest,
    state_at,
)


class FileRestoreConflict(CheckpointError):
    """Files changed since this session last saw them (by hand, by another session) that a
    restore would replace or delete."""

    def __init__(self, paths: list[str]) -> None:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(
            f"{len(paths)} file(s) changed since this session last saw them (by hand or by another "
            f"session) would be replaced or deleted: {shown}"
        )
        self.paths = paths


@dataclass(slots=True)
class FilesRestored:
    """What a restore (or its undo) did; ``target`` None: no checkpoint covers that point."""

    target: str | None
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    undo_available: bool = False

    @property
    def count(self) -> int:
        return len(self.written) + len(self.deleted)

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint": self.target,
            "written": self.written,
            "deleted": self.deleted,
            "kept": self.kept,
            "undoAvailable": self.undo_available,
        }

    def summary(self) -> str:
        """One line for a notice."""
        if self.target is None:
            return "No file checkpoint covers that point: files left as they are."
        # kept: changed outside pi-tui (the user chose to keep them) or never recorded (ignored,
        # too large); both stay as they are, which is what the line says
        kept = (
            f"{len(self.kept)} file kept as it is"
            if len(self.kept) == 1
            else f"{len(self.kept)} files kept as they are"
        )
        if not self.count:
            return f"No file to restore: {kept}." if self.kept else "Files already match that point."
        parts = []
        if self.written:
            parts.append(f"{len(self.written)} written")
        if self.deleted:
            parts.append(f"{len(self.deleted)} deleted")
        line = "Files restored: " + ", ".join(parts)
        if self.kept:
            line += f"; {kept}"
        return line + (" (/undo-restore brings the previous files back)" if self.undo_available else "")


class FileHistory:
    """The store of one project, read through session trees."""

    def __init__(self, store: ShadowStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._previous: str | None = None
        """The ``after`` of the last checkpoint entry written (a turn that changed nothing and
        started from it needs no entry)."""

    # --- what this session last saw on disk ---------------------------------------------------

    def known(self, session: str) -> str | None:
        """The files as this session last recorded (after a turn) or wrote (a restore) them.
        A file that differs from it now was changed by hand or by another session (pi, a
        second pi-tui) and is not this session's to overwrite without asking. Kept in the store
        (``known/<session>``), so a resumed session knows it too; None before the first."""
        return _read_commit(self._known_file(session))

    def set_known(self, session: str, commit: str | None) -> None:
        _write_commit(self._known_file(session), commit)

    def _known_file(self, session: str) -> Path:
        return self.store.path / "known" / safe_name(session)

    def _undo_known_file(self, session: str) -> Path:
        return self.store.path / "known" / (safe_name(session) + ".undo")

    # --- recording ---------------------------------------------------------------------------

    def snapshot(self, session_id: str, extra: Sequence[str] = (), *, rescan: bool = True) -> Snapshot:
        return self.store.snapshot(session_id, extra, rescan=rescan)

    def warm_up(self, session_id: str) -> None:
        """Take a first snapshot in a background thread while the user types: in a project the
        store has not seen, that one hashes every file (seconds for tens of thousands); later
        ones only look at what changed. A failure here is said again by the first turn."""

        def take() -> None:
            with contextlib.suppress(CheckpointError):
                self.store.snapshot(session_id)

        threading.Thread(target=take, name="pi-tui-checkpoint-warm-up", daemon=True).start()

    def turn_entry(
        self, session: str, turn: str | None, before: Snapshot, after: Snapshot
    ) -> dict[str, Any] | None:
        """The data of the checkpoint entry for a turn, or None when there is nothing to say
        (the tools changed nothing and the files are as last recorded)."""
        changes = self.store.changes(before.commit, after.commit)
        self.set_known(session, after.commit)
        previous = self._previous
        self._previous = after.commit
        if not changes and previous in (None, before.commit):  # nothing a later turn lacks
            return None
        skipped = sorted(set(before.skipped) | set(after.skipped))
        return checkpoint_data(turn, before.commit, after.commit, [c.to_json() for c in changes], skipped)

    def note_recorded(self, commit: str | None) -> None:
        """The session's last written checkpoint (a resumed session starts from it)."""
        self._previous = commit

    # --- reading -----------------------------------------------------------------------------

    def state_for(self, manager: Any, entry_id: str | None) -> str | None:
        """The commit of the files at ``entry_id`` (None: before the first entry)."""
        found = checkpoints(manager.iter_raw_entries())
        path = manager.get_branch_ids(entry_id) if entry_id is not None else []
        state = state_at(found, path)
        if state is None:
            parents = {raw["id"]: raw.get("parentId") for raw in manager.iter_raw_entries() if "id" in raw}
            state = first_state_below(found, path, parents)
        return state

    def turn_changes(self, manager: Any, turn_id: str) -> TurnCheckpoint | None:
        for cp in checkpoints(manager.iter_raw_entries()):
            if cp.turn == turn_id or cp.entry_id == turn_id:
                return cp
        return None

    def diff(self, cp: TurnCheckpoint) -> str:
        if not self.store.has(cp.before) or not self.store.has(cp.after):
            raise CheckpointError("this checkpoint is not in this machine's file store")
        return self.store.diff(cp.before, cp.after)

    # --- restoring ---------------------------------------------------------------------------

    def restore(
        self, manager: Any, entry_id: str | None, *, force: bool = False, keep_edited: bool = False
    ) -> FilesRestored:
        """Bring the files of ``entry_id`` back (the point the conversation moves to)."""
        target = self.state_for(manager, entry_id)
        return self.restore_commit(manager, target, force=force, keep_edited=keep_edited)

    def restore_commit(
        self, manager: Any, target: str | None, *, force: bool, keep_edited: bool = False
    ) -> FilesRestored:
        """Restore ``target``. Files changed since this session last saw them that the restore
        would replace or delete raise :class:`FileRestoreConflict`, unless ``force`` (they are
        replaced; the undo point keeps them) or ``keep_edited`` (they are left as they are,
        listed as kept)."""
        with self._lock:
            if target is None:
                return FilesRestored(None)
            if not self.store.has(target):
                raise CheckpointError(
                    "the files of that point are not in this machine's store (the session was "
                    "recorded elsewhere): files left as they are"
                )
            session = manager.session_id
            known = self._known_or_latest(manager)
            now = self.store.snapshot(session)
            edited = self.conflicts(known, now.commit, target)
            if edited and not (force or keep_edited):
                raise FileRestoreConflict(edited)
            # The undo point first: a restore that fails half-way (a file it may not write)
            # still leaves the way back.
            previous = (self.store.undo_point(session), _read_commit(self._undo_known_file(session)))
            self._set_undo(session, now.commit, known)
            try:
                report = self.store.restore(target, now.commit, skip=edited if keep_edited else ())
            except BaseException:
                self.set_known(session, None)  # the disk is somewhere between the two states
                raise
            undo = bool(report.changed)
            if not undo:  # nothing changed: the earlier restore stays the one to undo
                self._set_undo(session, *previous)
            self.set_known(session, target)
            return FilesRestored(target, report.written, report.deleted, report.kept, undo)

    def _known_or_latest(self, manager: Any) -> str | None:
        known = self.known(manager.session_id)
        if known is None:  # a session recorded before this was kept: its last turn
            last = latest(checkpoints(manager.iter_raw_entries()))
            known = last.after if last is not None else None
        return known

    def conflicts(self, known: str | None, now: str, target: str) -> list[str]:
        """Files changed since ``known`` (by hand, by another session) that restoring ``target``
        over ``now`` would replace or delete."""
        if known is None or known == now or not self.store.has(known):
            return []
        edited = _paths(self.store.changes(known, now, renames=False))
        replaced = _paths(self.store.changes(now, target, renames=False))
        return sorted(edited & replaced)

    def check_conflicts(self, manager: Any, now: str, target: str) -> None:
        """Raise :class:`FileRestoreConflict` for files a restore would replace under the user."""
        edited = self.conflicts(self._known_or_latest(manager), now, target)
        if edited:
            raise FileRestoreConflict(edited)

    def _set_undo(self, session: str, point: str | None, known: str | None) -> None:
        self.store.set_undo(session, point)
        _write_commit(self._undo_known_file(session), known if point is not None else None)

    def undo(self, manager: Any) -> FilesRestored:
        """Bring back the files the last restore replaced; the files it replaces become the
        next undo point (undo twice is redo). What the session knew before that restore is
        what it knows again: hand edits the undo brings back still count as hand edits."""
        with self._lock:
            session = manager.session_id
            point = self.store.undo_point(session)
            if point is None:
                raise CheckpointError("no file restore to undo in this session")
            known_then = _read_commit(self._undo_known_file(session))
            known_now = self.known(session)
            now = self.store.snapshot(session)
            report = self.store.restore(point, now.commit)
            if report.changed:
                self._set_undo(session, now.commit, known_now)
            self.set_known(session, known_then)
            return FilesRestored(point, report.written, report.deleted, report.kept, True)

    def can_undo(self, manager: Any) -> bool:
        return self.store.undo_point(manager.session_id) is not None


def _paths(changes: list[FileChange]) -> set[str]:
    return {change.path for change in changes}


def _read_commit(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if is_commit(text) else None


def _write_commit(path: Path, commit: str | None) -> None:
    with contextlib.suppress(OSError):
        if commit is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(exist_ok=True)
        path.write_text(commit + "\n", encoding="ascii")


def file_history_for(cwd: str | Path, settings: Any, *, enabled: bool = True) -> FileHistory | None:
    """The file history of ``cwd`` with the user's limits, or None when checkpoints are off
    (``checkpoints.enabled`` false, ``--no-checkpoints``). The store is made on first use."""
    import atexit

    from pi_tui.checkpoints.store import ShadowStore, StoreLimits, store_dir_for

    chosen = settings.checkpoints
    if not enabled or not chosen.enabled:
        return None
    limits = StoreLimits(max_file_bytes=chosen.max_file_bytes, max_files=chosen.max_files)
    store = ShadowStore(cwd, store_dir_for(cwd), limits)
    atexit.register(store.close)
    return FileHistory(store)
