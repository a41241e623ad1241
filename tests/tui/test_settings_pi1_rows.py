"""pi 1.x's /settings rows in pi-tui: output padding, terminal mode, fullscreen exit output,
terminal progress and share destination, saved in pi's keys and applied at once."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.tui.widgets.chat import ChatView
from tests.tui.conftest import make_app
from tests.tui.test_settings import SIZE, choose, open_settings, saved, value_of


async def test_pi1_rows_save_pis_keys_and_output_padding_restyles_the_chat(
    project: Path, agent_dir: Path
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        assert not chat.has_class("-output-pad-0")
        screen = await open_settings(pilot, app)
        assert value_of(screen, "output-padding") == "1" and value_of(screen, "tui-mode") == "fullscreen"
        await choose(pilot, app, screen, "output-padding")  # 1 -> 0
        await choose(pilot, app, screen, "tui-mode")
        await choose(pilot, app, screen, "fullscreen-exit-output")
        await choose(pilot, app, screen, "fullscreen-scrollbar")
        await choose(pilot, app, screen, "terminal-progress")
        await choose(pilot, app, screen, "share-destination")
        data = saved(agent_dir)
        assert data["outputPad"] == 0 and data["tuiMode"] == "regular"
        assert data["fullscreenExitOutput"] == "resume-hint"
        assert data["terminal"] == {"showTerminalProgress": True}
        assert data["fullscreenScrollbar"] == "always"
        assert chat.styles.overflow_y == "scroll"  # applied at once
        assert data["sessionShareDestination"] == "gist"
        settings = app.agent.settings
        assert settings.output_pad == 0 and settings.terminal.show_terminal_progress is True
        assert chat.has_class("-output-pad-0")  # every block, drawn or to come, loses its side padding
        await choose(pilot, app, screen, "output-padding")  # back to 1
        assert not chat.has_class("-output-pad-0")


async def test_rows_show_what_the_file_says(project: Path, agent_dir: Path) -> None:
    chosen = {"outputPad": 0, "sessionShareDestination": "radius"}
    (agent_dir / "settings.json").write_text(json.dumps(chosen))
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        assert app.query_one(ChatView).has_class("-output-pad-0")  # applied from the start
        screen = await open_settings(pilot, app)
        assert value_of(screen, "output-padding") == "0"
        assert value_of(screen, "share-destination") == "radius"


async def test_quiet_startup_header_is_accepted_and_keeps_the_header(project: Path, agent_dir: Path) -> None:
    from pi_tui.tui.widgets.header import PiHeader

    (agent_dir / "settings.json").write_text(json.dumps({"quietStartup": "header"}))
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        header = app.query_one(PiHeader)
        assert header.quiet is False and "commands" in str(header.render())  # the key hints stay


async def test_fullscreen_scrollbar_hidden_and_always(project: Path, agent_dir: Path) -> None:
    for choice, width, overflow in (("hidden", 0, "auto"), ("always", 1, "scroll"), ("auto", 1, "auto")):
        (agent_dir / "settings.json").write_text(json.dumps({"fullscreenScrollbar": choice}))
        app = make_app(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            chat = app.query_one(ChatView)
            assert (chat.styles.scrollbar_size_vertical, chat.styles.overflow_y) == (width, overflow), choice
