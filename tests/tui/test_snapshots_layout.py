"""SVG snapshots of the main screen's frame at the sizes people use most (80x24 and 120x40):
the header folded and expanded (Ctrl+O), the footer, and the chat with a few messages, also
scrolled up while new output arrived (the "New output below" line).

Everything drawn is fixed: the version in the header, the folder (``~/project``), no git
branch, no tmux notice, session timestamps written by the test; nothing on these screens reads
the clock while the agent is idle. Refresh with ``pytest tests/tui/test_snapshots_layout.py
--snapshot-update`` after an intended change, and look at the SVGs before committing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.messages import AssistantMessage, TextContent, Usage, UserMessage
from pi_tui.session import SessionManager
from pi_tui.tui.app import PiApp
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


@pytest.fixture(autouse=True)
def fixed_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's version and the environment's tmux out of the picture."""
    monkeypatch.setattr("pi_tui.tui.widgets.header.__version__", "0.0.0")
    monkeypatch.delenv("TMUX", raising=False)


def chat_session(project: Path, folder: Path, turns: int) -> Path:
    """A session of ``turns`` questions and answers, with fixed timestamps and usage."""
    manager = SessionManager.create(str(project), folder)
    manager.append_model_change("test", "m")
    usage = Usage(input=900, output=120, cache_read=0, cache_write=0, total_tokens=1020)
    for turn in range(1, turns + 1):
        manager.append_message(
            UserMessage(content=f"Question {turn}: what does step {turn} do?", timestamp=turn)
        )
        manager.append_message(
            AssistantMessage(
                content=[TextContent(text=f"Step {turn} reads the **input** and writes `out{turn}.txt`.")],
                provider="test",
                model="m",
                usage=usage,
                stop_reason="stop",
                timestamp=turn,
            )
        )
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


async def footer_ready(pilot: Any, app: PiApp) -> None:
    """The context is counted (the footer shows its size, not "?"), the screen caught up."""
    await wait_until(
        pilot,
        lambda: app.agent.manager.context_is_built and "?/" not in screen_text(app).splitlines()[-1],
        "the footer's context size",
    )
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_frame_with_a_short_chat(
    snap_compare, project: Path, tmp_path: Path, server: ModelServer, size
) -> None:
    app = make_app(project, session=str(chat_session(project, tmp_path / "sessions", 3)))

    async def run_before(pilot: Any) -> None:
        await footer_ready(pilot, app)

    assert snap_compare(app, run_before=run_before, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_frame_with_the_header_expanded(
    snap_compare, project: Path, tmp_path: Path, server: ModelServer, size
) -> None:
    app = make_app(project, session=str(chat_session(project, tmp_path / "sessions", 3)))

    async def run_before(pilot: Any) -> None:
        await footer_ready(pilot, app)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "Shift+Tab" in screen_text(app), "the expanded key list")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_chat_scrolled_up_while_new_output_arrives(
    snap_compare, project: Path, tmp_path: Path, server: ModelServer, size
) -> None:
    app = make_app(project, session=str(chat_session(project, tmp_path / "sessions", 12)))

    async def run_before(pilot: Any) -> None:
        await footer_ready(pilot, app)
        await pilot.press("pageup")
        await wait_until(pilot, lambda: not app.chat.following, "PageUp to leave the bottom")
        app.say("The background build finished.")
        await wait_until(pilot, lambda: "New output below" in screen_text(app), "the new-output line")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=size)
