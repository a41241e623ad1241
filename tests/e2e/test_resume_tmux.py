"""``pi-tui -r`` in the installed program, through a real terminal: forks made with /fork's
machinery are drawn under the session they came from, and Ctrl+N / Ctrl+P change the list."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.config.paths import session_dir_for_cwd
from tests.e2e.test_tui_tmux import MODEL, SCRIPT
from tests.support.model_server import ModelServer
from tests.support.requires import requires
from tests.support.tmux import TmuxPane
from tests.tui.test_resume import fork_of, make_session

pytestmark = requires("tmux", "pi-tui")


def test_resume_groups_forks_under_their_parent(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    parent = make_session(project, "hi there", "hello", hours_ago=1)
    fork_of(parent, "first fork")
    fork_of(parent, "second fork")
    make_session(project, "an unrelated question", "an answer", hours_ago=3)
    assert len(list(session_dir_for_cwd(str(project)).glob("*.jsonl"))) == 4
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=[{"id": MODEL}])))
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", MODEL, "-r"],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_CACHE_DIR": str(tmp_path / "cache")},
            width=110,
            height=30,
        )
        try:
            screen = pane.wait_for(lambda s: "└─ " in s and "hi there" in s and s, "the threaded list", 15)
            lines = screen.splitlines()
            top = next(i for i, line in enumerate(lines) if "hi there" in line)
            below = lines[top + 1 : top + 3]
            assert all(("├─ " in line or "└─ " in line) and "fork" in line for line in below), screen
            assert "an unrelated question" in screen
            pane.press("C-n")
            pane.wait_for(lambda s: "named only" in s and "hi there" not in s, "named sessions only")
            assert "first fork" in (pane.last_screen or "") and "second fork" in (pane.last_screen or "")
        finally:
            pane.kill()
