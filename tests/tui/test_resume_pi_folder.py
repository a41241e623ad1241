"""``/resume`` lists the sessions of pi's folder (``~/.pi/agent``) beside ours, tags them "pi",
and opens them (issue 27)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_tui.config.paths import encode_cwd
from pi_tui.config.pi_folder import PI_FOLDER_ENV
from pi_tui.tui.transcript import InfoItem
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text
from tests.tui.test_resume import SIZE, highlight, make_session, open_picker, titles

PI15 = Path(__file__).resolve().parents[1] / "data" / "pi15-sessions" / "01-print-continue"


@pytest.fixture
def pi_session(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session pi 1.5.2 wrote, in pi's folder for ``project`` (HOME at the test's folder)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(PI_FOLDER_ENV)
    folder = home / ".pi" / "agent" / "sessions" / encode_cwd(str(project))
    folder.mkdir(parents=True)
    path = folder / "2026-11-26T14-08-27-576Z_01a2182f-adb6-70ed-a012-96055e935ddf.jsonl"
    text = (PI15 / "session.jsonl").read_text(encoding="utf-8")
    path.write_text(text.replace("/home/user/project", str(project)), encoding="utf-8")
    return path


async def test_pi_sessions_are_listed_tagged_and_opened(project: Path, pi_session: Path) -> None:
    make_session(project, "A session of ours", "Yes.", hours_ago=1)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        assert sorted(titles(picker)) == ["A session of ours", "Hello, who are you?"]
        rows = {
            line.strip("│ ").split("  ")[0]: line for line in screen_text(app).splitlines() if "msgs" in line
        }
        assert " pi " in rows["Hello, who are you?"].split("Hello, who are you?")[1]
        assert " pi " not in rows["A session of ours"].split("A session of ours")[1]
        await pilot.press("tab")  # every folder: pi's too
        await wait_until(pilot, lambda: picker.loaded and len(titles(picker)) == 2, "the all-folders list")
        await highlight(pilot, picker, "Hello, who are you?")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.agent.manager.session_file == pi_session.resolve(), "the pi session to open"
        )
        assert "echo: What is 2+2?" in screen_text(app)


async def test_continue_says_it_continues_pis_file(project: Path, pi_session: Path) -> None:
    ours = make_session(project, "An older session of ours", "Yes.", hours_ago=3)
    moment = pi_session.stat().st_mtime - 3600
    os.utime(ours, (moment, moment))  # -c goes by the files' modification times, as pi
    app = make_app(project, continue_recent=True)
    assert app.agent.manager.session_file == pi_session.resolve()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: any(isinstance(item, InfoItem) for item in app.chat.items), "the notice"
        )
        notices = [item.text for item in app.chat.items if isinstance(item, InfoItem)]
        assert f"Continuing {pi_session.resolve()} (pi's folder)" in notices
        assert "echo: What is 2+2?" in screen_text(app)
