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
from typing import TYPE_CHECKING, Literal

from rich.cells import cell_len

from pi_tui.checkpoints.history import FileRestoreConflict
from pi_tui.checkpoints.store import CheckpointError
from pi_tui.checkpoints.timeline import by_turn, checkpoints
from pi_tui.text_safety import for_terminal
from pi_tui.tui.screens.prompts import ChoiceMenu

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from pi_tui.agent.file_restore import FileMode
    from pi_tui.tui.host import CommandHost
    from pi_tui.tui.screens.tree import TreeScreen

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
CONFLICT_NAMES = 8
"""File names the conflict question lists before "and N more"."""
ConflictAnswer = Literal["keep", "replace"]
"""Files in conflict: leave them as they are and restore the rest, or replace them too."""
CONFLICT_CHOICES: list[tuple[str, str]] = [
    ("keep", "Keep my versions, restore the rest"),
    ("replace", "Replace them too (/undo-restore brings them back)"),
    ("cancel", "Cancel (nothing changes)"),
]


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


def no_files_reason(app: CommandHost) -> str:
    """Why a move without file checkpoints asks only pi's summary question: said in that menu,
    so Down, Enter (conversation and files elsewhere) is not taken for a summary unawares."""
    if not app.agent.file_checkpoints_on:
        return "Files stay as they are: file checkpoints are off (--no-checkpoints / settings)."
    return "Files stay as they are: no turn of this session has changed files yet."


async def ask_here(app: CommandHost) -> bool:
    """Choosing the current point: files only is the one thing left to do. True: restore."""
    answer = await app.push_screen_wait(ChoiceMenu("Already at this point.", HERE_CHOICES))
    return answer == "only"


def conflict_title(paths: list[str]) -> str:
    if len(paths) == 1:
        return "1 file changed since pi-tui last saw it"
    return f"{len(paths)} files changed since pi-tui last saw them"


def conflict_message(paths: list[str], most: int = CONFLICT_NAMES) -> str:
    """What the conflict menu says under its title: who may have changed the files, then their
    names one per line (at most ``most``, then "and N more"). A name is data: a line break in it
    is shown as a symbol (one name, one line; wrapped when long), and the menu draws every other
    control character as a visible symbol."""
    names = [name.replace("\r", "␍").replace("\n", "␊") for name in paths[:most]]
    if len(paths) > most:
        names.append(f"and {len(paths) - most} more")
    return (
        "Changed by hand or by another session (pi, a second pi-tui); the restore would replace "
        "or delete:\n" + "\n".join(f"  {name}" for name in names)
    )


def names_that_fit(paths: list[str], width: int, height: int) -> int:
    """How many names the conflict menu lists on a terminal of ``width`` by ``height``: the menu
    may take 80% of the height, and its border, title, two lines of explanation, gap, three
    choices, help and "and N more" take 12; a long name takes the lines it wraps to in the menu
    (80% of the width, 100 at most, less border and padding). At least 1, at most 8."""
    inner = max(10, min(100, int(width * 0.8)) - 4)
    room = int(height * 0.8) - 12
    count = 0
    for name in paths[:CONFLICT_NAMES]:
        room -= -(-(cell_len(for_terminal(name)) + 2) // inner)  # the lines it takes, indent included
        if room < 0:
            break
        count += 1
    return max(1, count)


class ConflictMenu(ChoiceMenu):
    """The conflict question, naming the files as many as fit the terminal; the names take at
    most about half the screen (a long name wrapping is cut there), so the three choices always
    stay in view."""

    DEFAULT_CSS = """
    ConflictMenu .picker-message {
        max-height: 45vh;
    }
    """

    def __init__(self, paths: list[str]) -> None:
        super().__init__(conflict_title(paths), CONFLICT_CHOICES)
        self.paths = paths

    def compose(self) -> ComposeResult:
        size = self.app.size
        self.message = conflict_message(self.paths, names_that_fit(self.paths, size.width, size.height))
        yield from super().compose()


async def ask_conflict(app: CommandHost, conflict: FileRestoreConflict) -> ConflictAnswer | None:
    """Ask what to do with files a restore would replace under the user; None: cancelled
    (nothing has changed, and it is said). The first choice, Enter, is the one losing nothing."""
    answer = await app.push_screen_wait(ConflictMenu(conflict.paths))
    if answer == "keep":
        return "keep"
    if answer == "replace":
        return "replace"
    app.say("Nothing changed: the files and the conversation stay where they are.")
    return None


async def undo_restore_command(app: CommandHost, args: str) -> None:
    """``/undo-restore``: bring back the files the last restore replaced (again: redo)."""
    try:
        restored = await app.agent.undo_file_restore()
    except CheckpointError as error:
        app.say(f"/undo-restore: {error}", "warning")
        return
    app.say(restored.summary())


def turn_of(app: CommandHost, entry_id: str) -> str:
    """The entry whose turn Shift+D shows: a tool result belongs to the assistant message whose
    tool call it answers (the turn marked ±N files), so a tool row opens that turn's diff;
    any other entry stands for itself."""
    manager = app.agent.manager
    current: str | None = entry_id
    while current is not None:
        raw = manager.get_raw_entry(current)
        message = raw.get("message") if raw is not None and raw.get("type") == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            return current
        if role != "toolResult" or raw is None:
            break
        parent = raw.get("parentId")
        current = parent if isinstance(parent, str) else None
    return entry_id


async def show_turn_diff(app: CommandHost, tree: TreeScreen, entry_id: str) -> None:
    """Shift+D in ``/tree``: the diff view of the selected turn (a tool result: its turn's), a
    note in the tree when it changed nothing."""
    from pi_tui.tui.screens.file_diff import FileDiffScreen

    try:
        found = await app.agent.file_changes(turn_of(app, entry_id))
    except CheckpointError as error:
        tree.show_note(str(error))
        return
    if found is None:  # said in the tree panel: the app's hint line is under it, out of sight
        tree.show_note("This entry changed no files (D shows the turns marked ±N files).")
        return
    count = len(found.checkpoint.changes)
    title = f"Files changed by this turn ({files_mark(count).removeprefix('±')})"
    await app.push_screen_wait(FileDiffScreen(title, found.checkpoint.changes, found.diff))
