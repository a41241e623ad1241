"""The scrolling chat: a window onto the item list, anchored to the bottom.

Only the newest part of a long conversation is mounted; older items are mounted a batch at a
time when the user scrolls to the top, and the oldest mounted ones are dropped when the window
grows past :data:`MAX_MOUNTED`. The cost of typing, streaming or resizing therefore depends on
what is on screen, not on how long the session is.

The chat follows new output while it is scrolled to the bottom. Scrolled up, it stays where the
reader left it, and output arriving below (a new item, a streamed reply growing, a tool card
changing below the view) raises :attr:`ChatView.unseen`: a one-line notice pinned at the chat's
bottom edge says so and names the jump key, until the chat is back at the bottom (the jump key,
PageDown, the wheel) or the user sends a prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from pi_tui.tui.keybindings import display_key
from pi_tui.tui.transcript import AssistantItem, ChatItem, UserItem, searchable_text
from pi_tui.tui.widgets.chat_items import EXPANDABLE, AssistantView, ItemView, view_for

FIRST_WINDOW = 40
"""Items mounted when a conversation is shown (enough for several screens)."""
OLDER_BATCH = 40
MAX_MOUNTED = 200


class OlderMarker(Static):
    """The line at the top saying how much more history is above."""


class NewBelow(Static):
    """The line pinned at the chat's bottom edge while output the reader has not seen is below
    (shown by the chat's ``-unseen`` class, see app.tcss)."""


def new_below_text(jump_keys: Sequence[str]) -> Content:
    """What :class:`NewBelow` says: that there is more below and the key that goes there."""
    how = f"{display_key(jump_keys[0])} to jump to it" if jump_keys else "scroll down to read it"
    return Content.assemble(
        Content.styled("↓ New output below", "$pi-accent"), Content.styled(f" · {how}", "$pi-muted")
    )


class ChatView(VerticalScroll, can_focus=False):
    expanded: reactive[bool] = reactive(False)
    show_thinking: reactive[bool] = reactive(True)
    unseen: reactive[bool] = reactive(False)
    """Output arrived below while the chat was scrolled up (it did not move): the notice shows."""

    def __init__(
        self, cwd: str | None = None, *, jump_keys: Sequence[str] | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self._notice = NewBelow(
            new_below_text(("ctrl+end",) if jump_keys is None else jump_keys), classes="new-below"
        )
        self._following = True
        """At the bottom, following new output (False from the moment the user scrolls up)."""
        self._reflowing = False
        """Heights change for another reason than new output (older items mounted above, a
        display switch): growth seen until the next refresh does not raise :attr:`unseen`."""
        self.items: list[ChatItem] = []
        self._views: dict[int, Widget] = {}
        self._first = 0
        """Index in :attr:`items` of the first mounted item."""
        self._marker = OlderMarker(classes="older")
        self._loading_older = False
        """A batch of older items is being mounted (set when asked for, cleared when done)."""
        self._more_wanted = 0
        """Batches asked for while one was being mounted: each press brings its own batch."""

    def on_mount(self) -> None:
        self.mount(self._notice)
        self.anchor()

    # --- following the bottom, and the notice when not ---------------------------------------

    @property
    def following(self) -> bool:
        """Whether new output scrolls into view (the chat is at its bottom)."""
        return self._following

    def release_anchor(self) -> None:
        """The user scrolls (Textual calls this before moving): the chat stops following. A
        chat with nothing to scroll has nowhere to go: it keeps following."""
        if self.max_scroll_y <= 0:
            return
        super().release_anchor()
        self._following = False

    def _at_bottom_again(self) -> None:
        """Back at the bottom: follow again (Textual's anchor too: a PageDown at the bottom
        released it, and new output then stayed below)."""
        self._following = True
        self.unseen = False
        self.scroll_end(animate=False, immediate=True)

    def _after_move(self) -> None:
        """After a scroll by key: at the bottom, follow again."""
        if self.scroll_y >= self.max_scroll_y:
            self._at_bottom_again()

    def _output_below(self, view: Widget | None = None, *, bottom: float | None = None) -> None:
        """Output arrived (in ``view``, or a new item when None): unseen when the chat is scrolled
        up and the output is below what it shows. A chat still at its bottom (``bottom``: where
        that was before the output; by default, where it is now) follows instead: something else
        than the user scrolled it (a widget scrolled into view) without moving it away."""
        if self._following or self.unseen:
            return
        if self.scroll_y >= (self.max_scroll_y if bottom is None else bottom):
            self._at_bottom_again()
            return
        shown_to = self.scroll_y + self.scrollable_content_region.height
        if view is not None and view.is_mounted and view.virtual_region.bottom <= shown_to:
            return  # changed in full view: the reader sees it
        self.unseen = True

    def watch_unseen(self, unseen: bool) -> None:
        self.set_class(unseen, "-unseen")

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        """A streamed reply grows the chat without a new item: growth at the same width while
        scrolled up is output below (older items mounted above are told apart by
        :attr:`_reflowing`)."""
        if new.height > old.height and new.width == old.width and not self._reflowing:
            self._output_below(
                bottom=old.height - (self.container_size.height - self.scrollbar_size_horizontal)
            )

    def _reflow(self) -> None:
        """Heights are about to change for another reason than new output (until the next refresh)."""
        self._reflowing = True
        self.call_after_refresh(self._reflowed)

    def _reflowed(self) -> None:
        self._reflowing = False

    # --- building views ------------------------------------------------------------------------

    def _make(self, item: ChatItem, *, live: bool = False) -> Widget:
        view = view_for(
            item, expanded=self.expanded, show_thinking=self.show_thinking, cwd=self.cwd, live=live
        )
        self._views[id(item)] = view
        return view

    def view_of(self, item: ChatItem) -> Widget | None:
        return self._views.get(id(item))

    # --- replacing and adding ----------------------------------------------------------------------

    async def show(self, items: Iterable[ChatItem]) -> None:
        """Show a whole conversation (start, resume, new session), scrolled to its end."""
        self.items = list(items)
        self._views.clear()
        self._first = max(0, len(self.items) - FIRST_WINDOW)
        views = [self._make(item) for item in self.items[self._first :]]
        with self.app.batch_update():
            await self.remove_children([child for child in self.children if child is not self._notice])
            await self.mount(self._marker, *views)
            self._update_marker()
        self._at_bottom_again()
        self.anchor()

    def add(self, item: ChatItem, *, live: bool = False) -> Widget:
        """Append an item at the bottom (and follow it if the view is anchored).

        The mount is scheduled, not awaited, so agent events can be handled synchronously; a
        view accepts updates before it is mounted.
        """
        self.items.append(item)
        view = self._make(item, live=live)
        self.mount(view)
        if isinstance(item, UserItem):
            self._at_bottom_again()  # the user's own prompt: back to the end, where its reply comes
        else:
            self._output_below()
        if len(self._views) > MAX_MOUNTED:
            self.call_later(self._trim)
        return view

    def prepend_items(self, items: list[ChatItem]) -> None:
        """Older history arrived: it goes before everything, unmounted until scrolled to."""
        if not items:
            return
        self.items[0:0] = items
        self._first += len(items)
        self._update_marker()
        if self._first and self.scroll_y <= 0:
            self.request_older()

    def remove_item(self, item: ChatItem) -> None:
        view = self._views.pop(id(item), None)
        index = next((i for i, known in enumerate(self.items) if known is item), None)
        if index is not None:
            del self.items[index]
            if index < self._first:
                self._first -= 1
        if view is not None:
            view.remove()

    def refresh_item(self, item: ChatItem) -> None:
        """Draw ``item`` again: its output changed (a tool card's result, a !command's output)."""
        self._output_below(self._views.get(id(item)))
        self._redraw(item)

    def _redraw(self, item: ChatItem) -> None:
        view = self._views.get(id(item))
        if isinstance(view, ItemView):
            view.refresh_item()
        elif isinstance(view, AssistantView):
            view.redraw()

    def refresh_all(self) -> None:
        """Redraw every mounted item (after a theme change: finished replies are pre-rendered)."""
        self._reflow()
        for view in self._views.values():
            if isinstance(view, ItemView):
                view.refresh_item()
            elif isinstance(view, AssistantView):
                view.redraw()

    def set_label(self, entry_id: str, label: str | None) -> None:
        """A label was set or cleared: the entry's first item shows ``[label]``."""
        for item in self.items:
            if item.entry_id == entry_id:
                item.label = label
                self._redraw(item)
                return

    def last_item(self) -> ChatItem | None:
        return self.items[-1] if self.items else None

    def last_assistant_text(self) -> str | None:
        for item in reversed(self.items):
            if isinstance(item, AssistantItem) and item.text.strip():
                return item.text
        return None

    @property
    def mounted_count(self) -> int:
        return len(self._views)

    # --- the window over a long history ----------------------------------------------------------

    def _update_marker(self) -> None:
        hidden = self._first
        self._marker.display = hidden > 0
        if hidden:
            noun = "item" if hidden == 1 else "items"
            self._marker.update(
                Content.styled(f"↑ {hidden:,} earlier {noun} (scroll up to show them)", "$pi-muted")
            )

    async def _trim(self) -> None:
        """Drop the oldest mounted items once the window is too large (they stay in ``items``)."""
        excess = len(self._views) - MAX_MOUNTED
        if excess <= 0 or not self.is_anchored:
            return
        doomed = []
        for item in self.items[self._first : self._first + excess]:
            view = self._views.pop(id(item), None)
            if view is not None:
                doomed.append(view)
        self._first += excess
        await self.remove_children(doomed)
        self._update_marker()

    def request_older(self) -> None:
        """Mount the previous batch (in a worker). Asked again before that batch is mounted, the
        request waits its turn: a request never cancels the one under way (on a busy machine
        each Ctrl+Home cancelled the batch the press before had started, and none ever arrived),
        and none is lost (five quick presses bring five batches, however slow the mounting)."""
        if self._first == 0:
            self._more_wanted = 0  # everything is in: nothing older to wait for
            return
        if self._loading_older:
            self._more_wanted += 1
            return
        self._loading_older = True  # now, not in the worker: the next request must see it
        self.run_worker(self._mount_older(), group="older")

    async def _mount_older(self) -> None:
        """The worker of :meth:`request_older`: one batch above the first mounted item, the view
        kept still; then the batch asked for meanwhile, if any."""
        try:
            start = max(0, self._first - OLDER_BATCH)
            batch = self.items[start : self._first]
            views = [self._make(item) for item in batch]
            before = self.virtual_size.height
            with self.app.batch_update():
                await self.mount(*views, after=self._marker)
                self._reflow()
                self._first = start
                self._update_marker()
            self.call_after_refresh(self._keep_position, before, self.scroll_y)
        finally:
            self._loading_older = False
            if self._more_wanted:
                self._more_wanted -= 1
                self.call_after_refresh(self.request_older)  # after the view was kept still

    def _keep_position(self, height_before: int, y_before: float) -> None:
        added = self.virtual_size.height - height_before
        if added > 0:
            self.scroll_to(y=y_before + added, animate=False, immediate=True)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and old > 0 and self._first > 0:
            self.request_older()
        if not self._following and new > old and new >= self.max_scroll_y:
            self._at_bottom_again()  # the wheel (or a key) brought the reader down to the end

    # --- keyboard scrolling (the editor keeps the focus, so the app forwards these keys) ----------

    def page_up(self) -> None:
        """Up one page; at the top, mount the previous batch as the mouse wheel would."""
        if self.scroll_y <= 0:
            if self._first > 0:
                self.request_older()
            return
        self.scroll_to(y=self.scroll_y - self.scrollable_content_region.height, animate=False, immediate=True)

    def page_down(self) -> None:
        """Down one page; reaching the bottom follows new output again."""
        self.scroll_to(y=self.scroll_y + self.scrollable_content_region.height, animate=False, immediate=True)
        self._after_move()

    def half_page_up(self) -> None:
        """Up half a page (pi's ``tui.altScreen.halfPageUp``); at the top, earlier history."""
        self.scroll_lines(-max(1, self.scrollable_content_region.height // 2))

    def half_page_down(self) -> None:
        self.scroll_lines(max(1, self.scrollable_content_region.height // 2))

    def scroll_lines(self, lines: int) -> None:
        """Move by ``lines`` (negative: up); up from the top mounts the previous batch."""
        if lines < 0 and self.scroll_y <= 0:
            if self._first > 0:
                self.request_older()
            return
        self.scroll_to(y=max(0, self.scroll_y + lines), animate=False, immediate=True)
        self._after_move()

    def prompt_rows(self) -> list[int]:
        """The rows (in the scrolled content) where each mounted prompt you sent starts: pi's
        prompt marks, which ``tui.altScreen.previousPrompt``/``nextPrompt`` jump between."""
        rows = []
        for item in self.items[self._first :]:
            view = self._views.get(id(item))
            if isinstance(item, UserItem) and view is not None and view.is_mounted:
                rows.append(view.virtual_region.y)
        return rows

    def jump_to_prompt(self, direction: int) -> bool:
        """Scroll so the previous (``direction`` -1) or next (1) prompt starts the view, as pi
        does; going back past the first mounted prompt mounts the batch before it. False when
        there is no prompt that way."""
        top = round(self.scroll_y)
        rows = self.prompt_rows()
        if direction < 0:
            before = [row for row in rows if row < top]
            if not before:
                if self._first > 0:
                    self.request_older()
                    return True
                return False
            target = before[-1]
        else:
            after = [row for row in rows if row > top]
            if not after or top >= self.max_scroll_y:
                return False
            target = after[0]
        self.scroll_to(y=target, animate=False, immediate=True)
        self._after_move()
        return True

    # --- transcript search ------------------------------------------------------------------------

    def search_matches(self, query: str) -> list[tuple[int, int]]:
        """Every place ``query`` occurs, case-insensitively, as (item index, occurrence within
        that item), from the oldest item to the newest: whole history, mounted or not."""
        wanted = query.strip().casefold()
        if not wanted:
            return []
        found: list[tuple[int, int]] = []
        for index, item in enumerate(self.items):
            text = searchable_text(item, show_thinking=self.show_thinking).casefold()
            found.extend((index, occurrence) for occurrence in range(text.count(wanted)))
        return found

    def first_visible_index(self) -> int:
        """The index of the first item whose view reaches into the visible part of the chat."""
        top = self.scroll_y
        for index in range(self._first, len(self.items)):
            view = self._views.get(id(self.items[index]))
            if view is not None and view.is_mounted and view.virtual_region.bottom > top:
                return index
        return max(0, len(self.items) - 1)

    async def reveal(self, index: int) -> Widget | None:
        """Bring item ``index`` on screen (its view's top at the top of the chat, as far as the
        chat scrolls), mounting every older item down to it first when it is not mounted yet."""
        if not 0 <= index < len(self.items):
            return None
        if index < self._first:
            views = [self._make(item) for item in self.items[index : self._first]]
            with self.app.batch_update():
                await self.mount(*views, after=self._marker)
                self._reflow()
                self._first = index
                self._update_marker()
        view = self._views.get(id(self.items[index]))
        if view is None:
            return None
        self.mark_search_hit(view)
        self.call_after_refresh(
            lambda: self.scroll_to(y=view.virtual_region.y, animate=False, immediate=True)
        )
        return view

    def show_from_top(self, view: Widget) -> None:
        """Scroll so a view taller than the chat starts at its top (a long command output is
        read from its beginning); a shorter one is left to the usual follow-the-end."""
        if view.is_mounted and view.outer_size.height > self.scrollable_content_region.height:
            self.scroll_to(y=view.virtual_region.y, animate=False, immediate=True)

    def mark_search_hit(self, view: Widget | None) -> None:
        """The item holding the current match is marked (class ``-search-hit``); None: none is."""
        for other in self.query(".-search-hit"):
            if other is not view:
                other.remove_class("-search-hit")
        if view is not None:
            view.add_class("-search-hit")

    def to_top(self) -> None:
        """To the top of the mounted window; when it is already there, one older batch comes in."""
        if self.scroll_y <= 0:
            self.page_up()
        else:
            self.scroll_to(y=0, animate=False, immediate=True)

    def to_bottom(self) -> None:
        """To the newest item, following new output again."""
        self._at_bottom_again()

    # --- display switches --------------------------------------------------------------------------

    def watch_expanded(self, expanded: bool) -> None:
        self._reflow()
        for view in self._views.values():
            if isinstance(view, EXPANDABLE):
                view.expanded = expanded

    def watch_show_thinking(self, show: bool) -> None:
        self._reflow()
        for view in self._views.values():
            if isinstance(view, AssistantView):
                view.show_thinking = show
