"""The Textual ``Markdown`` widget a streamed reply grows in, minus its costliest habit.

Textual highlights a fenced code block without a language by asking Pygments to *guess* one:
that imports every lexer Pygments has (about a second of CPU the first time) and then runs each
one's text analysis over the code, again on every append while the block grows. A streamed
reply hits this all the time: each fence is momentarily bare (the opening backticks arrive
before the language name), and models often write fences with no language at all. The finished
reply is drawn by Rich, which shows such a block as plain text; the live view now does the same,
so nothing is guessed and the live block already looks as it will when the reply ends.

Imported only when a reply streams (it pulls in markdown-it).
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence


class PlainFence(MarkdownFence):
    """A fenced or indented code block: highlighted by its named language, else plain text."""

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        return super().highlight(code, language or "text", ansi=ansi, dark=dark)


class LiveMarkdown(Markdown):
    """Textual's Markdown with :class:`PlainFence` for code blocks."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {
        **Markdown.BLOCKS,
        "fence": PlainFence,
        "code_block": PlainFence,
    }
