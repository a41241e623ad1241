"""Lines extensions show above or below the editor (``ctx.ui.set_widget``)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from pi_tui.text_safety import for_terminal


class ExtensionWidgets(Static):
    """Lines extensions show above (or below) the editor, by key, in the order they came."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._blocks: dict[str, list[str]] = {}
        self.display = False

    def set_block(self, key: str, lines: Sequence[str] | None) -> None:
        if lines is None:
            self._blocks.pop(key, None)
        else:
            self._blocks[key] = [for_terminal(str(line)) for line in lines]
        shown = [line for block in self._blocks.values() for line in block]
        self.display = bool(shown)
        self.update(Content("\n".join(shown)))
