"""Keyboard scrolling of the chat in the installed pi-tui, in tmux: PageUp shows older turns,
Ctrl+Home keeps going back, Ctrl+End returns to the newest one."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.support.tmux import TmuxPane
from tests.tui.test_long_session_open import long_session

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
TURNS = 60


def test_page_keys_and_top_bottom_in_tmux(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    path = long_session(project, tmp_path / "sessions", TURNS)
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo", "--session", str(path)],
        cwd=project,
        env={"PI_CODING_AGENT_DIR": str(agent_dir)},
        width=100,
        height=30,
    )
    newest = f"answer {TURNS - 1}"
    try:
        pane.wait_for(lambda s: newest in s and "demo" in s.splitlines()[-1], "the newest turn", timeout=15)
        pane.press("PPage")
        screen = pane.wait_for(lambda s: newest not in s and s, "PageUp to leave the newest turn")
        assert f"question {TURNS - 5}" in screen or f"answer {TURNS - 6}" in screen, screen
        # Each press at the top of what is loaded loads the batch before it. Wait for each press
        # to show (a busy machine mounts slowly; presses are queued, never lost), not for a time.
        for _ in range(20):
            if "question 0" in screen:
                break
            before = screen
            pane.press("C-Home")
            screen = pane.wait_for(
                lambda s, before=before: s if s != before else None, "Ctrl+Home to move the chat", timeout=30
            )
        assert "question 0" in screen, screen
        pane.press("C-End")
        pane.wait_for(lambda s: newest in s, "Ctrl+End to come back to the newest turn")
    finally:
        pane.kill()
