"""``/settings``: the few options worth changing mid-session, applied at once and saved.

Each row is a choice; Enter (or a click) moves it to the next value. The app applies the change
immediately (a theme switch recolours the screen behind the panel, so the user sees it) and
saves it to the global settings file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.text_safety import for_terminal


@dataclass(slots=True)
class SettingRow:
    key: str
    title: str
    choices: list[Any]
    value: Any

    def shown(self) -> Content:
        """The row as drawn: a value from settings.json may hold any text (no markup, no escapes)."""
        value = (
            {True: "on", False: "off"}.get(self.value, self.value)
            if isinstance(self.value, bool)
            else self.value
        )
        return Content(for_terminal(f"{self.title:<22} {value}"))

    def advance(self) -> Any:
        index = self.choices.index(self.value) if self.value in self.choices else -1
        self.value = self.choices[(index + 1) % len(self.choices)]
        return self.value


class SettingsScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    @dataclass
    class Changed(Message):
        key: str
        value: Any

    def __init__(self, rows: list[SettingRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Settings", classes="picker-title")
            yield OptionList(*[Option(row.shown()) for row in self.rows], id="settings-options")
            yield Static("enter change · esc close · saved to settings.json", classes="picker-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        row = self.rows[event.option_index]
        value = row.advance()
        options = self.query_one(OptionList)
        options.replace_option_prompt_at_index(event.option_index, row.shown())
        self.app.post_message(self.Changed(row.key, value))

    def action_close(self) -> None:
        self.dismiss(None)
