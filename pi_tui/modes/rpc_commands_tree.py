"""pi-tui's own rpc commands for the session tree and the files that follow it: ``navigate_tree``
(the /tree move, optionally bringing the project's files of that point back),
``undo_file_restore`` and ``get_file_changes``.

pi's protocol has no tree moves; these are pi-tui's. They live here, registered by
:class:`~pi_tui.modes.rpc_mode.RpcServer` through :func:`tree_handlers`, so ``--mode rpc`` and
``pi-tui serve`` (which inherits rpc mode's handlers) run one implementation. The file side is
the agent's (:mod:`pi_tui.agent.file_restore`); what is added here is the wire shape and the
errors: hand edits a restore would overwrite, or checkpoints that are off, are one line in a
failed response, never a traceback.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_tui.agent.file_restore import FileMode
from pi_tui.agent.history import CompactionFailed
from pi_tui.checkpoints.history import FileRestoreConflict
from pi_tui.checkpoints.store import CheckpointError
from pi_tui.modes.rpc_protocol import BusyError, CommandError, FailedError, Handler, RpcHost


class RestoreConflictError(CommandError):
    """A restore refused because it would overwrite files edited by hand (409 in the server)."""

    status = 409


def tree_handlers(server: RpcHost) -> dict[str, tuple[Handler, bool]]:
    """name -> (handler, runs as its own task), for :attr:`RpcServer._handlers`.

    ``navigate_tree`` runs as a task, so ``abort`` reaches a branch summary being written;
    the file commands are answered in order (a git run of a few milliseconds to a second).
    """
    commands = TreeCommands(server)
    return {
        "navigate_tree": (commands.navigate_tree, True),
        "undo_file_restore": (commands.undo_file_restore, False),
        "get_file_changes": (commands.get_file_changes, False),
    }


def _flag(command: dict[str, Any], name: str) -> bool:
    value = command.get(name, False)
    if not isinstance(value, bool):
        raise CommandError(f'"{name}" must be true or false')
    return value


def _entry_id(command: dict[str, Any], name: str, missing: str) -> str:
    """The entry id in ``name`` (``missing``: the line when there is none): a client sending a
    number (an index, a row) is told the field is wrong, not that it is missing."""
    value = command.get(name)
    if value is None or value == "":
        raise CommandError(missing)
    if not isinstance(value, str):
        raise CommandError(f'"{name}" must be a string')
    return value


def _conflict_choice(command: dict[str, Any], files: FileMode) -> tuple[bool, bool]:
    """``force`` and ``keepEdited``: what to do with files changed since the session last saw
    them. Both only mean something when files are restored, and they contradict each other, so
    either mistake is refused rather than silently ignored (a client believing it forced a
    restore that never happened)."""
    force, keep = _flag(command, "force"), _flag(command, "keepEdited")
    for name, given in (("force", force), ("keepEdited", keep)):
        if given and files == "keep":
            raise CommandError(f'"{name}" needs "restoreFiles" or "filesOnly"')
    if force and keep:
        raise CommandError(
            '"force" and "keepEdited" cannot go together: force replaces the changed files, '
            "keepEdited keeps them"
        )
    return force, keep


def _file_error(error: CheckpointError) -> CommandError:
    """The one line a client sees for a restore that did not happen."""
    if isinstance(error, FileRestoreConflict):
        return RestoreConflictError(
            f'{error}; send "force": true to replace them (undo_file_restore brings them back) '
            'or "keepEdited": true to keep them as they are and restore the rest'
        )
    return CommandError(f"Files not restored: {error}")


class TreeCommands:
    """The handlers, working on the server's current agent (it changes on new/switch/fork)."""

    def __init__(self, server: RpcHost) -> None:
        self.server = server

    def _ensure_idle(self, what: str) -> None:
        """Tree moves and file restores wait for runs, shell commands and compactions: files
        rewritten under a running tool would be recorded as the tool's changes."""
        if self.server.busy:
            raise BusyError(f"Cannot {what} while the agent is running; wait for it or abort")
        self.server.ensure_idle_for(what)

    async def navigate_tree(self, command: dict[str, Any]) -> Any:
        """Move the leaf as /tree does: ``targetId``; ``summarize`` (with optional
        ``customInstructions``) summarises the branch being left; ``label`` labels the target
        afterwards. ``restoreFiles`` brings back the project's files of the new position too,
        ``filesOnly`` those files without moving; files changed since the session last saw them
        stop the restore unless ``force`` (replace them) or ``keepEdited`` (keep them, restore
        the rest; they are listed in ``kept``).

        Answers ``cancelled``, ``editorText`` (a selected prompt's text), ``summaryEntryId``,
        ``leafId``, and with files asked for ``files`` (written, deleted, kept, undoAvailable;
        null when an extension cancelled the move)."""
        target = _entry_id(command, "targetId", 'navigate_tree needs a "targetId"')
        summarize = _flag(command, "summarize")
        restore, only = _flag(command, "restoreFiles"), _flag(command, "filesOnly")
        focus = command.get("customInstructions")
        if focus is not None and not isinstance(focus, str):
            raise CommandError('"customInstructions" must be a string')
        label = command.get("label")
        if label is not None and not isinstance(label, str):
            raise CommandError('"label" must be a string')
        files: FileMode = "only" if only else "restore" if restore else "keep"
        force, keep_edited = _conflict_choice(command, files)
        agent = self.server.agent
        if agent.manager.get_entry(target) is None:
            raise CommandError(f"Entry {target} not found")
        self._ensure_idle("move in the tree")
        moving = agent.navigate_tree(
            target,
            summarize=summarize,
            custom_focus=focus or None,
            files=files,
            force=force,
            keep_edited=keep_edited,
        )
        self.server.navigate_task = task = asyncio.ensure_future(moving)
        try:
            result = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            return {"cancelled": True, "editorText": None, "summaryEntryId": None}
        except CompactionFailed as error:
            raise FailedError(f"Branch summary failed: {error}") from None
        except CheckpointError as error:
            raise _file_error(error) from None
        finally:
            self.server.navigate_task = None
        if label and result.cancelled_by is None:
            agent.manager.append_label_change(target, label.strip() or None)
        agent.manager.sync()
        if files != "only":
            self.server.session_changed("tree", {"leafId": agent.manager.get_leaf_id()})
        answer: dict[str, Any] = {
            "cancelled": result.cancelled_by is not None,
            "editorText": result.editor_text,
            "summaryEntryId": result.summary_entry_id,
            "leafId": agent.manager.get_leaf_id(),
        }
        if files != "keep":
            answer["files"] = result.files.to_json() if result.files is not None else None
        return answer

    async def undo_file_restore(self, command: dict[str, Any]) -> Any:
        """Bring back the files the last restore replaced (hand edits included); the files it
        replaces become the next undo point, so a second undo redoes the restore."""
        self._ensure_idle("undo a file restore")
        try:
            restored = await self.server.agent.undo_file_restore()
        except CheckpointError as error:
            raise CommandError(f"Nothing undone: {error}") from None
        return restored.to_json()

    async def get_file_changes(self, command: dict[str, Any]) -> Any:
        """What the turn of ``entryId`` (its assistant message or its checkpoint entry) did to
        the files: ``changes`` and the unified ``diff``; null when that turn changed no file."""
        entry_id = _entry_id(command, "entryId", 'get_file_changes needs an "entryId"')
        agent = self.server.agent
        if agent.manager.get_entry(entry_id) is None:
            raise CommandError(f"Entry {entry_id} not found")
        try:
            found = await agent.file_changes(entry_id)
        except CheckpointError as error:
            raise CommandError(f"No file changes: {error}") from None
        if found is None:
            return None
        checkpoint = found.checkpoint
        return {
            "entryId": checkpoint.entry_id,
            "turn": checkpoint.turn,
            "before": checkpoint.before,
            "after": checkpoint.after,
            "changes": [dict(change) for change in checkpoint.changes],
            "skipped": list(checkpoint.skipped),
            "diff": found.diff,
        }
