"""The diff view of one turn's file changes, opened from ``/tree`` (Shift+D on a marked entry).

It only draws what it is given: the turn's changes (status and path, ``from`` for a rename) and
the unified diff the shadow store made (:meth:`AgentSession.file_changes`). Both are data from
files the model or the user wrote: every line goes through
:func:`~pi_tui.text_safety.for_terminal`, so an escape sequence in a file shows as ``␛[…`` and
never reaches the terminal. Added and removed lines take the theme's diff colours; Escape (or q)
closes, the arrows and Page Up/Down scroll.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from pi_tui.text_safety import for_terminal

MAX_DIFF_LINES = 20_000
"""Lines drawn at most (a generated file can make a diff of millions): the rest is counted."""
STATUS_WORDS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "type changed"}


def change_lines(changes: Sequence[Mapping[str, str]]) -> Content:
    """One line per changed file: ``M app.py``, ``R new.py ← old.py``."""
    lines = []
    for change in changes:
        status = str(change.get("status", "?"))[:1]
        path = for_terminal(str(change.get("path", ""))).replace("\n", " ")
        moved = change.get("from")
        if moved:
            path += " ← " + for_terminal(str(moved)).replace("\n", " ")
        style = {"A": "$pi-tool-diff-added", "D": "$pi-tool-diff-removed"}.get(status, "$pi-text")
        lines.append(
            Content.assemble(Content.styled(f"{status} ", f"{style} bold"), Content.styled(path, style))
        )
    return Content("\n").join(lines)


def diff_lines(diff: str) -> Content:
    """The unified diff, coloured by line kind; file headers and hunk lines stand out."""
    lines = diff.splitlines()
    hidden = max(0, len(lines) - MAX_DIFF_LINES)
    parts = []
    for line in lines[:MAX_DIFF_LINES]:
        if line.startswith(("diff --git", "+++", "---")):
            style = "$pi-accent bold"
        elif line.startswith("@@"):
            style = "$pi-accent"
        elif line.startswith("+"):
            style = "$pi-tool-diff-added"
        elif line.startswith("-"):
            style = "$pi-tool-diff-removed"
        elif line.startswith((" ", "\\")):
            style = "$pi-tool-diff-context"
        else:  # index, mode, rename and "Binary files ... differ" lines
            style = "$pi-muted"
        parts.append(Content.styled(for_terminal(line), style))
    if not parts:
        parts.append(Content.styled("(no textual difference)", "$pi-muted"))
    if hidden:
        parts.append(Content.styled(f"… {hidden} more lines", "$pi-muted"))
    return Content("\n").join(parts)


class FileDiffScreen(ModalScreen[None]):
    """A turn's changed files and their diff, scrollable; Escape closes."""

    CSS_PATH = "file_diff.tcss"

    def __init__(self, title: str, changes: Sequence[Mapping[str, str]], diff: str) -> None:
        super().__init__(classes="file-diff-screen")
        self.title_text = title
        self.changes = changes
        self.diff = diff

    def compose(self) -> ComposeResult:
        count = len(self.changes)
        with Vertical(id="file-diff-panel"):
            yield Static(
                Content.styled(for_terminal(self.title_text).replace("\n", " "), "$pi-accent bold"),
                id="file-diff-title",
            )
            yield Static(change_lines(self.changes), id="file-diff-files")
            with VerticalScroll(id="file-diff-scroll"):
                yield Static(diff_lines(self.diff), id="file-diff-text")
            noun = "file" if count == 1 else "files"
            yield Static(f"{count} {noun} · ↑↓ pgup pgdn scroll · esc close", id="file-diff-help")

    def on_mount(self) -> None:
        self.query_one("#file-diff-scroll", VerticalScroll).focus()

    def on_key(self, event: events.Key) -> None:
        if event.key in ("escape", "q", "ctrl+c"):
            event.stop()
            event.prevent_default()
            self.dismiss(None)
