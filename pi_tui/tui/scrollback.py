"""Regular mode (``tuiMode`` "regular"): the conversation goes into the terminal's own scrollback.

Textual's inline mode draws the whole app in a block under the shell's output and redraws that
block in place on every frame, so whatever scrolls inside it never reaches the terminal's history.
Here, as pi 1.x does, every chat item that is finished (a user message, a reply once it ended, a
tool card once its tool ran, a command's output, a line from pi-tui) is written *above* the block,
into the normal screen, where the terminal's own scrolling (the wheel, tmux copy mode) finds the
whole conversation; the block keeps only what is still live (the reply streaming, tools running),
the editor, the status line and the footer, and is as tall as that content. The start banner is
written first the same way. When the app leaves, whatever the chat still shows is written too
and the block is cleared: the terminal keeps the whole conversation, then the resume line.

How the lines get above the block: Textual draws an inline frame from the block's top-left
corner (it moves the cursor back there first) and always draws the whole block. The app's
``_display`` is wrapped so that, when lines are waiting, the frame starts by moving to that
corner, writing the lines over the old block (the terminal scrolls them up as usual) and
leaving the cursor at the start of the next line, which becomes the block's new top; the frame
then draws the block there and clears what is left of the old one below it. Lines and frame
are written back to back and flushed together (inside one synchronized update where the terminal
offers it), so the block never shows empty and nothing is drawn twice.

What is written is what the chat drew: each finished item's widget renders its own lines
(:meth:`textual.widget.Widget.render_lines`, the same styles, colours and padding, each
container's children laid over it at their places), turned into text with the app's console
(its colour system). Every piece of text is passed through
:func:`~pi_tui.text_safety.for_terminal` once more on the way out, so nothing from the model,
a tool or a file can drive the terminal even if a view forgot to.

Choices for what cannot be undone once in the scrollback:

- a new conversation shown in the chat (``/resume``, ``/new``, ``/fork``, a move in ``/tree``,
  an extension's change of the tree) writes a muted separator line, then that branch's items;
  items of a long branch that the chat had not mounted (before its first window) are named in one
  line instead of being written;
- a resize changes the width of what is written from then on; lines already written are the
  terminal's. They end in an erase rather than in spaces up to the edge, so a terminal that
  rewraps on a narrowing resize (tmux) keeps each on one line; the block itself is Textual's,
  and such a terminal can leave a copy of its old frame above the new one;
- an item changed after it was written (Ctrl+O expanding tool output, a label set later) is not
  written again: the terminal's history is append-only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual._compositor import InlineUpdate
from textual.geometry import Offset, Region
from textual.strip import Strip
from textual.widget import Widget

from pi_tui.text_safety import for_terminal
from pi_tui.tui.transcript import AssistantItem, BashItem, ChatItem, RuleNoticeItem, ToolItem
from pi_tui.tui.widgets.chat_items import AssistantView

POLL_SECONDS = 0.1
"""How often the chat is looked at for newly finished items (a scan of the live tail only)."""
CLEAR_TO_END = "\x1b[K"
"""Erase to the end of the line, in the current background colour."""
MUTED = "pi-muted"
"""The theme variable of the separator's colour."""


def start_scrollback(app: Any) -> Scrollback | None:
    """Start writing the conversation into the scrollback, once per app, when it runs inline."""
    if not getattr(app, "is_inline", False) or getattr(app, "_pi_scrollback", None) is not None:
        return None
    scrollback = Scrollback(app)
    app._pi_scrollback = scrollback
    return scrollback


class Scrollback:
    """Writes finished chat items above the inline block, in order, each exactly once."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.pending: list[str] = []
        """Terminal lines waiting for the next frame (written just before it)."""
        self.items: list[ChatItem] | None = None
        """The chat's item list being followed (the chat makes a new one for each branch shown)."""
        self.last: ChatItem | None = None
        """The last item written (or the item just before the first one to write); None: start."""
        self.printed: set[int] = set()
        """``id()`` of the items of :attr:`items` written (they stay alive in that list)."""
        self.branches = 0
        """Conversations shown so far: from the second on, a separator goes first."""
        self.due = False
        """A write is scheduled after the next refresh (the items' sizes are then current)."""
        self.lines_written = 0
        self.header_done = False
        """The banner went first (or there is none to write): items may follow."""
        self.hidden: list[Widget] = []
        """Views hidden for the lines waiting: those go out with the first frame without them
        (written with a frame that still had them, the item would show twice; and the frame the
        app leaves on the terminal at exit is its last layout)."""
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if (
                self.pending
                and isinstance(renderable, InlineUpdate)
                and not app._batch_count
                and not any(_still_laid_out(view) for view in self.hidden)
            ):
                self._write_pending()
                renderable.clear = True  # what is left of the old block under the new one goes
            original(screen, renderable)

        app._display = display
        leave = app.exit

        def exit(*args: Any, **kwargs: Any) -> None:
            self.write_everything()
            leave(*args, **kwargs)

        app.exit = exit
        chat = app.chat
        show = chat.show

        async def show_other(items: Any) -> None:
            if self.timer is not None:
                try:
                    self._queue_all_shown(force=True)
                except Exception as error:
                    self._give_up(error)
            await show(items)

        chat.show = show_other  # what the chat showed is written before another branch replaces it
        self.timer: Any = app.set_interval(POLL_SECONDS, self.poll)
        """None once given up (:meth:`_give_up`)."""
        app.call_after_refresh(self._print_header)  # laid out with what the start put in it

    # --- finding what is finished ------------------------------------------------------------

    def poll(self) -> None:
        """(Timer) ask for a write after the next refresh if finished items are waiting."""
        if self.due or not self.header_done or self.timer is None:
            return
        try:
            chat = self.app.chat
            if chat.items is not self.items or self._finished_run(chat):
                self.due = True
                self.app.call_after_refresh(self.write_finished)
        except Exception as error:
            self._give_up(error)

    def write_finished(self) -> None:
        """Render the finished items at the head of the live part, hide them, queue their lines."""
        self.due = False
        if self.timer is None:
            return
        try:
            self._write_finished()
        except Exception as error:
            self._give_up(error)

    def write_everything(self) -> None:
        """(The app is leaving) write at once all the chat still shows, live or not, and an
        empty line; the app then clears its block (``inline_no_clear`` is off in regular mode),
        so the terminal keeps the whole conversation and, under it, the resume line.

        Without this, a quit within a poll of a reply's end (or of the start) left that reply
        only in the block's last frame, where the chat's height had cut its top off."""
        if self.timer is None:
            return
        self.timer.stop()
        self.timer = None
        app = self.app
        try:
            self._queue_all_shown(force=True)
            self.pending.append(CLEAR_TO_END)  # the block is cleared from the line after it
            app.INLINE_PADDING = 0  # (Textual would step up one line into what was written)
            self._write_pending()
            app._end_update()
            app._driver.flush()
        except Exception:  # the terminal is gone (SIGHUP) or the app half down: leave anyway
            return

    def _queue_all_shown(self, *, force: bool = False) -> None:
        """Queue the lines of all the chat shows and has not written, finished or not (it is
        about to go: the app leaves, or the chat shows another conversation), and hide it.
        ``force``: the banner too, even if its last change is not laid out yet."""
        if not self.header_done:
            self._print_header(force=force)
        chat = self.app.chat
        width = self.app.size.width
        if chat.items is not self.items:
            self._new_branch(chat, width)
        background = Style(bgcolor=chat.rich_style.bgcolor)
        begin = self._index_after_last(chat.items)
        for item in chat.items[max(begin, chat._first) :]:
            view = chat.view_of(item)
            if view is None or id(item) in self.printed:
                continue
            if view.display and view.outer_size.height > 0:
                self.pending.extend(self._item_lines(view, width, background))
                self.hidden.append(view)
            view.display = False
            self.printed.add(id(item))
            self.last = item

    def _give_up(self, error: Exception) -> None:
        """A failure here must not end the session: what was written stays written, the chat
        keeps what comes next (it scrolls inside the block), and the user is told once."""
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
        self.app.say(
            f"Regular mode could not write to the terminal's scrollback ({type(error).__name__}: "
            f"{error}); the conversation stays in the chat.",
            "warning",
        )

    def _write_finished(self) -> None:
        chat = self.app.chat
        width = self.app.size.width
        if chat.items is not self.items:
            self._new_branch(chat, width)
        run = self._finished_run(chat)
        background = Style(bgcolor=chat.rich_style.bgcolor)
        for item, view in run:
            if view is not None and view.display:
                self.pending.extend(self._item_lines(view, width, background))
                view.display = False
                self.hidden.append(view)
            self.printed.add(id(item))
            self.last = item
        if self.pending:
            self.app.screen.refresh()

    def _new_branch(self, chat: Any, width: int) -> None:
        """The chat shows another conversation: a separator, and a line for unmounted items."""
        self.items = chat.items
        self.printed = set()
        first = chat._first
        self.last = chat.items[first - 1] if first > 0 else None
        if self.branches:
            self.pending.append(CLEAR_TO_END)
            self.pending.append(self._muted_line(" the conversation as it is shown now ", width))
        self.branches += 1
        if first:
            note = " earlier items of this branch are not written here "
            self.pending.append(self._muted_line(note, width))

    def _finished_run(self, chat: Any) -> list[tuple[ChatItem, Widget | None]]:
        """The finished items after the last one written, up to the first one still live, each
        with its view (laid out: it has a size); mounted older items before them are hidden."""
        items: list[ChatItem] = chat.items
        if self.items is None or items is not self.items:
            return []
        begin = self._index_after_last(items)
        for item in items[chat._first : begin]:  # older batches mounted by a scroll up
            view = chat.view_of(item)
            if view is not None and view.display and id(item) not in self.printed:
                view.display = False
        marker = chat._marker
        if marker.display:
            marker.display = False  # "scroll up to show them": not here, the terminal scrolls
        streaming = bool(getattr(getattr(self.app, "agent", None), "is_streaming", False))
        run: list[tuple[ChatItem, Widget | None]] = []
        for index in range(max(begin, chat._first), len(items)):
            item = items[index]
            if id(item) in self.printed:
                continue
            view = chat.view_of(item)
            if view is None or not _finished(item, view, index == len(items) - 1, streaming):
                break
            if view.display and not _laid_out(view):
                break
            run.append((item, view))
        return run

    def _index_after_last(self, items: list[ChatItem]) -> int:
        last = self.last
        if last is None:
            return 0
        for index in range(len(items) - 1, -1, -1):
            if items[index] is last:
                return index + 1
        return 0  # gone from the list: the printed set still keeps what was written

    # --- rendering ---------------------------------------------------------------------------

    def _print_header(self, force: bool = False) -> None:
        """The start banner goes first into the scrollback (it would sit over the live part)."""
        from pi_tui.tui.widgets.header import PiHeader

        header = self.app.query_one(PiHeader)
        if header.display and header.is_mounted and (force or _laid_out(header)):
            background = Style(bgcolor=header.rich_style.bgcolor)
            self.pending.extend(self._item_lines(header, self.app.size.width, background))
            header.display = False
            self.hidden.append(header)
            self.app.screen.refresh()
        elif header.display:
            self.app.set_timer(POLL_SECONDS, self._print_header)  # its new size is not laid out yet
            return
        self.header_done = True

    def _item_lines(self, view: Widget, width: int, background: Style) -> list[str]:
        """The view's lines as the chat drew them: its top margin, then each row with the
        chat's gutter on the left, the background filled to the terminal's width."""
        try:
            left = max(0, view.region.x)
        except Exception:  # not in the compositor's map (never the case for a laid-out view)
            left = self.app.chat.gutter.left
        lines = [self._row(Strip([]), width, background)] * view.styles.margin.top
        for strip in widget_strips(view):
            row = Strip.join([Strip([Segment(" " * left, background)]), _safe(strip)])
            lines.append(self._row(row, width, background))
        self.lines_written += len(lines)
        return lines

    def _row(self, row: Strip, width: int, background: Style) -> str:
        """One terminal line: the row without its trailing background cells, then the rest of
        the line filled with the background by an erase (background colour erase). Filled with
        spaces instead, every line would be as wide as the terminal, and a terminal that
        rewraps on a narrowing resize (tmux does) would break each into two."""
        console = self.app.console
        segments = _without_trailing(list(row.crop(0, width)), background.bgcolor)
        text = Strip(segments).render(console)
        if Strip(segments).cell_length >= width:
            return text  # the cursor waits at the edge: an erase there would eat the last cell
        codes = background._make_ansi_codes(console._color_system) if console._color_system else ""
        return f"{text}\x1b[{codes}m{CLEAR_TO_END}" if codes else text + CLEAR_TO_END

    def _muted_line(self, title: str, width: int) -> str:
        colour = self.app.get_css_variables().get(MUTED)
        style = Style.parse(colour) if colour else Style(dim=True)
        text = ("──" + title).ljust(width, "─")[:width]
        return Strip([Segment(text, style)]).render(self.app.console)

    def _write_pending(self) -> None:
        """(Before a frame) back to the block's corner, write the lines over the block (each
        fills the width): the block is then drawn under them by the frame that follows in the
        same synchronized update, which clears whatever of the old block is left below it.

        The block is not cleared first: a clear from the screen's top-left corner is a whole-
        screen clear to tmux, whose ``scroll-on-clear`` then pushes the old block into the
        history (a stale copy of the app in the scrollback)."""
        app = self.app
        _x, y = app._previous_cursor_position
        parts = [f"\x1b[{y}A" if y > 0 else "", "\r\x1b[0m"]
        parts.extend(f"{line}\x1b[0m\r\n" for line in self.pending)
        self.pending.clear()
        self.hidden.clear()
        app._previous_cursor_position = Offset(0, 0)
        app._begin_update()
        app._driver.write("".join(parts))


def widget_strips(widget: Widget) -> list[Strip]:
    """All the rows of ``widget`` as it draws them (whether scrolled into view or not): its own
    lines (background, padding, border, content), with each shown child's rows laid over them
    where the layout put that child."""
    width, height = widget.outer_size
    rows = list(widget.render_lines(Region(0, 0, width, height)))
    gutter = widget.gutter
    for child in _shown_children(widget.children):
        place = child.virtual_region
        dx, dy = gutter.left + place.x, gutter.top + place.y
        for offset, strip in enumerate(widget_strips(child)):
            y = dy + offset
            if 0 <= y < len(rows):
                base = rows[y]
                rows[y] = Strip.join([base.crop(0, dx), strip, base.crop(dx + strip.cell_length, width)])
    return rows


def _still_laid_out(view: Widget) -> bool:
    """The view is still in its screen's last layout (hidden since, not laid out again yet)."""
    try:
        return view in view.screen._compositor.widgets
    except Exception:  # removed from the app meanwhile: it is in no layout
        return False


def _shown_children(children: Iterable[Widget]) -> list[Widget]:
    return [child for child in children if child.display and child.is_mounted]


def _laid_out(view: Widget) -> bool:
    """The view and all it shows have their current size: laid out since their last change
    (Textual lays out on a timer, after the callbacks of a refresh) and not zero rows."""
    if view.outer_size.height <= 0 or view._layout_required or view.screen._layout_required:
        return False
    return all(
        child.outer_size.height > 0 and not child._layout_required
        for child in _shown_children(view.walk_children(Widget))
    )


def _finished(item: ChatItem, view: Widget, is_last: bool, streaming: bool) -> bool:
    """The item can no longer change on screen (as far as the live run is concerned)."""
    if isinstance(item, AssistantItem):
        return (
            item.stop_reason is not None
            and isinstance(view, AssistantView)
            and not view.live
            and view._live is None
        )
    if isinstance(item, ToolItem):
        return item.status != "pending"
    if isinstance(item, BashItem):
        return not item.running
    if isinstance(item, RuleNoticeItem):
        return not (is_last and streaming)  # the next rule's note may still merge into it
    return True


def _without_trailing(segments: list[Segment], bgcolor: Any) -> list[Segment]:
    """``segments`` without the blank cells at their end drawn in plain ``bgcolor``."""
    while segments:
        text, style, _control = segments[-1]
        plain = style is None or (
            style.bgcolor == bgcolor and not (style.underline or style.reverse or style.strike)
        )
        kept = text.rstrip(" ")
        if not plain or kept == text:
            break
        if kept:
            segments[-1] = Segment(kept, style)
            break
        segments.pop()
    return segments


def _safe(strip: Strip) -> Strip:
    """The strip with every text made safe for the terminal (and no control segments)."""
    return Strip([Segment(for_terminal(text), style) for text, style, control in strip if not control])
