"""A long branch is drawn before its context is built: the footer's token count and the
"left out of the context" problems arrive a moment later, from a thread, and are then right."""

from __future__ import annotations

from pathlib import Path

from pi_tui.tui.app import BUILD_CONTEXT_AT_ONCE
from pi_tui.tui.transcript import InfoItem
from tests.support.model_server import ModelServer
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
        for _ in range(500):
            await pilot.pause(0.01)
            if manager.context_is_built and "?/" not in screen_text(app).splitlines()[-1]:
                break
        await pilot.pause()
        assert manager.context_is_built
        assert f"answer {turns - 1}" in screen_text(app)
        footer = screen_text(app)
        assert "?/" not in footer and "%/" in footer
        problems = [item for item in app.chat.items if isinstance(item, InfoItem) and item.level == "warning"]
        assert any("left out of the model's context" in item.text for item in problems)
    assert len(manager.build_session_context().messages) == 2 * turns
