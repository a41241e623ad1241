"""The short header: name and version, the most useful keys, and what was loaded at start.

Key hints are dropped from the end when the terminal is too narrow for all of them, so the
header never wraps into a second line of half-hints.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from pi_tui import __version__
from pi_tui.text_safety import for_terminal

KEY_HINTS = (
    ("esc", "interrupt"),
    ("ctrl+c", "clear"),
    ("ctrl+d", "exit"),
    ("/", "commands"),
    ("!", "bash"),
    ("ctrl+l", "model"),
    ("ctrl+o", "expand"),
)
SEPARATOR = " · "


def fitting_hints(width: int) -> list[tuple[str, str]]:
    """As many hints as fit in ``width`` cells, in order of importance."""
    shown: list[tuple[str, str]] = []
    used = 0
    for key, what in KEY_HINTS:
        cost = len(key) + 1 + len(what) + (len(SEPARATOR) if shown else 0)
        if used + cost > width:
            break
        shown.append((key, what))
        used += cost
    return shown


class PiHeader(Static):
    def __init__(self, loaded: list[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.loaded = loaded

    def set_loaded(self, loaded: list[str]) -> None:
        self.loaded = loaded
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        title = f"pi-tui v{__version__}  "
        width = max(0, (self.content_size.width or 80) - len(title))
        hints = Content(SEPARATOR).join(
            Content.assemble(Content.styled(key, "$pi-dim"), " ", Content.styled(what, "$pi-muted"))
            for key, what in fitting_hints(width)
        )
        lines = [
            Content.assemble(
                Content.styled("pi-tui", "$pi-accent bold"), Content.styled(title[6:], "$pi-dim"), hints
            )
        ]
        if self.loaded:
            # file names of context files and extensions: anything a folder holds
            lines.append(Content.styled(for_terminal("Loaded: " + ", ".join(self.loaded)), "$pi-dim"))
        self.update(Content("\n").join(lines))
