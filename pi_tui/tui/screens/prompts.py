"""Small modal questions: pick one of a few choices, or type one line of text.

Titles, choices and prefilled values often quote outside text (a user message to branch from, a
label or a session name from the session file): they are drawn as plain ``Content`` (no markup, so
``[b]`` in a message stays as typed) made terminal-safe by :func:`~pi_tui.text_safety.for_terminal`.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.text_safety import for_terminal
from pi_tui.tui.widgets.line_input import LineInput


def plain(text: str) -> Content:
    """Outside text as something to draw: no markup, no control character."""
    return Content(for_terminal(text))


class ChoiceMenu(ModalScreen[str | None]):
    """A titled list of choices; returns the chosen value, or None on Escape."""

    def __init__(
        self, title: str, choices: list[tuple[str, str]], *, help_text: str = "", message: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.help_text = help_text or "↑↓ move · enter choose · esc back"
        self.message = message
        """Lines under the title (what the question is about)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(plain(self.title_text), classes="picker-title")
            if self.message:
                yield Static(plain(self.message), classes="picker-message")
            yield OptionList(*[Option(plain(label)) for _value, label in self.choices], id="choice-options")
            yield Static(self.help_text, classes="picker-help")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index][0])

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.dismiss(None)


class TextPrompt(ModalScreen[str | None]):
    """One line of text (prefilled); returns it stripped, or None on Escape.

    ``password``: what is typed shows as dots (an API key for /login never appears on screen).
    """

    def __init__(
        self,
        title: str,
        value: str = "",
        *,
        placeholder: str = "",
        help_text: str = "",
        password: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.help_text = help_text or "enter confirm · esc cancel"
        self.password = password

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(plain(self.title_text), classes="picker-title")
            # a label or name read from a file: shown (and given back, if kept) with visible symbols
            yield LineInput(
                for_terminal(self.value),
                placeholder=self.placeholder,
                password=self.password,
                id="prompt-input",
            )
            yield Static(self.help_text, classes="picker-help")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.dismiss(None)


class ConfirmPrompt(ModalScreen[bool]):
    """A yes/no question for something that cannot be undone: only ``y`` says yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(plain(self.question), classes="picker-title")
            yield Static("y yes · n or esc no", classes="picker-help")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class EditorPrompt(ModalScreen[str | None]):
    """Several lines of text (prefilled): Ctrl+S keeps them, Escape gives None."""

    BINDINGS = [Binding("ctrl+s", "keep", "Keep", show=False)]

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        from textual.widgets import TextArea

        with Vertical(id="picker"):
            yield Static(plain(self.title_text), classes="picker-title")
            yield TextArea(for_terminal(self.value), id="prompt-editor", soft_wrap=True)
            yield Static("ctrl+s keep · esc cancel", classes="picker-help")

    def on_mount(self) -> None:
        self.query_one("#prompt-editor").focus()

    def action_keep(self) -> None:
        from textual.widgets import TextArea

        self.dismiss(self.query_one(TextArea).text)

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.dismiss(None)
