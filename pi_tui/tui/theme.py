"""A pi theme as Textual needs it: the ``$pi-*`` stylesheet variables and Textual's base colours.

Loading and choosing themes is UI-neutral and lives in :mod:`pi_tui.view.theme`; only this
conversion knows Textual.
"""

from __future__ import annotations

import re

from textual.theme import Theme as TextualTheme

from pi_tui.view.theme import BACKGROUND_TOKENS, REQUIRED_TOKENS, THEME_TOKENS, Theme

__all__ = ["is_pi_theme", "textual_variable_name", "to_textual_theme"]


def textual_variable_name(token: str) -> str:
    """The .tcss variable for a pi token: ``toolSuccessBg`` -> ``pi-tool-success-bg``."""
    return "pi-" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", token).lower()


def is_pi_theme(theme: TextualTheme) -> bool:
    """Whether a Textual theme defines every ``$pi-*`` variable the app's stylesheet uses.

    Textual's own themes (nord, gruvbox, ...) define none of them, and the stylesheet fails to
    parse under such a theme, so the app only ever accepts themes that pass this check.
    """
    return all(textual_variable_name(token) in theme.variables for token in REQUIRED_TOKENS)


def to_textual_theme(theme: Theme) -> TextualTheme:
    """Build a Textual theme whose base colours come from the pi tokens.

    Textual's own widgets use the base fields (primary, background, ...); our widgets use the
    ``$pi-*`` variables, one per pi token, so every pi colour is reachable from .tcss. Pi has no
    page background token, so ``background``/``surface`` come from the optional ``export``
    colours when present, else Textual derives them. A token set to the terminal default
    (``None``) becomes Textual's resolved foreground (or background for ``*Bg`` tokens), because
    the app paints its own background and a concrete colour keeps text readable on it.
    """
    c = theme.colors

    def pick(*tokens: str) -> str | None:
        return next((c[t] for t in tokens if c.get(t)), None)

    base = TextualTheme(
        name=theme.name,
        primary=pick("accent", "borderAccent", "border") or ("#5f87af" if theme.dark else "#2f6f9f"),
        secondary=pick("border", "borderAccent"),
        accent=pick("borderAccent", "mdHeading"),
        foreground=c.get("text"),
        background=theme.export.get("pageBg"),
        surface=theme.export.get("cardBg"),
        panel=pick("selectedBg", "customMessageBg"),
        success=c.get("success"),
        warning=c.get("warning"),
        error=c.get("error"),
        dark=theme.dark,
    )
    generated = base.to_color_system().generate()
    variables = {
        textual_variable_name(token): c.get(token)
        or generated["background" if token in BACKGROUND_TOKENS else "foreground"]
        for token in THEME_TOKENS
    }
    base.variables.update(variables)
    return base
