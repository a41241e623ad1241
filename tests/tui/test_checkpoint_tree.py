"""Files follow the tree in the chat (issue 34): the real app, real files in a temporary project,
the loopback model server scripting two turns whose tools write, edit and delete files (bash
included). /tree marks the turns that changed files with their count, Shift+D shows a turn's
diff, the move question brings the files back (or not: a plain move changes no file), a hand
edit in the way is asked about (no: nothing changes; yes: overwritten), /undo-restore brings the
hand edit back, and a ``files_notice`` event is one notice line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.checkpoints.history import FilesRestored
from pi_tui.tui.file_moves import CONFLICT_CHOICES, MOVE_TITLE, ConflictMenu
from pi_tui.tui.screens.file_diff import FileDiffScreen
from pi_tui.tui.screens.prompts import ChoiceMenu
from pi_tui.tui.screens.tree import TreeScreen
from pi_tui.tui.transcript import InfoItem
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (110, 44)


async def two_turns(pilot, app, server: ModelServer) -> None:
    """Turn one writes app.py and deletes notes.txt with bash; turn two edits app.py and makes
    b.txt with bash (each turn: one assistant message of tool calls, then a text answer)."""
    server.queue(
        Scripted(
            tool_calls=[
                ToolCallSpec("write", {"path": "app.py", "content": "v1\n"}),
                ToolCallSpec("bash", {"command": "rm notes.txt"}),
            ]
        ),
        Scripted(text="done one"),
        Scripted(
            tool_calls=[
                ToolCallSpec("edit", {"path": "app.py", "edits": [{"oldText": "v1", "newText": "v2"}]}),
                ToolCallSpec("bash", {"command": "printf 'new\\x1b[31mred\\n' > b.txt"}),
            ]
        ),
        Scripted(text="done two"),
    )
    for prompt in ("first task", "second task"):
        await pilot.press(*prompt, "enter")
        await settle(pilot, app)


def entry_ids(app) -> dict[str, str]:
    """Ids by role: ``tools1``/``tools2`` (the turns' tool-call messages), ``done1``/``done2``."""
    found: dict[str, str] = {}
    turns = 0
    for raw in app.agent.manager.iter_raw_entries():
        message = raw.get("message") if raw.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        if message.get("stopReason") == "toolUse":
            turns += 1
            found[f"tools{turns}"] = raw["id"]
        else:
            found[f"done{turns}"] = raw["id"]
    return found


async def tree_at(pilot, app, entry_id: str) -> TreeScreen:
    """Open /tree and move the cursor there with the arrow keys."""
    app.run_slash("tree", "")
    screen = await wait_for_screen(pilot, app, TreeScreen)
    for _ in range(len(screen.model.rows)):
        if screen.selected_id == entry_id:
            break
        await pilot.press("up")
    assert screen.selected_id == entry_id
    return screen


async def choose_move(pilot, app, entry_id: str, downs: int) -> None:
    """Select ``entry_id`` in /tree and pick the move question's choice ``downs`` rows down."""
    await tree_at(pilot, app, entry_id)
    await pilot.press("enter")
    menu = await wait_for_screen(pilot, app, ChoiceMenu)
    assert menu.title_text == MOVE_TITLE
    await pilot.press(*(["down"] * downs), "enter")


def notices(app) -> list[str]:
    return [item.text for item in app.chat.items if isinstance(item, InfoItem)]


async def test_marks_diff_view_and_a_plain_move(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        ids = entry_ids(app)
        screen = await tree_at(pilot, app, ids["tools2"])
        lines = [screen.model.line(i, False) for i in range(len(screen.model.rows))]
        marked = [line for line in lines if "±2 files" in line]
        assert len(marked) == 2 and all(
            "assistant: (write, bash)" in line or "(edit, bash)" in line for line in marked
        )
        assert not any("pi-tui.files" in line for line in lines)  # the checkpoint entries stay hidden
        shown = screen_text(app)
        assert "±2 files assistant: (edit, bash)" in shown and "D diff" in shown
        await pilot.press("D")
        diff = await wait_for_screen(pilot, app, FileDiffScreen)
        text = screen_text(app)
        assert "M app.py" in text and "A b.txt" in text
        assert "-v1" in text and "+v2" in text
        assert "+new␛[31mred" in text  # the escape sequence written by bash is shown, not sent
        assert "\x1b" not in str(diff.query_one("#file-diff-text").render())
        await pilot.press("escape")
        await wait_for_screen(pilot, app, TreeScreen)
        await pilot.press("escape")
        await pilot.pause()
        # a plain move (the default, Enter) changes no file
        before = {path.name: path.read_bytes() for path in project.iterdir()}
        await choose_move(pilot, app, ids["done1"], 0)
        await wait_until(pilot, lambda: "Navigated to selected point." in notices(app), "the move")
        assert app.agent.manager.get_leaf_id() == ids["done1"]
        assert {path.name: path.read_bytes() for path in project.iterdir()} == before
        assert not any("Files restored" in text for text in notices(app))
        app.agent.emit("files_notice", message="file checkpoints are off:\nthe folder is huge")
        await wait_until(
            pilot, lambda: "file checkpoints are off: the folder is huge" in notices(app), "the files notice"
        )


async def test_restore_conflict_and_undo(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        ids = entry_ids(app)
        app_py, b_txt, notes = project / "app.py", project / "b.txt", project / "notes.txt"
        assert app_py.read_text() == "v2\n" and b_txt.exists() and not notes.exists()
        # back to before the first turn's tools, conversation and files: notes.txt is back
        await choose_move(pilot, app, ids["tools1"], 1)
        await wait_until(pilot, lambda: any("Files restored" in t for t in notices(app)), "the restore")
        assert not app_py.exists() and not b_txt.exists() and notes.read_text() == "old text\n"
        assert app.agent.manager.get_leaf_id() == ids["tools1"]
        # forward to the end of the first turn: its files exactly
        await choose_move(pilot, app, ids["done1"], 1)
        await wait_until(pilot, lambda: app_py.exists(), "the first turn's files")
        assert app_py.read_text() == "v1\n" and not b_txt.exists() and not notes.exists()
        # a hand edit, then a restore that would overwrite it: asked; cancel changes nothing
        app_py.write_text("by hand\n")
        await choose_move(pilot, app, ids["done2"], 1)
        question = await wait_for_screen(pilot, app, ConflictMenu)
        assert question.title_text == "1 file changed since pi-tui last saw it"
        shown = screen_text(app)
        for text in ("  app.py", *(label for _value, label in CONFLICT_CHOICES)):
            assert text in shown, f"{text!r} not on screen:\n{shown}"
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: any("Nothing changed" in t for t in notices(app)), "the refusal")
        assert app_py.read_text() == "by hand\n" and app.agent.manager.get_leaf_id() == ids["done1"]
        # files only, replace them too: the second turn's files, the conversation stays
        await choose_move(pilot, app, ids["done2"], 2)
        await wait_for_screen(pilot, app, ConflictMenu)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: b_txt.exists(), "the forced restore")
        assert app_py.read_text() == "v2\n" and app.agent.manager.get_leaf_id() == ids["done1"]
        # /undo-restore brings the hand edit back; again is redo
        await pilot.press(*"/undo-restore", "enter")
        await wait_until(pilot, lambda: app_py.read_text() == "by hand\n", "the undo")
        assert not b_txt.exists()
        assert any(t.startswith("Files restored:") for t in notices(app)[-1:])
        await pilot.press(*"/undo-restore", "enter")
        await wait_until(pilot, lambda: app_py.read_text() == "v2\n", "the redo")
        # the point the conversation is at: its files can come back (the first turn's end)
        await tree_at(pilot, app, ids["done1"])
        await pilot.press("enter")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert menu.title_text == "Already at this point."
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app_py.read_text() == "v1\n", "the files of this point")
        assert not b_txt.exists() and app.agent.manager.get_leaf_id() == ids["done1"]


async def test_undo_restore_without_a_restore_says_so(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        assert app.commands.get("undo-restore") is not None
        await pilot.press(*"/undo-restore", "enter")
        await wait_until(
            pilot,
            lambda: "/undo-restore: no file restore to undo in this session" in notices(app),
            "the answer",
        )


LONG_NAME = "a-" + "long" * 30 + "\x1b]0;end.txt"
"""A file name wider than the menu, ending in an escape sequence (shown as symbols, never sent)."""


@pytest.mark.parametrize(("size", "last", "more"), [(SIZE, "f07.txt", 3), ((80, 24), "f04.txt", 6)])
async def test_conflict_menu_lists_the_files_and_keeps_them(
    project: Path, server: ModelServer, size: tuple[int, int], last: str, more: int
) -> None:
    """Eleven files changed by hand in the way of a restore: the menu names them one per line
    (eight, then "and 3 more"), a long name wrapped to its end, and Enter keeps them while the
    rest comes back (the question used to be one line cut at the box edge, yes or no). On a
    small terminal fewer names are listed (the long one wraps to three lines at 80 columns) and
    the choices stay in view."""
    bash_name = LONG_NAME.replace("\x1b", "\\e")
    made = "for i in 01 02 03 04 05 06 07 08 09 10; do echo v1 > f$i.txt; done; "
    server.queue(
        Scripted(
            tool_calls=[
                ToolCallSpec(
                    "bash", {"command": made + f"echo v1 > $'{bash_name}'; echo p > plain.txt; rm notes.txt"}
                )
            ]
        ),
        Scripted(text="done one"),
    )
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=size) as pilot:
        await pilot.press(*"first task", "enter")
        await settle(pilot, app)
        ids = entry_ids(app)
        edited = [project / LONG_NAME, *(project / f"f{n:02}.txt" for n in range(1, 11))]
        assert all(path.read_text() == "v1\n" for path in edited)
        for path in edited:
            path.write_text("by hand\n")
        await choose_move(pilot, app, ids["tools1"], 1)  # before the turn, conversation and files
        menu = await wait_for_screen(pilot, app, ConflictMenu)
        assert menu.title_text == "11 files changed since pi-tui last saw them"
        shown = screen_text(app)
        assert "end.txt" in shown and "␛]0;end.txt" in shown.replace("\n", "").replace("│", "").replace(
            " ", ""
        )
        assert "\x1b" not in shown
        for text in (
            "  f01.txt",
            f"  {last}",
            f"  and {more} more",
            *(label for _value, label in CONFLICT_CHOICES),
        ):
            assert text in shown, f"{text!r} not on screen:\n{shown}"
        assert f"f{11 - more:02}.txt" not in shown
        await pilot.press("enter")  # the first choice: keep my versions, restore the rest
        await wait_until(pilot, lambda: any("kept" in t for t in notices(app)), "the restore")
        assert all(path.read_text() == "by hand\n" for path in edited)
        assert (project / "notes.txt").read_text() == "old text\n" and not (project / "plain.txt").exists()
        assert app.agent.manager.get_leaf_id() == ids["tools1"]
        assert notices(app)[-1] == (
            "Files restored: 1 written, 1 deleted; 11 files kept as they are"
            " (/undo-restore brings the previous files back)"
        )


@pytest.mark.parametrize("checkpoints_on", [False, True])
async def test_the_summary_menu_says_why_files_are_not_offered(
    project: Path, server: ModelServer, checkpoints_on: bool
) -> None:
    """Without a checkpoint (off, or no turn changed files yet) the move menu is pi's summary
    question, keys and order unchanged, with one line saying why files are not in it."""
    app = make_app(project, provider="test", model="m", no_checkpoints=not checkpoints_on)
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("first task", "second task"):
            await pilot.press(*prompt, "enter")
            await settle(pilot, app)
        first_reply = next(
            raw["id"]
            for raw in app.agent.manager.iter_raw_entries()
            if raw.get("type") == "message" and raw["message"].get("role") == "assistant"
        )
        await tree_at(pilot, app, first_reply)
        await pilot.press("enter")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert menu.title_text == "Summarize branch?"
        assert [value for value, _label in menu.choices] == ["none", "default", "custom"]
        why = (
            "Files stay as they are: no turn of this session has changed files yet."
            if checkpoints_on
            else "Files stay as they are: file checkpoints are off (--no-checkpoints / settings)."
        )
        assert why in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Navigated to selected point." in notices(app), "the move")
        assert app.agent.manager.get_leaf_id() == first_reply


async def test_shift_d_on_rows_without_a_diff(project: Path, server: ModelServer) -> None:
    """Shift+D on a tool result of a marked turn opens that turn's diff; on a row that changed
    no files (a user message) a hint says so, on the screen the user is looking at."""
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        ids = entry_ids(app)
        tool_result = next(
            raw["id"]
            for raw in app.agent.manager.iter_raw_entries()
            if raw.get("parentId") == ids["tools2"] and raw["message"].get("role") == "toolResult"
        )
        await tree_at(pilot, app, tool_result)
        await pilot.press("D")
        await wait_for_screen(pilot, app, FileDiffScreen)
        shown = screen_text(app)
        assert "M app.py" in shown and "+v2" in shown
        await pilot.press("escape")
        tree = await wait_for_screen(pilot, app, TreeScreen)
        while tree.model.rows and tree.selected_id != ids["done1"]:
            await pilot.press("up")
        await pilot.press("D")
        hint = "This entry changed no files (D shows the turns marked ±N files)."
        await wait_until(pilot, lambda: hint in screen_text(app), "the hint on screen")
        assert isinstance(app.screen, TreeScreen)


def test_the_restore_summary_reads_well() -> None:
    """The notice after a move: files kept (changed outside pi-tui, or not recorded) are said
    as kept, not as "not recorded"; nothing to do with files kept does not claim a match."""
    assert FilesRestored("c", written=["a"], kept=["b"], undo_available=True).summary() == (
        "Files restored: 1 written; 1 file kept as it is (/undo-restore brings the previous files back)"
    )
    assert FilesRestored("c", kept=["b", "d"]).summary() == ("No file to restore: 2 files kept as they are.")
    assert FilesRestored("c").summary() == "Files already match that point."
    assert FilesRestored(None).summary() == "No file checkpoint covers that point: files left as they are."
