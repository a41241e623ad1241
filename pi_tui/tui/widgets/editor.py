"""The prompt editor: a multi-line TextArea that submits on Enter.

Enter submits; Shift+Enter, Alt+Enter and Ctrl+J add a newline (Alt+Enter queues a follow-up
while the agent runs); Up/Down walk the prompt history from the first/last line, and pi 1.x's
``tui.editor.historyPrevious``/``historyNext`` keys walk it from anywhere; Tab completes
``/commands`` and ``@paths`` through a small menu above the editor. A large paste becomes a
``[paste #1 +120 lines]`` marker so the editor stays readable, and is expanded on submit.

The editor decides nothing about the agent: it posts messages and the app acts on them.

Text can reach the editor from outside: the prompt history holds a resumed session's messages,
/tree and /branch put a message back, a paste may carry anything. ``TextArea`` draws ``ESC`` as it
is, so every text going in (:meth:`PromptEditor.load_text`, :meth:`PromptEditor.edit`) gets
:func:`~pi_tui.text_safety.for_terminal` first: the editor holds, shows and sends the visible
symbols, never a live escape sequence. A large paste kept behind a marker is not shown, and
is sent as pasted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rich.cells import cell_len
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Document, Edit, EditResult

from pi_tui.text_safety import for_terminal
from pi_tui.tui.completion import Candidate, Completion

PASTE_MARKER_LINES = 10
PASTE_MARKER_CHARS = 1000
_MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")

KILL_RING_SIZE = 30
"""Deleted texts kept for Ctrl+Y / Alt+Y."""


class KeyMap(Protocol):
    def action_for(self, key: str, scope: str | None = None) -> list[str]: ...


def _default_keymap() -> KeyMap:
    from pi_tui.tui.keybindings import KeyBindingsLoad

    return KeyBindingsLoad()


Completer = Callable[[str, str, bool], Completion | None]
"""(line before the cursor, whole text, explicit Tab) -> candidates."""


def _candidate_line(candidate: Candidate, column: int = 0) -> Content:
    """A menu row: ``@`` candidates are file names, which may hold anything (brackets that would
    read as markup, escape sequences), so the row is plain content made terminal-safe.
    Descriptions start at ``column``, so they line up under each other (as pi's list)."""
    shown = for_terminal(candidate.display)
    line = Content(shown)
    if candidate.description:
        pad = " " * max(2, column - cell_len(shown))
        line = Content.assemble(line, pad, Content.styled(for_terminal(candidate.description), "dim"))
    return line


class CompletionMenu(OptionList, can_focus=False):
    """The candidates under discussion; the editor keeps the focus and drives it."""

    def show(self, completion: Completion) -> None:
        self.clear_options()
        column = max((cell_len(for_terminal(c.display)) for c in completion.candidates), default=0) + 2
        self.add_options(Option(_candidate_line(c, column)) for c in completion.candidates)
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.display = False
        self.clear_options()


class PromptEditor(TextArea, inherit_bindings=False):
    """TextArea's own keys (Ctrl+Z undo, Ctrl+Y redo, Ctrl+V paste...) are left out: every
    editing key is one of pi's actions in the key map, so keybindings.json decides them all."""

    BINDINGS = [
        Binding("shift+left", "cursor_left(True)", show=False),
        Binding("shift+right", "cursor_right(True)", show=False),
        Binding("shift+up", "cursor_up(True)", show=False),
        Binding("shift+down", "cursor_down(True)", show=False),
        Binding("shift+home", "cursor_line_start(True)", show=False),
        Binding("shift+end", "cursor_line_end(True)", show=False),
    ]

    @dataclass
    class Submitted(Message):
        text: str
        follow_up: bool = False

    class EscapePressed(Message):
        """Escape with no menu open (abort while running; twice on an empty editor: /tree)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.prompt_history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self.completer: Completer | None = None
        self.menu: CompletionMenu | None = None
        self._completion: Completion | None = None
        self._menu_moved = False
        """The user moved in the open menu (Up/Down): only then does Enter take its row."""
        self.agent_running = False
        self.keymap: KeyMap = _default_keymap()
        self._kill_ring: list[str] = []
        self._last_action = ""
        """The previous key action: kills in a row join, Alt+Y only follows a yank."""
        self._yanked: tuple[tuple[int, int], tuple[int, int]] | None = None
        self._jump: int = 0
        """1 or -1 after a jump key: the next character typed is the target."""
        self._pastes: dict[int, str] = {}
        self._paste_counter = 0

    # --- what goes in ------------------------------------------------------------------------------

    def load_text(self, text: str) -> None:
        super().load_text(for_terminal(text))

    def edit(self, edit: Edit) -> EditResult:
        edit.text = for_terminal(edit.text)
        return super().edit(edit)

    # --- submitting ------------------------------------------------------------------------------

    def expanded_text(self) -> str:
        """The text with paste markers replaced by what was pasted."""

        def expand(match: re.Match[str]) -> str:
            return self._pastes.get(int(match.group(1)), match.group(0))

        return _MARKER.sub(expand, self.text)

    def submit(self, *, follow_up: bool = False) -> None:
        text = self.expanded_text()
        if not text.strip():
            return
        self.remember(self.text)
        self.clear()
        self._pastes.clear()
        self.post_message(self.Submitted(text, follow_up))

    def remember(self, text: str) -> None:
        if text.strip() and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
        self._history_index = None

    def action_newline(self) -> None:
        self.insert("\n")

    # --- keys ------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        jump, self._jump = self._jump, 0
        if jump and event.character and event.is_printable:
            self._jump_to(event.character, jump)
            handled = True
        elif self._completion is not None and key == "enter" and not self._menu_moved:
            # Keys typed in a burst reach us before the menu has caught up with them; Enter runs
            # exactly what the editor holds ("/thinking high" lost its argument to a stale row).
            self._close_menu()
            self.submit()
            handled = True
        elif self._completion is not None and key in ("up", "down", "tab", "enter", "escape"):
            self._menu_key(key)
            handled = True
        elif key == "ctrl+enter":
            self.insert("\n")
            handled = True
        else:
            handled = self.run_key(key)
        if handled:
            event.stop()
            event.prevent_default()
            return
        self._last_action = ""
        await super()._on_key(event)

    def run_key(self, key: str) -> bool:
        """Do what ``key`` means in the editor (pi's ``tui.editor.*`` / ``tui.input.*`` actions);
        False when it means nothing here, so the text area types it."""
        actions = self.keymap.action_for(key, "editor")
        actions.sort(key=lambda action: action != "follow_up")  # Alt+Enter: a follow-up first
        for action in actions:
            if action == "follow_up" and not self.agent_running:
                continue  # Alt+Enter is a new line while nothing runs
            if self._perform(action):
                self._last_action = action
                return True
        return False

    def _perform(self, action: str) -> bool:
        simple: dict[str, Callable[[], object]] = {
            "submit": self.submit,
            "follow_up": lambda: self.submit(follow_up=True),
            "newline": lambda: self.insert("\n"),
            "abort": lambda: self.post_message(self.EscapePressed()),
            "complete": lambda: self._complete(explicit=True),
            "cursor_left": self.action_cursor_left,
            "cursor_right": self.action_cursor_right,
            "word_left": self.action_cursor_word_left,
            "word_right": self.action_cursor_word_right,
            "line_start": self.action_cursor_line_start,
            "line_end": self.action_cursor_line_end,
            "delete_backward": self.action_delete_left,
            "delete_forward": self.action_delete_right,
            "undo": self.action_undo,
            "editor_page_up": self.action_cursor_page_up,
            "editor_page_down": self.action_cursor_page_down,
            "yank": self._yank,
            "yank_pop": self._yank_pop,
        }
        if action in simple:
            simple[action]()
            return True
        if action == "history_prev":
            if self.cursor_location[0] == 0 and self._history_allowed():
                self._history_step(-1)
            else:
                self.action_cursor_up()
            return True
        if action == "history_next":
            if self.cursor_location[0] == self.document.line_count - 1 and self._history_index is not None:
                self._history_step(1)
            else:
                self.action_cursor_down()
            return True
        if action in ("recall_previous", "recall_next"):
            # pi 1.x's dedicated history keys: the history whatever the cursor's line
            if action == "recall_previous" and self.prompt_history:
                self._history_step(-1)
            elif action == "recall_next" and self._history_index is not None:
                self._history_step(1)
            return True
        if action in ("jump_forward", "jump_backward"):
            self._jump = 1 if action == "jump_forward" else -1
            return True
        kill = self._kill_range(action)
        if kill is None:
            return False
        self._kill(*kill, backward=action in ("delete_word_backward", "delete_to_line_start"))
        return True

    # --- deleting and yanking (pi's kill ring) ----------------------------------------------------

    def _kill_range(self, action: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
        row, column = self.cursor_location
        line = self.document.get_line(row)
        if action == "delete_word_backward":
            return self.get_cursor_word_left_location(), (row, column)
        if action == "delete_word_forward":
            return (row, column), self.get_cursor_word_right_location()
        if action == "delete_to_line_start":
            if column == 0 and row:  # at a line's start: join it to the line above
                return (row - 1, len(self.document.get_line(row - 1))), (row, column)
            return (row, 0), (row, column)
        if action == "delete_to_line_end":
            at_end = column >= len(line) and row < self.document.line_count - 1
            return (row, column), ((row + 1, 0) if at_end else (row, len(line)))
        return None

    def _kill(self, start: tuple[int, int], end: tuple[int, int], *, backward: bool) -> None:
        text = self.get_text_range(start, end)
        if not text:
            return
        self.delete(start, end)
        joining = self._last_action.startswith("delete_") and self._kill_ring
        if joining:
            self._kill_ring[-1] = text + self._kill_ring[-1] if backward else self._kill_ring[-1] + text
        else:
            self._kill_ring.append(text)
            del self._kill_ring[:-KILL_RING_SIZE]

    def _yank(self) -> None:
        if not self._kill_ring:
            return
        start = self.cursor_location
        result = self.insert(self._kill_ring[-1])
        self._yanked = (start, result.end_location)

    def _yank_pop(self) -> None:
        if self._last_action not in ("yank", "yank_pop") or self._yanked is None or len(self._kill_ring) < 2:
            return
        self._kill_ring.insert(0, self._kill_ring.pop())
        start, end = self._yanked
        result = self.replace(self._kill_ring[-1], start, end)
        self._yanked = (start, result.end_location)

    def _jump_to(self, character: str, direction: int) -> None:
        """Move to the next (``direction`` 1) or previous (-1) ``character`` after a jump key."""
        text = self.text
        document = self.document
        assert isinstance(document, Document)  # no syntax highlighting here: always a Document
        offset = document.get_index_from_location(self.cursor_location)
        found = text.find(character, offset + 1) if direction > 0 else text.rfind(character, 0, offset)
        if found >= 0:
            self.move_cursor(document.get_location_from_index(found))

    def _history_allowed(self) -> bool:
        return bool(self.prompt_history) and (not self.text or self._history_index is not None)

    def _history_step(self, step: int) -> None:
        if self._history_index is None:
            if step > 0:
                return
            self._draft = self.text
            self._history_index = len(self.prompt_history)
        index = self._history_index + step
        if index >= len(self.prompt_history):
            self._history_index = None
            self._set_text(self._draft)
            return
        self._history_index = max(0, index)
        self._set_text(self.prompt_history[self._history_index])

    def _set_text(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    # --- paste -----------------------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + 1
        if lines > PASTE_MARKER_LINES or len(text) > PASTE_MARKER_CHARS:
            self._paste_counter += 1
            self._pastes[self._paste_counter] = text
            size = f"+{lines} lines" if lines > 1 else f"{len(text)} chars"
            text = f"[paste #{self._paste_counter} {size}]"
        event.stop()
        event.prevent_default()
        self.insert(text)

    # --- completion --------------------------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        index = self._history_index
        if index is not None and self.text != for_terminal(self.prompt_history[index]):
            self._history_index = index = None
        if index is not None:
            return  # a prompt recalled from the history: Up and Down keep walking it, no menu
        if self._completion is not None or self.text.startswith("/"):
            self._complete(explicit=False)

    def _line_before_cursor(self) -> str:
        row, column = self.cursor_location
        return self.document.get_line(row)[:column]

    def _complete(self, *, explicit: bool) -> None:
        if self.completer is None or self.menu is None:
            return
        completion = self.completer(self._line_before_cursor(), self.text, explicit)
        if completion is None or not completion.candidates:
            self._close_menu()
            return
        if explicit and len(completion.candidates) == 1:
            self._apply(completion, completion.candidates[0])
            return
        if self._completion is None or self._completion.candidates != completion.candidates:
            self._menu_moved = False  # new rows: a move made among the old ones does not count
        self._completion = completion
        self.menu.show(completion)

    def _close_menu(self) -> None:
        self._completion = None
        self._menu_moved = False
        if self.menu is not None:
            self.menu.hide()

    def _menu_key(self, key: str) -> None:
        assert self._completion is not None and self.menu is not None
        if key == "escape":
            self._close_menu()
        elif key == "up":
            self._menu_moved = True
            self.menu.action_cursor_up()
        elif key == "down":
            self._menu_moved = True
            self.menu.action_cursor_down()
        else:
            if not self._menu_moved:  # Tab after a burst: complete what is typed now, not the old rows
                self._complete(explicit=False)
                if self._completion is None:
                    return
            index = self.menu.highlighted or 0
            candidate = self._completion.candidates[index]
            self._apply(self._completion, candidate)
            if key == "enter" and candidate.value.startswith("/"):
                self.submit()  # as pi: Enter on a /command runs it; Tab only completes

    def _apply(self, completion: Completion, candidate: Candidate) -> None:
        row, column = self.cursor_location
        self._close_menu()
        self.replace(candidate.value, (row, completion.start), (row, column))
        if candidate.value.endswith("/"):
            self._complete(explicit=False)  # keep going into the folder
