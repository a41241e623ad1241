"""The file side of ``/tree`` in the chat: marks on the turns that changed files, the one
question of what a move brings back, the conflict question, ``/undo-restore`` and the diff view.

The operations are the agent's (:meth:`AgentSession.navigate_tree` with ``files``,
:meth:`~pi_tui.agent.file_restore.FileRestoreMixin.undo_file_restore`, ``file_changes``); this
module only asks and tells. One question, not two: when the session has file checkpoints, the
summary question and the files question are one menu whose first entry is today's default
(conversation only, no summary), so Enter still does what it did, and every combination is one
key press away instead of two dialogs in a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_tui.checkpoints.history import FileRestoreConflict
from pi_tui.checkpoints.store import CheckpointError
from pi_tui.checkpoints.timeline import by_turn, checkpoints
from pi_tui.tui.screens.prompts import ChoiceMenu, ConfirmPrompt

if TYPE_CHECKING:
    from pi_tui.agent.file_restore import FileMode
    from pi_tui.tui.host import CommandHost

MOVE_TITLE = "Go to this point: what comes back?"
MOVE_MESSAGE = (
    "Files: the project's files as they were at that point (/undo-restore brings back the current ones)."
)
FILE_CHOICES: list[tuple[str, str]] = [
    ("keep:none", "Conversation only"),
    ("restore:none", "Conversation and files"),
    ("only:none", "Files only"),
]
SUMMARY_FILE_CHOICES: list[tuple[str, str]] = [
    ("keep:default", "Conversation only, summarize the branch"),
    ("keep:custom", "Conversation only, summarize with custom prompt"),
    ("restore:default", "Conversation and files, summarize the branch"),
    ("restore:custom", "Conversation and files, summarize with custom prompt"),
]
HERE_CHOICES: list[tuple[str, str]] = [
    ("stay", "Stay (change nothing)"),
    ("only", "Bring back this point's files"),
]
CONFLICT_NAMES = 5
"""File names the conflict question lists before "and N more"."""


@dataclass(frozen=True, slots=True)
class TreeFiles:
    """What ``/tree`` knows of the session's files, read once per opening from the entries
    (no git): whether there is any checkpoint, and the mark of each turn that changed files."""

    recorded: bool
    marks: dict[str, str]


@dataclass(frozen=True, slots=True)
class MoveChoice:
    """The answer to the move question: what happens to the files, and the summary wanted."""

    files: FileMode
    summary: str
    """``none``, ``default`` or ``custom`` (the existing summary choices)."""


def files_mark(count: int) -> str:
    return f"±{count} file" if count == 1 else f"±{count} files"


def tree_files(app: CommandHost) -> TreeFiles:
    """Marks for ``/tree``: the assistant message of each turn that changed files, by count.
    Empty when checkpoints are off (a session recorded elsewhere cannot be restored here)."""
    if not app.agent.file_checkpoints_on:
        return TreeFiles(False, {})
    found = checkpoints(app.agent.manager.iter_raw_entries())
    marks = {turn: files_mark(len(cp.changes)) for turn, cp in by_turn(found).items() if cp.changes}
    return TreeFiles(bool(found), marks)


async def ask_move(app: CommandHost, *, with_summary: bool) -> MoveChoice | None:
    """The one question after choosing an entry when the session has checkpoints; None: Escape."""
    choices = FILE_CHOICES + (SUMMARY_FILE_CHOICES if with_summary else [])
    answer = await app.push_screen_wait(ChoiceMenu(MOVE_TITLE, choices, message=MOVE_MESSAGE))
    if answer is None:
        return None
    files, summary = answer.split(":")
    mode: FileMode = "restore" if files == "restore" else "only" if files == "only" else "keep"
    return MoveChoice(mode, summary)


async def ask_here(app: CommandHost) -> bool:
    """Choosing the current point: files only is the one thing left to do. True: restore."""
    answer = await app.push_screen_wait(ChoiceMenu("Already at this point.", HERE_CHOICES))
    return answer == "only"


def conflict_question(paths: list[str]) -> str:
    """The confirm dialog's question, naming the files (the dialog makes the names safe)."""
    shown = ", ".join(paths[:CONFLICT_NAMES])
    if len(paths) > CONFLICT_NAMES:
        shown += f" and {len(paths) - CONFLICT_NAMES} more"
    noun = "file" if len(paths) == 1 else "files"
    return (
        f"Overwrite {len(paths)} {noun} changed outside pi-tui ({shown})? "
        "The current files stay available to /undo-restore."
    )


async def confirm_overwrite(app: CommandHost, conflict: FileRestoreConflict) -> bool:
    """Ask before a restore overwrites hand edits; no: nothing has changed, and it is said."""
    if await app.push_screen_wait(ConfirmPrompt(conflict_question(conflict.paths))):
        return True
    app.say("Nothing changed: the files and the conversation stay where they are.")
    return False


async def undo_restore_command(app: CommandHost, args: str) -> None:
    """``/undo-restore``: bring back the files the last restore replaced (again: redo)."""
    try:
        restored = await app.agent.undo_file_restore()
    except CheckpointError as error:
        app.say(f"/undo-restore: {error}", "warning")
        return
    app.say(restored.summary())


async def show_turn_diff(app: CommandHost, entry_id: str) -> None:
    """Shift+D in ``/tree``: the diff view of the selected turn (a hint when it changed nothing)."""
    from pi_tui.tui.screens.file_diff import FileDiffScreen

    try:
        found = await app.agent.file_changes(entry_id)
    except CheckpointError as error:
        app.show_hint(str(error), 4)
        return
    if found is None:
        app.show_hint("This entry changed no files.")
        return
    count = len(found.checkpoint.changes)
    title = f"Files changed by this turn ({files_mark(count).removeprefix('±')})"
    await app.push_screen_wait(FileDiffScreen(title, found.checkpoint.changes, found.diff))
