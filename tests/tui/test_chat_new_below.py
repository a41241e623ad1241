"""The chat's "New output below" line, in the real app (pilot): only new output raises it.

Older history mounted above while scrolled up, Ctrl+O (taller tool output, the header's key
list) and a theme's redraw change heights without anything new below: no line. An info line
added below raises it and the view stays where it was; PageDown to the end drops it and the chat
follows again; a prompt the user sends goes back to the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import wait_until
from tests.tui.conftest import every_kind_session, make_app, screen_text, settle
from tests.tui.test_snapshots_layout import chat_session

NOTICE = "New output below"


async def test_only_output_below_raises_the_line_and_the_end_drops_it(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    app = make_app(project, session=str(chat_session(project, tmp_path / "sessions", 60)))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await wait_until(pilot, lambda: chat.mounted_count > 0 and chat.max_scroll_y > 0, "the chat shown")
        await pilot.press("pageup")
        await wait_until(pilot, lambda: not chat.following, "PageUp to leave the end")
        first = chat._first
        await pilot.press("ctrl+home", "ctrl+home")
        await wait_until(pilot, lambda: chat._first < first, "older items mounted above")
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not chat.unseen and NOTICE not in screen_text(app)

        top = chat.scroll_y
        app.say("The background build finished.")
        await wait_until(pilot, lambda: NOTICE in screen_text(app), "the new-output line")
        assert chat.unseen and chat.scroll_y == top, "the view moved"
        assert "Ctrl+End to jump to it" in screen_text(app)

        for _ in range(200):  # PageDown to the end, however long the history got
            if chat.following:
                break
            await pilot.press("pagedown")
            await pilot.pause()
        assert chat.following and not chat.unseen
        await wait_until(pilot, lambda: NOTICE not in screen_text(app), "the line gone at the end")
        app.say("One more line.")
        await wait_until(pilot, lambda: "One more line." in screen_text(app), "new output followed")
        assert not chat.unseen


@pytest.mark.parametrize(
    ("sent", "answer"),
    [
        ("hello there", "echo: hello there"),
        ("/session", "Session"),
        ("!echo from the shell", "from the shell"),
    ],
)
async def test_whatever_is_sent_from_the_editor_goes_back_to_the_end(
    project: Path, tmp_path: Path, server: ModelServer, sent: str, answer: str
) -> None:
    """A prompt, a /command or a !command: its answer comes at the end, not below as "new output"."""
    app = make_app(
        project, provider="test", model="m", session=str(chat_session(project, tmp_path / "s", 30))
    )
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await wait_until(pilot, lambda: chat.max_scroll_y > 0, "the chat shown")
        await pilot.press("pageup", "pageup")
        await wait_until(pilot, lambda: not chat.following, "PageUp to leave the end")
        await pilot.press(*sent, "enter")
        await settle(pilot, app)
        await wait_until(pilot, lambda: answer in screen_text(app), "the answer on screen")
        assert chat.following and not chat.unseen and NOTICE not in screen_text(app)


async def test_ctrl_o_while_scrolled_up_is_not_new_output(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    app = make_app(project, session=str(every_kind_session(project, tmp_path / "sessions")))
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.chat
        await wait_until(pilot, lambda: chat.max_scroll_y > 0, "the chat shown")
        await pilot.press("pageup")
        await wait_until(pilot, lambda: not chat.following, "PageUp to leave the end")
        height = chat.virtual_size.height
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: chat.virtual_size.height > height, "the tool output expanded")
        await pilot.pause()
        assert not chat.unseen and NOTICE not in screen_text(app)


async def test_a_scroll_that_leaves_the_chat_at_its_end_keeps_following(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    """Textual lets go of the end on any scroll call, also one that does not move (a widget
    scrolled into view that already is): a reply growing after that is still followed."""
    words = " ".join(f"w{n:03d}" for n in range(300))
    server.queue(Scripted(text=words, event_delay=0.01))
    app = make_app(
        project, provider="test", model="m", session=str(chat_session(project, tmp_path / "s", 30))
    )
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: "w020" in screen_text(app), "the reply streaming")
        chat.scroll_to(y=chat.scroll_y, animate=False, immediate=True)  # releases, moves nothing
        await settle(pilot, app)
        await wait_until(pilot, lambda: "w299" in screen_text(app), "the reply's end on screen")
        assert not chat.unseen and NOTICE not in screen_text(app)
