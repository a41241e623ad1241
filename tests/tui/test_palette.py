"""The Ctrl+P palette offers only pi-tui's entries, and no theme choice can stop the app.

Textual's own palette commands (Theme, Keys, Maximize, Screenshot, Quit) used to be listed; its
Theme picker set Textual themes such as ``nord`` that define none of the ``$pi-*`` colours, and
the stylesheet then stopped the app with "undefined variable $pi-text".
"""

from __future__ import annotations

import json
from pathlib import Path

from textual.command import Command, CommandList, CommandPalette
from textual.theme import BUILTIN_THEMES
from textual.widgets import OptionList

from pi_tui.tui.screens.settings import SettingsScreen
from pi_tui.tui.theme import is_pi_theme
from pi_tui.tui.transcript import InfoItem
from pi_tui.view.theme import REQUIRED_TOKENS, available_themes, theme_choices
from tests.support.waiting import wait_for_screen
from tests.tui.conftest import make_app, palette_searched, screen_text, settle

SIZE = (100, 40)
TEXTUAL_COMMANDS = ("Theme", "Keys", "Maximize", "Minimize", "Screenshot")
TEXTUAL_QUIT_HELP = "Quit the application as soon as possible"


async def palette_rows(pilot, app, query: str) -> list[tuple[str, str]]:
    """Open the palette, type ``query``, and read the (title, help) rows it lists; then close it."""
    await pilot.press("alt+x")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    if query:
        await pilot.press(*query)
    await palette_searched(pilot, app)
    options = app.screen.query_one(CommandList)._options
    rows = [(str(o.hit.text), str(o.hit.help or "")) for o in options if isinstance(o, Command)]
    await pilot.press("escape")
    await pilot.pause()
    return rows


def warnings(app) -> list[str]:
    return [item.text for item in app.chat.items if isinstance(item, InfoItem) and item.level == "warning"]


async def test_the_palette_lists_no_textual_system_command(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        shown = await palette_rows(pilot, app, "")
        titles = [title for title, _ in shown]
        assert "Select model" in titles and "Toggle thinking" in titles, titles
        for name in (*TEXTUAL_COMMANDS, "Quit"):
            assert name not in titles, titles
        for name in TEXTUAL_COMMANDS:
            rows = await palette_rows(pilot, app, name.lower())
            assert all(title != name for title, _ in rows), (name, rows)
        rows = await palette_rows(pilot, app, "quit")
        assert "/quit" in [title for title, _ in rows], rows
        assert all(help_text != TEXTUAL_QUIT_HELP for _, help_text in rows), rows
        assert isinstance(app.screen, CommandPalette) is False


async def test_a_textual_theme_keeps_the_pi_theme_with_a_warning(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        textual_names = sorted(BUILTIN_THEMES)
        assert "nord" in textual_names
        for name in (*textual_names, "no-such-theme"):
            app.theme = name
            await pilot.pause()
            assert app.is_running and app.theme == "dark", name
            assert app.theme_variables["pi-text"], name
        app.action_toggle_dark()  # Textual's own switch between textual-dark and textual-light
        await settle(pilot, app)
        assert app.is_running and app.theme == "dark"
        shown = warnings(app)
        refused = '"nord" is a Textual theme, not a pi theme: keeping "system"'  # pi 1.x's default
        assert any(refused in text for text in shown), shown
        assert any('"no-such-theme" is not a known theme' in text for text in shown), shown
        # The chat still takes a prompt and the offline model still answers.
        await pilot.press(*"still here", "enter")
        await settle(pilot, app)
        assert "You wrote “still here”" in screen_text(app)


async def test_textual_theme_action_opens_pi_tuis_settings(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.action_change_theme()
        await settle(pilot, app)
        assert isinstance(app.screen, SettingsScreen)


async def test_every_theme_in_the_settings_row_applies(project: Path, agent_dir: Path) -> None:
    themes = agent_dir / "themes"
    themes.mkdir()
    good = {token: "#445566" for token in REQUIRED_TOKENS}
    (themes / "mine.json").write_text(json.dumps({"name": "mine", "colors": good}))
    (themes / "nord.json").write_text(json.dumps({"name": "nord", "colors": good}))  # a Textual name
    (themes / "odd name.json").write_text(json.dumps({"name": "Odd name!", "colors": good}))
    (themes / "broken.json").write_text("{ not json")
    (themes / "partial.json").write_text(json.dumps({"name": "partial", "colors": {"text": "#ffffff"}}))
    names = theme_choices(available_themes(agent_dir))  # "system" first, then every file
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/settings")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, SettingsScreen)
        while app.screen.rows[app.screen.query_one(OptionList).highlighted or 0].id != "theme":
            await pilot.press("down")
        await pilot.press("enter")  # the theme list: moving over a theme shows it
        await pilot.press("home")
        await settle(pilot, app)
        seen: list[str] = [app.pi_theme_name]
        for _ in names:
            await pilot.press("down")
            await settle(pilot, app)
            assert app.is_running
            assert is_pi_theme(app.current_theme), app.theme
            seen.append(app.pi_theme_name)
        # The names the setting stores: file names ("odd name"), as pi-tui has always saved them.
        assert {"system", "mine", "nord", "odd name", "broken", "partial", "light", "dark"} <= set(seen), seen
        await pilot.press("enter")
        await settle(pilot, app)
        assert json.loads((agent_dir / "settings.json").read_text())["theme"] in names


async def test_the_palette_finds_settings_by_name_and_opens_them(project: Path) -> None:
    """Commands, settings and actions: typing a setting's name offers it first; Enter opens
    /settings on that row."""
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        rows = await palette_rows(pilot, app, "steering")
        assert rows and rows[0][0] == "Steering mode (setting)", rows
        await pilot.press("alt+x")
        await pilot.pause()
        await pilot.press(*"theme")
        await palette_searched(pilot, app)
        top = app.screen.query_one(CommandList)._options[0]
        assert str(top.hit.text) == "Theme (setting)"
        await pilot.press("enter")
        screen = await wait_for_screen(pilot, app, SettingsScreen)
        assert isinstance(screen, SettingsScreen)
        options = screen.query_one(OptionList)
        assert screen.rows[options.highlighted].id == "theme"
