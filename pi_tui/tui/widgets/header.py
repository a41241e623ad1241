"""The header: name and version, the most useful keys, and what was loaded at start.

As in pi, the compact form names a few keys and says that Ctrl+O (the expand key) shows them
all; expanded, it lists every chat key from the user's key map, one per line. With the
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
        if self.expanded and self.all_keys:
            key_width = max(len(keys) for keys, _ in self.all_keys)
            lines.extend(
                Content.assemble(
                    Content.styled(keys.ljust(key_width), "$pi-dim"), "  ", Content.styled(what, "$pi-muted")
                )
                for keys, what in self.all_keys
            )
        elif self.all_keys:
            lines.append(
                Content.styled(
                    f"Press {self.expand_key} for every key (again to fold); /hotkeys lists them all.",
                    "$pi-dim",
                )
            )
        if self.loaded:
            # file names of context files and extensions: anything a folder holds
            lines.append(Content.styled(for_terminal("Loaded: " + ", ".join(self.loaded)), "$pi-dim"))
        self.update(Content("\n").join(lines))
