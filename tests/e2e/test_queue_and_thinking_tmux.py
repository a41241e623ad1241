"""Two chat keys in the installed ``pi-tui`` inside tmux (80x24), on the loopback model:

- Alt+Up brings queued messages back into the editor and says so ("Restored 1 queued message",
  as pi does); it used to happen without a word.
- Ctrl+T hides thinking behind a "Thinking..." line where the block was (pi's placeholder); the
  blocks used to vanish, leaving nothing to say a reply had thought at all.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.app_pane import start_pi_tui
from tests.e2e.test_tui_tmux import chat_lines, editor_text
from tests.support.model_server import ModelServer, Scripted
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")
MODEL = "daily-model"


def start(agent_dir: Path, tmp_path: Path, server: ModelServer) -> TmuxPane:
    """pi-tui in tmux at 80x24 on the loopback server, once its editor and footer show."""
    models = server.models_json(models=[{"id": MODEL, "name": "Daily model", "reasoning": True}])
    (agent_dir / "models.json").write_text(json.dumps(models))
    args = ["--provider", "test", "--model", MODEL]
    return start_pi_tui(
        args, project=tmp_path / "project", agent_dir=agent_dir, tmp_path=tmp_path, footer=MODEL
    )


def test_alt_up_says_how_many_queued_messages_came_back(agent_dir: Path, tmp_path: Path) -> None:
    slow = Scripted(text=" ".join(f"w{i}" for i in range(200)), event_delay=0.1)
    with ModelServer(slow) as server:
        pane = start(agent_dir, tmp_path, server)
        try:
            pane.type("count slowly")
            pane.press("Enter")
            pane.wait_for(lambda s: "w3" in s, "the slow answer streaming")
            pane.type("steer this way")
            pane.press("Enter")  # while the agent runs: queued as a steering message
            pane.wait_for(
                lambda s: editor_text(s) == "" and "steering: steer this way" in s, "the message in the queue"
            )
            pane.press("M-Up")
            screen = pane.wait_for(
                lambda s: s if "Restored 1 queued message to the editor." in " ".join(chat_lines(s)) else "",
                "the line saying the message came back",
            )
            assert editor_text(screen) == "steer this way", screen
            pane.press("Escape")
        finally:
            pane.kill()


def test_hidden_thinking_leaves_a_placeholder_line(agent_dir: Path, tmp_path: Path) -> None:
    reply = Scripted(thinking="Weighing the plum against the pear.", text="The pear, then.")
    with ModelServer(reply) as server:
        pane = start(agent_dir, tmp_path, server)
        try:
            pane.type("which fruit?")
            pane.press("Enter")
            pane.wait_for(
                lambda s: "The pear, then." in s and "Weighing the plum" in s, "the reply with its thinking"
            )
            pane.press("C-t")
            screen = pane.wait_for(
                lambda s: s if "Weighing the plum" not in s else "", "the thinking hidden by Ctrl+T"
            )
            lines = chat_lines(screen)
            question = next(i for i, line in enumerate(lines) if "which fruit?" in line)
            placeholder = [i for i, line in enumerate(lines) if line == "Thinking..."]
            answer = next(i for i, line in enumerate(lines) if "The pear, then." in line)
            assert len(placeholder) == 1 and question < placeholder[0] < answer, screen
            pane.press("C-t")
            pane.wait_for(
                lambda s: "Weighing the plum" in s and "Thinking..." not in s, "the thinking shown again"
            )
        finally:
            pane.kill()
