"""``/scoped-models``: which models Ctrl+P cycles through, and in what order (pi's selector).

Typing filters the list with pi's fuzzy search (``deep`` keeps the DeepSeek models). Enter (or
Space while the filter is empty) turns the highlighted model on or off, Ctrl+A turns every
listed model on, Ctrl+X every listed model off, Ctrl+P the highlighted model's whole provider;
Alt+Up / Alt+Down move a model in the cycle. Escape keeps the choice for this session; Ctrl+S
also saves it as ``enabledModels`` in settings.json. The screen only edits a list: the app
applies and saves what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.ai.model_list import fuzzy_filter
from pi_tui.text_safety import for_terminal
from pi_tui.tui.widgets.line_input import LineInput


def _search_text(key: str) -> str:
    """What the filter searches for ``provider/id``, as pi builds it (id, provider, both)."""
    provider, _, model_id = key.partition("/")
    return f"{model_id} {provider} {key} {provider} {model_id}"


@dataclass(frozen=True, slots=True)
class ScopeChoice:
    """What the screen returns: the models turned on, in cycle order, and whether to save."""

    keys: list[str]
    save: bool


class ScopedModelsScreen(ModalScreen[ScopeChoice | None]):
    BINDINGS = [
        Binding("escape", "close(False)", "Keep for this session", show=False),
        Binding("ctrl+s", "close(True)", "Save", show=False, priority=True),
        Binding("enter", "toggle_model", "Toggle", show=False, priority=True),
        Binding("down", "cursor(1)", show=False, priority=True),
        Binding("up", "cursor(-1)", show=False, priority=True),
        Binding("ctrl+a", "all_on", "All on", show=False, priority=True),
        Binding("ctrl+x", "all_off", "All off", show=False, priority=True),
        Binding("ctrl+p", "toggle_provider", "Provider", show=False, priority=True),
        Binding("alt+up", "move(-1)", "Up", show=False, priority=True),
        Binding("alt+down", "move(1)", "Down", show=False, priority=True),
    ]

    def __init__(self, models: list[str], enabled: list[str]) -> None:
        """``models``: every usable ``provider/id``; ``enabled``: the current cycle, in order."""
        super().__init__()
        known = set(models)
        self.enabled = [key for key in enabled if key in known]
        self.order = self.enabled + [key for key in models if key not in self.enabled]
        self.shown = list(self.order)
        """The rows on screen: ``order`` narrowed by the filter."""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Models for Ctrl+P", classes="picker-title")
            yield LineInput(placeholder="type to filter", id="scoped-filter")
            yield OptionList(id="scoped-options")
            yield Static("", id="scoped-summary")
            # two short lines: one long line was cut off at 140 columns
            yield Static("enter toggle · ctrl+a all · ctrl+x none · ctrl+p provider", classes="picker-help")
            yield Static("alt+↑↓ order · ctrl+s save · esc keep for now", classes="picker-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).can_focus = False
        self._draw(0)
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.value == " ":
            # Space in the empty filter toggles (a printable key always reaches the focused box
            # before any binding): a filter cannot start with a space, so it is taken back out.
            event.input.value = ""
            self.action_toggle_model()
            return
        current = self._current()
        key = self.shown[current] if current is not None and current < len(self.shown) else None
        self._filter(event.value)
        self._draw(self.shown.index(key) if key in self.shown else 0)

    def _filter(self, query: str) -> None:
        self.shown = fuzzy_filter(self.order, query, _search_text)

    def action_cursor(self, step: int) -> None:
        options = self.query_one(OptionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def _draw(self, highlighted: int | None) -> None:
        options = self.query_one(OptionList)
        places = {key: number for number, key in enumerate(self.enabled, 1)}
        rows: list[Option] = []
        for key in self.shown:
            mark = "[x]" if key in places else "[ ]"
            position = f" {places[key]}" if key in places else ""
            rows.append(
                Option(Content.assemble(f"{mark} ", for_terminal(key), Content.styled(position, "$pi-muted")))
            )
        options.set_options(rows)  # one layout for pi's hundreds of models, not one per row
        if not self.shown:
            query = self.query_one(Input).value
            options.add_option(Option(Content(for_terminal(f"No model matches “{query}”")), disabled=True))
        else:
            options.highlighted = min(highlighted or 0, len(self.shown) - 1)
        count = len(self.enabled)
        summary = (
            f"{count} model{'s' if count != 1 else ''} in the cycle"
            if count
            else "none chosen: Ctrl+P cycles every model that has a key"
        )
        self.query_one("#scoped-summary", Static).update(Content.styled(summary, "$pi-muted"))

    def _current(self) -> int | None:
        return self.query_one(OptionList).highlighted

    def action_toggle_model(self) -> None:
        """Switch the highlighted model in or out of the cycle (not named ``action_toggle``:
        that is Textual's action for flipping a widget's boolean attribute)."""
        index = self._current()
        if index is None:
            return
        if index >= len(self.shown):
            return
        key = self.shown[index]
        if key in self.enabled:
            self.enabled.remove(key)
        else:
            self.enabled.append(key)
        self._draw(index)

    def action_all_on(self) -> None:
        """Every listed model on (with a filter: the models it lists, as pi does)."""
        self.enabled = self.enabled + [key for key in self.shown if key not in self.enabled]
        self._draw(self._current())

    def action_all_off(self) -> None:
        listed = set(self.shown)
        self.enabled = [key for key in self.enabled if key not in listed]
        self._draw(self._current())

    def action_toggle_provider(self) -> None:
        index = self._current()
        if index is None or index >= len(self.shown):
            return
        provider = self.shown[index].split("/", 1)[0]
        theirs = [key for key in self.order if key.split("/", 1)[0] == provider]
        if all(key in self.enabled for key in theirs):
            self.enabled = [key for key in self.enabled if key not in theirs]
        else:
            self.enabled += [key for key in theirs if key not in self.enabled]
        self._draw(index)

    def action_move(self, step: int) -> None:
        """Move the highlighted model in the cycle (models that are off keep their place)."""
        index = self._current()
        if index is None or index >= len(self.shown) or self.shown[index] not in self.enabled:
            return
        key = self.shown[index]
        at = self.enabled.index(key)
        to = at + step
        if not 0 <= to < len(self.enabled):
            return
        self.enabled[at], self.enabled[to] = self.enabled[to], self.enabled[at]
        self.order = self.enabled + [other for other in self.order if other not in self.enabled]
        self._filter(self.query_one(Input).value)
        self._draw(self.shown.index(key))

    def action_close(self, save: bool) -> None:
        self.dismiss(ScopeChoice(list(self.enabled), save))
