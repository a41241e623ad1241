"""The thinking level picker (pi 1.x's /thinking selector): Enter uses a level for this session,
``app.thinking.save`` (Ctrl+S) uses it and saves it as ``defaultThinkingLevel``, Escape keeps
the level as it was. Only the levels the model has are offered (xhigh / max where named)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

LEVEL_NOTES: dict[str, str] = {
    "off": "no reasoning",
    "minimal": "a very short think",
    "low": "a short think",
    "medium": "a moderate think",
    "high": "a long think",
    "xhigh": "a very long think",
    "max": "as long as the model allows",
}
"""What each level asks of the model, in a few words (shown beside the level)."""


class ThinkingPicker(ModalScreen[tuple[str, bool] | None]):
    """Dismissed with ``(level, save)`` or None. Its keys are ``select`` scope keys plus
    ``thinking_save``; the app translates a rebound key to the one listened for here."""

    BINDINGS = [
        Binding("escape", "dismiss_none", "Cancel", show=False),
        Binding("ctrl+s", "save", "Save as default", show=False),
    ]

    def __init__(self, levels: list[str], current: str, default: str | None, save_key: str) -> None:
        super().__init__()
        self.levels = levels
        self.current = current
        self.default = default
        self.save_key = save_key

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Thinking level", classes="picker-title")
            options = []
            for level in self.levels:
                mark = "✓ " if level == self.current else "  "
                note = LEVEL_NOTES.get(level, "")
                if level == self.default:
                    note += " · default"
                options.append(Option(Content.assemble(f"{mark}{level:<9}", Content.styled(note, "dim"))))
            yield OptionList(*options, id="picker-options")
            yield Static(
                f"↑↓ move · enter use for this session · {self.save_key} save as default · esc cancel",
                classes="picker-help",
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = self.levels.index(self.current) if self.current in self.levels else 0
        options.focus()

    def _highlighted(self) -> str | None:
        index = self.query_one(OptionList).highlighted
        return self.levels[index] if index is not None and 0 <= index < len(self.levels) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss((self.levels[event.option_index], False))

    def action_save(self) -> None:
        level = self._highlighted()
        if level is not None:
            self.dismiss((level, True))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
