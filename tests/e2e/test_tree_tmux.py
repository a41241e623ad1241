"""``/tree`` in the installed ``pi-tui``, driven through a real terminal (tmux).

Two prompts build a short chain; ``/tree`` shows it (active path ``•``, cursor ``›`` on the
leaf, ``(i/N)``); Shift+L labels the second prompt; Enter on it asks "Summarize branch?", and
"Summarize" sends the abandoned branch to the model, appends a ``branch_summary`` at the new
position (the prompt's parent) and puts the prompt's text back in the editor. A new prompt
continues from the summary, with the summary (not the abandoned answer) in its context. The
reopened tree shows both branches, and Ctrl+O cycles the five filters. The session file holds
the label and the summary, chained as pi chains them.

A second test checks that ``/tree`` + Enter runs the command while the completion menu that
typing ``/`` opens is still showing (pi's editor submits a slash command picked with Enter).
"""
# ruff: noqa: RUF001, RUF002
# (pi's tree cursor glyph)

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, NamedTuple

from tests.e2e.test_tui_tmux import (
    chat_lines,
    editor_text,
    kind,
    read_session,
    start_pi_tui,
    texts,
    working,
)
from tests.support.model_server import ModelServer, Scripted
from tests.support.requires import requires
from tests.support.tmux import TmuxPane, exit_status

pytestmark = requires("tmux", "pi-tui")

SUMMARY = "Marmalade branch left behind after a single answer."
"""What the model answers to the branch-summary request (the app wraps it in pi's preamble)."""
SUMMARY_PREAMBLE = "The user explored a different conversation branch before returning here."
TREE_COMMAND_HINT = "/tree  Navigate the session tree"
"""The completion menu's row for /tree (command and description)."""
HELP_START = "↑↓ move"


def with_cursor(rows: list[str], index: int) -> list[str]:
    """``rows`` with the cursor (``› ``) on row ``index`` only."""
    return [("› " if i == index else "  ") + row[2:] for i, row in enumerate(rows)]


# The reopened tree at 120 columns (the branch summary's line cut where pi cuts it, with one
# "…"), filter by filter.
DEFAULT_TREE = [
    "  • user: first question",
    "  • assistant: Answer one.",
    "  ├⊟ • [branch summary]: The user explored a different conversation branch before returning here."
    " Summary of that explo…",
    "  │     • user: second, differently",
    "› │     • assistant: Answer three.",
    "  └⊟ [milestone] user: second question",
    "        assistant: Answer two.",
]
ALL_TREE = [
    "  • [model: tmux-model]",
    "  • [thinking: off]",
    *DEFAULT_TREE,
    "        [label: milestone]",  # appended where the leaf was when labelling
]
FILTER_STEPS = [  # (counter, rows) after each Ctrl+O
    ("(5/7) [no-tools]", DEFAULT_TREE),  # no tool results in this session: the same rows
    (
        "(2/3) [user]",
        [
            "  • user: first question",
            "› ├─ • user: second, differently",  # the leaf's nearest visible ancestor
            "  └─ [milestone] user: second question",
        ],
    ),
    ("(1/1) [labeled]", ["› [milestone] user: second question"]),
    ("(8/10) [all]", with_cursor(ALL_TREE, 7)),  # the selection stays on the labelled prompt
    ("(6/7)", with_cursor(DEFAULT_TREE, 5)),  # back to the default, still there
]


# --- reading the tree ----------------------------------------------------------------------------


class TreeView(NamedTuple):
    rows: list[str]
    """The tree's lines as drawn (cursor column included, right side stripped)."""
    counter: str


def tree_view(screen: str) -> TreeView | None:
    """The /tree selector on screen: rows between its top rule and the key help, and the counter."""
    lines = screen.splitlines()
    help_at = next((i for i, line in enumerate(lines) if line.strip().startswith(HELP_START)), -1)
    if help_at < 0 or help_at + 1 >= len(lines):
        return None
    rules = [i for i in range(help_at) if lines[i].strip() and set(lines[i].strip()) == {"─"}]
    top = rules[-1] + 1 if rules else 0
    rows = [line.rstrip() for line in lines[top:help_at] if line.strip()]
    return TreeView(rows, lines[help_at + 1].strip())


def tree_shows(counter: str, rows: list[str] | None = None):
    """A wait_for check: the tree with this counter (and exactly these rows)."""

    def check(screen: str) -> TreeView | None:
        view = tree_view(screen)
        if view is None or view.counter != counter:
            return None
        return view if rows is None or view.rows == rows else None

    return check


def menu_open(screen: str) -> bool:
    return TREE_COMMAND_HINT in screen


def open_tree(pane: TmuxPane) -> TreeView:
    """``/tree`` from the chat: the completion menu is closed with Escape before Enter.

    (Enter with the menu open is :func:`test_slash_tree_enter_with_the_completion_menu_open`'s
    subject; this flow does not depend on it.)
    """
    pane.type("/tree")
    pane.wait_for(
        lambda s: editor_text(s) == "/tree" and menu_open(s), "'/tree' in the editor and its completion row"
    )
    pane.press("Escape")
    pane.wait_for(
        lambda s: editor_text(s) == "/tree" and not menu_open(s), "the completion menu closed by Escape"
    )
    pane.press("Enter")
    return pane.wait_for(tree_view, "the tree selector after '/tree' + Enter", timeout=5)


def prompt(pane: TmuxPane, text: str, answer: str) -> str:
    pane.type(text)
    pane.wait_for(lambda s: editor_text(s) == text, f"{text!r} in the editor")
    pane.press("Enter")
    return pane.wait_for(
        lambda s: answer in chat_lines(s) and not working(s) and editor_text(s) == "" and s,
        f"the answer {answer!r}, the run finished and the editor empty",
    )


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


# --- the tests -----------------------------------------------------------------------------------


def test_tree_in_tmux_label_summarize_branch_filters_and_session_file(
    agent_dir: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    project = tmp_path / "project"
    project.mkdir()
    status_file = tmp_path / "exit-status"
    replies = [
        Scripted(text="Answer one."),
        Scripted(text="Answer two."),
        Scripted(text=SUMMARY, first_byte_delay=0.5),  # slow enough to see the status
        Scripted(text="Answer three."),
    ]
    with ModelServer(*replies) as server:
        pane = start_pi_tui(agent_dir, project, server, status_file)
        try:
            # 1. two prompts: a chain user, assistant, user, assistant
            prompt(pane, "first question", "Answer one.")
            prompt(pane, "second question", "Answer two.")

            # 2. /tree: the chain on the active path, the cursor on the leaf
            view = open_tree(pane)
            assert view == TreeView(
                [
                    "  • user: first question",
                    "  • assistant: Answer one.",
                    "  • user: second question",
                    "› • assistant: Answer two.",
                ],
                "(4/4)",
            ), f"unexpected tree:\n{pane.last_screen}"

            # 3. Up, Shift+L: label the second prompt
            pane.press("Up")
            pane.wait_for(
                tree_shows(
                    "(3/4)", [*view.rows[:2], "› • user: second question", "  • assistant: Answer two."]
                ),
                "the cursor on 'user: second question' after Up",
            )
            pane.press("L")
            pane.wait_for(lambda s: "Label (empty to remove):" in s, "the label prompt after Shift+L")
            pane.type("milestone")
            pane.press("Enter")
            pane.wait_for(
                tree_shows(
                    "(3/4)",
                    [*view.rows[:2], "› • [milestone] user: second question", "  • assistant: Answer two."],
                ),
                "the label on the tree line, the tree still open",
            )

            # 4. Enter selects it: the summary menu; Down, Enter: "Summarize"
            pane.press("Enter")
            screen = pane.wait_for(
                lambda s: "Summarize branch?" in s and s, "the 'Summarize branch?' menu after Enter"
            )
            # what is inside the menu's box: the chat drawn behind it shows on either side
            options = [line.split("│")[1].strip() for line in screen.splitlines() if line.count("│") >= 2]
            for option in ("No summary", "Summarize", "Summarize with custom prompt"):
                assert option in options, f"no {option!r} option in the menu:\n{screen}"
            assert any("second question" in line and "[milestone]" in line for line in chat_lines(screen)), (
                f"the label is not shown next to its message in the chat:\n{screen}"
            )
            pane.press("Down")
            pane.press("Enter")
            pane.wait_for(
                lambda s: "Summarizing the branch..." in s,
                "'Summarizing the branch...' while the model works",
            )
            screen = pane.wait_for(
                lambda s: "Navigated to selected point." in chat_lines(s) and s,
                "'Navigated to selected point.' after the summary",
            )
            assert len(server.requests) == 3, "no branch-summary request reached the model"
            summary_request = request_text(server.requests[2].body)
            assert "<conversation>" in summary_request and "Answer two." in summary_request, (
                f"the summary request does not carry the abandoned branch: {summary_request[-800:]}"
            )

            # 5. the chat is redrawn from the new path; the prompt's text is back in the editor
            lines = chat_lines(screen)
            assert "first question" in lines and "Answer one." in lines, (
                f"the kept path is not shown:\n{screen}"
            )
            assert "Answer two." not in lines, f"the abandoned answer is still in the chat:\n{screen}"
            assert any("Summary of the branch left behind" in line for line in lines), (
                f"no branch summary in the chat:\n{screen}"
            )
            assert editor_text(screen) == "second question", (
                f"the selected prompt is not in the editor:\n{screen}"
            )

            # 6. a new prompt continues from the summary; the model sees it, not the old branch
            pane.press("C-c")
            pane.wait_for(lambda s: editor_text(s) == "", "the editor cleared by Ctrl+C")
            screen = prompt(pane, "second, differently", "Answer three.")
            context = request_text(server.requests[3].body)
            assert SUMMARY in context, f"the new prompt's request lacks the branch summary: {context[-800:]}"
            assert "Answer two." not in context, (
                f"the abandoned answer leaked into the context: {context[-800:]}"
            )

            # 7. the tree again: two branches under "Answer one."; Ctrl+O cycles the filters
            view = open_tree(pane)
            assert view == TreeView(DEFAULT_TREE, "(5/7)"), f"unexpected tree:\n{pane.last_screen}"
            for counter, rows in FILTER_STEPS:
                pane.press("C-o")
                pane.wait_for(tree_shows(counter), f"the counter {counter!r} after Ctrl+O")
                view = tree_view(pane.last_screen)
                assert view is not None and view.rows == rows, (
                    f"filter {counter!r}: expected rows\n"
                    + "\n".join(rows)
                    + f"\nthe pane shows:\n{pane.last_screen}"
                )

            # 8. Escape closes the tree; Ctrl+D on the empty editor leaves
            pane.press("Escape")
            screen = pane.wait_for(
                lambda s: tree_view(s) is None and editor_text(s) == "" and s, "the chat after Escape"
            )
            assert "Answer three." in chat_lines(screen)
            pane.press("C-d")
            assert pane.wait_gone(timeout=10), f"pi-tui still running 10 s after Ctrl+D:\n{pane.last_screen}"
            assert exit_status(status_file) == "0"
        finally:
            pane.kill()
        assert len(server.requests) == 4

    # 9. the session file: the label, the summary at the new position, the new branch after it
    files = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    assert files[0].parent.name == "--" + str(project).lstrip("/").replace("/", "-") + "--"
    entries = read_session(files[0])
    body = entries[1:]
    assert [kind(e) for e in body] == [
        "model_change",
        "thinking_level_change",
        "user",
        "assistant",
        "user",
        "assistant",
        "label",
        "branch_summary",
        "user",
        "assistant",
    ], [kind(e) for e in body]
    _, _, user1, answer1, user2, answer2, label, summary, user3, answer3 = body
    assert [texts(e["message"]) for e in (user1, answer1, user2, answer2, user3, answer3)] == [
        "first question",
        "Answer one.",
        "second question",
        "Answer two.",
        "second, differently",
        "Answer three.",
    ]
    assert label["targetId"] == user2["id"] and label["label"] == "milestone", label
    assert label["parentId"] == answer2["id"], "the label entry is not appended at the then leaf"
    assert summary["parentId"] == answer1["id"], (
        "the summary is not at the new position (the prompt's parent)"
    )
    assert summary["fromId"] == label["id"], summary  # the leaf that was left (pi 0.84.3+)
    assert summary["summary"].startswith(SUMMARY_PREAMBLE) and SUMMARY in summary["summary"], summary
    assert user3["parentId"] == summary["id"], "the new prompt does not continue from the summary"
    assert answer3["parentId"] == user3["id"]
    assert time.monotonic() - started < 25


def test_slash_tree_enter_with_the_completion_menu_open(agent_dir: Path, tmp_path: Path) -> None:
    """Typing ``/tree`` opens the completion menu; Enter picks ``/tree`` and runs it at once,
    as pi's editor does (a slash command chosen with Enter falls through to submit)."""
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(Scripted(text="Answer one.")) as server:
        pane = start_pi_tui(agent_dir, project, server)
        try:
            prompt(pane, "first question", "Answer one.")
            pane.type("/tree")
            pane.wait_for(
                lambda s: editor_text(s) == "/tree" and menu_open(s),
                "'/tree' in the editor and its completion row",
            )
            pane.press("Enter")
            try:
                view = pane.wait_for(tree_view, "the tree", timeout=3)
            except AssertionError:
                raise AssertionError(
                    "'/tree' + Enter with the completion menu open did not open the tree: Enter only "
                    f"completed the command (editor: {editor_text(pane.last_screen)!r}, menu "
                    f"{'open' if menu_open(pane.last_screen) else 'closed'}); pi submits a slash command "
                    f"picked with Enter. The pane shows:\n{pane.last_screen}"
                ) from None
            assert view == TreeView(["  • user: first question", "› • assistant: Answer one."], "(2/2)")
        finally:
            pane.kill()
