"""Print mode on a terminal: a model reply or error holding escape sequences reaches the
terminal as visible symbols (window title kept, screen not cleared, no clipboard write); a pipe
still gets the exact text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.model_server import HttpError, ModelServer, text_reply
from tests.support.tmux import TmuxPane

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
EVIL = "\x1b]0;PWN\x07\x1b]52;c;UFdORUQ=\x07\x1b[2J"


def test_reply_and_error_on_a_terminal_and_in_a_pipe(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(
        text_reply(f"answer {EVIL}end"),
        HttpError(400, message=f"bad {EVIL}request"),
        text_reply(f"piped {EVIL}end"),
    ) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        run = f"{SCRIPT} --no-session --model test/m -p"
        command = f"echo KEEP-ME; {run} one; {run} two"
        pane = TmuxPane.start(
            ["sh", "-c", command + "; sleep 30"], cwd=project, env={"PI_CODING_AGENT_DIR": str(agent_dir)}
        )
        try:
            pane.tmux("set-option", "-g", "set-clipboard", "on")
            title = pane.tmux("display-message", "-p", "-t", pane.session, "#{pane_title}").stdout
            screen = pane.wait_for(lambda s: "request" in s and s, "both runs", timeout=20)
            assert "KEEP-ME" in screen  # not cleared
            assert "answer ␛]0;PWN␇␛]52;c;UFdORUQ=␇␛[2Jend" in screen
            assert "bad ␛]0;PWN␇" in screen
            assert pane.tmux("display-message", "-p", "-t", pane.session, "#{pane_title}").stdout == title
            assert pane.tmux("list-buffers", check=False).stdout.strip() == ""
        finally:
            pane.kill()
        piped = subprocess.run(
            [SCRIPT, "--no-session", "--model", "test/m", "-p", "three"],
            capture_output=True,
            cwd=project,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
            timeout=60,
        )
        assert piped.stdout.decode() == f"piped {EVIL}end\n"  # a pipe gets the model's exact text
