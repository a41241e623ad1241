"""``/settings`` in the real app: each change is saved in pi's keys and takes effect at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Input, OptionList

from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt
from pi_tui.tui.screens.settings import SettingsScreen, ValuePicker
from pi_tui.tui.screens.tree import TreeScreen
from pi_tui.tui.widgets.editor import CompletionMenu
from pi_tui.tui.widgets.header import PiHeader
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (100, 50)


async def open_settings(pilot: Any, app: Any) -> SettingsScreen:
    await pilot.press(*"/settings")
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot, app)
    assert isinstance(app.screen, SettingsScreen)
    return app.screen


async def go_to(pilot: Any, screen: SettingsScreen, row_id: str) -> None:
    """Move the highlight to a row with the arrow keys, as a user would."""
    target = [row.id for row in screen.rows].index(row_id)
    options = screen.query_one(OptionList)
    while options.highlighted != target:
        await pilot.press("down" if (options.highlighted or 0) < target else "up")


async def choose(pilot: Any, app: Any, screen: SettingsScreen, row_id: str, presses: int = 1) -> None:
    await go_to(pilot, screen, row_id)
    for _ in range(presses):
        await pilot.press("enter")
        await pilot.pause()


async def type_value(pilot: Any, app: Any, screen: SettingsScreen, row_id: str, text: str) -> None:
    await choose(pilot, app, screen, row_id)
    assert isinstance(app.screen, TextPrompt)
    app.screen.query_one(Input).value = ""
    await pilot.press(*text, "enter")
    await pilot.pause()


def saved(agent_dir: Path) -> dict[str, Any]:
    return json.loads((agent_dir / "settings.json").read_text())


def value_of(screen: SettingsScreen, row_id: str) -> str:
    return next(row.value for row in screen.rows if row.id == row_id)


async def test_cycle_rows_save_pis_keys_and_apply_at_once(project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"myOwnKey": 1, "compaction": {"reserveTokens": 9}}))
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        await choose(pilot, app, screen, "autocompact")
        await choose(pilot, app, screen, "steering-mode")
        await choose(pilot, app, screen, "follow-up-mode")
        await choose(pilot, app, screen, "editor-padding", presses=2)
        await choose(pilot, app, screen, "autocomplete-max-visible")
        await choose(pilot, app, screen, "quiet-startup")
        await choose(pilot, app, screen, "hide-thinking")
        await choose(pilot, app, screen, "tree-filter-mode")
        await choose(pilot, app, screen, "block-images")
        await choose(pilot, app, screen, "retry")
        data = saved(agent_dir)
        assert data["myOwnKey"] == 1  # keys pi-tui does not offer stay
        assert data["compaction"] == {"reserveTokens": 9, "enabled": False}  # nested, as pi nests it
        assert data["steeringMode"] == "all" and data["followUpMode"] == "all"
        assert data["editorPaddingX"] == 2 and data["autocompleteMaxVisible"] == 7
        assert data["quietStartup"] is True and data["hideThinkingBlock"] is True
        assert data["treeFilterMode"] == "no-tools"
        assert data["images"] == {"blockImages": True} and data["retry"] == {"enabled": False}
        # Applied now, to the objects the agent and the screen use.
        settings = app.agent.settings
        assert settings.compaction.enabled is False and settings.steering_mode == "all"
        assert settings.images.block_images and settings.retry.enabled is False
        assert app.agent.state()["steeringMode"] == "all"
        assert app.editor.styles.padding.left == 3  # the border's column plus the two chosen
        assert app.query_one(CompletionMenu).styles.max_height.value == 9  # seven rows and the border
        assert app.query_one(PiHeader).quiet and "palette" not in str(app.query_one(PiHeader).render())
        assert app.show_thinking is False
        assert value_of(screen, "autocompact") == "false" and value_of(screen, "editor-padding") == "2"
        await pilot.press("escape")
        await pilot.pause()
        assert "(auto)" not in screen_text(app)  # the footer shows auto-compaction off


async def test_typed_rows_check_the_value_and_save_it(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        await type_value(pilot, app, screen, "compaction-reserve-tokens", "lots")
        assert app.screen is screen
        assert '"lots" is not a whole number' in str(screen.query_one("#settings-description").render())
        assert not (agent_dir / "settings.json").exists()
        await type_value(pilot, app, screen, "compaction-reserve-tokens", "9000")
        await type_value(pilot, app, screen, "thinking-budget-low", "3000")
        await type_value(pilot, app, screen, "retry-max-retries", "5")
        data = saved(agent_dir)
        assert data == {
            "compaction": {"reserveTokens": 9000},
            "thinkingBudgets": {"low": 3000},
            "retry": {"maxRetries": 5},
        }
        assert app.agent.settings.compaction.reserve_tokens == 9000
        assert app.agent._request_options(app.agent.model).max_retries == 5
        assert app.agent._request_options(app.agent.model).thinking_budgets == {"low": 3000}
        await type_value(pilot, app, screen, "thinking-budget-low", "")  # empty: back to the built-in
        assert "thinkingBudgets" not in saved(agent_dir) or saved(agent_dir)["thinkingBudgets"] == {}
        assert app.agent.settings.thinking_budgets.low is None


async def test_shell_path_and_prefix_are_used_by_bang_commands(project: Path, agent_dir: Path) -> None:
    shell = project.parent / "my-shell"
    shell.write_text('#!/bin/sh\necho "through my shell"\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        await type_value(pilot, app, screen, "shell-path", str(shell))
        await type_value(pilot, app, screen, "shell-command-prefix", "GREETING=prefixed")
        assert saved(agent_dir) == {"shellPath": str(shell), "shellCommandPrefix": "GREETING=prefixed"}
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press(*"!echo $GREETING", "enter")
        await settle(pilot, app)
        text = screen_text(app)
        assert "through my shell" in text and "prefixed" in text


async def test_double_escape_follows_the_setting(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await settle(pilot, app)
        screen = await open_settings(pilot, app)
        await choose(pilot, app, screen, "double-escape-action")  # tree -> fork
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape", "escape")
        await settle(pilot, app)
        assert isinstance(app.screen, ChoiceMenu)  # fork: pick the user message to branch from
        await pilot.press("escape")
        await pilot.pause()
        screen = await open_settings(pilot, app)
        await choose(pilot, app, screen, "double-escape-action")  # fork -> none
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape", "escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, (ChoiceMenu, TreeScreen))
        assert saved(agent_dir)["doubleEscapeAction"] == "none"


async def test_theme_list_previews_and_escape_restores(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        await choose(pilot, app, screen, "theme")
        assert isinstance(app.screen, ValuePicker)
        assert app.pi_theme_name == "system" and app.theme == "dark"  # pi 1.x's default, no terminal
        await pilot.press("down", "down")  # system -> dark -> light, each shown at once
        await pilot.pause()
        assert app.pi_theme_name == "light" and app.theme == "light"
        assert not (agent_dir / "settings.json").exists()  # a preview is not saved
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        assert app.pi_theme_name == "system" and app.theme == "dark"
        await choose(pilot, app, screen, "theme")
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert app.screen is screen and app.pi_theme_name == "light"
        assert saved(agent_dir) == {"theme": "light"}
        assert value_of(screen, "theme") == "light"


async def test_thinking_level_row_sets_the_level_and_the_default(
    project: Path, agent_dir: Path, server: Any
) -> None:
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        await choose(pilot, app, screen, "thinking")
        assert isinstance(app.screen, ValuePicker)
        picker = app.screen
        target = list(picker.row.values).index("high")
        options = picker.query_one(OptionList)
        while options.highlighted != target:
            await pilot.press("down" if (options.highlighted or 0) < target else "up")
        await pilot.press("enter")
        await pilot.pause()
        assert app.agent.thinking_level == "high"
        assert saved(agent_dir) == {"defaultThinkingLevel": "high"}


def test_settings_screen_snapshot(snap_compare, project: Path, agent_dir: Path) -> None:

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        screen = await open_settings(pilot, app)
        await go_to(pilot, screen, "steering-mode")

    assert snap_compare(make_app(project), run_before=run_before, terminal_size=(100, 40))


async def test_typing_narrows_the_list_and_space_changes_the_row(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        await pilot.press(*"quiet")
        await pilot.pause()
        assert [row.id for row in screen.shown] == ["quiet-startup"]
        assert "search: quiet" in str(screen.query_one("#settings-search").render())
        await pilot.press("space")
        await pilot.pause()
        assert saved(agent_dir) == {"quietStartup": True}
        assert screen.shown[0].value == "true"
        await pilot.press(*["backspace"] * 5)
        await pilot.pause()
        assert len(screen.shown) == len(screen.rows)
        assert screen.current is not None and screen.current.id == "quiet-startup"  # the highlight stays


async def test_choosing_the_current_thinking_level_saves_nothing(
    project: Path, agent_dir: Path, server: Any
) -> None:
    app = make_app(project, provider="test", model="m")  # m does not think: "off" is the only level
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, app)
        entries = len(app.agent.manager.get_entries())
        await choose(pilot, app, screen, "thinking")
        assert isinstance(app.screen, ValuePicker) and app.screen.row.values == ("off",)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert not (agent_dir / "settings.json").exists()
        assert len(app.agent.manager.get_entries()) == entries


async def test_ctrl_t_keeps_the_thinking_choice_for_next_time(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.show_thinking is False and app.agent.settings.hide_thinking_block is True
        assert saved(agent_dir) == {"hideThinkingBlock": True}
        screen = await open_settings(pilot, app)
        assert value_of(screen, "hide-thinking") == "true"
    again = make_app(project)
    async with again.run_test(size=SIZE) as pilot:
        assert again.show_thinking is False


async def test_thinking_command_and_shift_tab_change_this_session_only(
    project: Path, agent_dir: Path, server: Any
) -> None:
    """pi 1.5.2: ``/thinking LEVEL`` and Shift+Tab set the session's level and save nothing (the
    /thinking picker's Ctrl+S saves defaultThinkingLevel)."""
    models = json.loads((agent_dir / "models.json").read_text())  # r has pi 1.x's extended levels
    (reasoning,) = [entry for entry in models["providers"]["test"]["models"] if entry["id"] == "r"]
    reasoning["thinkingLevelMap"] = {"xhigh": "xhigh", "max": "max"}
    (agent_dir / "models.json").write_text(json.dumps(models))
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/thinking high")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.agent.thinking_level == "high"
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.agent.thinking_level == "xhigh"
        assert not (agent_dir / "settings.json").exists() or "defaultThinkingLevel" not in saved(agent_dir)
    again = make_app(project, provider="test", model="r")  # a new session starts at the default
    assert again.agent.thinking_level == "medium"  # pi's default level
