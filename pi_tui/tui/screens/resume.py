"""The session picker (``/resume``, ``pi-tui -r``): pick a past session to continue in.

Sessions of this folder are listed first (Tab shows every folder), newest first (Ctrl+S sorts by
name). Typing filters on the name, the first message and the text of the messages. Ctrl+R
renames the highlighted session and Ctrl+D deletes it after asking. The list comes from the
session index (:mod:`pi_tui.session.index`), which reads only the files that changed since the
last time; it is still read in a thread so that a first, cold build of the index over a big
sessions folder keeps the screen responsive. Search runs over the index's texts in memory (never
the files) and only narrows the previous matches while the query grows. Whatever goes wrong (an
unreadable file, a session another pi-tui writes) becomes one line in the picker, never a
traceback. This module only draws: the rows, queries and orders are
:mod:`pi_tui.session.search`'s, renaming and deleting :mod:`pi_tui.agent.session_ops`'.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.message import Message
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from pi_tui.agent.session_ops import delete_session_file, name_session_file
from pi_tui.config.pi_folder import PI_ORIGIN, pi_session_prefixes, session_origin
from pi_tui.session.info import SessionInfo
from pi_tui.session.search import (
    SORTS,
    Query,
    RowSearch,
    SessionRow,
    format_age,
    match_rows,
    parse_query,
    read_sessions,
    sort_rows,
    thread_rows,
)
from pi_tui.text_safety import for_terminal
from pi_tui.tui.screens.prompts import ConfirmPrompt, TextPrompt
from pi_tui.tui.widgets.line_input import LineInput

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager

SCOPES = ("current", "all")
FOLDER_WIDTH = 28


def _one_line(text: str) -> str:
    """Outside text (a name, a first message, a folder) as one row, safe to draw."""
    return for_terminal(" ".join(text.split()))


def _short_folder(cwd: str) -> str:
    """A session's folder for the "all" view: ``~`` for home, and the end kept when too long."""
    home = os.path.expanduser("~")
    if home != "/" and (cwd == home or cwd.startswith(home + os.sep)):
        cwd = "~" + cwd[len(home) :]
    return cwd if len(cwd) <= FOLDER_WIDTH else "…" + cwd[-(FOLDER_WIDTH - 1) :]


class SessionList(ScrollView, can_focus=False):
    """The rows of the picker, drawn on demand: only the lines on screen are ever rendered.

    An ``OptionList`` measures every option whenever the list changes, which took seconds per
    key for a folder with thousands of sessions; here a row costs nothing until it is visible.
    ``draw(index, width)`` makes the text of one row.
    """

    COMPONENT_CLASSES = {"session-list--cursor", "session-list--empty"}
    DEFAULT_CSS = """
    SessionList {
        width: 1fr;
        height: auto;
        max-height: 20;
        overflow-x: hidden;
        background: $background;
    }
    SessionList > .session-list--cursor {
        color: $foreground;
        background: $block-cursor-blurred-background;
    }
    SessionList > .session-list--empty {
        color: $text-disabled;
    }
    """
    CACHE_LIMIT = 400

    class Clicked(Message):
        """A row was clicked: the picker opens it, as Enter would."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, draw: Callable[[int, int], Text], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.draw = draw
        self.count = 0
        self.highlighted: int | None = None
        self.empty_text = ""
        self._lines: dict[tuple[int, int, bool], Strip] = {}

    def show(self, count: int, highlighted: int | None, empty_text: str = "") -> None:
        """Replace the rows (``count`` of them; the text comes from ``draw``)."""
        self.count = count
        self.empty_text = empty_text
        self.highlighted = highlighted if count else None
        self._lines.clear()
        self.virtual_size = Size(0, max(count, 1))
        self.refresh(layout=True)
        self.call_after_refresh(self._reveal)

    def move(self, step: int) -> None:
        """Move the highlight, wrapping at either end."""
        if not self.count:
            return
        start = self.highlighted if self.highlighted is not None else (-1 if step > 0 else 0)
        self.highlighted = (start + step) % self.count
        self.refresh()
        self._reveal()

    def page(self, step: int) -> None:
        """Move by a screenful, stopping at either end."""
        if not self.count:
            return
        jump = max(self.scrollable_content_region.height - 1, 1) * step
        self.highlighted = min(max((self.highlighted or 0) + jump, 0), self.count - 1)
        self.refresh()
        self._reveal()

    def _reveal(self) -> None:
        """Scroll so the highlighted row is on screen."""
        if self.highlighted is None:
            return
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        top = round(self.scroll_offset.y)
        if self.highlighted < top:
            self.scroll_to(y=self.highlighted, animate=False)
        elif self.highlighted >= top + height:
            self.scroll_to(y=self.highlighted - height + 1, animate=False)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = round(self.scroll_offset.y) + y
        if not self.count:
            if index == 0 and self.empty_text:
                style = base + self.get_component_rich_style("session-list--empty")
                return self._strip(Text(for_terminal(self.empty_text)), width, style)
            return Strip.blank(width, base)
        if index >= self.count:
            return Strip.blank(width, base)
        cursor = index == self.highlighted
        key = (index, width, cursor)
        line = self._lines.get(key)
        if line is None:
            if len(self._lines) > self.CACHE_LIMIT:
                self._lines.clear()
            style = base + self.get_component_rich_style("session-list--cursor") if cursor else base
            line = self._lines[key] = self._strip(self.draw(index, width), width, style)
        return line

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        text.truncate(width, overflow="ellipsis", pad=True)
        segments = Segment.apply_style(text.render(self.app.console), style)
        return Strip(segments).adjust_cell_length(width, style)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = round(self.scroll_offset.y) + offset.y
        if 0 <= index < self.count:
            self.highlighted = index
            self.refresh()
            self.post_message(self.Clicked(index))


class ResumePicker(ModalScreen[Path | None]):
    """Lists sessions; Enter returns the chosen file, Escape returns None."""

    DEFAULT_CSS = """
    #resume-message {
        height: auto;
        color: $pi-dim;
    }
    #resume-message.-error {
        color: $pi-error;
    }
    """

    BINDINGS = [
        Binding("escape", "dismiss_none", "Cancel", show=False),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("pagedown", "page(1)", show=False, priority=True),
        Binding("pageup", "page(-1)", show=False, priority=True),
        Binding("tab", "toggle_scope", "All folders", show=False, priority=True),
        Binding("ctrl+s", "toggle_sort", "Sort", show=False, priority=True),
        Binding("ctrl+n", "toggle_named", "Named only", show=False, priority=True),
        Binding("ctrl+p", "toggle_path", "Paths", show=False, priority=True),
        Binding("ctrl+r", "rename", "Rename", show=False, priority=True),
        Binding("ctrl+d", "delete", "Delete", show=False, priority=True),
    ]

    def __init__(
        self,
        folder: Path,
        *,
        current: SessionManager | None = None,
        sessions_root: Path | None = None,
        now: Callable[[], datetime] | None = None,
        scope: str = "current",
        cwd: str | None = None,
    ) -> None:
        super().__init__()
        self.folder = folder
        self.cwd = cwd
        """The working folder: its other agents' transcripts are listed too (None: not)."""
        self.chosen: SessionInfo | None = None
        self.current = current
        """The app's own session: it is renamed through this manager (we hold its file lock)."""
        self.sessions_root = sessions_root
        self._pi_prefixes = pi_session_prefixes()
        """Paths that begin so are pi's sessions: their rows carry a "pi" tag."""
        self.now = now or (lambda: datetime.now(UTC))
        """Injected by tests so the ages shown stay the same from run to run."""
        self.scope = scope
        self.sort = "threaded"
        self.named_only = False
        """pi's named filter (Ctrl+N): only sessions that have a name."""
        self.show_path = False
        """pi's path toggle (Ctrl+P): each row shows its session file."""
        self._query_error = False
        self._generation = 0
        """Counts list rebuilds: a regex answer that a newer key overtook is dropped."""
        self._prefixes: list[str] = []
        """The tree drawn in front of each shown row (threaded view)."""
        self.rows: dict[str, list[SessionRow]] = {}
        """Loaded sessions by scope, newest first; a scope is read the first time it is shown."""
        self._searches: dict[str, RowSearch] = {}
        """Search over ``rows`` by scope; dropped when those rows change."""
        self._loading: set[str] = set()
        self._partial: dict[str, list[SessionRow]] = {}
        """Rows known so far of a scope whose index is still being built (shown meanwhile)."""
        self._deleted: set[Path] = set()
        self._shown: list[SessionRow] = []

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(self._title(), classes="picker-title", id="resume-title")
            yield LineInput(placeholder='search: words, "exact phrase", re:regex', id="picker-filter")
            yield SessionList(self._row_text, id="resume-list")
            yield Static("", id="resume-message")
            yield Static(self._help(), classes="picker-help", id="resume-help")

    def on_mount(self) -> None:
        self.query_one("#resume-message", Static).display = False
        self._load(self.scope)
        self.query_one(Input).focus()
        self.call_after_refresh(self._refresh_help)  # now that the help line has its width

    def _title(self) -> str:
        where = "this folder" if self.scope == "current" else "all folders"
        order = {"threaded": "forks under their parent", "recent": "newest first", "name": "by name"}[
            self.sort
        ]
        named = " · named only" if self.named_only else ""
        return f"Resume a session · {where} · {order}{named}"

    def _help(self) -> str:
        """The keys, as many to a line as the picker's width holds (two lines at 80 columns):
        one line cut at the edge hid the rename and delete keys."""
        from pi_tui.tui.text_layout import pack

        other = "all folders" if self.scope == "current" else "this folder"
        hints = ["enter open", f"tab {other}", "ctrl+s sort", "ctrl+n named", "ctrl+p path"]
        hints += ["ctrl+r rename", "ctrl+d delete"]
        return "\n".join(line.removesuffix(" ·") for line in pack(hints, self._help_width(), " · "))

    def _help_width(self) -> int:
        """The help line's width; before the first layout, the picker's from the screen's."""
        try:
            width = self.query_one("#resume-help", Static).content_region.width
        except NoMatches:
            width = 0
        return width or max(20, min(100, self.app.size.width * 4 // 5) - 4)  # app.tcss #picker

    def on_resize(self) -> None:
        self.call_after_refresh(self._refresh_help)

    def _refresh_help(self) -> None:
        self.query_one("#resume-help", Static).update(self._help())

    @property
    def loaded(self) -> bool:
        """The list for the current scope has been read (tests wait for this)."""
        return self.scope in self.rows

    # --- loading ------------------------------------------------------------------------------

    def _load(self, scope: str) -> None:
        if scope in self.rows or scope in self._loading:
            self._fill()
            return
        self._loading.add(scope)
        self._fill()
        self.run_worker(self._read(scope), group=f"load-{scope}", exit_on_error=False)

    async def _read(self, scope: str) -> None:
        def report(rows: list[SessionRow], done: int, total: int) -> None:
            with contextlib.suppress(RuntimeError):  # the app is closing: nothing to show it on
                self.app.call_from_thread(self._show_partial, scope, rows, done, total)

        try:
            rows = await asyncio.to_thread(
                read_sessions, scope, self.folder, self.sessions_root, report, self.cwd
            )
            failure = None
        except Exception as error:  # listing skips bad files; anything else is still one line
            rows = []
            failure = f"Could not list the sessions: {_one_line(str(error)) or type(error).__name__}"
        self._loading.discard(scope)
        if self._partial.pop(scope, None) is not None:
            self._say("")
        if failure:
            self._say(failure, True)
        self.rows[scope] = [row for row in rows if row.info.path not in self._deleted]
        self._searches.pop(scope, None)
        if scope == self.scope:
            self._fill()

    def _show_partial(self, scope: str, rows: list[SessionRow], done: int, total: int) -> None:
        """The newest sessions while the index is being built, and how far it got."""
        if scope in self.rows or not self.is_attached:  # done, or the picker was closed meanwhile
            return
        self._partial[scope] = [row for row in rows if row.info.path not in self._deleted]
        self._searches.pop(scope, None)
        if scope == self.scope:
            self._fill()
            self._say(f"Indexing the sessions folder… {done:,} of {total:,} files read")

    # --- the list -----------------------------------------------------------------------------

    def _is_current(self, path: Path) -> bool:
        own = self.current.session_file if self.current is not None else None
        return own is not None and _same_file(own, path)

    def _row_text(self, index: int, width: int) -> Text:
        """One row: mark, title (cut to fit), folder in the "all" view, message count, age."""
        row = self._shown[index]
        info = row.info
        count = f"{info.message_count} msg{'s' if info.message_count != 1 else ''}"
        if info.agent:
            count = info.agent
        right = Text(f"{count:>9} {format_age(info.modified, self.now()):>4}", style="dim")
        if session_origin(info.path, self._pi_prefixes):  # found in pi's folder, not ours
            right = Text.assemble(Text(f"{PI_ORIGIN} ", style="bold"), right)
        if self.scope == "all":
            folder = Text(_one_line(_short_folder(info.cwd or str(info.path.parent))), style="dim")
            folder.truncate(FOLDER_WIDTH, overflow="ellipsis", pad=True)
            right = Text.assemble(folder, " ", right)
        if self.show_path:
            path = Text(_one_line(_short_folder(str(info.path))), style="dim")
            path.truncate(FOLDER_WIDTH, overflow="ellipsis", pad=True)
            right = Text.assemble(path, " ", right)
        mark = "● " if self._is_current(info.path) else "  "
        prefix = Text(self._prefixes[index] if index < len(self._prefixes) else "", style="dim")
        title = Text(_one_line(row.title), style="bold" if info.name else "")
        room = width - len(mark) - prefix.cell_len - right.cell_len - 2
        title.truncate(max(room, 1), overflow="ellipsis", pad=True)
        return Text.assemble(mark, prefix, title, "  ", right)

    @property
    def session_list(self) -> SessionList:
        return self.query_one(SessionList)

    def _fill(self) -> None:
        """Rebuild the list for the current scope, sort and search; keep the highlighted session."""
        previous = self._highlighted()
        self.query_one("#resume-title", Static).update(self._title())
        self.query_one("#resume-help", Static).update(self._help())
        rows = self.rows.get(self.scope)
        if rows is None:
            rows = self._partial.get(self.scope)
        if rows is None:
            self._shown = []
            self.session_list.show(0, None, "Loading sessions…")
            return
        query = self.query_one(Input).value
        search = self._searches.get(self.scope)
        if search is None:
            search = self._searches[self.scope] = RowSearch(rows)
        parsed = parse_query(query)
        if parsed.error or self._query_error:
            self._say(parsed.error or "", bool(parsed.error))
        self._query_error = bool(parsed.error)
        self._generation += 1
        if parsed.regex is not None:
            # A regex reads every row's text (tens of ms over thousands of sessions): off the UI
            # thread, so typing never waits; the list shows the newest answer when it comes.
            generation = self._generation
            self.run_worker(
                partial(self._regex_search, rows, search, parsed, query, previous, generation),
                thread=True,
                group="regex",
                exit_on_error=False,
            )
            return
        self._show_matches(match_rows(rows, search, parsed), parsed, query, previous)

    def _regex_search(
        self,
        rows: list[SessionRow],
        search: RowSearch,
        parsed: Query,
        query: str,
        previous: SessionRow | None,
        generation: int,
    ) -> None:
        """(Thread) the regex's matches, handed to the list unless a newer key came since."""
        matched = match_rows(rows, search, parsed)
        if generation == self._generation:
            with contextlib.suppress(RuntimeError):  # the app is closing
                self.app.call_from_thread(self._regex_done, matched, parsed, query, previous, generation)

    def _regex_done(
        self,
        matched: list[SessionRow],
        parsed: Query,
        query: str,
        previous: SessionRow | None,
        generation: int,
    ) -> None:
        if generation == self._generation and self.is_attached:
            self._show_matches(matched, parsed, query, previous)

    def _show_matches(
        self, matched: list[SessionRow], parsed: Query, query: str, previous: SessionRow | None
    ) -> None:
        if self.named_only:
            matched = [row for row in matched if row.info.name]
        # the rows are kept newest first, so search keeps that order
        self._prefixes = []
        if self.sort == "threaded" and parsed.empty:
            threaded = thread_rows(matched)
            self._shown = [row for row, _ in threaded]
            self._prefixes = [prefix for _, prefix in threaded]
        else:
            self._shown = (
                sort_rows(matched, "recent") if self.sort != "name" else sort_rows(matched, self.sort)
            )
        if not self._shown:
            if query.strip():
                empty = f"No session matches “{query.strip()}”"
            elif self.named_only:
                empty = "No named sessions (ctrl+n: all sessions; /name names one)"
            elif self.scope == "current":
                empty = "No sessions in this folder yet (tab: all folders)"
            else:
                empty = "No sessions yet"
            self.session_list.show(0, None, empty)
            return
        index = 0
        if previous is not None:
            path = previous.info.path
            index = next((i for i, row in enumerate(self._shown) if row.info.path == path), 0)
        self.session_list.show(len(self._shown), index)

    def _highlighted(self) -> SessionRow | None:
        index = self.session_list.highlighted
        if index is None or not 0 <= index < len(self._shown):
            return None
        return self._shown[index]

    def _say(self, text: str, error: bool = False) -> None:
        """One line under the list: the result of a rename or delete, or what went wrong."""
        message = self.query_one("#resume-message", Static)
        message.update(Text(for_terminal(text)))  # may quote a name or an OS error
        message.set_class(error, "-error")
        message.display = bool(text)

    # --- keys ---------------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._choose(self._highlighted())

    def on_session_list_clicked(self, event: SessionList.Clicked) -> None:
        self._choose(self._shown[event.index] if 0 <= event.index < len(self._shown) else None)

    def _choose(self, row: SessionRow | None) -> None:
        if row is not None:
            self.chosen = row.info
            self.dismiss(row.info.path)

    def action_move(self, step: int) -> None:
        self.session_list.move(step)

    def action_page(self, step: int) -> None:
        self.session_list.page(step)

    def action_toggle_scope(self) -> None:
        self.scope = "all" if self.scope == "current" else "current"
        self._load(self.scope)

    def action_toggle_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self._fill()

    def action_toggle_named(self) -> None:
        self.named_only = not self.named_only
        self._fill()

    def action_toggle_path(self) -> None:
        self.show_path = not self.show_path
        self.session_list.show(len(self._shown), self.session_list.highlighted)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    # --- rename -------------------------------------------------------------------------------

    def _foreign(self, row: SessionRow) -> bool:
        """Another agent's transcript is only read, never renamed or deleted from here."""
        if row.info.agent:
            self._say("That is another agent's transcript: pi-tui only reads it (Enter imports it).", True)
        return bool(row.info.agent)

    def action_rename(self) -> None:
        row = self._highlighted()
        if row is None or self._foreign(row):
            return

        def answered(name: str | None) -> None:
            if name is not None:
                self.run_worker(self._rename(row, name.strip()), group="rename", exit_on_error=False)

        prompt = TextPrompt(
            "Rename session (empty removes the name)", row.info.name or "", placeholder="session name"
        )
        self.app.push_screen(prompt, answered)

    async def _rename(self, row: SessionRow, name: str) -> None:
        path = row.info.path
        if name == (row.info.name or ""):
            return  # nothing changed: no entry for it
        try:
            if self._is_current(path):
                assert self.current is not None
                self.current.append_session_info(name)
            else:
                await asyncio.to_thread(name_session_file, path, name)
        except Exception as error:  # locked by another process, unreadable, not writable...
            self._say(f"Could not rename: {_one_line(str(error)) or type(error).__name__}", True)
            return
        for rows in self.rows.values():
            for other in rows:
                if _same_file(other.info.path, path):
                    other.info.name = name or None
                    other.label = SessionRow.of(other.info).label
        self._searches.clear()
        self._fill()
        self._say(f"Renamed to “{name}”." if name else "Name removed.")

    # --- delete -------------------------------------------------------------------------------

    def action_delete(self) -> None:
        row = self._highlighted()
        if row is None or self._foreign(row):
            return
        if self._is_current(row.info.path):
            self._say("This is the session you are in; it cannot be deleted.", True)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete(row)

        self.app.push_screen(ConfirmPrompt(f"Delete “{_one_line(row.title)}”? y/n"), answered)

    def _delete(self, row: SessionRow) -> None:
        path = row.info.path
        try:
            delete_session_file(path)
        except Exception as error:
            self._say(f"Could not delete: {_one_line(str(error)) or type(error).__name__}", True)
            return
        self._deleted.add(path)
        for lists in (self.rows, self._partial):
            for scope, rows in lists.items():
                lists[scope] = [other for other in rows if not _same_file(other.info.path, path)]
        self._searches.clear()
        index = self.session_list.highlighted or 0
        self._fill()
        if self._shown:
            self.session_list.show(len(self._shown), min(index, len(self._shown) - 1))
        self._say(f"Deleted “{_one_line(row.title)}”.")


def _same_file(one: Path, other: Path) -> bool:
    return one == other or one.resolve() == other.resolve()
