"""A message typed before the app is up is sent, as in a terminal running pi.

``pi-tui`` and then at once the first message: the keys land while the app is still asking the
terminal about its colours (they used to be read with the answers and dropped) or while the
agent is starting (Enter only put the text back, "send again in a moment").
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.app_pane import start_pi_tui
from tests.support.requires import requires

pytestmark = requires("tmux", "pi-tui")


def test_a_message_typed_before_the_first_frame_is_sent(agent_dir: Path, tmp_path: Path) -> None:
    pane = start_pi_tui(
        ["--model", "offline/demo"],
        project=tmp_path / "project",
        agent_dir=agent_dir,
        tmp_path=tmp_path,
        width=100,
        height=30,
        footer=None,
    )  # no wait: the keys go before pi-tui is even drawn
    try:
        pane.type("typed straight away")
        pane.press("Enter")
        pane.wait_for(
            lambda screen: "You wrote “typed straight away”" in screen, "the demo's answer", timeout=20
        )
    finally:
        pane.kill()
