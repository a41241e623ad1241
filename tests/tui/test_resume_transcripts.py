"""/resume lists this folder's transcripts of other agents in their own section (issue 18)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, settle
from tests.tui.test_resume import SIZE, message, open_picker, titles
from tests.tui.test_resume import three as three  # the fixture: three sessions of the project

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "data" / "transcripts"


@pytest.fixture
def claude_home(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    folder = home / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    old = folder / "old.jsonl"
    shutil.copy(TRANSCRIPTS / "claude-code" / "ccl-v1.0.128-image.jsonl", old)
    os.utime(old, (1_700_000_000, 1_700_000_000))
    shutil.copy(TRANSCRIPTS / "claude-code" / "yoavf-pomodoro-v2.0.24.jsonl", folder / "new.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no Codex or Gemini chats
    return folder


@pytest.mark.usefixtures("three")
async def test_transcripts_follow_our_sessions_marked_by_agent(project: Path, claude_home: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        shown = titles(picker)
        assert shown[:3] == ["Deploy", "Why does the parser crash?", "cherry pick the fix"]
        assert shown[3].startswith("[Claude Code · live] Build a simple Pomodoro timer")  # newest first
        assert shown[4].startswith("[Claude Code] ") and "live" not in shown[4]
        assert len(shown) == 5
        # search finds them by their first prompt too
        await pilot.press(*"pomodoro")
        await pilot.pause()
        assert [title[:20] for title in titles(picker)] == ["[Claude Code · live]"]
        # another agent's file is never renamed or deleted from here
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert "only reads it" in message(picker)
        # Enter imports it and shows it, following
        await pilot.press("enter")
        await settle(pilot, app)
        await wait_until(pilot, lambda: app.following is not None, "the imported session to be followed")
        assert app.following.source == claude_home / "new.jsonl"
        manager = app.agent.manager
        assert manager.read_only and manager.get_session_name().endswith("(Claude Code)")
        assert SessionManager.open(manager.session_file, read_only=True).take_new_warnings() == []
