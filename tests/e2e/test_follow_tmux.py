"""Issue 18, acceptance 3: a Claude Code transcript that grows while pi-tui shows it is followed.

The installed pi-tui runs in tmux; ``pi-tui -r`` lists this folder's Claude Code transcript in
its own section (marked "live"); Enter opens it; a script then appends the rest of a real
transcript and the new turns appear without a key pressed. A prompt then continues the
conversation here, after a question.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.test_tui_tmux import MODEL, SCRIPT
from tests.support.model_server import ModelServer
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

SOURCE = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code"
TRANSCRIPT = SOURCE / "yoavf-pomodoro-v2.0.24.jsonl"


def test_a_growing_transcript_is_followed_live(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    claude = tmp_path / "claude"
    folder = claude / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    lines = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    live = folder / "4b1c2d3e.jsonl"
    live.write_bytes(b"".join(lines[:40]))
    last_words = json.loads(lines[-1])["message"]["content"]  # the transcript's last line
    assert "bash-stdout" in last_words
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=[{"id": MODEL}])))
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", MODEL, "-r"],
            cwd=project,
            env={
                "PI_CODING_AGENT_DIR": str(agent_dir),
                "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
                "CLAUDE_CONFIG_DIR": str(claude),
            },
            width=120,
            height=34,
        )
        try:
            pane.wait_for(
                lambda s: "[Claude Code · live] Build a simple Pomodoro" in s, "the transcript row", 15
            )
            pane.press("Enter")
            pane.wait_for(lambda s: "Following it: new turns appear" in s, "the followed transcript", 15)
            assert "bash-stdout" not in (pane.last_screen or "")
            with live.open("ab") as stream:  # the other agent keeps writing
                stream.write(b"".join(lines[40:]))
            pane.wait_for(lambda s: "<bash-stdout></bash-stdout>" in s, "the new turns, followed", 15)
            # a prompt continues the conversation here, after a question
            pane.type("one more thing")
            pane.press("Enter")
            pane.wait_for(lambda s: "Continue this Claude Code conversation here?" in s, "the question", 10)
            pane.press("y")
            pane.wait_for(lambda s: "echo: one more thing" in s, "the reply here", 15)
        finally:
            pane.kill()
    # the session holds the whole transcript, then the turn continued here
    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    text = session.read_text()
    assert "one more thing" in text and text.count('"customType":"import-source"') == 1
    assert live.read_bytes() == b"".join(lines)  # the source is never written
