"""The colours of an exported page: the user's pi theme, and the built-in opposite for the toggle.

A page carries two palettes, so whoever opens it can switch between dark and light without
pi-tui. The first is the theme the TUI uses (settings ``theme``, a user theme included); the
second is the built-in ``light`` for a dark theme and ``dark`` for a light one. Colours the
terminal leaves to its defaults (``""`` in a theme) get the page's own, from the theme's
``export`` section when it has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.view.terminal_colours import terminal_appearance
from pi_tui.view.theme import Theme, available_themes, choose_theme, load_theme

_PAGE_DEFAULTS = {
    True: {"pageBg": "#16181d", "cardBg": "#1e2128", "infoBg": "#2a2720", "text": "#d5d8de"},
    False: {"pageBg": "#f4f5f7", "cardBg": "#ffffff", "infoBg": "#fbf6e9", "text": "#1f2328"},
}


def palette(theme: Theme) -> dict[str, Any]:
    """One theme as the page uses it: every token a concrete ``#rrggbb``, plus ``dark``."""
    defaults = _PAGE_DEFAULTS[theme.dark]
    colors: dict[str, str] = {}
    for token, value in theme.colors.items():
        colors[token] = value or defaults.get(token) or defaults["text"]
    for key in ("pageBg", "cardBg", "infoBg"):
        colors[key] = theme.export.get(key) or defaults[key]
    return {"name": theme.name, "dark": theme.dark, "colors": colors}


def page_palettes(theme_name: str | None, agent_dir: str | Path | None) -> list[dict[str, Any]]:
    """``[current, opposite]``: the theme the setting means on this terminal (``system`` and
    ``light/dark`` pairs follow its appearance; an unknown name means ``system``) and the
    built-in of the other brightness (the same one twice is avoided)."""
    files = available_themes(agent_dir)
    builtins = available_themes(None)
    chosen = choose_theme(theme_name, files, terminal_appearance()).path
    current = load_theme(chosen).theme
    other_name = "light" if current.dark else "dark"
    other = load_theme(builtins[other_name]).theme
    return [palette(current), palette(other)]
