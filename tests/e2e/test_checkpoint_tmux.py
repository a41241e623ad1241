"""Files follow the tree (issue 34's Done-when) in the installed ``pi-tui``, through tmux.

One session tells the whole story: two turns (scripted by the loopback model server) write,
edit, delete and rename files, with ``bash`` among their tools. ``/tree`` marks both turns with
their counts and Shift+D shows a turn's diff. A jump back with "Conversation and files" brings
the first turn's files back exactly; a third turn there starts a second branch; a jump to the
first branch's leaf brings the second turn's files, and back to the new branch's leaf its own.
A hand edit that a restore would overwrite is asked about, ``y`` restores, ``/undo-restore``
brings the hand edit back, and a plain move (Enter, the default) changes no file.
"""
# ruff: noqa: RUF001, RUF002
# (the tree's cursor glyph)

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_tree_tmux import open_tree, prompt, tree_view
from tests.e2e.test_tui_tmux import chat_lines, editor_text, start_pi_tui
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui", "git")

MOVE_TITLE = "Go to this point: what comes back?"
UNDO_HINT = "/undo-restore  Bring back the files"
"""The completion menu's row for /undo-restore (command and description)."""


def files_of(project: Path) -> dict[str, bytes]:
    """Every file of the project by relative path, with its bytes (what "exactly" compares)."""
    return {str(p.relative_to(project)): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


def select(pane: TmuxPane, text: str) -> None:
    """Move the /tree cursor (``›``) to the row holding ``text`` with Up/Down."""
    view = pane.wait_for(tree_view, "the tree")
    target = next((i for i, row in enumerate(view.rows) if text in row), -1)
    cursor = next((i for i, row in enumerate(view.rows) if row.startswith("›")), -1)
    assert target >= 0 and cursor >= 0, f"no row {text!r} (or no cursor) in the tree:\n{pane.last_screen}"
    if target != cursor:
        pane.press(*(["Up"] * (cursor - target) if target < cursor else ["Down"] * (target - cursor)))

    def there(screen: str) -> bool:
        shown = tree_view(screen)
        return shown is not None and any(row.startswith("›") and text in row for row in shown.rows)

    pane.wait_for(there, f"the cursor on {text!r}")


def move(pane: TmuxPane, text: str, downs: int) -> None:
    """/tree, select the row with ``text``, Enter, and the move menu's choice ``downs`` down
    (0 conversation only, 1 conversation and files, 2 files only)."""
    open_tree(pane)
    select(pane, text)
    pane.press("Enter")
    pane.wait_for(lambda s: MOVE_TITLE in s and "Files only" in s, "the move menu")
    if downs:
        pane.press(*(["Down"] * downs))
    pane.press("Enter")


def restored(pane: TmuxPane, project: Path, expected: dict[str, bytes]) -> None:
    """Wait until the project's files are exactly ``expected``, with the restore's notice shown."""
    pane.wait_for(lambda s: files_of(project) == expected, "the restored files")
    pane.wait_for(
        lambda s: tree_view(s) is None and any(line.startswith("Files restored") for line in chat_lines(s)),
        "the restore's notice",
    )


def test_files_follow_the_tree_in_tmux(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# Demo\n")
    (project / "notes.txt").write_text("old notes\n")
    replies = [
        Scripted(
            tool_calls=[
                ToolCallSpec("write", {"path": "app.py", "content": "print('v1')\n"}),
                ToolCallSpec("bash", {"command": "rm notes.txt && mkdir lib && echo util > lib/util.py"}),
            ]
        ),
        Scripted(text="Done one."),
        Scripted(
            tool_calls=[
                ToolCallSpec("edit", {"path": "app.py", "edits": [{"oldText": "v1", "newText": "v2"}]}),
                ToolCallSpec("bash", {"command": "mv lib/util.py lib/helpers.py && echo data > data.txt"}),
            ]
        ),
        Scripted(text="Done two."),
        Scripted(
            tool_calls=[
                ToolCallSpec("write", {"path": "c.txt", "content": "three\n"}),
                ToolCallSpec("bash", {"command": "rm app.py"}),
            ]
        ),
        Scripted(text="Done three."),
    ]
    with ModelServer(*replies) as server:
        pane = start_pi_tui(agent_dir, project, server)
        try:
            start = files_of(project)
            prompt(pane, "first task", "Done one.")
            first = files_of(project)
            prompt(pane, "second task", "Done two.")
            second = files_of(project)
            assert first == {"README.md": b"# Demo\n", "app.py": b"print('v1')\n", "lib/util.py": b"util\n"}
            assert second == {
                "README.md": b"# Demo\n",
                "app.py": b"print('v2')\n",
                "lib/helpers.py": b"util\n",
                "data.txt": b"data\n",
            }
            assert start != first

            # the marks and the diff view
            view = open_tree(pane)
            marked = [row for row in view.rows if "±2 files" in row or "±3 files" in row]
            assert len(marked) == 2, f"expected two marked turns:\n{pane.last_screen}"
            assert "D diff" in pane.last_screen
            select(pane, "(edit, bash)")
            pane.press("D")
            screen = pane.wait_for(lambda s: "Files changed by this turn" in s and s, "the diff view")
            for text in ("M app.py", "+print('v2')", "-print('v1')", "A data.txt", "lib/helpers.py"):
                assert text in screen, f"{text!r} not in the diff view:\n{screen}"
            pane.press("Escape")
            pane.wait_for(tree_view, "the tree again after Escape")
            pane.press("Escape")
            pane.wait_for(lambda s: tree_view(s) is None, "the tree closed")

            # a jump back, conversation and files: the first turn's files exactly
            move(pane, "assistant: Done one.", 1)
            restored(pane, project, first)

            # a third turn from there: another branch
            prompt(pane, "third task", "Done three.")
            third = files_of(project)
            assert third == {"README.md": b"# Demo\n", "lib/util.py": b"util\n", "c.txt": b"three\n"}

            # a jump to the other branch's leaf brings the second turn's files, and back
            move(pane, "assistant: Done two.", 1)
            restored(pane, project, second)
            move(pane, "assistant: Done three.", 1)
            restored(pane, project, third)

            # a hand edit in the way: asked; "replace them too" restores; /undo-restore brings
            # the edit back
            (project / "c.txt").write_text("edited by hand\n")
            hand = files_of(project)
            move(pane, "assistant: Done two.", 1)
            screen = pane.wait_for(
                lambda s: "1 file changed since pi-tui last saw it" in s and s, "the question"
            )
            assert "c.txt" in screen and "Replace them too (/undo-restore brings them back)" in screen
            pane.press("Down", "Enter")
            restored(pane, project, second)
            pane.type("/undo-restore")
            pane.wait_for(
                lambda s: UNDO_HINT in s, "/undo-restore in the completion menu, with its description"
            )
            pane.press("Escape")  # close the completion menu, then run the command
            pane.wait_for(
                lambda s: UNDO_HINT not in s and editor_text(s) == "/undo-restore", "the menu closed"
            )
            pane.press("Enter")
            pane.wait_for(lambda s: (project / "c.txt").exists(), "the undo", timeout=10)
            assert files_of(project) == hand

            # a plain move (Enter: conversation only) changes no file
            move(pane, "assistant: Done one.", 0)
            pane.wait_for(lambda s: "Navigated to selected point." in chat_lines(s)[-8:], "the plain move")
            assert files_of(project) == hand
        finally:
            pane.kill()
