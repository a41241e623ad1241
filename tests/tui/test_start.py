"""The interactive mode paints first and starts the agent in the background."""

from __future__ import annotations

from pathlib import Path

from pi_tui.start_options import StartOptions
from pi_tui.tui.app import PiApp
from pi_tui.tui.transcript import AssistantItem
from tests.support.waiting import async_wait_until, wait_until
from tests.tui.conftest import screen_text, settle


async def wait_ready(pilot, app: PiApp) -> None:
    await wait_until(pilot, lambda: app.ready, "the app to be ready")
    await pilot.pause()


async def test_the_app_starts_the_agent_after_its_first_frame(project: Path) -> None:
    app = PiApp(start_options=StartOptions(cwd=str(project)), cwd=str(project))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        assert app.ready and app.started is not None
        assert "offline demo model" in screen_text(app)  # the start-up notice, after the chat was drawn
        await pilot.press(*"hello", "enter")
        await settle(pilot, app)
        assert any(isinstance(item, AssistantItem) for item in app.chat.items)


async def test_a_startup_error_ends_the_app_with_one_line(project: Path) -> None:
    app = PiApp(start_options=StartOptions(cwd=str(project), provider="nope"), cwd=str(project))
    async with app.run_test(size=(100, 30)):
        await async_wait_until(lambda: not app.is_running, "the startup error to end the app")
    assert app.return_code == 2
    assert not app.ready


async def test_messages_sent_while_the_agent_starts_go_in_order_once_it_is_ready(project: Path) -> None:
    """Enter before the agent exists used to put the text back ("send again in a moment")."""
    import threading

    gate = threading.Event()

    app = PiApp(start_options=StartOptions(cwd=str(project)), cwd=str(project))
    start_agent = app._start_in_background

    def slow_start() -> None:  # the agent's start held until the messages are typed
        gate.wait(30)
        start_agent()

    app._start_in_background = slow_start  # type: ignore[method-assign]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"first", "enter")
        await pilot.press(*"second", "enter")
        await pilot.press(*"half typed")
        assert not app.ready and app.early_submissions == ["first", "second"]
        gate.set()
        await wait_ready(pilot, app)
        await wait_until(
            pilot, lambda: len(app.agent.manager.build_session_context().messages) >= 4, "both sent"
        )
        await settle(pilot, app)
        asked = [
            m.content[0].text for m in app.agent.manager.build_session_context().messages if m.role == "user"
        ]
        assert asked == ["first", "second"]
        assert app.editor.text == "half typed"
