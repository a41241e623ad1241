"""The status line quotes provider errors and queued prompts: their control characters are
shown, never sent to the terminal (a 503 body once retitled the window through the retry line)."""

from __future__ import annotations

import asyncio
import time

from textual.app import App, ComposeResult

from pi_tui.tui.widgets.status import StatusLine

EVIL = "\x1b]0;PWN-RETRY\x07\x1b[2Jgone"


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")


async def test_retry_reason_and_queued_prompts_are_drawn_as_symbols() -> None:
    app = _Host()
    async with app.run_test() as pilot:
        status = app.query_one(StatusLine)
        status.retry_text = f"Server error (HTTP 503): {EVIL}"
        status.retry_until = time.monotonic() + 30
        status.steering = (f"steer {EVIL}",)
        status.follow_ups = (f"later {EVIL}",)
        await pilot.pause()
        shown = str(status.render())
        assert "\x1b" not in shown and "\x07" not in shown
        assert shown.count("␛]0;PWN-RETRY␇␛[2Jgone") == 3


async def test_a_new_hint_outlives_the_timer_of_the_one_it_replaced() -> None:
    # CI saw Shift+Tab's "alpha does not support thinking" vanish at once: the 3 s timer of the
    # "Thinking level: high" hint shown just before cleared it
    app = _Host()
    async with app.run_test() as pilot:
        status = app.query_one(StatusLine)
        status.show_hint("Thinking level: high", 0.05)
        status.show_hint("alpha does not support thinking", 30)
        await asyncio.sleep(0.3)  # well past the first hint's time
        await pilot.pause()
        assert status.hint == "alpha does not support thinking"
        assert "alpha does not support thinking" in str(status.render())
        status.show_hint("gone soon", 0.05)
        while status.hint is not None:  # a hint's own timer still clears it
            await pilot.pause(0.02)
