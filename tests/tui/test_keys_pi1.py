"""pi 1.x's new keys in the running app: Ctrl+X copies the last answer (the palette moved to
Alt+X), the dedicated history keys, transcript search, jumps between prompts, half-page and line
scrolling, and the thinking picker's save key; each bound the way a pi 1.x keybindings.json
binds it."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from textual.command import CommandPalette

from pi_tui.tui.screens.thinking_picker import ThinkingPicker
from pi_tui.tui.widgets.chat_items import UserView
from pi_tui.tui.widgets.search import SearchInput
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text, settle
from tests.tui.test_long_session_open import long_session

TURNS = 30
SIZE = (100, 30)


async def opened(pilot, app, last: str) -> None:
    await wait_until(
        pilot, lambda: app.agent is not None and last in screen_text(app), f"the session to open at {last!r}"
    )


def bind(agent_dir: Path, table: dict[str, object]) -> None:
    (agent_dir / "keybindings.json").write_text(json.dumps(table))


@pytest.fixture
def clipboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real ``xclip`` program on PATH (a script writing what it is given to a file)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    out = tmp_path / "clipboard.txt"
    clip = tools / "xclip"
    clip.write_text(f"#!/bin/sh\ncat > {out}\n")
    clip.chmod(clip.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return out


async def test_ctrl_x_copies_the_last_answer_and_alt_x_opens_the_palette(
    project: Path, tmp_path: Path, agent_dir: Path, clipboard: Path
) -> None:
    path = long_session(project, tmp_path / "sessions", TURNS)
    app = make_app(project, session=str(path), model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, f"answer {TURNS - 1}")
        await pilot.press("ctrl+x")
        await wait_until(pilot, clipboard.exists, "the clipboard tool to run")
        assert clipboard.read_text() == f"answer {TURNS - 1}"
        assert not isinstance(app.screen, CommandPalette)
        assert "xclip" in screen_text(app)
        await pilot.press("alt+x")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape")


async def test_app_message_copy_rebinds_and_says_when_there_is_nothing(
    project: Path, agent_dir: Path, clipboard: Path
) -> None:
    bind(agent_dir, {"app.message.copy": "ctrl+y"})
    app = make_app(project, model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent is not None, "the agent")
        await pilot.press("ctrl+x")  # no longer copy, nor the palette: the editor's (nothing)
        await pilot.pause()
        assert not isinstance(app.screen, CommandPalette)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: "No assistant message to copy" in screen_text(app), "the hint")
        assert not clipboard.exists()
        assert not app.keys.problems


async def test_history_keys_walk_prompts_wherever_the_cursor_is(
    project: Path, tmp_path: Path, agent_dir: Path
) -> None:
    bind(agent_dir, {"tui.editor.historyPrevious": "ctrl+p", "tui.editor.historyNext": "alt+n"})
    path = long_session(project, tmp_path / "sessions", TURNS)
    app = make_app(project, session=str(path), model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, f"answer {TURNS - 1}")
        assert not app.keys.problems
        app.editor.load_text("first line\nsecond line")
        app.editor.move_cursor((1, 3))  # not on the first line: Up would only move the cursor
        await pilot.press("ctrl+p")  # wins over Ctrl+P's model cycling, as pi's rule says
        assert app.editor.text == f"question {TURNS - 1}"
        await pilot.press("ctrl+p")
        assert app.editor.text == f"question {TURNS - 2}"
        await pilot.press("alt+n", "alt+n")
        assert app.editor.text == "first line\nsecond line"  # back to the draft


async def test_search_finds_selects_wraps_and_closes(project: Path, tmp_path: Path, agent_dir: Path) -> None:
    path = long_session(project, tmp_path / "sessions", 60)  # older items are not mounted yet
    app = make_app(project, session=str(path), model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, "answer 59")
        chat = app.chat
        assert chat.mounted_count < len(chat.items)
        await pilot.press("ctrl+shift+f")
        await pilot.pause()
        search = app.transcript_search
        assert search.active and isinstance(app.focused, SearchInput)
        await pilot.press(*"question 1")  # question 1, 10..19: 11 matches
        await wait_until(pilot, lambda: "/11" in screen_text(app), "the match count")
        assert [chat.items[index].text for index, _ in search.matches][:2] == ["question 1", "question 10"]
        # nothing of it is below the view's top: the first match after the top wraps to the first
        assert search.selected == 0 and "1/11" in screen_text(app)
        await wait_until(
            pilot, lambda: re.search(r"question 1(?!\d)", screen_text(app)), "question 1 on screen"
        )
        hit = chat.query(".-search-hit")
        assert len(hit) == 1 and isinstance(hit.first(), UserView)
        assert hit.first().item.text == "question 1"
        await pilot.press("enter")  # next
        await wait_until(pilot, lambda: "2/11" in screen_text(app), "the next match")
        assert "question 10" in screen_text(app)
        await pilot.press("shift+enter", "shift+enter")  # previous twice: wraps to the last
        await wait_until(pilot, lambda: "11/11" in screen_text(app), "the previous match, wrapped")
        assert "question 19" in screen_text(app)
        await pilot.press("ctrl+g")  # next (pi's second key for it), wins over the external editor
        await wait_until(pilot, lambda: "1/11" in screen_text(app), "wrapping forward")
        await pilot.press("escape")
        await pilot.pause()
        assert not search.active and app.focused is app.editor
        assert not chat.query(".-search-hit")


async def test_prompt_jumps_and_fine_scrolling(project: Path, tmp_path: Path, agent_dir: Path) -> None:
    bind(
        agent_dir,
        {
            "tui.altScreen.halfPageUp": "alt+u",
            "tui.altScreen.halfPageDown": "alt+d",
            "tui.altScreen.lineUp": "alt+k",
            "tui.altScreen.lineDown": "alt+j",
        },
    )
    path = long_session(project, tmp_path / "sessions", TURNS)
    app = make_app(project, session=str(path), model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, f"answer {TURNS - 1}")
        assert not app.keys.problems
        chat = app.chat
        bottom = chat.scroll_y
        half = chat.scrollable_content_region.height // 2
        await pilot.press("alt+u")
        assert chat.scroll_y == bottom - half
        await pilot.press("alt+k", "alt+k")
        assert chat.scroll_y == bottom - half - 2
        await pilot.press("alt+j")
        assert chat.scroll_y == bottom - half - 1
        await pilot.press("alt+d")
        assert chat.scroll_y == bottom - 1

        starts = {view.virtual_region.y: view.item.text for view in chat.query(UserView)}
        rows = sorted(starts)
        top = round(chat.scroll_y)
        above = [row for row in rows if row < top]
        assert len(above) >= 3
        for expected in (above[-1], above[-2], above[-3]):  # each press: the prompt before the top
            await pilot.press("ctrl+shift+up")
            assert round(chat.scroll_y) == expected, starts[expected]
        await pilot.press("ctrl+shift+down")
        assert round(chat.scroll_y) == above[-2]
        assert starts[above[-2]].startswith("question ")
        assert app.focused is app.editor and app.editor.text == ""


async def test_thinking_picker_uses_a_level_and_the_save_key_keeps_it(
    project: Path, agent_dir: Path, server: ModelServer
) -> None:
    bind(agent_dir, {"app.thinking.save": "ctrl+w"})
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent is not None, "the agent")
        settings = agent_dir / "settings.json"
        start = app.agent.thinking_level
        app.action_pick_thinking_level()
        await wait_until(pilot, lambda: isinstance(app.screen, ThinkingPicker), "the picker")
        await wait_until(pilot, lambda: "ctrl+w save as default" in screen_text(app).lower(), "the save key")
        await pilot.press("down", "enter")  # this session only
        await wait_until(pilot, lambda: not isinstance(app.screen, ThinkingPicker), "the picker to close")
        used = app.agent.thinking_level
        assert used != start
        saved = json.loads(settings.read_text()) if settings.exists() else {}
        assert saved.get("defaultThinkingLevel") != used
        app.action_pick_thinking_level()
        await wait_until(pilot, lambda: isinstance(app.screen, ThinkingPicker), "the picker")
        await pilot.press("down", "ctrl+w")
        await wait_until(pilot, lambda: not isinstance(app.screen, ThinkingPicker), "the picker to close")
        await settle(pilot, app)
        level = app.agent.thinking_level
        assert level != used
        assert json.loads(settings.read_text())["defaultThinkingLevel"] == level


async def test_slash_thinking_alone_opens_the_picker(
    project: Path, agent_dir: Path, server: ModelServer
) -> None:
    """pi 1.x: ``/thinking`` with no level opens the selector (it used to print the level)."""
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent is not None, "the agent")
        await pilot.press(*"/thinking", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ThinkingPicker), "the picker")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ThinkingPicker), "the picker to close")


async def test_model_picker_save_key_makes_the_default_model(
    project: Path, agent_dir: Path, server: ModelServer
) -> None:
    """pi 1.x's ``app.models.save`` in /model: the highlighted model is used and saved as
    ``defaultProvider``/``defaultModel``; Enter alone saves nothing."""
    from pi_tui.tui.screens.model_picker import ModelPicker

    bind(agent_dir, {"app.models.save": "ctrl+w"})
    app = make_app(project, model="offline/demo")
    settings = agent_dir / "settings.json"
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent is not None, "the agent")
        await pilot.press(*"/model", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), "the picker")
        await wait_until(pilot, lambda: "ctrl+w save as default" in screen_text(app).lower(), "the save key")
        await pilot.press(*"test/r", "enter")
        await wait_until(pilot, lambda: app.agent.model.id == "r", "the switch")
        saved = json.loads(settings.read_text()) if settings.exists() else {}
        assert "defaultModel" not in saved
        await pilot.press(*"/model", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), "the picker")
        await pilot.press(*"test/m", "ctrl+w")  # the demo is not offered beside real models
        await wait_until(pilot, lambda: app.agent.model.id == "m", "the switch to m")
        await settle(pilot, app)
        saved = json.loads(settings.read_text())
        assert (saved["defaultProvider"], saved["defaultModel"]) == ("test", "m")


async def test_hotkeys_shows_its_first_rows_first(project: Path, agent_dir: Path) -> None:
    app = make_app(project, model="offline/demo")
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: app.agent is not None, "the agent")
        await pilot.press(*"/hotkeys", "enter")
        await wait_until(pilot, lambda: "Keyboard shortcuts" in screen_text(app), "the table's first line")
        shown = screen_text(app)
        for key in ("Ctrl+Z", "Ctrl+G", "PageUp", "Ctrl+X", "Alt+X"):
            assert key in shown, key


async def test_ctrl_x_in_the_tree_copies_the_selected_entry(
    project: Path, tmp_path: Path, agent_dir: Path, clipboard: Path
) -> None:
    bind(agent_dir, {"app.message.copy": ["ctrl+x", "alt+c"]})
    path = long_session(project, tmp_path / "sessions", 5)
    app = make_app(project, session=str(path), model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, "answer 4")
        app.run_slash("tree", "")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "TreeScreen", "the tree")
        await pilot.press("ctrl+x")  # the leaf: the last answer
        await wait_until(
            pilot, lambda: clipboard.exists() and clipboard.read_text() == "answer 4", "the copy"
        )
        await pilot.press("up", "alt+c")  # the prompt above it, with the second key bound
        await wait_until(pilot, lambda: clipboard.read_text() == "question 4", "the prompt copied")
        assert type(app.screen).__name__ == "TreeScreen"  # copying keeps the tree open
