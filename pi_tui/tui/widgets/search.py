"""Transcript search (pi 1.x's ``tui.altScreen.search``): a one-line box above the editor.

Typing searches the whole chat (every item, mounted or not, through
:meth:`ChatView.search_matches`); the match nearest below the top of the view is selected first,
as in pi, and its item is scrolled to and marked. The search keys (``tui.altScreen.searchNext``,
``searchPrevious``, ``searchClose``, bound in keybindings.json like every other key) move between
matches, wrapping at either end, or close the box; the search key itself closes it too. The box
holds only what the user typed, so nothing from the transcript is drawn by it.
"""

from __future__ import annotations

from typing import Protocol

from textual import events
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import AwaitMount
from textual.widgets import Input, Static

from pi_tui.tui.widgets.chat import ChatView
from pi_tui.tui.widgets.line_input import LineInput


class KeyMap(Protocol):
    def action_for(self, key: str, scope: str | None = None) -> list[str]: ...


class SearchInput(LineInput):
    """The query box; the search keys are read before Input's own (Enter, Escape)."""

    class Action(Message):
        """A search key was pressed: ``search_next``, ``search_previous`` or ``search_close``."""

        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    def __init__(self, keymap: KeyMap, *, id: str | None = None) -> None:
        super().__init__(placeholder="search the chat", id=id)
        self.keymap = keymap

    def run_key(self, key: str) -> bool:
        """Post the search action ``key`` means; False when it means none."""
        actions = self.keymap.action_for(key, "search")
        if not actions:
            return False
        self.post_message(self.Action(actions[0]))
        return True

    async def _on_key(self, event: events.Key) -> None:
        if self.run_key(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)


class TranscriptSearch(Horizontal):
    """The box, the "3/12" counter, and the state of one search (its matches, the selected one)."""

    def __init__(self, chat: ChatView, keymap: KeyMap, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chat = chat
        self.keymap = keymap
        self.matches: list[tuple[int, int]] = []
        self.selected = -1
        self.display = False

    def _build(self) -> AwaitMount | None:
        """The box's widgets, made the first time it opens: most sessions never search, and an
        ``Input`` mounted at start costs the first frame its stylesheet and layout."""
        if self.children:
            return None
        return self.mount_all(
            [
                Static("Search:", classes="search-label"),
                SearchInput(self.keymap, id="search-input"),
                Static("", id="search-count"),
            ]
        )

    @property
    def input(self) -> SearchInput:
        return self.query_one(SearchInput)

    @property
    def active(self) -> bool:
        return bool(self.display)

    def open(self) -> None:
        mounting = self._build()
        self.display = True
        self.call_later(self._focus, mounting)

    async def _focus(self, mounting: AwaitMount | None) -> None:
        if mounting is not None:
            await mounting
        self.input.keymap = self.keymap
        self.input.focus()
        self._show_count()

    def close(self) -> None:
        """Hide the box and the mark; the chat stays where the search left it."""
        self.display = False
        self.matches, self.selected = [], -1
        self.chat.mark_search_hit(None)
        self.input.value = ""

    async def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.matches = self.chat.search_matches(event.value)
        if not self.matches:
            self.selected = -1
            self.chat.mark_search_hit(None)
            self._show_count()
            return
        first = self.chat.first_visible_index()
        self.selected = next((i for i, (index, _) in enumerate(self.matches) if index >= first), 0)
        await self._select()

    async def step(self, direction: int) -> None:
        """The next (1) or previous (-1) match, wrapping around."""
        if not self.matches:
            return
        self.selected = (self.selected + direction) % len(self.matches)
        await self._select()

    async def _select(self) -> None:
        await self.chat.reveal(self.matches[self.selected][0])
        self._show_count()

    def _show_count(self) -> None:
        count = self.query_one("#search-count", Static)
        if not self.input.value.strip():
            count.update("")
        elif not self.matches:
            count.update("no match")
        else:
            count.update(f"{self.selected + 1}/{len(self.matches)}")
