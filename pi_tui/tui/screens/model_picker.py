"""The model picker (Ctrl+L, ``/model``): type to filter, Enter to switch, Escape to keep, and
pi 1.x's ``app.models.save`` (Ctrl+S) to switch and make the model the default for new sessions."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.ai.model_list import fuzzy_filter, picker_text
from pi_tui.ai.types import Model
from pi_tui.text_safety import for_terminal
from pi_tui.tui.widgets.line_input import LineInput


def matching_models(models: list[Model], query: str) -> list[Model]:
    """pi's fuzzy search over provider, id and name, best match first (``opus46`` finds the
    Claude Opus 4.6 models); every model, in order, for an empty query."""
    return fuzzy_filter(models, query, picker_text)


MAX_SHOWN = 200
"""Rows the picker lays out at once; the rest are reached by typing."""


def _window(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:g}M"
    return f"{tokens // 1000}k" if tokens >= 1000 else str(tokens)


class ModelPicker(ModalScreen[tuple[Model, bool] | None]):
    """Dismissed with ``(model, save)`` or None; the app translates a rebound ``models_save``
    key to the Ctrl+S listened for here (``SCREEN_KEY_SCOPES``)."""

    BINDINGS = [
        Binding("escape", "dismiss_none", "Cancel", show=False),
        Binding("ctrl+s", "save", "Save as default", show=False),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
    ]

    def __init__(
        self, models: list[Model], current: Model, query: str = "", save_key: str = "ctrl+s"
    ) -> None:
        super().__init__()
        self.save_key = save_key
        self.models = models
        self.current = current
        self.query_text = query
        self._shown: list[Model] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Select a model", classes="picker-title")
            yield LineInput(
                self.query_text, placeholder="type to filter (provider, id, name)", id="picker-filter"
            )
            yield OptionList(id="picker-options")
            yield Static(
                f"↑↓ move · enter select · {self.save_key} save as default · esc cancel",
                classes="picker-help",
            )

    def on_mount(self) -> None:
        self._fill(self.query_text)
        self.query_one(Input).focus()

    def _fill(self, query: str) -> None:
        options = self.query_one(OptionList)
        matches = matching_models(self.models, query)
        # pi's catalogue has 1,643 models: laying out every row at each keystroke takes seconds,
        # so the first MAX_SHOWN are shown (the current model among them) and typing narrows.
        here = (self.current.provider, self.current.id)
        self._shown = matches[:MAX_SHOWN]
        pinned = next((m for m in matches[MAX_SHOWN:] if (m.provider, m.id) == here and not query), None)
        if pinned is not None:
            self._shown.insert(0, pinned)
        rows: list[Option] = []
        for model in self._shown:
            mark = "● " if (model.provider, model.id) == here else "  "
            thinking = " thinking" if model.reasoning else ""
            name = for_terminal(f"{mark}{model.provider}/{model.id}  ")  # from models.json: any text
            size = Content.styled(f"{_window(model.context_window)}{thinking}", "dim")
            rows.append(Option(Content.assemble(name, size)))
        hidden = len(matches) - len(self._shown)
        if hidden > 0:
            rows.append(Option(Content.styled(f"… {hidden:,} more: type to narrow", "dim"), disabled=True))
        if not self._shown:
            rows.append(Option(Content(for_terminal(f"No model matches “{query}”")), disabled=True))
        options.set_options(rows)  # one layout, not one per row
        current = next(
            (
                i
                for i, m in enumerate(self._shown)
                if (m.provider, m.id) == (self.current.provider, self.current.id)
            ),
            0,
        )
        # pi: the current model stays highlighted until a query is typed, then the best match
        options.highlighted = (0 if query.strip() else current) if self._shown else None

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._choose(self.query_one(OptionList).highlighted)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option_index)

    def _choose(self, index: int | None, save: bool = False) -> None:
        if index is not None and 0 <= index < len(self._shown):
            self.dismiss((self._shown[index], save))

    def action_save(self) -> None:
        self._choose(self.query_one(OptionList).highlighted, save=True)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
