"""``ctx.ui``: how an extension talks to the user, whatever the mode.

:class:`ExtensionUI` is the interface and also the behaviour without a user (print and json
modes): notifications go to stderr, and every dialog answers its default at once and says so on
stderr, so a script never hangs on a question nobody can see. The TUI
(:mod:`pi_tui.tui.extension_ui`) and rpc mode (:mod:`pi_tui.modes.rpc_ui`) override the parts
they can show. Each extension gets its own bound copy (:meth:`ExtensionUI.bound`), so what it
says is attributed to it.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

NotifyLevel = Literal["info", "warning", "error"]
WidgetPlacement = Literal["above", "below"]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class ExtensionUI:
    """Headless: no one to ask. Subclasses show things to a person."""

    has_ui = False

    def __init__(self, say: Callable[[str], None] = _stderr) -> None:
        self._say = say
        self.extension = "extension"
        """The name of the extension this copy speaks for."""

    def bound(self, extension: str) -> ExtensionUI:
        """This UI speaking for ``extension``."""
        other = copy.copy(self)
        other.extension = extension
        return other

    # --- fire and forget ---------------------------------------------------------------------

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Tell the user something (print mode: one line on stderr)."""
        from pi_tui.text_safety import for_terminal

        prefix = "" if level == "info" else f"{level}: "
        self._say(f"pi-tui: {self.extension}: {prefix}{for_terminal(str(message))}")

    def set_status(self, key: str, text: str | None) -> None:
        """A short text in the status line under ``key`` (None clears it). Headless: ignored."""

    def set_widget(
        self, key: str, lines: Sequence[str] | str | None, *, placement: WidgetPlacement = "above"
    ) -> None:
        """Lines shown above or below the editor under ``key`` (None clears). Headless: ignored."""

    def set_footer(self, text: str | None) -> None:
        """Show ``text`` (up to two lines) in place of the footer; None brings pi-tui's footer
        back. Headless and in rpc mode: ignored (pi's clients have no footer to replace)."""

    def set_editor_text(self, text: str) -> None:
        """Put ``text`` in the editor. Headless: ignored."""

    # --- dialogs -------------------------------------------------------------------------------

    def _answered(self, title: str, answer: str) -> None:
        from pi_tui.text_safety import for_terminal

        self._say(f'pi-tui: {self.extension} asked "{for_terminal(title)}"; no one can answer here: {answer}')

    async def confirm(self, title: str, message: str = "", *, default: bool = False) -> bool:
        """Yes or no; ``default`` when no one can answer (or the dialog is dismissed)."""
        self._answered(title, "yes" if default else "no")
        return default

    async def select(self, title: str, options: Sequence[str], *, default: str | None = None) -> str | None:
        """One of ``options``; ``default`` (None: nothing chosen) when no one can answer."""
        self._answered(title, default if default is not None else "nothing chosen")
        return default

    async def input(self, title: str, placeholder: str = "", *, default: str | None = None) -> str | None:
        """A line of text; ``default`` (None: cancelled) when no one can answer."""
        self._answered(title, "cancelled" if default is None else repr(default))
        return default

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """Several lines of text, starting from ``prefill``; None when no one can answer."""
        self._answered(title, "cancelled")
        return None

    async def custom(self, screen: Any) -> Any:
        """Push a Textual ``Screen`` and return what it is dismissed with. Headless: None."""
        self._answered(type(screen).__name__, "not shown")
        return None
