"""The header: name and version, the most useful keys, and what was loaded at start.

As in pi, the compact form names a few keys and says that Ctrl+O (the expand key) shows them
all; expanded, it lists every chat key from the user's key map. The expanded list never takes
more than half the screen (:data:`HEIGHT_SHARE`): it goes into as many columns as it needs,
descriptions shortened to fit, and what still does not fit is counted on a last "+N more" row,
so the chat keeps rows and the editor and footer stay on screen at 80x24. With the
``quietStartup`` setting only the title is left (``--verbose`` brings the rest back). Key hints
are dropped from the end when the terminal is too narrow, so the hint line never wraps.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
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
HEIGHT_SHARE = 2
"""The expanded header takes at most 1/HEIGHT_SHARE of the screen's rows (app.tcss caps it the same)."""
COLUMN_GAP = 3
MIN_DESCRIPTION = 20
"""A column is only opened when each of its descriptions keeps at least this many cells."""


def fitting_hints(width: int, hints: tuple[tuple[str, str], ...] = KEY_HINTS) -> list[tuple[str, str]]:
    """As many hints as fit in ``width`` cells, in order of importance."""
    shown: list[tuple[str, str]] = []
    used = 0
    for key, what in hints:
        cost = len(key) + 1 + len(what) + (len(SEPARATOR) if shown else 0)
        if used + cost > width:
            break
        shown.append((key, what))
        used += cost
    return shown


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)].rstrip() + "…"


def key_grid(keys: list[tuple[str, str]], width: int, rows: int) -> list[Content]:
    """``keys`` laid out in at most ``rows`` lines of ``width`` cells: the fewest columns
    (filled top to bottom) that hold them all, descriptions cut with "…" to their column; when
    even the widest grid is too small, its last line counts what was left out."""
    if not keys or rows < 1:
        return []
    key_width = max(len(key) for key, _ in keys)
    widest = max(1, (width + COLUMN_GAP) // (key_width + 2 + MIN_DESCRIPTION + COLUMN_GAP))
    columns = next((n for n in range(1, widest + 1) if -(-len(keys) // n) <= rows), widest)
    depth = -(-len(keys) // columns)
    shown = keys
    if depth > rows:  # too many even so: the last line says how many more there are
        depth = max(1, rows - 1)
        shown = keys[: depth * columns]
    # Each column's descriptions as long as they are; while the row is too wide, the column
    # with the longest ones gives up a cell (a short column keeps its words whole).
    room = [
        max(len(what) for _, what in shown[column * depth : (column + 1) * depth])
        for column in range(columns)
        if shown[column * depth : (column + 1) * depth]
    ]
    columns = len(room)
    while sum(room) + columns * (key_width + 2) + COLUMN_GAP * (columns - 1) > width and max(room) > 1:
        room[room.index(max(room))] -= 1
    lines: list[Content] = []
    for row in range(depth):
        cells = []
        for column in range(columns):
            index = column * depth + row
            if index >= len(shown):
                break
            key, what = shown[index]
            description = _cut(what, room[column])
            padding = " " * (room[column] - len(description)) if column < columns - 1 else ""
            cells.append(
                Content.assemble(
                    Content.styled(key.ljust(key_width), "$pi-dim"),
                    "  ",
                    Content.styled(description, "$pi-muted"),
                    padding,
                )
            )
        lines.append(Content(" " * COLUMN_GAP).join(cells))
    if len(shown) < len(keys):
        lines.append(Content.styled(f"+{len(keys) - len(shown)} more: /hotkeys lists every key", "$pi-dim"))
    return lines


class PiHeader(Static):
    expanded: reactive[bool] = reactive(False)
    """Ctrl+O (with the tool output): every key instead of the compact hints."""

    def __init__(
        self,
        loaded: list[str],
        *,
        all_keys: list[tuple[str, str]] | None = None,
        expand_key: str = "ctrl+o",
        hints: tuple[tuple[str, str], ...] = KEY_HINTS,
        quiet: bool = False,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.loaded = loaded
        self.all_keys = all_keys or []
        self.expand_key = expand_key
        self.quiet = quiet
        self.hints = hints
        self._screen_rows = 0
        """The screen height the expanded list was fitted to (a change redraws it)."""

    def set_loaded(self, loaded: list[str]) -> None:
        self.loaded = loaded
        self._draw()

    def set_quiet(self, quiet: bool) -> None:
        """quietStartup: only the title line (--verbose overrides it before this is called)."""
        if quiet != self.quiet:
            self.quiet = quiet
            self._draw()

    def on_resize(self) -> None:
        self._draw()

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._screen_changed)
        self._draw()

    def _screen_changed(self, screen: object) -> None:
        """The terminal got taller or shorter (the header's width did not change, so no resize
        came): the expanded list is fitted again to its share of the new height."""
        if self.expanded and self.screen.size.height != self._screen_rows:
            self._draw()

    def watch_expanded(self) -> None:
        if self.is_mounted:
            self._draw()

    def _draw(self) -> None:
        title = f"pi-tui v{__version__}  "
        width = max(0, (self.content_size.width or 80) - len(title))
        if self.quiet:
            hints = Content("")
        else:
            hints = Content(SEPARATOR).join(
                Content.assemble(Content.styled(key, "$pi-dim"), " ", Content.styled(what, "$pi-muted"))
                for key, what in fitting_hints(width, self.hints)
            )
        lines = [
            Content.assemble(
                Content.styled("pi-tui", "$pi-accent bold"), Content.styled(title[6:], "$pi-dim"), hints
            )
        ]
        if self.quiet:
            self.update(lines[0])
            return
        loaded = Content.styled(for_terminal("Loaded: " + ", ".join(self.loaded)), "$pi-dim")
        if self.expanded and self.all_keys and self.is_mounted:
            self._screen_rows = self.screen.size.height
            full = self.content_size.width or 80
            budget = max(3, self._screen_rows // HEIGHT_SHARE)
            left = budget - len(lines) - (-(-len(loaded.plain) // full) if self.loaded else 0)
            lines.extend(key_grid(self.all_keys, full, max(1, left)))
        elif self.all_keys:
            lines.append(
                Content.styled(
                    f"Press {self.expand_key} for every key (again to fold); /hotkeys lists them all.",
                    "$pi-dim",
                )
            )
        if self.loaded:
            # file names of context files and extensions: anything a folder holds
            lines.append(loaded)
        self.update(Content("\n").join(lines))
