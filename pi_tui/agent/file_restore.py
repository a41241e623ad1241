"""The file side of tree moves, once for every front end (TUI, rpc, server, extensions): restore
the files of a point, undo the last restore, show what a turn changed.

Each call runs git off the event loop. Without file checkpoints (``--no-checkpoints``, git
missing, a folder too large) each says so in a :class:`CheckpointError` of one line.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pi_tui.checkpoints.history import FilesRestored
from pi_tui.checkpoints.store import CheckpointError
from pi_tui.checkpoints.timeline import TurnCheckpoint

if TYPE_CHECKING:
    from pi_tui.agent.file_turns import TurnFiles
    from pi_tui.checkpoints.history import FileHistory
    from pi_tui.session.manager import SessionManager

FileMode = Literal["keep", "restore", "only"]
"""What a tree move does with the files: leave them (pi's behaviour, the default), bring the
point's files back with the conversation, or bring them back without moving the conversation."""

FILE_MODES: tuple[FileMode, ...] = ("keep", "restore", "only")


@dataclass(frozen=True, slots=True)
class TurnDiff:
    """What one turn changed: its checkpoint and the unified diff."""

    checkpoint: TurnCheckpoint
    diff: str


class FileRestoreMixin:
    """File restores for :class:`~pi_tui.agent.session.AgentSession`."""

    manager: SessionManager
    files: TurnFiles

    if TYPE_CHECKING:

        @property
        def is_streaming(self) -> bool: ...

    def _file_history(self, *, writes: bool = True) -> FileHistory:
        history = self.files.history
        if history is None:
            raise CheckpointError("file checkpoints are off in this session (files cannot follow the tree)")
        if writes and self.is_streaming:  # a tool may be writing: restoring under it would mix two states
            raise CheckpointError("files cannot be restored while the agent is running; wait for it or abort")
        return history

    @property
    def file_checkpoints_on(self) -> bool:
        return self.files.history is not None

    async def check_file_restore(self, entry_id: str | None) -> None:
        """Raise :class:`~pi_tui.checkpoints.history.FileRestoreConflict` when restoring the files
        of ``entry_id`` would overwrite files changed outside pi-tui (nothing is changed)."""
        history = self._file_history()
        await self.files.settle()

        def check() -> None:
            target = history.state_for(self.manager, entry_id)
            if target is None or not history.store.has(target):
                return
            now = history.store.snapshot(self.manager.session_id)
            history.check_conflicts(self.manager, now.commit, target)

        await asyncio.to_thread(check)

    async def restore_files_at(
        self, entry_id: str | None, *, force: bool = False, keep_edited: bool = False
    ) -> FilesRestored:
        """Make the project's files those of ``entry_id`` (None: before the first entry).
        ``keep_edited`` leaves the files in conflict as they are instead of raising."""
        history = self._file_history()
        await self.files.settle()
        return await asyncio.to_thread(
            history.restore, self.manager, entry_id, force=force, keep_edited=keep_edited
        )

    async def undo_file_restore(self) -> FilesRestored:
        """Bring back the files the last restore of this session replaced."""
        history = self._file_history()
        await self.files.settle()
        return await asyncio.to_thread(history.undo, self.manager)

    async def file_changes(self, entry_id: str) -> TurnDiff | None:
        """What the turn of ``entry_id`` (its assistant message or its checkpoint entry)
        changed, with the diff; None when that turn changed no file."""
        history = self._file_history(writes=False)
        found = history.turn_changes(self.manager, entry_id)
        if found is None:
            return None
        diff = await asyncio.to_thread(history.diff, found)
        return TurnDiff(found, diff)
