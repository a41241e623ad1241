"""/tree, labels, /branch and /clone through the real app."""
# ruff: noqa: E501, RUF001
# (the expected screen is pi's: wide lines and its cursor glyph)

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt
from pi_tui.tui.screens.tree import TreeScreen
from pi_tui.tui.transcript import AssistantItem, SummaryItem, UserItem
from tests.conftest import PI_SESSIONS
from tests.support.model_server import ModelServer, Scripted
from tests.support.tree_rows import assert_rows_match
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (110, 44)
SPEC_DEFAULT = """\
  • user: Which data structure?
  • [checkpoint-1] assistant: Approach A: use a dict.
  ├⊟ • [branch summary]: The user explored a different conversation branch before returning here. Summary of that exp...
  │     • user: Try another approach
› │     • assistant: Summary of abandoned branch: tried dict approach.
  └⊟ user: Does it work?
        assistant: Dict version works fine."""


@pytest.fixture
def summary_session(tmp_path: Path, agent_dir: Path) -> Path:
    """The spec's example session, copied (opening a session for writing may append to it),
    with its scripted provider known, so opening it records no model change."""
    models = {
        "providers": {
            "fake": {
                "baseUrl": "http://127.0.0.1:9",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "fake-model"}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    path = tmp_path / "summary.jsonl"
    shutil.copy(PI_SESSIONS / "00-tree-label-summary" / "session.jsonl", path)
    return path


def tree_lines(app) -> list[str]:
    screen = app.screen
    assert isinstance(screen, TreeScreen)
    model = screen.model
    return [model.line(i, i == screen.tree_list.cursor) for i in range(len(model.rows))]


async def open_tree(pilot, app) -> TreeScreen:
    app.run_slash("tree", "")
    return await wait_for_screen(pilot, app, TreeScreen)


async def two_turns(pilot, app, server: ModelServer) -> None:
    server.queue(Scripted(text="Answer one."), Scripted(text="Answer two."))
    for prompt in ("first question", "second question"):
        await pilot.press(*prompt, "enter")
        await settle(pilot, app)


def entries_of(app) -> list[dict]:
    return [json.loads(json.dumps(raw)) for raw in app.agent.manager.iter_raw_entries()]


async def test_tree_shows_the_spec_layout_for_the_fixture(project: Path, summary_session: Path) -> None:
    app = make_app(project, session=str(summary_session))
    async with app.run_test(size=(120, 44)) as pilot:  # the width the spec's screen was taken at
        screen = await open_tree(pilot, app)
        region = screen.tree_list.region
        rows = screen_text(app).splitlines()[region.y : region.y + 7]
        assert_rows_match(rows, SPEC_DEFAULT.splitlines())  # the spec's rows, cut with "…"
        assert "(5/7)" in screen_text(app)


async def test_tree_filters_cycle_with_ctrl_o_and_direct_keys(project: Path, summary_session: Path) -> None:
    app = make_app(project, session=str(summary_session))
    async with app.run_test(size=SIZE) as pilot:
        await open_tree(pilot, app)
        seen = []
        for _ in range(5):
            seen.append(app.screen.query_one("#tree-counter").render().plain)
            await pilot.press("ctrl+o")
        assert seen == ["(5/7)", "(5/7) [no-tools]", "(2/3) [user]", "(1/1) [labeled]", "(4/10) [all]"]
        # Back to default; the selection followed the entry [labeled] showed (checkpoint-1).
        assert app.screen.query_one("#tree-counter").render().plain == "(2/7)"
        await pilot.press("ctrl+u")
        assert app.screen.model.filter_mode == "user-only"
        await pilot.press("ctrl+a")
        assert app.screen.model.filter_mode == "all"
        assert any("[label: checkpoint-1]" in line for line in tree_lines(app))
        await pilot.press("ctrl+d")
        assert app.screen.model.filter_mode == "default"


async def test_tree_search_and_escape(project: Path, summary_session: Path) -> None:
    app = make_app(project, session=str(summary_session))
    async with app.run_test(size=SIZE) as pilot:
        await open_tree(pilot, app)
        await pilot.press(*"dict works")
        lines = tree_lines(app)
        assert len(lines) == 1 and "Dict version works fine." in lines[0]
        assert "Search: dict works" in screen_text(app)
        await pilot.press("escape")  # clears the search first
        assert len(tree_lines(app)) == 7 and isinstance(app.screen, TreeScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TreeScreen)


async def test_tree_fold_and_unfold_a_segment(project: Path, summary_session: Path) -> None:
    app = make_app(project, session=str(summary_session))
    async with app.run_test(size=SIZE) as pilot:
        await open_tree(pilot, app)
        await pilot.press("down")  # wraps to the top... then go to the "Does it work?" branch start
        index = next(i for i, line in enumerate(tree_lines(app)) if "Does it work?" in line)
        app.screen.tree_list.cursor = index
        await pilot.press("ctrl+left")
        lines = tree_lines(app)
        assert any("└⊞ user: Does it work?" in line for line in lines)
        assert not any("Dict version works fine." in line for line in lines)
        await pilot.press("ctrl+right")
        assert any("Dict version works fine." in line for line in tree_lines(app))


async def test_selecting_the_current_leaf_says_already_there(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        leaf = app.agent.manager.get_leaf_id()
        await open_tree(pilot, app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Already at this point." in screen_text(app), "the tree's answer")
        assert app.agent.manager.get_leaf_id() == leaf


async def test_selecting_a_user_message_puts_its_text_in_the_editor_and_branches(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        manager = app.agent.manager
        first_answer = manager.get_branch()[-3].id  # user2's parent
        await open_tree(pilot, app)
        await pilot.press("up", "enter")  # user: second question
        await pilot.pause()
        assert isinstance(app.screen, ChoiceMenu)
        await pilot.press("enter")  # No summary
        await settle(pilot, app)
        assert app.editor.text == "second question"
        assert manager.get_leaf_id() == first_answer
        assert [type(i).__name__ for i in app.chat.items if type(i).__name__ != "InfoItem"] == [
            "UserItem",
            "AssistantItem",
        ]
        assert "Navigated to selected point." in screen_text(app)
        server.queue(Scripted(text="Answer two bis."))
        await pilot.press("ctrl+c", *"second, differently", "enter")
        await settle(pilot, app)
        siblings = manager.get_children(first_answer)
        assert len(siblings) == 2  # the new prompt is a sibling branch in the file
        lines = (manager.session_file).read_text().splitlines()
        assert any("second, differently" in line for line in lines)


async def test_selecting_an_assistant_message_moves_the_leaf_onto_it(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        manager = app.agent.manager
        target = manager.get_branch()[-3].id
        await open_tree(pilot, app)
        await pilot.press("up", "up", "enter", "enter")  # assistant: Answer one; No summary
        await settle(pilot, app)
        assert manager.get_leaf_id() == target and app.editor.text == ""
        assert isinstance(app.chat.items[-2], AssistantItem) or isinstance(app.chat.items[-1], AssistantItem)


async def test_selecting_the_root_user_message_empties_the_conversation(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        await open_tree(pilot, app)
        await pilot.press("up", "up", "up", "enter", "enter")
        await settle(pilot, app)
        manager = app.agent.manager
        first_user = next(
            e for e in manager.get_entries() if e.type == "message" and e.message.role == "user"
        )
        assert manager.get_leaf_id() == first_user.parent_id  # the start-up model/thinking entries
        assert app.editor.text == "first question"
        assert not any(isinstance(item, UserItem) for item in app.chat.items)
        server.queue(Scripted(text="A new start."))
        await pilot.press("ctrl+c", *"fresh start", "enter")
        await settle(pilot, app)
        starts = manager.get_children(first_user.parent_id)
        assert len(starts) == 2


async def test_summarize_appends_a_branch_summary_that_the_model_sees(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        await open_tree(pilot, app)
        server.queue(Scripted(text="Tried the second question; it went nowhere."))
        await pilot.press("up", "enter", "down", "enter")  # user: second question -> Summarize
        await settle(pilot, app, timeout=15)
        await wait_until(
            pilot, lambda: any(isinstance(item, SummaryItem) for item in app.chat.items), "the summary item"
        )
        summaries = [e for e in entries_of(app) if e["type"] == "branch_summary"]
        assert len(summaries) == 1
        assert summaries[0]["summary"].startswith("The user explored a different conversation branch")
        assert "it went nowhere" in summaries[0]["summary"]
        assert any(isinstance(item, SummaryItem) for item in app.chat.items)
        server.queue(Scripted(text="ok"))
        await pilot.press("ctrl+c", *"go on", "enter")
        await settle(pilot, app)
        assert "it went nowhere" in json.dumps(server.requests[-1].body)


async def test_escape_cancels_a_running_summary(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        leaf = app.agent.manager.get_leaf_id()
        await open_tree(pilot, app)
        server.queue(Scripted(text="slow summary", first_byte_delay=5))
        await pilot.press("up", "enter", "down", "enter")
        await wait_until(pilot, lambda: app.busy, "the summary to start")
        assert "Summarizing" in screen_text(app)
        app.editor.post_message(__import__("textual").events.Key("escape", None))
        await wait_for_screen(pilot, app, TreeScreen)  # back in the tree
        assert app.agent.manager.get_leaf_id() == leaf
        assert not [e for e in entries_of(app) if e["type"] == "branch_summary"]
        await pilot.press("escape")
        await pilot.pause()
        assert "Branch summarization cancelled." in screen_text(app)


async def test_shift_l_labels_in_the_tree_and_the_chat_and_empty_clears(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        target = app.agent.manager.get_branch()[-3].id  # assistant: Answer one
        await open_tree(pilot, app)
        await pilot.press("up", "up", "L")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        await pilot.press(*"milestone", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TreeScreen)
        assert any("[milestone] assistant: Answer one." in line for line in tree_lines(app))
        labels = [e for e in entries_of(app) if e["type"] == "label"]
        assert labels[-1]["targetId"] == target and labels[-1]["label"] == "milestone"
        await pilot.press("escape")
        await pilot.pause()
        assert "[milestone]" in screen_text(app)
        await open_tree(pilot, app)
        await pilot.press("up", "up", "L")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        assert app.screen.query_one("Input").value == "milestone"  # prefilled
        app.screen.query_one("Input").value = ""
        await pilot.press("enter")
        await pilot.pause()
        labels = [e for e in entries_of(app) if e["type"] == "label"]
        assert "label" not in labels[-1]  # a label entry without text clears it
        assert not any("[milestone]" in line for line in tree_lines(app))


async def test_label_command_labels_the_newest_message(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        newest = app.agent.manager.get_leaf_id()
        app.run_slash("label", "v1")
        await wait_until(pilot, lambda: app.agent.manager.get_label(newest) is not None, "the label")
        await pilot.pause()
        assert app.agent.manager.get_label(newest) == "v1"  # the label entry itself becomes the leaf
        assert "[v1]" in screen_text(app)


async def test_branch_and_clone_create_files_naming_the_parent(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        original = app.agent.manager.session_file
        app.run_slash("clone", "")
        await wait_until(pilot, lambda: app.agent.manager.session_file != original, "the clone")
        clone = app.agent.manager.session_file
        assert clone != original
        header = json.loads(clone.read_text().splitlines()[0])
        assert header["parentSession"] == str(original)
        app.run_slash("branch", "")
        await wait_for_screen(pilot, app, ChoiceMenu)
        await pilot.press("enter")  # newest user message first: "second question"
        await wait_until(pilot, lambda: app.agent.manager.session_file not in (original, clone), "the branch")
        await pilot.pause()
        branched = app.agent.manager.session_file
        assert branched not in (original, clone)
        assert app.editor.text == "second question"
        reopened = SessionManager.open(branched, read_only=True)
        texts = [getattr(e, "message", None) for e in reopened.get_entries()]
        assert sum(1 for m in texts if m is not None and m.role == "user") == 1
        assert json.loads(branched.read_text().splitlines()[0])["parentSession"] == str(clone)


# --- snapshots -----------------------------------------------------------------------------------


SNAPSHOT_KEYS = {
    "default": [],
    "no-tools": ["ctrl+o"],
    "user-only": ["ctrl+o", "ctrl+o"],
    "labeled-only": ["ctrl+l"],
    "all": ["ctrl+a"],
    "search": list("approach"),
    "label-prompt": ["up", "L"],
    "summary-menu": ["up", "enter"],
}


@pytest.mark.parametrize("screen", list(SNAPSHOT_KEYS))
def test_tree_snapshot(snap_compare, project: Path, summary_session: Path, screen: str) -> None:
    """The tree in each filter mode, a search, the label prompt and the summary menu."""
    app = make_app(project, session=str(summary_session))

    async def run_before(pilot) -> None:
        await open_tree(pilot, app)
        await pilot.press(*SNAPSHOT_KEYS[screen])
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


def test_tree_snapshot_folded_segment(snap_compare, project: Path, summary_session: Path) -> None:
    app = make_app(project, session=str(summary_session))

    async def run_before(pilot) -> None:
        await open_tree(pilot, app)
        index = next(i for i, line in enumerate(tree_lines(app)) if "Does it work?" in line)
        app.screen.tree_list.cursor = index
        await pilot.press("ctrl+left")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


async def test_name_sets_the_session_name_shown_in_the_footer(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        app.run_slash("name", "refactor parser")
        await wait_until(pilot, lambda: app.agent.manager.get_session_name() is not None, "the name")
        await pilot.pause()
        assert app.agent.manager.get_session_name() == "refactor parser"
        assert "~/project • refactor parser" in screen_text(app)
        assert [e["name"] for e in entries_of(app) if e["type"] == "session_info"] == ["refactor parser"]


async def test_skip_prompt_setting_moves_without_the_summary_menu(
    project: Path, server: ModelServer, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"branchSummary": {"skipPrompt": True}}))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        requests = len(server.requests)
        await open_tree(pilot, app)
        await pilot.press("up", "up", "enter")
        await settle(pilot, app)
        assert not isinstance(app.screen, ChoiceMenu)
        assert "Navigated to selected point." in screen_text(app)
        assert len(server.requests) == requests  # no summary request


async def test_tree_starts_in_the_configured_filter_and_shift_t_shows_label_times(
    project: Path, summary_session: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"treeFilterMode": "user-only"}))
    app = make_app(project, session=str(summary_session))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tree(pilot, app)
        assert screen.model.filter_mode == "user-only"
        assert screen.query_one("#tree-counter").render().plain.endswith("[user]")
        await pilot.press("ctrl+d", "T")
        assert screen.model.show_label_times
        label_line = next(line for line in tree_lines(app) if "[checkpoint-1]" in line)
        assert label_line != "  • [checkpoint-1] assistant: Approach A: use a dict."  # a time is shown
