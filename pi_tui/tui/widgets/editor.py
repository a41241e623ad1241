"""The prompt editor: a multi-line TextArea that submits on Enter.

Enter submits; Shift+Enter, Alt+Enter and Ctrl+J add a newline (Alt+Enter queues a follow-up
while the agent runs); Up/Down walk the prompt history from the first/last line; Tab completes
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

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Edit, EditResult

from pi_tui.text_safety import for_terminal
from pi_tui.tui.completion import Candidate, Completion

PASTE_MARKER_LINES = 10
PASTE_MARKER_CHARS = 1000
_MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")

DEFAULT_KEYS: dict[str, list[str]] = {
    "enter": ["submit"],
    "shift+enter": ["newline"],
    "alt+enter": ["newline", "follow_up"],
    "escape": ["abort"],
    "tab": ["complete"],
    "up": ["history_prev"],
    "down": ["history_next"],
}
"""Used when no key map is given (the app passes the user's bindings)."""


class KeyMap(Protocol):
    def action_for(self, key: str) -> list[str]: ...


Completer = Callable[[str, str, bool], Completion | None]
"""(line before the cursor, whole text, explicit Tab) -> candidates."""


def _candidate_line(candidate: Candidate) -> Content:
    """A menu row: ``@`` candidates are file names, which may hold anything (brackets that would
    read as markup, escape sequences), so the row is plain content made terminal-safe."""
    line = Content(for_terminal(candidate.display))
    if candidate.description:
        line = Content.assemble(line, "  ", Content.styled(for_terminal(candidate.description), "dim"))
    return line


class CompletionMenu(OptionList, can_focus=False):
    """The candidates under discussion; the editor keeps the focus and drives it."""

    def show(self, completion: Completion) -> None:
        self.clear_options()
        self.add_options(Option(_candidate_line(c)) for c in completion.candidates)
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.display = False
        self.clear_options()


class PromptEditor(TextArea):
    BINDINGS = [
        Binding("ctrl+j", "newline", "newline", show=False),
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
        self.keymap: KeyMap | None = None
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

    def _actions(self, key: str) -> list[str]:
        if self.keymap is not None:
            return self.keymap.action_for(key)
        return DEFAULT_KEYS.get(key, [])

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        actions = self._actions(key)
        handled = True
        if self._completion is not None and key == "enter" and not self._menu_moved:
            # Keys typed in a burst reach us before the menu has caught up with them; Enter runs
            # exactly what the editor holds ("/thinking high" lost its argument to a stale row).
            self._close_menu()
            self.submit()
        elif self._completion is not None and key in ("up", "down", "tab", "enter", "escape"):
            self._menu_key(key)
        elif "follow_up" in actions and self.agent_running:
            self.submit(follow_up=True)
        elif "submit" in actions:
            self.submit()
        elif "newline" in actions or key == "ctrl+enter":
            self.insert("\n")
        elif "abort" in actions:
            self.post_message(self.EscapePressed())
        elif "complete" in actions:
            self._complete(explicit=True)
        elif "history_prev" in actions and self.cursor_location[0] == 0 and self._history_allowed():
            self._history_step(-1)
        elif (
            "history_next" in actions
            and self.cursor_location[0] == self.document.line_count - 1
            and (self._history_index is not None)
        ):
            self._history_step(1)
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

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
