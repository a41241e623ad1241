"""Moving around the session tree from the chat: ``/tree`` (and double Escape), labels,
``/branch``, ``/clone`` (the moves themselves are :mod:`pi_tui.agent.session_ops`).

The flow of ``/tree`` is: pick an entry -> (unless it is the current leaf) ask whether to
summarise the branch being left -> move, summarising with the model if asked (Escape cancels and
reopens the tree) -> redraw the chat from the new path and put the selected prompt's text in the
editor. The moves themselves are :meth:`AgentSession.navigate_tree` and SessionManager calls.
With file checkpoints the question also asks what happens to the files, and a restore that would
overwrite hand edits asks first (:mod:`pi_tui.tui.file_moves`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.session_ops import Moved, SessionOps
from pi_tui.checkpoints.history import FileRestoreConflict
from pi_tui.checkpoints.store import CheckpointError
from pi_tui.tui.file_moves import (
    ask_conflict,
    ask_here,
    ask_move,
    no_files_reason,
    show_turn_diff,
    tree_files,
)
from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt
from pi_tui.tui.screens.tree import TreeScreen
from pi_tui.view.tree_model import TreeModel
from pi_tui.view.tree_text import raw_text

if TYPE_CHECKING:
    from pi_tui.agent.file_restore import FileMode
    from pi_tui.session import SessionManager
    from pi_tui.tui.host import CommandHost

SUMMARY_CHOICES = [
    ("none", "No summary"),
    ("default", "Summarize"),
    ("custom", "Summarize with custom prompt"),
]


def build_tree_model(
    app: CommandHost, filter_mode: str | None = None, marks: dict[str, str] | None = None
) -> TreeModel:
    manager = app.agent.manager
    return TreeModel(
        manager.get_tree(),
        manager.get_leaf_id(),
        filter_mode=filter_mode or app.agent.settings.tree_filter_mode,
        label_time_of=manager.get_label_timestamp,
        marks=marks,
    )


async def ask_label(app: CommandHost, entry_id: str) -> bool:
    """The label prompt for one entry; saves at once (empty removes). True when it changed."""
    manager = app.agent.manager
    current = manager.get_label(entry_id)
    text = await app.push_screen_wait(TextPrompt("Label (empty to remove):", current or ""))
    if text is None or (text or None) == current:
        return False
    manager.append_label_change(entry_id, text or None)
    manager.sync()
    app.show_label(entry_id, text or None)
    return True


def entry_copy_text(raw: dict[str, Any]) -> str | None:
    """What Ctrl+X in /tree copies of an entry, as pi 1.x does: a message's full text (a failed
    reply's error when it has none), a ``!command``'s command, a custom message's text, a
    summary's summary; None when that is empty (a tool result, a model change)."""
    kind = raw.get("type")
    text: object = None
    if kind == "message" and isinstance(raw.get("message"), dict):
        message = raw["message"]
        if message.get("role") == "bashExecution":
            text = message.get("command")
        else:
            text = raw_text(message.get("content"))
            if not text and message.get("role") == "assistant":
                text = message.get("errorMessage")
    elif kind == "custom_message":
        text = raw_text(raw.get("content"))
    elif kind in ("compaction", "branch_summary"):
        text = raw.get("summary")
    return text if isinstance(text, str) and text.strip() else None


def copy_entry(app: CommandHost, entry_id: str) -> None:
    """``app.message.copy`` in /tree: the selected entry's text to the clipboard."""
    from pi_tui.tui.clipboard import copy_text

    raw = app.agent.manager.get_raw_entry(entry_id)
    text = entry_copy_text(raw) if raw is not None else None
    if text is None:
        app.show_hint("This entry has no text to copy.")
        return
    result = copy_text(text, app.copy_to_clipboard)
    app.show_hint(result.message, 3)


async def open_tree(app: CommandHost, select: str | None = None) -> None:
    if app.busy:
        app.say("Wait for the agent to finish (or press Esc) before moving in the tree.", "warning")
        return
    manager = app.agent.manager
    if not any(raw.get("type") == "message" for raw in manager.iter_raw_entries()):  # no typed views
        app.say("Nothing to navigate yet: the session has no messages.")
        return

    def label_selected(entry_id: str) -> None:
        async def work() -> None:
            if await ask_label(app, entry_id):
                screen.label_changed(
                    entry_id, manager.get_label(entry_id), manager.get_label_timestamp(entry_id)
                )

        app.run_background(work(), group="label")

    files = tree_files(app)  # read once per opening: marks of the turns that changed files

    def diff_selected(entry_id: str) -> None:
        app.run_background(show_turn_diff(app, screen, entry_id), group="tree-diff")

    screen = TreeScreen(
        lambda mode: build_tree_model(app, mode, files.marks),
        on_label=label_selected,
        on_copy=lambda entry_id: copy_entry(app, entry_id),
        on_diff=diff_selected if files.marks else None,
        select=select,
    )
    choice = await app.push_screen_wait(screen)
    if choice is None:
        return
    if choice == manager.get_leaf_id():
        if files.recorded and await ask_here(app):
            await navigate(app, choice, summarize=False, focus=None, files="only")
        elif not files.recorded:
            app.say("Already at this point.")
        return
    summarize, focus = False, None
    file_mode: FileMode = "keep"
    skip_summary = app.agent.settings.branch_summary.skip_prompt
    answer: str | None = "none"
    if files.recorded:
        move = await ask_move(app, with_summary=not skip_summary)
        if move is None:
            await open_tree(app, select=choice)  # back to the tree, on the same entry
            return
        answer, file_mode = move.summary, move.files
    elif not skip_summary:
        menu = ChoiceMenu("Summarize branch?", SUMMARY_CHOICES, message=no_files_reason(app))
        answer = await app.push_screen_wait(menu)
        if answer is None:
            await open_tree(app, select=choice)  # back to the tree, on the same entry
            return
    summarize = answer != "none"
    if answer == "custom":
        focus = await app.push_screen_wait(
            TextPrompt("Summary focus:", placeholder="what the summary should keep")
        )
        if focus is None:
            await open_tree(app, select=choice)
            return
    await navigate(app, choice, summarize=summarize, focus=focus or None, files=file_mode)


async def navigate(
    app: CommandHost, entry_id: str, *, summarize: bool, focus: str | None, files: FileMode = "keep"
) -> None:
    """Move to ``entry_id``; a summary runs as cancellable work (Escape). With ``files`` other
    than ``keep`` the files follow; files changed outside pi-tui in the way are asked about
    first (keep them and restore the rest, replace them too, or cancel: nothing moves)."""
    from pi_tui.agent.history import CompactionFailed

    force = keep_edited = False
    while True:
        task = asyncio.ensure_future(
            app.agent.navigate_tree(
                entry_id,
                summarize=summarize,
                custom_focus=focus,
                files=files,
                force=force,
                keep_edited=keep_edited,
            )
        )
        if summarize:
            app.set_activity("Summarizing the branch...")
            app.track_cancellable(task)
        try:
            result = await task
        except asyncio.CancelledError:
            app.set_activity(None)
            app.say("Branch summarization cancelled.", "warning")
            await open_tree(app, select=entry_id)
            return
        except CompactionFailed as error:
            app.set_activity(None)
            app.say(f"Branch summary failed: {error}", "error")
            return
        except FileRestoreConflict as conflict:  # raised before anything moved
            app.set_activity(None)
            answer = None if force or keep_edited else await ask_conflict(app, conflict)
            if answer is None:
                return
            force, keep_edited = answer == "replace", answer == "keep"
            continue
        except CheckpointError as error:
            app.set_activity(None)
            app.say(f"Files not restored: {error}", "warning")
            return
        finally:
            app.track_cancellable(None)
        break
    app.set_activity(None)
    if files == "only":  # the conversation stays where it is
        app.say(result.files.summary() if result.files is not None else "Files left as they are.")
        return
    await app.show_session()
    app.offer_editor_text(result.editor_text or "")
    app.say("Navigated to selected point.")
    if result.files is not None:
        app.say(result.files.summary())


def newest_message_id(app: CommandHost) -> str | None:
    for entry in reversed(app.agent.manager.get_branch()):
        if entry.type in ("message", "custom_message"):
            return str(entry.id)
    return None


async def label_command(app: CommandHost, args: str) -> None:
    """``/label [text]``: label the newest message on the current path (prompt without text)."""
    target = newest_message_id(app)
    if target is None:
        app.say("Nothing to label yet.")
        return
    manager = app.agent.manager
    if args:
        manager.append_label_change(target, args)
        manager.sync()
        app.show_label(target, args)
        app.say(f"Labelled the last message [{args}].")
        return
    await ask_label(app, target)


def session_ops(app: CommandHost) -> SessionOps:
    """The shared session moves (:mod:`pi_tui.agent.session_ops`) for the chat: extensions are
    asked through the app, which then continues in the new session and redraws the chat."""

    async def adopt(manager: SessionManager, reason: str, restore_model: bool, previous: Path | None) -> None:
        await app.switch_session(manager, restore_model=restore_model, reason=reason)

    return SessionOps(app.agent, adopt, app.extensions_allow)


async def branch_command(app: CommandHost, args: str) -> None:
    """``/branch``: a new session file holding the path up to a chosen user message's parent."""
    manager = app.agent.manager
    choices: list[tuple[str, str]] = []
    for raw in manager.iter_raw_entries():  # raw dicts: no typed view of every entry
        message = raw.get("message") if raw.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            text = " ".join(raw_text(message.get("content")).split())
            choices.append((raw["id"], text[:100] or "(empty)"))
    if not choices:
        app.say("There is no user message to branch from yet.")
        return
    chosen = await app.push_screen_wait(ChoiceMenu("Branch from which message?", choices[::-1]))
    if chosen is None:
        return
    at_root = manager.get_entry(chosen).parent_id is None
    moved = await session_ops(app).fork(chosen, "before")
    if moved.cancelled:
        return
    app.say(_moved_note("Branched into a new session", None if at_root else moved))
    app.offer_editor_text(moved.editor_text or "")


async def clone_command(app: CommandHost, args: str) -> None:
    """``/clone``: a new session file holding the current path; continue there."""
    if app.agent.manager.get_leaf_id() is None:
        app.say("Nothing to clone yet.")
        return
    moved = await session_ops(app).clone()
    if not moved.cancelled:
        app.say(_moved_note("Cloned into a new session", moved))


def _moved_note(what: str, moved: Moved | None) -> str:
    """What the chat says after a fork: the new file's name when it has one (a fork before the
    first message starts an empty session, named by nothing yet)."""
    path = moved.session_file if moved is not None else None
    return f"{what} ({path.name})." if path is not None else f"{what}."
