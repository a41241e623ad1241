"""The /resume picker's key hints in the installed ``pi-tui`` at 80x24 (tmux): every hint is on
screen, whole. They were one line, cut by the picker's edge after "ctrl+r rename ·", so the
delete key was never shown; now they take as many lines as the picker's width needs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.test_tui_tmux import MODEL, SCRIPT
from tests.support.model_server import ModelServer
from tests.support.requires import requires
from tests.support.tmux import TmuxPane
from tests.tui.test_resume import make_session

pytestmark = requires("tmux", "pi-tui")
HINTS = ("enter open", "tab all folders", "ctrl+s sort", "ctrl+n named", "ctrl+p path", "ctrl+r rename")


def hint_lines(screen: str) -> list[str]:
    """The picker's lines that hold key hints, without its border."""
    boxed = [line for line in screen.splitlines() if line.lstrip().startswith("│")]
    inside = [re.sub(r"^\s*│\s?|\s?│\s*$", "", line) for line in boxed]
    return [line.strip() for line in inside if re.search(r"\b(enter|ctrl\+\w) \w", line)]


@pytest.mark.parametrize("width", [80, 120])
def test_every_resume_hint_is_shown_whole(agent_dir: Path, tmp_path: Path, width: int) -> None:
    project = tmp_path / "project"
    project.mkdir()
    make_session(project, "a question worth resuming", "an answer", hours_ago=1)
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=[{"id": MODEL}])))
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", MODEL, "-r"],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_CACHE_DIR": str(tmp_path / "cache")},
            width=width,
            height=24,
        )
        try:
            screen = pane.wait_for(
                lambda s: s if "a question worth resuming" in s and "ctrl+d delete" in s else "",
                "the picker with the delete key's hint",
                15,
            )
            lines = hint_lines(screen)
            shown = " · ".join(lines)
            for hint in HINTS:
                assert hint in shown, f"{hint!r} missing:\n{screen}"
            assert all(not line.endswith("·") and not line.startswith("·") for line in lines), screen
            assert len(lines) == 2, screen  # the picker is at most 100 columns wide
        finally:
            pane.kill()
