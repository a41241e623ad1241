"""Alt+X (the palette), "Theme", Enter, "nord", Enter in the installed ``pi-tui``, through a
real terminal; and Ctrl+P, which cycles the scoped models as in pi.

Ctrl+P with "Theme", "nord" used to open Textual's own theme picker and set its ``nord`` theme, which has
none of the ``$pi-*`` colours: the app exited with a stylesheet error. Now the palette only has
pi-tui's entries ("Theme" finds /settings, whose theme row offers pi themes only), and the app
must still be running and answer a prompt from the offline model afterwards.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.test_tui_tmux import SCRIPT, editor_text
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")


def idle(screen: str) -> bool:
    """The chat screen with an empty editor and the offline model named in the footer."""
    return editor_text(screen) == "" and "demo" in screen.splitlines()[-1]


def theme_row(screen: str) -> str | None:
    """The value on the settings panel's Theme row (None when the panel is not showing)."""
    found = re.search(r"│\s*Theme\s+(\S+)", screen)
    return found.group(1) if found else None


def test_palette_theme_nord_leaves_the_app_running(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    status_file = tmp_path / "exit-status"
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo"],
        cwd=project,
        env={
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
            "PI_TUI_OFFLINE_DELAY": "0",
        },
        width=100,
        height=30,
        status_file=status_file,
    )
    try:
        pane.wait_for(idle, "the chat with an empty editor", timeout=15)
        pane.press("M-x")
        pane.wait_for(lambda s: "🔎" in s, "the command palette")
        pane.type("Theme")
        pane.wait_for(lambda s: "/settings" in s, "the palette finding /settings for 'Theme'")
        screen = pane.capture() or ""
        assert "Change the current theme" not in screen, screen  # Textual's own Theme command
        pane.press("Enter")
        pane.wait_for(lambda s: "Settings" in s and "Theme" in s, "pi-tui's settings panel")
        pane.type("nord")  # typing searches the settings: no row, and no Textual theme, is "nord"
        pane.wait_for(lambda s: "search: nord" in s and theme_row(s) is None, "the search finding nothing")
        pane.press("Enter")
        pane.press(*["BSpace"] * 4)
        pane.type("theme")
        pane.wait_for(lambda s: theme_row(s) == "system", "the Theme row found (pi 1.x's default)")
        pane.press("Enter")  # the list of pi themes; moving over one shows it
        pane.wait_for(lambda s: "moving over a theme shows it" in s and "light" in s, "the theme list")
        assert not re.search(r"│\s*nord\s*│", pane.capture() or "")  # not offered
        pane.press("Down", "Down")  # system, dark, light
        pane.press("Enter")
        row = pane.wait_for(lambda s: theme_row(s) == "light" and theme_row(s), "the theme row now 'light'")
        assert row == "light" and pane.alive() and not status_file.exists()
        pane.press("Escape")
        pane.wait_for(lambda s: idle(s) and theme_row(s) is None, "the settings panel closed")
        pane.type("marmalade")
        pane.press("Enter")
        pane.wait_for(lambda s: "You wrote “marmalade”" in s, "the offline model's reply")
        assert pane.alive() and not status_file.exists()
    finally:
        pane.kill()


def test_ctrl_p_cycles_the_models_given_with_models(agent_dir: Path, tmp_path: Path) -> None:
    import json

    from tests.support.model_server import ModelServer

    project = tmp_path / "project"
    project.mkdir()
    with ModelServer() as server:
        models = [{"id": "alpha-1", "reasoning": True}, {"id": "beta-2"}, {"id": "gamma-3"}]
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=models)))
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", "alpha-1", "--models", "test/alpha-1:high,beta*"],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_CACHE_DIR": str(tmp_path / "cache")},
            width=100,
            height=30,
        )
        try:
            footer = lambda screen: screen.splitlines()[-1]  # noqa: E731
            pane.wait_for(
                lambda s: editor_text(s) == "" and "alpha-1" in footer(s), "alpha-1 in the footer", 15
            )
            pane.press("C-p")
            pane.wait_for(lambda s: "beta-2" in footer(s), "Ctrl+P: beta-2 in the footer")
            pane.press("C-p")
            pane.wait_for(
                lambda s: "alpha-1" in footer(s) and "high" in footer(s),
                "Ctrl+P again: alpha-1, thinking high",
            )
            assert "gamma-3" not in (pane.last_screen or "")  # not in the scope: never cycled to
        finally:
            pane.kill()
