"""The ``/tree`` selector: the whole session tree, filtered and searched from the keyboard.

The rows come from :class:`~pi_tui.view.tree_model.TreeModel` (pure); this screen only keeps the
cursor and draws the rows that fit, centred on the cursor, so a 20,000-entry tree costs the same
per key press as a 20-entry one. Enter dismisses with the selected entry id; the app decides what
selecting means (summary menu, navigation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from pi_tui.text_safety import for_terminal
from pi_tui.view.tree_model import FILTER_TAGS, NO_ENTRIES, TreeModel
from pi_tui.view.tree_text import cut_to_width

HELP = "↑↓ move · ←→ page · ctrl+←→ fold/jump · ctrl+o filter · L label · T times · ctrl+x copy · esc close"
DIFF_HELP = " · D diff"
"""Added to the help line when some entry changed files (the key of the diff view)."""
DIRECT_FILTERS = {
    "ctrl+d": "default",
    "ctrl+t": "no-tools",
    "ctrl+u": "user-only",
    "ctrl+l": "labeled-only",
    "ctrl+a": "all",
}


def view_height(terminal_height: int) -> int:
    """Half the terminal, at least 5 rows."""
    return max(5, terminal_height // 2)


def window(count: int, cursor: int, height: int) -> range:
    """The rows to draw: ``height`` rows with the cursor kept in the middle where possible."""
    if count <= height:
        return range(count)
    start = min(max(0, cursor - height // 2), count - height)
    return range(start, start + height)


class TreeList(Widget):
    """Draws the visible window of rows; holds no tree logic."""

    def __init__(self, model: TreeModel) -> None:
        super().__init__(id="tree-list")
        self.model = model
        self.cursor = 0
        self.rows_shown = 5

    def render(self) -> Content:
        model = self.model
        if not model.rows:
            return Content.styled(f"  {NO_ENTRIES}", "$pi-muted")  # pi's words when a filter leaves nothing
        width = max(10, self.size.width)
        lines = []
        for index in window(len(model.rows), self.cursor, self.rows_shown):
            # entry texts and labels come from the session file: made safe before cutting, so the
            # visible symbols are counted in the width and a row never spreads over two lines
            head, mark, tail = (
                for_terminal(part).replace("\n", " ")
                for part in model.line_parts(index, index == self.cursor)
            )
            text = cut_to_width(head + mark + tail, width)  # in columns, as pi cuts tree lines
            style = (
                "$pi-accent bold"
                if index == self.cursor
                else ("$pi-text" if model.rows[index].on_path else "$pi-muted")
            )
            if mark and len(text) > len(head):  # the file mark in its own colour
                end = len(head) + len(mark)
                lines.append(
                    Content.assemble(
                        Content.styled(text[: len(head)], style),
                        Content.styled(text[len(head) : end], "$pi-warning"),
                        Content.styled(text[end:], style),
                    )
                )
            else:
                lines.append(Content.styled(text, style))
        return Content("\n").join(lines)


class TreeScreen(ModalScreen[str | None]):
    """Returns the chosen entry id, or None when closed."""

    def __init__(
        self,
        build_model: Callable[[str | None], TreeModel],
        *,
        on_label: Callable[[str], Any] | None = None,
        on_copy: Callable[[str], Any] | None = None,
        on_diff: Callable[[str], Any] | None = None,
        select: str | None = None,
    ) -> None:
        super().__init__(classes="tree-screen")
        self.build_model = build_model
        """Builds the model from the session for a filter mode (None: the configured one)."""
        self.model = build_model(None)
        self.on_label = on_label
        """Called with the selected entry id on Shift+L (the app shows the label prompt)."""
        self.on_copy = on_copy
        """Called with the selected entry id on Ctrl+X (pi 1.x's ``app.message.copy``)."""
        self.on_diff = on_diff
        """Called with the selected entry id on Shift+D when some entry changed files (the
        app opens the diff view of that entry's turn)."""
        self._select = select
        self._note = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="tree-panel"):
            yield Static(id="tree-search")
            yield TreeList(self.model)
            if self.diff_on:  # the help may take two lines then (it is one at 110 columns without)
                yield Static(
                    HELP.replace(" · ctrl+x", DIFF_HELP + " · ctrl+x"), id="tree-help", classes="-diff"
                )
            else:
                yield Static(HELP, id="tree-help")
            yield Static(id="tree-counter")

    @property
    def diff_on(self) -> bool:
        """Whether Shift+D opens a diff view: some entry of the tree changed files."""
        return self.on_diff is not None and bool(self.model.marks)

    @property
    def tree_list(self) -> TreeList:
        return self.query_one(TreeList)

    def on_mount(self) -> None:
        rows = view_height(self.app.size.height)
        self.tree_list.rows_shown = rows
        self.tree_list.styles.height = rows
        leaf = self._select or self.model.leaf_id
        self._move_to(leaf)
        self._draw()

    def on_resize(self) -> None:
        rows = view_height(self.app.size.height)
        self.tree_list.rows_shown = rows
        self.tree_list.styles.height = rows
        self._draw()

    # --- state ---------------------------------------------------------------------------------

    @property
    def selected_id(self) -> str | None:
        rows = self.model.rows
        cursor = self.tree_list.cursor
        return rows[cursor].entry_id if 0 <= cursor < len(rows) else None

    def _move_to(self, entry_id: str | None) -> None:
        """Put the cursor on ``entry_id`` or its nearest visible ancestor (else keep the index)."""
        if entry_id is None:
            return
        visible = self.model.nearest_visible(entry_id)
        index = self.model.index_of(visible) if visible is not None else None
        if index is not None:
            self.tree_list.cursor = index
        else:
            self.tree_list.cursor = min(self.tree_list.cursor, max(0, len(self.model.rows) - 1))

    def _draw(self) -> None:
        model = self.model
        cursor = self.tree_list.cursor
        search = self.query_one("#tree-search", Static)
        search.display = bool(model.search)
        if model.search:
            typed = for_terminal(model.search)
            search.update(Content.assemble(Content.styled("Search: ", "$pi-muted"), typed))
        counter = model.counter(cursor) if model.rows else f"(0/0){_tag(model.filter_mode)}"
        line = Content.styled(counter, "$pi-muted")
        if self._note:
            line = Content.assemble(line, "  ", Content.styled(for_terminal(self._note), "$pi-warning"))
        self.query_one("#tree-counter", Static).update(line)
        self.tree_list.refresh()

    def show_note(self, text: str, seconds: float = 4.0) -> None:
        """A short line beside the counter that goes away by itself: why a key did nothing
        (the app's hint line is under this panel, out of sight while it is open)."""
        self._note = text.replace("\n", " ")
        self._draw()
        self.set_timer(seconds, self._clear_note)

    def _clear_note(self) -> None:
        self._note = ""
        if self.is_attached:
            self._draw()

    def _keep_selection(self, change: Callable[[], None]) -> None:
        """Apply a filter/search change and keep the same entry selected when it is visible."""
        selected = self.selected_id or getattr(self, "_remembered", None)
        change()
        if selected is not None:
            self._remembered = selected
            self._move_to(selected)
        self._draw()

    def label_changed(self, entry_id: str, label: str | None, timestamp: str | None) -> None:
        """A label was saved from the prompt: show it without rebuilding the tree."""
        selected = self.selected_id
        self.model.set_label(entry_id, label, timestamp)
        self._move_to(selected)
        self._draw()

    # --- keys ----------------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        key = event.key
        model = self.model
        count = len(model.rows)
        tree_list = self.tree_list
        handled = True
        if key in ("up", "down"):
            if count:
                tree_list.cursor = (tree_list.cursor + (1 if key == "down" else -1)) % count
        elif key in ("left", "pageup", "right", "pagedown"):
            if count:
                step = tree_list.rows_shown * (1 if key in ("right", "pagedown") else -1)
                tree_list.cursor = min(max(0, tree_list.cursor + step), count - 1)
        elif key in ("ctrl+left", "alt+left"):
            if count:
                tree_list.cursor = model.segment_left(tree_list.cursor)
        elif key in ("ctrl+right", "alt+right"):
            if count:
                tree_list.cursor = model.segment_right(tree_list.cursor)
        elif key == "ctrl+o":
            self._keep_selection(lambda: model.cycle_filter(1))
        elif key in ("ctrl+shift+o", "shift+ctrl+o"):
            self._keep_selection(lambda: model.cycle_filter(-1))
        elif key in DIRECT_FILTERS:
            mode = DIRECT_FILTERS[key]
            self._keep_selection(lambda: model.toggle_filter(mode))
        elif event.character == "L" and self.selected_id is not None:
            if self.on_label is not None:
                self.on_label(self.selected_id)
        elif event.character == "T":
            model.toggle_label_times()
        elif event.character == "D" and self.diff_on and self.selected_id is not None:
            if self.on_diff is not None:
                self.on_diff(self.selected_id)
        elif key == "ctrl+x" and self.selected_id is not None:
            if self.on_copy is not None:
                self.on_copy(self.selected_id)
        elif key == "enter":
            self.dismiss(self.selected_id)
        elif key in ("escape", "ctrl+c"):
            if model.search:
                self._keep_selection(lambda: model.set_search(""))
            else:
                self.dismiss(None)
        elif key == "backspace":
            if model.search:
                self._keep_selection(lambda: model.set_search(model.search[:-1]))
        elif event.is_printable and event.character:
            text = model.search + event.character
            self._keep_selection(lambda: model.set_search(text))
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            self._draw()


def _tag(mode: str) -> str:
    return FILTER_TAGS.get(mode, "")
