"""Issue 31, point 8: a streamed reply costs a bounded amount of markdown work, whatever the rate
at which the provider sends deltas (benchmarks/tui_stream_cpu.py measures the CPU beside pi).

The real app (Textual pilot) streams a markdown reply from the loopback model server, a delta of
a few words every 2 ms as a fast provider sends them. Counted while it streams:

- redraws of the live tail: the deltas of a frame are drawn at once, so their number is bounded
  by the stream's duration in frames, not by its number of deltas;
- Textual markdown block widgets built: none (the tail is one Rich rendering, as the finished
  reply is; Textual's ``Markdown`` widget rebuilt, mounted and styled block widgets per update);
- the most text one redraw renders: settled blocks are frozen first, so a slow frame's thousands
  of characters are rendered once, not again with every later frame;
- Pygments' language guesses: none (a fence without a language, and every fence while only its
  backticks have arrived, is plain text, not a trial of every lexer Pygments has).

And the reply, once finished, reads exactly as the same session does when it is opened again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pygments.lexers
import pytest

from pi_tui.tui.transcript import AssistantItem
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (120, 40)
DELTAS = 600
DELTA_CHARS = 16
FRAME_SECONDS = 1 / 20
"""The live tail is redrawn at most 20 times a second (chat_items.MARKDOWN_FRAME_SECONDS)."""
FREEZE_AFTER = 600
"""Characters the live tail may hold (chat_items.FREEZE_AFTER)."""


def answer(total: int) -> str:
    """Markdown of exactly ``total`` characters: paragraphs, lists, a fence without a language,
    a Python fence, and a last line that is easy to find on screen."""
    parts = ["# Plan for the stream"]
    n = 0
    while sum(len(p) + 2 for p in parts) < total - 200:
        n += 1
        parts.append(f"Paragraph {n} says what the step does and why the order of the steps matters here.")
        parts.append("\n".join(f"- item {n}.{k}: keep the finished blocks as they are" for k in range(3)))
        if n % 3 == 1:
            parts.append(f"```\nplain output line {n}\nsecond line {n}\n```")
        elif n % 3 == 2:
            parts.append(f"```python\ndef step_{n}(value: int) -> int:\n    return value + {n}\n```")
    body = "\n\n".join(parts) + "\n\n"
    tail = "The stream ends here."
    filler = "x" * (total - len(body) - len(tail))
    return body + filler + tail


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts (the real methods still run): redraws of the live markdown chunk and the most text
    one drew, Textual markdown block widgets built, Pygments' language guesses."""
    from textual.widgets._markdown import MarkdownBlock

    from pi_tui.tui.widgets.chat_items import MarkdownChunk

    counts = {"draws": 0, "largest": 0, "blocks": 0, "guess": 0}
    real_draw, real_block, real_guess = (
        MarkdownChunk.draw,
        MarkdownBlock.__init__,
        pygments.lexers.guess_lexer,
    )

    def draw(self: MarkdownChunk, code_theme: str) -> None:
        if self.has_class("live"):
            counts["draws"] += 1
            counts["largest"] = max(counts["largest"], len(self.text))
        real_draw(self, code_theme)

    def block(self: MarkdownBlock, *args: Any, **kwargs: Any) -> None:
        counts["blocks"] += 1
        real_block(self, *args, **kwargs)

    def guess(text: str, **options: Any) -> Any:
        counts["guess"] += 1
        return real_guess(text, **options)

    monkeypatch.setattr(MarkdownChunk, "draw", draw)
    monkeypatch.setattr(MarkdownBlock, "__init__", block)
    monkeypatch.setattr(pygments.lexers, "guess_lexer", guess)
    return counts


async def test_fast_deltas_cost_one_redraw_per_frame(
    project: Path, server: ModelServer, counted: dict[str, int]
) -> None:
    text = answer(DELTAS * DELTA_CHARS)
    server.queue(Scripted(text=text, delta_size=DELTA_CHARS, event_delay=0.002))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"explain the plan")
        started = time.monotonic()
        await pilot.press("enter")
        await settle(pilot, app, timeout=60)
        elapsed = time.monotonic() - started
        await wait_until(pilot, lambda: "The stream ends here." in screen_text(app), "the reply's last words")
        live_screen = screen_text(app)
        (reply,) = [item for item in app.chat.items if isinstance(item, AssistantItem)]
        assert reply.text == text
        assert app.agent is not None
        session = app.agent.manager.session_file
    assert server.requests[0].events_sent > DELTAS  # every delta went out on its own SSE event
    draws, frames = counted["draws"], elapsed / FRAME_SECONDS
    assert 0 < draws <= frames + 2, f"{draws} live redraws for {DELTAS} deltas in {elapsed:.2f} s"
    assert counted["blocks"] == 0  # no Textual block widget was built, mounted and styled per update
    assert counted["guess"] == 0  # a bare fence is plain text, not a guess over every lexer
    # Settled blocks are frozen before the live chunk is redrawn: it never draws more than
    # FREEZE_AFTER characters, however much text a slow frame brought.
    assert counted["largest"] <= FREEZE_AFTER

    # The finished reply reads as the same session does when opened again.
    assert session is not None
    again = make_app(project, session=str(session))
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "The stream ends here." in screen_text(again), "the reopened reply")
        reopened = screen_text(again)
    assert _reply_rows(live_screen) == _reply_rows(reopened)


def _reply_rows(screen: str) -> list[str]:
    """The chat rows from the last fence's end to the reply's last words (the status line, the
    editor and the footer below them differ between a finished run and a reopened session)."""
    rows = screen.splitlines()
    end = next(i for i, row in enumerate(rows) if "The stream ends here." in row)
    start = max(0, end - 20)
    return rows[start : end + 1]


async def test_the_spinner_turns_without_laying_out_the_screen(
    project: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status line's spinner redraws 10 times a second while a reply is awaited or streams;
    a frame that keeps the line's height must not re-arrange the whole screen (the chat included)."""
    from textual._compositor import Compositor

    from pi_tui.tui.widgets.status import StatusLine

    counts = {"tick": 0, "reflow": 0, "reflow_at_tick_3": -1}
    real_tick, real_reflow = StatusLine._tick, Compositor.reflow

    def tick(self: StatusLine) -> None:
        counts["tick"] += 1
        if counts["tick"] == 3:
            counts["reflow_at_tick_3"] = counts["reflow"]
        real_tick(self)

    def reflow(self: Compositor, *args: Any, **kwargs: Any) -> Any:
        counts["reflow"] += 1
        return real_reflow(self, *args, **kwargs)

    monkeypatch.setattr(StatusLine, "_tick", tick)
    monkeypatch.setattr(Compositor, "reflow", reflow)
    server.queue(Scripted(text="Here it is.", first_byte_delay=30))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"slow one", "enter")
        await wait_until(pilot, lambda: counts["tick"] >= 13, "ten more spinner frames", timeout=30)
        await pilot.pause()
        assert "Working..." in screen_text(app)
        during = counts["reflow"] - counts["reflow_at_tick_3"]
        assert during <= 1, f"{during} layouts of the screen for 10 spinner frames"
        await pilot.press("escape")  # interrupts the wait
        await settle(pilot, app)


async def test_words_that_stay_on_the_line_need_no_layout(
    project: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a reader's pace (a word every 20 ms) most redraws of the live tail add words to the
    line it already has: they repaint the tail without laying out the screen again."""
    from textual._compositor import Compositor

    from pi_tui.tui.widgets.chat_items import MarkdownChunk

    counts = {"draws": 0, "reflow": 0, "first": 0, "last": 0}
    real_draw, real_reflow = MarkdownChunk.draw, Compositor.reflow

    def draw(self: MarkdownChunk, code_theme: str) -> None:
        if self.has_class("live"):
            counts["draws"] += 1
            counts["first" if counts["draws"] == 1 else "last"] = counts["reflow"]
        real_draw(self, code_theme)

    def reflow(self: Compositor, *args: Any, **kwargs: Any) -> Any:
        counts["reflow"] += 1
        return real_reflow(self, *args, **kwargs)

    monkeypatch.setattr(MarkdownChunk, "draw", draw)
    monkeypatch.setattr(Compositor, "reflow", reflow)
    text = "Short words on one line: " + "ok " * 40 + "done."  # 148 characters: two rows at 120
    server.queue(Scripted(text=text, event_delay=0.02))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"talk slowly", "enter")
        await settle(pilot, app, timeout=30)
        assert "done." in screen_text(app)
    during = counts["last"] - counts["first"]  # layouts between the first and the last redraw
    assert counts["draws"] >= 10  # the tail was redrawn as the words came
    assert during <= counts["draws"] // 2, f"{during} layouts for {counts['draws']} redraws of the tail"
