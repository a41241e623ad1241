"""A message typed before the app is up is sent, as in a terminal running pi.

``pi-tui`` and then at once the first message: the keys land while the app is still asking the
terminal about its colours (they used to be read with the answers and dropped) or while the
agent is starting (Enter only put the text back, "send again in a moment").
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_tui_tmux import SCRIPT
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")


def test_a_message_typed_before_the_first_frame_is_sent(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo"],
        cwd=project,
        env={
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
            "PI_TUI_PI_AGENT_DIR": str(tmp_path / "pi-agent"),
        },
        width=100,
        height=30,
    )
    try:
        pane.type("typed straight away")  # no wait: pi-tui is not even drawn yet
        pane.press("Enter")
        pane.wait_for(
            lambda screen: "You wrote “typed straight away”" in screen, "the demo's answer", timeout=20
        )
    finally:
        pane.kill()
