"""``/settings``: every setting pi-tui can apply, drawn from rows the app builds.

The screen only draws and reports: Enter on an on/off or few-values row reports the next value;
on a list row (theme, thinking level) it opens :class:`ValuePicker`; on a typed row (a number,
the shell) it opens a one-line prompt. The app checks the value, applies it, saves it and hands
back the new rows (:meth:`SettingsScreen.show_rows`) or a one-line problem
(:meth:`SettingsScreen.show_problem`). Moving over themes reports ``Previewed`` so the app can
recolour itself; Escape in the theme list reports the old theme again.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.text_safety import for_terminal
from pi_tui.tui.screens.prompts import TextPrompt, plain
from pi_tui.tui.settings_rows import SettingRow, matching_rows

LABEL_WIDTH = 28


def row_line(row: SettingRow) -> Content:
    """A row as drawn: the label, then the value (a value from settings.json may hold any text)."""
    value = {"true": "on", "false": "off"}.get(row.value, row.value) if row.kind == "cycle" else row.value
    shown = value if value else "(not set)"
    return Content.assemble(
        Content(f"{row.label:<{LABEL_WIDTH}} "),
        Content.styled(for_terminal(shown), "$pi-accent" if value else "$pi-dim"),
    )


class SettingsScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    @dataclass
    class Changed(Message):
        """The user chose ``value`` (as text) for row ``id``; the app answers with show_rows."""

        screen: SettingsScreen
        id: str
        value: str

    @dataclass
    class Previewed(Message):
        """Show ``value`` for row ``id`` without saving it (theme preview, or its undo)."""

        id: str
        value: str

    def __init__(self, rows: list[SettingRow], *, select: str | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.select = select
        """A row's label or id to highlight at first (``/settings theme``, the palette)."""
        self.search = ""
        self.shown: list[SettingRow] = list(rows)
        """The rows the search leaves, in the list's order."""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Settings", classes="picker-title")
            yield Static("", id="settings-search")
            yield OptionList(*[Option(row_line(row)) for row in self.rows], id="settings-options")
            yield Static("", id="settings-description")
            yield Static(
                "type to search · enter/space change · esc close · saved to settings.json",
                classes="picker-help",
            )

    def on_mount(self) -> None:
        self.query_one("#settings-search").display = False
        options = self.query_one(OptionList)
        wanted = (self.select or "").strip().lower()
        start = next(
            (
                n
                for n, row in enumerate(self.rows)
                if wanted and wanted in (row.label.lower(), row.id.lower())
            ),
            next((n for n, row in enumerate(self.rows) if wanted and wanted in row.label.lower()), 0),
        )
        options.highlighted = start
        options.focus()

    @property
    def current(self) -> SettingRow | None:
        index = self.query_one(OptionList).highlighted
        return self.shown[index] if index is not None and 0 <= index < len(self.shown) else None

    def on_key(self, event: events.Key) -> None:
        """Space changes the row as Enter does; letters narrow the list; Backspace widens it."""
        if event.key == "space":
            event.stop()
            row = self.current
            if row is not None:
                self._activate(row)
        elif event.key == "backspace" and self.search:
            event.stop()
            self._filter(self.search[:-1])
        elif event.is_printable and event.character:
            event.stop()
            self._filter(self.search + event.character)

    def _filter(self, search: str) -> None:
        keep = self.current.id if self.current is not None else None
        self.search = search
        self.shown = matching_rows(self.rows, search)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(Option(row_line(row)) for row in self.shown)
        ids = [row.id for row in self.shown]
        options.highlighted = ids.index(keep) if keep in ids else (0 if ids else None)
        line = self.query_one("#settings-search", Static)
        line.update(Content.styled(f"search: {for_terminal(search)}", "$pi-muted"))
        line.display = bool(search)
        self._describe()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._describe()

    def _describe(self, problem: str | None = None) -> None:
        line = self.query_one("#settings-description", Static)
        row = self.current
        if problem is not None:
            line.update(Content.styled(for_terminal(problem), "$pi-error"))
        else:
            line.update(Content.styled(row.description, "$pi-muted") if row else "")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._activate(self.shown[event.option_index])

    def _activate(self, row: SettingRow) -> None:
        if row.kind == "cycle":
            self.app.post_message(self.Changed(self, row.id, row.next_value()))
        elif row.kind == "pick":
            self.app.push_screen(ValuePicker(row), lambda chosen: self._picked(row, chosen))
        else:
            prompt = TextPrompt(
                row.label, row.value, help_text="enter save · empty for the default · esc cancel"
            )
            self.app.push_screen(prompt, lambda typed: self._typed(row, typed))

    def _picked(self, row: SettingRow, chosen: str | None) -> None:
        if chosen is not None:
            self.app.post_message(self.Changed(self, row.id, chosen))
        elif row.preview:
            self.app.post_message(self.Previewed(row.id, row.value))

    def _typed(self, row: SettingRow, typed: str | None) -> None:
        if typed is not None:
            self.app.post_message(self.Changed(self, row.id, typed))

    def show_rows(self, rows: list[SettingRow]) -> None:
        """The rows after a change was applied (values of other rows may follow from it)."""
        self.rows = rows
        by_id = {row.id: row for row in rows}
        self.shown = [by_id[row.id] for row in self.shown if row.id in by_id]
        options = self.query_one(OptionList)
        for index, row in enumerate(self.shown):
            options.replace_option_prompt_at_index(index, row_line(row))
        self._describe()

    def show_problem(self, text: str) -> None:
        """A value the setting cannot take: said under the list, the row keeps its value."""
        self._describe(text)

    def action_close(self) -> None:
        self.dismiss(None)


class ValuePicker(ModalScreen[str | None]):
    """The values of a list row; returns the chosen one, or None on Escape. With ``row.preview``
    each value moved over is reported (:class:`SettingsScreen.Previewed`) to be shown at once."""

    def __init__(self, row: SettingRow) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(plain(self.row.label), classes="picker-title")
            yield Static(Content.styled(self.row.description, "$pi-muted"))
            yield OptionList(*[Option(plain(value)) for value in self.row.values], id="value-options")
            yield Static("↑↓ move · enter select · esc back", classes="picker-help")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        values = self.row.values
        options.highlighted = values.index(self.row.value) if self.row.value in values else 0
        options.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if self.row.preview and event.option_index is not None:
            self.app.post_message(SettingsScreen.Previewed(self.row.id, self.row.values[event.option_index]))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.row.values[event.option_index])

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.dismiss(None)
