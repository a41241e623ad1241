"""The chat scrolls from the keyboard while the editor keeps the focus: PageUp / PageDown by a
page, Ctrl+Home / Ctrl+End to the top and the bottom; PageUp at the top mounts older history."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.tui.transcript import InfoItem
from pi_tui.tui.widgets.chat import FIRST_WINDOW
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text, settle
from tests.tui.test_long_session_open import long_session

TURNS = 60  # 120 chat items: more than the first window mounts


async def opened(pilot, app, last: str) -> None:
    await wait_until(
        pilot, lambda: app.agent is not None and last in screen_text(app), f"the session to open at {last!r}"
    )


async def test_page_keys_scroll_the_chat_and_reach_older_items(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    path = long_session(project, tmp_path / "sessions", TURNS)
    app = make_app(project, session=str(path), model="test/m")
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot, app, f"answer {TURNS - 1}")
        chat = app.chat
        assert app.focused is app.editor
        mounted = chat.mounted_count
        assert mounted <= FIRST_WINDOW + 5 and len(chat.items) > mounted
        bottom = chat.scroll_y
        assert bottom > 0 and bottom == chat.max_scroll_y

        await pilot.press("pageup")
        await pilot.pause()
        assert chat.scroll_y < bottom
        assert bottom - chat.scroll_y >= chat.scrollable_content_region.height - 1
        assert f"answer {TURNS - 1}" not in screen_text(app)

        await pilot.press("pagedown")
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y

        async def page_up_mounted_more() -> bool:
            await pilot.press("pageup")
            return chat.mounted_count > mounted

        for _ in range(60):  # each PageUp scrolls a page; at the top one mounts the previous batch
            if await page_up_mounted_more():
                break
        assert await wait_until(
            pilot, lambda: chat.mounted_count > mounted, "PageUp at the top to mount more"
        )
        await pilot.pause()
        assert chat.scroll_y > 0, "the view stays on what was shown; older items are above it"

        await pilot.press("ctrl+end")
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y
        assert f"answer {TURNS - 1}" in screen_text(app)

        # Ctrl+Home goes to the top of what is mounted; pressed there, the previous batch comes in.
        for _ in range(10):
            await pilot.press("ctrl+home")
            await pilot.pause()
            if chat.mounted_count == len(chat.items):
                break
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert chat.mounted_count == len(chat.items) and chat.scroll_y == 0
        assert "question 0" in screen_text(app)
        await pilot.press("ctrl+end")
        await pilot.pause()

        # At the bottom the chat follows new output again.
        await pilot.press(*"one more", "enter")
        await settle(pilot, app)
        assert chat.scroll_y == chat.max_scroll_y
        assert app.editor.text == ""


async def test_hotkeys_lists_the_scroll_keys_and_keybindings_json_rebinds_them(
    project: Path, agent_dir: Path
) -> None:
    # pi 1.x: the chat's page key is tui.altScreen.pageUp (tui.editor.pageUp pages the editor)
    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.altScreen.pageUp": "alt+u"}))
    app = make_app(project)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"/hotkeys")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        text = [item.text for item in app.chat.items if isinstance(item, InfoItem)][-1]
        assert "Alt+U " in text and "PageDown " in text and "Ctrl+Home " in text and "Ctrl+End " in text
        rows = text.splitlines()
        row = next(i for i, line in enumerate(rows) if "Scroll the chat up a page" in line)  # the chat's
        assert rows[row].strip().startswith("Alt+U ")
        assert "tui.altScreen.pageUp" in " ".join(rows[row : row + 3])  # its id may wrap under it
        assert not app.keys.problems


async def test_a_second_request_for_older_items_waits_for_the_batch_under_way(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    """Two requests in a row (Ctrl+Home pressed again before the first batch is mounted, as on a
    busy machine) mount two batches: the second never cancels the first."""
    path = long_session(project, tmp_path / "sessions", TURNS)
    app = make_app(project, session=str(path), model="test/m")
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot, app, f"answer {TURNS - 1}")
        chat = app.chat
        mounted = chat.mounted_count
        chat.scroll_to(y=0, animate=False, immediate=True)  # at the top: the first batch is asked for
        chat.page_up()  # and asked again before it is mounted
        await wait_until(
            pilot,
            lambda: chat.mounted_count >= min(len(chat.items), mounted + 80),
            "two batches mounted",
            detail=lambda: (chat.mounted_count, mounted),
        )


async def test_every_request_made_while_a_batch_mounts_brings_its_own_batch(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    """Three more presses while the first batch mounts (a slow machine) mean three more batches,
    not one: presses are counted, never merged."""
    path = long_session(project, tmp_path / "sessions", 4 * TURNS)  # batches to spare
    app = make_app(project, session=str(path), model="test/m")
    async with app.run_test(size=(100, 30)) as pilot:
        await opened(pilot, app, f"answer {4 * TURNS - 1}")
        chat = app.chat
        mounted = chat.mounted_count
        chat.scroll_to(y=0, animate=False, immediate=True)  # at the top: the first batch is asked for
        for _ in range(3):
            chat.page_up()
        wanted = mounted + 4 * 40
        assert wanted < len(chat.items)
        await wait_until(
            pilot,
            lambda: chat.mounted_count >= wanted,
            "four batches mounted",
            detail=lambda: (chat.mounted_count, mounted, len(chat.items)),
        )
