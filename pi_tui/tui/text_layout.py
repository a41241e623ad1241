"""Plain-text columns for pi-tui's messages in the chat (/hotkeys, /session): each row's label
stays in its column and a value too long for the line continues under where the value began
(a hanging indent), instead of wrapping back to the left margin, where it reads as a new row.

A message is laid out once, for the chat's width when it is shown; :func:`message_width` is
that width.
"""

from __future__ import annotations

import textwrap
from itertools import zip_longest

DEFAULT_WIDTH = 100
"""Columns to lay out for when there is no app to ask (a message built outside the TUI)."""
MIN_WIDTH = 40
ITEM_PADDING = 2
"""A chat message's padding, left and right (app.tcss ``.chat-item``)."""


def message_width(app: object, default: int = DEFAULT_WIDTH) -> int:
    """The columns of text a message in the chat has now: the chat's width inside its padding
    and scroll bar, less the message's padding. ``default`` when the chat is not there (not yet mounted,
    or not a Textual app)."""
    from textual.app import App
    from textual.css.query import NoMatches
    from textual.widget import Widget

    if not isinstance(app, App):
        return default
    try:
        chat = app.query_one("#chat", Widget)
    except NoMatches:
        return default
    # the scroll bar's column counts whether or not it shows yet: the message itself may be
    # what makes the chat scroll
    width = chat.content_region.width - chat.styles.scrollbar_size_vertical - ITEM_PADDING
    return max(MIN_WIDTH, width) if width > 0 else default


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns: at spaces where it has them, anywhere in
    a word (a path, an id) longer than a line."""
    width = max(1, width)
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def pack(items: list[str], width: int, separator: str = ", ") -> list[str]:
    """``items`` joined by ``separator`` in lines of at most ``width`` (an item longer than that
    gets a line of its own): a key list such as ``Shift+Enter, Ctrl+J, Alt+Enter``."""
    lines: list[str] = []
    for index, item in enumerate(items):
        # room for the separator's comma too when an item follows (it may end this line)
        after = len(separator.rstrip()) if index < len(items) - 1 else 0
        if lines and len(lines[-1]) + len(separator) + len(item) + after <= width:
            lines[-1] += separator + item
        else:
            if lines:
                lines[-1] += separator.rstrip()
            lines.append(item)
    return lines or [""]


def hanging_row(
    label_lines: list[str], label_width: int, value_lines: list[str], indent: str = "  "
) -> list[str]:
    """One row of two columns: the label's lines padded to ``label_width``, the value's beside
    them, continuation lines of either aligned under their own column."""
    return [
        f"{indent}{label.ljust(label_width)}  {value}".rstrip()
        for label, value in zip_longest(label_lines, value_lines, fillvalue="")
    ]


def label_value_rows(rows: list[tuple[str, str]], width: int, indent: str = "  ") -> list[str]:
    """``Label:  value`` rows with the values in one column, each wrapped under itself."""
    label_width = max((len(label) for label, _ in rows), default=0)
    value_width = max(10, width - len(indent) - label_width - 2)
    lines: list[str] = []
    for label, value in rows:
        lines += hanging_row([label], label_width, wrap(value, value_width), indent)
    return lines
