"""A long branch is drawn before its context is built: the footer's token count and the
"left out of the context" problems arrive a moment later, from a thread, and are then right."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pi_tui.tui.session_view import BUILD_CONTEXT_AT_ONCE
from pi_tui.tui.transcript import AssistantItem, InfoItem, UserItem
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text
from tests.unit.test_odd_lines import HEADER, entry, reply, user, write


def long_session(project: Path, folder: Path, turns: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [entry("bad", None, user(42), second=0)]  # no message can hold it: left out, with a warning
    parent = "bad"
    for turn in range(turns):
        lines.append(entry(f"u{turn}", parent, user(f"question {turn}"), second=turn))
        lines.append(entry(f"a{turn}", f"u{turn}", reply(f"answer {turn}"), second=turn))
        parent = f"a{turn}"
    return write(folder / "long.jsonl", {**HEADER, "cwd": str(project)}, *lines)


async def test_the_footer_and_the_problems_follow_the_first_screen(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    turns = BUILD_CONTEXT_AT_ONCE // 2 + 50
    path = long_session(project, tmp_path / "sessions", turns)
    app = make_app(project, session=str(path), model="test/m")
    async with app.run_test(size=(110, 30)) as pilot:
        manager = app.agent.manager
        await wait_until(
            pilot,
            lambda: manager.context_is_built and "?/" not in screen_text(app).splitlines()[-1],
            "the context to be built and the footer to show its size",
            detail=lambda: screen_text(app).splitlines()[-1],
        )
        await pilot.pause()
        assert manager.context_is_built
        assert f"answer {turns - 1}" in screen_text(app)
        footer = screen_text(app)
        assert "?/" not in footer and "%/" in footer
        problems = [item for item in app.chat.items if isinstance(item, InfoItem) and item.level == "warning"]
        assert any("left out of the model's context" in item.text for item in problems)
    assert len(manager.build_session_context().messages) == 2 * turns


async def test_the_tail_is_drawn_before_the_session_is_loaded(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: ModelServer
) -> None:
    """With the full load held back, the newest turns are on screen from the file's tail alone;
    when the load comes, it draws the same end of the branch."""
    from pi_tui.start_options import StartOptions
    from pi_tui.tui.app import PiApp

    path = long_session(project, tmp_path / "sessions", 300)
    release = threading.Event()
    start_in_background = PiApp._start_in_background

    def held_back(app: PiApp) -> None:
        release.wait(10)
        start_in_background(app)

    monkeypatch.setattr(PiApp, "_start_in_background", held_back)
    options = StartOptions(cwd=str(project), session=str(path), model="test/m")
    app = PiApp(start_options=options, cwd=str(project))
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        assert app.agent is None
        preview = [item.text for item in app.chat.items if isinstance(item, UserItem | AssistantItem)]
        assert preview[-2:] == ["question 299", "answer 299"]
        assert "answer 299" in screen_text(app)
        release.set()
        await wait_until(
            pilot,
            lambda: app.agent is not None and app.status.activity is None,
            "the agent to be ready",
            detail=lambda: f"agent {app.agent}, status {app.status.activity!r}, exit code {app.return_code}",
        )
        await pilot.pause()
        loaded = [item.text for item in app.chat.items if isinstance(item, UserItem | AssistantItem)]
        assert loaded[-len(preview) :] == preview
        assert "answer 299" in screen_text(app)


async def test_a_short_session_always_shows_its_token_count(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    path = long_session(project, tmp_path / "sessions", 3)
    app = make_app(project, session=str(path), model="test/m")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        app.agent.set_thinking_level("off")  # an entry after the last build: the context is stale
        app.refresh_footer()

        def footer_with_a_size() -> str:
            line = screen_text(app).splitlines()[-1]
            return line if "%/" in line else ""

        footer = await wait_until(
            pilot,
            footer_with_a_size,
            "the footer to show the context's size",
            detail=lambda: screen_text(app).splitlines()[-1],
        )
        assert "?/" not in footer
