"""One widget per chat item kind.

A finished item is a single light widget (a ``Static`` of ready ``Content``); only the reply
being streamed holds a Textual ``Markdown`` widget, fed in coalesced chunks so the cost of a token
does not grow with the length of the reply. When the reply ends its markdown becomes one static
Rich rendering, so a long chat never accumulates thousands of block widgets.

A reply's markdown is made terminal-safe (:func:`~pi_tui.text_safety.for_terminal`) as *source*,
before either markdown renderer parses it: both pass an ``ESC`` inside a code span, a fenced
block or a link target straight through, and a link target would even land inside the OSC 8
sequence of a hyperlink. The items keep the reply's real text; only what is drawn changes. The
rule works character by character, so each streamed chunk is made safe on its own.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from pi_tui.text_safety import for_terminal
from pi_tui.tui import render
from pi_tui.tui.markdown_split import freeze_point, lead_in
from pi_tui.tui.transcript import (
    AssistantItem,
    BashItem,
    ChatItem,
    CustomItem,
    InfoItem,
    RuleNoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
)


class ItemView(Static):
    """A finished item drawn from its data; ``refresh_item`` redraws after the data changed."""

    expanded: reactive[bool] = reactive(False)
    KIND = ""
    """The CSS class of the item kind (``tool``, ``user`` ...)."""

    def __init__(self, item: ChatItem, *, expanded: bool = False, cwd: str | None = None) -> None:
        self.item = item
        self._state = self.state_class()
        # All classes at construction: changing classes later restyles the widget each time.
        super().__init__(classes=f"chat-item {self.KIND} {self._state}".rstrip())
        self.cwd = cwd
        self.set_reactive(ItemView.expanded, expanded)
        self.update(self.item_content())

    def item_content(self) -> Content:
        """What the widget shows for its item (not named ``content``: that is Static's property)."""
        raise NotImplementedError

    def state_class(self) -> str:
        """A class that follows the item's state (``-pending``, ``-error``), or ""."""
        return ""

    def refresh_item(self) -> None:
        state = self.state_class()
        if state != self._state:
            if self._state:
                self.remove_class(self._state)
            if state:
                self.add_class(state)
            self._state = state
        self.update(self.item_content())

    def watch_expanded(self) -> None:
        self.refresh_item()


class UserView(ItemView):
    KIND = "user"

    def item_content(self) -> Content:
        assert isinstance(self.item, UserItem)
        return render.user_content(self.item)


class ToolView(ItemView):
    KIND = "tool"

    def state_class(self) -> str:
        assert isinstance(self.item, ToolItem)
        return f"-{self.item.status}"

    def item_content(self) -> Content:
        assert isinstance(self.item, ToolItem)
        return render.tool_content(self.item, self.expanded, self.cwd)


class BashView(ItemView):
    KIND = "bash"

    def item_content(self) -> Content:
        assert isinstance(self.item, BashItem)
        return render.bash_content(self.item, self.expanded)


class SummaryView(ItemView):
    KIND = "summary"

    def item_content(self) -> Any:
        assert isinstance(self.item, SummaryItem)
        try:
            code_theme = getattr(self.app, "code_theme", "monokai")
        except Exception:  # built outside a running app (no active app yet)
            code_theme = "monokai"
        return render.summary_markdown(self.item, self.expanded, code_theme)


class CustomView(ItemView):
    KIND = "custom"

    def item_content(self) -> Content:
        assert isinstance(self.item, CustomItem)
        return render.custom_content(self.item, self.expanded)


class RuleNoticeView(ItemView):
    KIND = "rule-notice"

    def item_content(self) -> Content:
        assert isinstance(self.item, RuleNoticeItem)
        return render.notice_content(self.item, self.expanded)


class InfoView(ItemView):
    KIND = "info"

    def state_class(self) -> str:
        assert isinstance(self.item, InfoItem)
        return f"-{self.item.level}" + (" -fold" if self.item.fold else "")

    def item_content(self) -> Any:
        assert isinstance(self.item, InfoItem)
        if self.item.markdown:
            try:
                code_theme = getattr(self.app, "code_theme", "monokai")
            except Exception:  # built outside a running app (no active app yet)
                code_theme = "monokai"
            return render.info_markdown(self.item, code_theme)
        return render.info_content(self.item)


FREEZE_AFTER = 600
"""Characters the live tail may hold before its settled blocks are frozen: the tail is parsed and
rendered again on every frame, so it stays short (a few paragraphs)."""
KEEP_LIVE = 100
STREAM_CPU_SHARE = 0.4
"""Share of a core the event loop's thread may use while a reply streams before the live tail is
redrawn less often (see ``AssistantView._feed_markdown``)."""
SLOWEST_FRAME_SECONDS = 0.25
THINKING_REDRAW_SECONDS = 0.05
MARKDOWN_FRAME_SECONDS = 1 / 20
"""The live markdown is redrawn at most this often (20 times a second reads as smooth
streaming). Each redraw renders the tail, re-lays out the screen and repaints the scrolled chat:
a provider can send a delta every millisecond or two, and updating as often as the event loop
allowed kept a core busy for the whole stream. Text arriving within a frame is drawn at once."""


class RenderedOnce:
    """A Rich renderable whose output is kept for the options it was drawn with.

    Textual draws a ``Static`` holding a Rich renderable twice: once to measure its height, once
    for its lines. For a reply's markdown (Pygments-highlighted code included) that doubled the
    cost of every settled chunk while a reply streams in; the second draw now reuses the first's
    segments. The height a renderable is drawn for is left out of the key: Rich markdown does not
    depend on it."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable
        self._key: tuple[Any, ...] | None = None
        self._segments: list[Any] = []

    def __rich_console__(self, console: Any, options: Any) -> Any:
        key = (
            id(console),
            options.max_width,
            options.min_width,
            options.justify,
            options.overflow,
            options.no_wrap,
            options.highlight,
            options.markup,
            options.legacy_windows,
            options.ascii_only,
            options.encoding,
            options.is_terminal,
        )
        if key != self._key:
            self._segments = list(console.render(self.renderable, options.update(height=None)))
            self._key = key
        return self._segments

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.renderable)


class AfterLeadIn:
    """Rich markdown of ``lead_in`` + a blank line + the text, without the lead-in's own lines:
    the text drawn as it reads after the blocks before it (see ``markdown_split.lead_in``)."""

    def __init__(self, lead_in: Any, whole: Any) -> None:
        self.lead_in = lead_in
        self.whole = whole

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment

        skip = len(console.render_lines(self.lead_in, options, pad=False))
        for line in console.render_lines(self.whole, options, pad=False)[skip:]:
            yield from line
            yield Segment.line()


class MarkdownChunk(Static):
    """A stretch of a reply, rendered once with Rich (re-rendered on theme change). ``lead_in``
    (``markdown_split.lead_in`` of the reply's text before it) makes a chunk after the first read
    exactly as the same text does in one rendering of the whole reply."""

    def __init__(self, text: str, lead_in: str = "") -> None:
        super().__init__(classes="body")
        self.text = text
        self.lead_in = lead_in
        self._rows: int | None = None
        """Rows of the last drawing, when it was measured at the widget's width."""

    def draw(self, code_theme: str) -> None:
        from rich.markdown import Markdown as RichMarkdown  # markdown-it: imported on first use

        from pi_tui.secrets.display import mark_placeholders

        text = for_terminal(mark_placeholders(self.text))
        body: Any = RichMarkdown(text, code_theme=code_theme, hyperlinks=False)
        if self.lead_in:
            lead = RichMarkdown(self.lead_in, code_theme=code_theme, hyperlinks=False)
            body = AfterLeadIn(
                lead, RichMarkdown(f"{self.lead_in}\n\n{text}", code_theme=code_theme, hyperlinks=False)
            )
        rendered = RenderedOnce(body)
        rows = None
        width = self.content_size.width
        if self.is_mounted and width:
            # Rendered now as Textual will measure and paint it (the segments are kept): a redraw
            # that keeps the height (the next words on the same line) needs no layout of the screen.
            options = self.app.console_options.update_width(width).update(highlight=False)
            rows = sum(
                text.count("\n") for text, _, _ in rendered.__rich_console__(self.app.console, options)
            )
        self.update(rendered, layout=rows is None or rows != self._rows)
        self._rows = rows


class AssistantView(Vertical):
    """A reply: thinking (hidden with Ctrl+T), markdown text, and an error line if it failed.

    A live reply streams into a live :class:`MarkdownChunk`, redrawn with Rich at most once per
    :data:`MARKDOWN_FRAME_SECONDS`, so it looks while streaming exactly as it will when finished
    (and as a reopened session shows it). Whenever the live text grows past
    :data:`FREEZE_AFTER` characters, its settled blocks move into a static chunk of their own and
    the live chunk keeps the tail, so the work per frame stays the same from the first token to
    the twenty-thousandth. :meth:`finish` draws the rest once.

    The live part used to be Textual's ``Markdown`` widget: every update re-parsed the last block
    into new block widgets (each mounted, styled and composed) and laid them out, several times
    the CPU of one Rich rendering of the same tail.
    """

    show_thinking: reactive[bool] = reactive(True)

    def __init__(self, item: AssistantItem, *, live: bool = False, show_thinking: bool = True) -> None:
        super().__init__(classes="chat-item assistant")
        self.item = item
        self.live = live
        self.set_reactive(AssistantView.show_thinking, show_thinking)
        self._thinking = Static(classes="thinking")
        self._chunks: list[MarkdownChunk] = [] if live else [MarkdownChunk(item.text)]
        self._live: MarkdownChunk | None = None
        if live:
            self._live = MarkdownChunk("")
            self._live.add_class("live")  # before it is mounted: no restyle
        self._live_text = ""
        self._frozen = 0
        """Characters of ``item.text`` already in chunks."""
        self._error = Static(classes="error")
        self._pending: list[str] = [item.text] if live and item.text else []
        self._wake = asyncio.Event()
        self._pump: asyncio.Task[None] | None = None
        self._drawing = asyncio.Lock()
        self._thinking_timer: Any = None

    def compose(self) -> ComposeResult:
        yield self._thinking
        yield from self._chunks
        if self._live is not None:
            yield self._live
        yield self._error

    def on_mount(self) -> None:
        self._draw_thinking()
        self._draw_error()
        if self.live:
            self._pump = asyncio.create_task(self._feed_markdown())
            if self._pending:  # text that arrived before the view was mounted
                self._wake.set()
        else:
            self._draw_body()

    # --- streaming ---------------------------------------------------------------------------

    def append_text(self, delta: str) -> None:
        """Add streamed text; several deltas arriving between frames are appended as one."""
        self.item.text += delta
        if self.live:
            self._pending.append(delta)
            self._wake.set()

    def append_thinking(self, delta: str) -> None:
        """Thinking is redrawn at most every 50 ms: a long one must not cost O(n) per token."""
        self.item.thinking += delta
        if self._thinking_timer is None and self.is_mounted:
            self._thinking_timer = self.set_timer(THINKING_REDRAW_SECONDS, self._thinking_due)
        elif not self.is_mounted:
            self._draw_thinking()

    def _thinking_due(self) -> None:
        self._thinking_timer = None
        self._draw_thinking()

    async def _feed_markdown(self) -> None:
        """Redraw the live chunk with the text that arrived, at most once per
        :data:`MARKDOWN_FRAME_SECONDS`: the deltas of a frame are drawn together.

        While the event loop's thread is busier than :data:`STREAM_CPU_SHARE` (a fast provider:
        every redraw re-lays out and repaints the scrolled screen, tens of milliseconds at 120x40)
        the interval grows, up to :data:`SLOWEST_FRAME_SECONDS`, and shrinks back once the stream
        calms down: a reply that arrives faster than it can be read is drawn less often rather
        than keeping a core busy."""
        loop = asyncio.get_running_loop()
        next_update = 0.0
        interval = MARKDOWN_FRAME_SECONDS
        measured_at, cpu_at = loop.time(), time.thread_time()
        while True:
            await self._wake.wait()
            early = next_update - loop.time()
            if early > 0:
                await asyncio.sleep(early)  # deltas keep gathering in _pending meanwhile
            now, cpu = loop.time(), time.thread_time()
            share = (cpu - cpu_at) / max(now - measured_at, 1e-3)
            measured_at, cpu_at = now, cpu
            grow = share > STREAM_CPU_SHARE
            interval = (
                min(SLOWEST_FRAME_SECONDS, interval * 1.5)
                if grow
                else max(MARKDOWN_FRAME_SECONDS, interval / 1.5)
            )
            next_update = now + interval
            self._wake.clear()
            chunk = "".join(self._pending)
            self._pending.clear()
            if not chunk:
                continue
            self._live_text += chunk
            async with self._drawing:  # finish() waits for a frame under way, never cuts it
                with self.app.batch_update():  # the frozen chunk and the shorter tail show together
                    if len(self._live_text) > FREEZE_AFTER:
                        await self._freeze(KEEP_LIVE)
                    if self._live is not None:
                        self._live.text = self._live_text
                        self._live.draw(self.app.code_theme)  # type: ignore[attr-defined]

    async def _freeze(self, keep: int) -> None:
        """Move the settled blocks of the live text into a static chunk before the live chunk is
        redrawn with the rest (a slow frame can bring thousands of characters: they are drawn
        once, in the frozen chunk)."""
        point = freeze_point(self._live_text, keep)
        if point == 0:
            return
        settled, rest = self._live_text[:point], self._live_text[point:]
        chunk = MarkdownChunk(settled, lead_in(self.item.text[: self._frozen]))
        chunk.draw(self.app.code_theme)  # type: ignore[attr-defined]
        self._chunks.append(chunk)
        self._frozen += len(settled)
        self._live_text = rest
        if self._live is not None:
            self._live.lead_in = lead_in(self.item.text[: self._frozen])
        await self.mount(chunk, before=self._live)

    async def finish(self) -> None:
        """The reply ended: stop streaming and draw what was still live, once."""
        if self._pump is not None:
            async with self._drawing:
                self._pump.cancel()  # it waits for text or for the next frame: nothing half done
            self._pump = None
        if self.live:
            self.live = False
            text = self.item.text
            if not text.startswith("".join(chunk.text for chunk in self._chunks)):
                await self.remove_children(self._chunks)  # the final text differs: draw it whole
                self._chunks, self._frozen = [], 0
            rest = MarkdownChunk(text[self._frozen :], lead_in(text[: self._frozen]))
            rest.display = bool(rest.text.strip())
            rest.draw(self.app.code_theme)  # type: ignore[attr-defined]
            self._chunks.append(rest)
            with self.app.batch_update():
                await self.mount(rest, before=self._live)
                if self._live is not None:
                    await self._live.remove()
            self._live = None
            if not self._frozen:
                self._draw_body()  # a whole redraw only when nothing was frozen (it is one chunk)
        else:
            self._draw_body()
        self._draw_thinking()
        self._draw_error()

    # --- drawing -----------------------------------------------------------------------------

    def redraw(self) -> None:
        self._draw_thinking()
        self._draw_error()
        if not self.live:
            self._draw_body()

    def _draw_body(self) -> None:
        for chunk in self._chunks:
            chunk.display = bool(chunk.text.strip())
            if chunk.display:
                chunk.draw(self.app.code_theme)  # type: ignore[attr-defined]

    def _draw_thinking(self) -> None:
        thinking = self.item.thinking.strip()
        self._thinking.display = bool(thinking)
        if self._thinking.display:  # hidden (Ctrl+T): one line says a thinking block is there, as pi
            shown = for_terminal(thinking) if self.show_thinking else "Thinking..."
            self._thinking.update(Content.styled(shown, "$pi-thinking-text italic"))

    def _draw_error(self) -> None:
        """The line under a reply: its ``[label]`` and, if it failed, why."""
        item = self.item
        message = None
        if item.failed:
            message = (
                "Aborted" if item.stop_reason == "aborted" else f"Error: {item.error or 'request failed'}"
            )
            if item.stop_reason == "aborted" and item.error and item.error != "Request was aborted":
                message = f"Aborted: {item.error}"
        elif item.stop_reason == "length":
            message = "Stopped: the reply reached the model's output limit."
        parts = []
        if message is not None:
            style = "$pi-muted" if item.stop_reason == "aborted" else "$pi-error"
            parts.append(Content.styled(for_terminal(message), style))  # quotes a server's words
        if item.label:
            parts.append(Content.styled(f"[{for_terminal(item.label)}]", "$pi-accent bold"))
        self._error.display = bool(parts)
        if parts:
            self._error.update(Content("  ").join(parts))

    def watch_show_thinking(self) -> None:
        if self.is_mounted:
            self._draw_thinking()


VIEW_FOR: dict[type, type[ItemView]] = {
    UserItem: UserView,
    ToolItem: ToolView,
    BashItem: BashView,
    SummaryItem: SummaryView,
    CustomItem: CustomView,
    RuleNoticeItem: RuleNoticeView,
    InfoItem: InfoView,
}

EXPANDABLE = (ToolView, BashView, SummaryView, RuleNoticeView, CustomView)


def view_for(
    item: ChatItem, *, expanded: bool, show_thinking: bool, cwd: str | None = None, live: bool = False
) -> ItemView | AssistantView:
    """The widget that shows ``item`` (assistant replies stream when ``live``)."""
    if isinstance(item, AssistantItem):
        return AssistantView(item, live=live, show_thinking=show_thinking)
    return VIEW_FOR[type(item)](item, expanded=expanded, cwd=cwd)
