"""The installed pi-tui in tmux: keys sent in one burst reach the /model filter in order (the
audit's repro: ``abcdef`` Left x4 ``X`` showed ``abcdefX``; pi shows ``abXcdef``)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.test_tui_tmux import SCRIPT
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")


def test_a_burst_in_the_model_filter_keeps_its_order(agent_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_TUI_CACHE_DIR": os.environ["PI_TUI_CACHE_DIR"],
        "PI_TUI_PI_AGENT_DIR": os.environ["PI_TUI_PI_AGENT_DIR"],
        "HOME": str(home),
        **{key: "" for key in os.environ if key.endswith("_API_KEY")},
        "DEEPSEEK_API_KEY": "k",
    }
    pane = TmuxPane.start([SCRIPT, "--provider", "deepseek"], cwd=tmp_path, env=env, width=140)
    try:
        pane.wait_for(lambda s: "deepseek" in s, "pi-tui to start", timeout=20)
        pane.type("/model")
        pane.wait_for(lambda s: "/model" in s, "/model in the editor")
        pane.press("Enter")
        pane.wait_for(lambda s: "Select a model" in s, "the model picker")
        pane.type("abcdef")  # then at once, without waiting for the screen:
        pane.press("Left", "Left", "Left", "Left")
        pane.type("X")
        screen = pane.wait_for(lambda s: s if "abXcdef" in s or "abcdefX" in s else "", "the filter")
        assert "abXcdef" in screen and "abcdefX" not in screen
    finally:
        pane.kill()
