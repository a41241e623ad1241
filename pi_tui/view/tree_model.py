"""The pure model behind the ``/tree`` selector: which entries show, in which order, with which gutter.

Kept free of Textual so the layout can be checked line by line against pi's screens
(``/work/shared/specs/tree-ui.md``), and built for 20,000-entry sessions: the tree is flattened
once (pre-order, the branch holding the current leaf first, each subtree a contiguous slice), and
a filter, search or fold change only re-filters that flat list and recomputes the gutters of the
visible rows; row objects and entry texts are made only for the rows somebody looks at. It reads
the raw entry dicts (``TreeNode.raw``), never the typed entries, and every walk is iterative,
since a long single chain is as deep as the session is long.

pi 1.x entries: ``usage`` entries are never shown (like an assistant message without text),
``context_edit`` entries are bookkeeping that only ``all`` (or ``labeled-only``, when labelled)
shows, and ``system`` messages are plain ``[system]`` rows in the filters that show messages.

Layout rules (pi 0.73's): hidden entries hand their children to their nearest visible ancestor; a
row whose visible parent has several visible children gets a ``├``/``└`` connector and indents
its own children one more level (so the first generation after a branch start shifts right, later
generations of the same chain stay flat); ``│`` continues the connector column of a non-last
sibling. Several visible roots hang under an invisible root: they get no connector, and their
children are indented one level.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

from pi_tui.gc_control import paused_gc
from pi_tui.view.tree_text import (
    entry_text,
    find_call,
    format_label_time,
    has_all,
    has_text,
    search_parts,
    tools_text,
)

if TYPE_CHECKING:
    from pi_tui.session.tree import TreeNode

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")
FILTER_TAGS = {
    "default": "",
    "no-tools": " [no-tools]",
    "user-only": " [user]",
    "labeled-only": " [labeled]",
    "all": " [all]",
}
LABEL_TIME_TAG = " [+label time]"
"""Appended to the counter while label timestamps are shown (Shift+T), as pi does."""
NO_ENTRIES = "No entries found"
"""What pi shows in place of the list when the filter or search leaves nothing (counter ``(0/0)``)."""

CURSOR = "\u203a "  # single right-pointing angle quotation mark, as pi draws it
PATH_MARKER = "• "
FOLDED_ROOT_MARKER = "⊞ "

# What an entry is, as far as the filters care; computed once per entry.
_USER = 0  # a user message
_TOOL = 1  # a tool result (hidden by no-tools)
_SETTINGS = 2  # bookkeeping, shown only by "all" (and by "labeled-only" when labelled)
_SILENT = 3  # never shown: an assistant message without text (unless errored/aborted/leaf), pi 1.x usage
_OTHER = 4  # everything else the default mode shows

_TYPE_KINDS = dict.fromkeys(
    (
        "label",
        "custom",
        "model_change",
        "thinking_level_change",
        "session_info",
        # pi 1.x: an edit of what the model gets, shown by "all" as [context omit: <target id>]
        "context_edit",
        # oh-my-pi bookkeeping (issue 11): no more interesting in the tree than session_info; its
        # /clear marker (reset_boundary) included, which pi 0.73 would draw as a row with no text
        "ttsr_injection",
        "session_init",
        "reset_boundary",
        "model_usage",
        "title_change",
        "credential_pin",
        "archive",
        "service_tier_change",
        "mode_change",
    ),
    _SETTINGS,
)
# pi 1.x hides a usage entry (tokens spent outside a reply) in every filter, the current leaf
# included: the selection then goes to its nearest visible ancestor, its children hang there too.
_TYPE_KINDS["usage"] = _SILENT
KIND_NAMES = ("user", "tool", "settings", "silent", "other")
"""Names of the filter kinds, by their number (the HTML export's filters use the numbers)."""
_ROLE_KINDS = {"user": _USER, "toolResult": _TOOL}
_ALLOWED = {
    "default": frozenset({_USER, _TOOL, _OTHER}),
    "no-tools": frozenset({_USER, _OTHER}),
    "user-only": frozenset({_USER}),
    "labeled-only": frozenset({_USER, _TOOL, _SETTINGS, _OTHER}),  # and labelled
    "all": frozenset({_USER, _TOOL, _SETTINGS, _OTHER}),
}


def allowed_kinds() -> dict[str, list[int]]:
    """Filter mode -> the kinds it shows (``labeled-only`` shows them only when labelled)."""
    return {mode: sorted(kinds) for mode, kinds in _ALLOWED.items()}


_TOOL_CALL_WALK = 256
"""How far up a tool result looks for the assistant message holding its call."""
_SCANS_BEFORE_MAP = 8
"""Id lookups answered by scanning before the id -> index map is built."""


@dataclass(frozen=True, slots=True)
class TreeRow:
    """One visible line of the selector, without the cursor column."""

    entry_id: str
    gutter: str
    """Everything between the cursor column and the path marker: indentation, ``│`` gutters, the
    ``├``/``└`` connector with its fold sign, or ``⊞ `` for a folded row that has no connector."""
    on_path: bool
    """On the path from the root to the current leaf (drawn with ``• ``)."""
    label: str | None
    text: str
    """``user: ...``, ``[read: path:1-20]``, ...: one line, not cut to any width."""
    foldable: bool
    folded: bool


@dataclass(slots=True)
class _View:
    """The visible tree for one filter/search/fold state; rows are made from it on demand."""

    visible: list[int]  # flat indices, in display order
    vparent: list[int]  # row -> row of the nearest visible ancestor, -1 for a visible root
    nchildren: list[int]  # row -> number of visible children
    prefixes: list[str]  # row -> gutter string

    def row_of(self, index: int) -> int | None:
        """The row showing flat index ``index``, if it is visible (``visible`` is sorted)."""
        row = bisect_left(self.visible, index)
        return row if row < len(self.visible) and self.visible[row] == index else None


@dataclass(slots=True)
class FlatTree:
    """:meth:`TreeModel.flat`: the tree as parallel lists over its pre-order (active branch first)."""

    ids: list[str]
    parents: list[int]
    """Index of each entry's parent, -1 for a root."""
    ends: list[int]
    """One past the last index of each entry's subtree (a subtree is a contiguous slice)."""
    kinds: list[int]
    """What each entry is to the filters (see :data:`KIND_NAMES`)."""
    texts: list[str]
    """The row text ``/tree`` shows (``user: ...``, ``[read: path]``)."""
    haystacks: list[str]
    """Lower-cased search text, without the label (labels change; the page adds them)."""
    labels: dict[str, str]
    path: list[int]
    """Indices on the path from the root to the current leaf."""


class TreeRows(Sequence[TreeRow]):
    """``TreeModel.rows``: a read-only list whose rows are built when first read.

    Building 20,000 row objects (and their texts) for every filter change would cost more than
    everything else together, while the widget only ever shows a screenful of them.
    """

    __slots__ = ("_cache", "_model", "_view")

    def __init__(self, model: TreeModel, view: _View) -> None:
        self._model = model
        self._view = view
        self._cache: list[TreeRow | None] = [None] * len(view.visible)

    def __len__(self) -> int:
        return len(self._cache)

    @overload
    def __getitem__(self, index: int) -> TreeRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[TreeRow]: ...

    def __getitem__(self, index: int | slice) -> TreeRow | list[TreeRow]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._cache)))]
        row = self._cache[index]  # raises IndexError like a list
        if row is None:
            row = self._cache[index] = self._model._make_row(self._view, index % len(self._cache))
        return row

    def __iter__(self) -> Iterator[TreeRow]:
        for index in range(len(self._cache)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TreeRows({len(self)} rows)"


class TreeModel:
    """Rows, filters, search, folds and segment jumps of the ``/tree`` selector.

    The selection belongs to the widget (by entry id): after any change it asks
    :meth:`nearest_visible` where that entry went, and keeps the id while the view is empty so
    that switching back restores it. Row indices are 0-based everywhere.
    """

    def __init__(
        self,
        roots: list[TreeNode],
        leaf_id: str | None,
        *,
        filter_mode: str = "default",
        label_time_of: Callable[[str], str | None] | None = None,
        marks: Mapping[str, str] | None = None,
    ) -> None:
        self.leaf_id = leaf_id
        self.marks: Mapping[str, str] = marks or {}
        """Entry id -> a short mark drawn before its text (``±3 files``: the turn changed files).
        A marked assistant message is shown even without text: the mark is what it says."""
        # The start mode comes from the user's settings: an unknown value means the default.
        self.filter_mode = filter_mode if filter_mode in FILTER_MODES else "default"
        self.search = ""
        self.show_label_times = False
        self.clock: Callable[[], datetime] = datetime.now
        """What "today" is for label times (a label set today shows only its time)."""
        self._label_time_of = label_time_of
        self._label_times: dict[str, str | None] = {}  # set through set_label; wins over label_time_of
        self._folded: set[str] = set()
        self._views: dict[str, _View] = {}  # per filter mode, without search or folds
        self._position: dict[str, int] | None = None
        self._scans = 0
        self._calls_by_id: dict[str, dict[str, Any]] | None = None
        with paused_gc():  # nothing built here can form a cycle; a full collection would walk the session
            self._flatten(roots, leaf_id)
            self._rebuild()

    # ------------------------------------------------------------------ building

    def _flatten(self, roots: list[TreeNode], leaf_id: str | None) -> None:
        """Pre-order list of every entry, the child holding the leaf first at each branch point."""
        path = _path_to(roots, leaf_id)
        self._path = path
        nodes: list[TreeNode] = []
        append = nodes.append
        ends: list[int] = []
        stack: list[Any] = _active_first(roots, path)[::-1]
        pop = stack.pop
        push = stack.append
        while stack:
            item = pop()
            if item.__class__ is tuple:
                # every entry of a single-child chain ends its subtree where the chain's last one does
                first, last = item
                ends[first : last + 1] = [len(nodes)] * (last + 1 - first)
                continue
            node = item
            first = len(nodes)
            while True:
                append(node)
                children = node.children
                if len(children) != 1:
                    break
                node = children[0]
            last = len(nodes) - 1
            if children:
                ends.extend([0] * (last + 1 - first))
                push((first, last))
                stack.extend(_active_first(children, path)[::-1])
            else:
                ends.extend([last + 1] * (last + 1 - first))
        raws = [node.raw for node in nodes]
        self._raws = raws
        self._ids: list[str] = [raw["id"] for raw in raws]
        self._ends = ends
        self._kinds = _kinds(raws, leaf_id)
        if self.marks:  # a marked turn without text is shown for its mark (silent otherwise)
            kinds, marks = self._kinds, self.marks
            for index, entry_id in enumerate(self._ids):
                if entry_id in marks and kinds[index] == _SILENT and raws[index].get("type") == "message":
                    kinds[index] = _OTHER
        self._labels: dict[str, str] = {node.raw["id"]: node.label for node in nodes if node.label}
        self._texts: list[str | None] = [None] * len(raws)
        self._haystacks: list[str | None] = [None] * len(raws)

    def _index_of_id(self, entry_id: str) -> int | None:
        """Flat index of an entry.

        The first few lookups scan the id list (in C, well under a millisecond); the id -> index
        map, which costs more than that to build, comes only once lookups keep coming.
        """
        position = self._position
        if position is None:
            self._scans += 1
            if self._scans <= _SCANS_BEFORE_MAP:
                try:
                    return self._ids.index(entry_id)
                except ValueError:
                    return None
            position = self._position = dict(zip(self._ids, range(len(self._ids)), strict=True))
        return position.get(entry_id)

    def _parent_index(self, index: int) -> int:
        """Flat index of an entry's parent, -1 for a root."""
        parent_id = self._raws[index].get("parentId")
        if not isinstance(parent_id, str):
            return -1
        if index > 0 and self._ids[index - 1] == parent_id:  # the usual case: inside a chain
            return index - 1
        parent = self._index_of_id(parent_id)
        return -1 if parent is None else parent

    def _visible_indices(self) -> list[int]:
        """Flat indices that pass the filter, the search and the folds, in display order."""
        kinds = self._kinds
        allowed = _ALLOWED[self.filter_mode]
        if self.filter_mode == "labeled-only":
            labels = self._labels
            ids = self._ids
            candidates = [i for i in range(len(kinds)) if kinds[i] in allowed and ids[i] in labels]
        else:
            candidates = [i for i in range(len(kinds)) if kinds[i] in allowed]
        tokens = self.search.lower().split()
        if tokens:
            haystack = self._haystack
            if len(tokens) == 1:
                token = tokens[0]
                candidates = [i for i in candidates if token in haystack(i)]
            else:
                candidates = [i for i in candidates if has_all(haystack(i), tokens)]
        if self._folded:
            skip = bytearray(len(kinds))
            ends = self._ends
            for entry_id in self._folded:
                index = self._index_of_id(entry_id)
                if index is not None and ends[index] > index + 1:
                    skip[index + 1 : ends[index]] = b"\x01" * (ends[index] - index - 1)
            candidates = [i for i in candidates if not skip[i]]
        return candidates

    def _rebuild(self) -> None:
        """Recompute the visible tree after any change (cached per filter mode when plain)."""
        plain = not self.search.strip() and not self._folded
        view = self._views.get(self.filter_mode) if plain else None
        if view is None:
            with paused_gc():
                view = self._layout(self._visible_indices())
            if plain:
                self._views[self.filter_mode] = view
        self._view = view
        self.rows = TreeRows(self, view)

    def _layout(self, visible: list[int]) -> _View:
        """Nearest visible ancestors, child counts and the gutter of every visible row."""
        count = len(visible)
        ends = self._ends
        # Pass 1: the visible tree. ``top`` is the innermost visible row whose subtree is still
        # open (flat indices up to ``top_end``); ``saved`` holds the ones around it.
        vparent = [-1] * count
        nchildren = [0] * count
        last_child = [-1] * count
        saved: list[tuple[int, int]] = []
        push = saved.append
        pop = saved.pop
        top = -1
        top_end = len(ends) + 1  # the invisible root never closes
        last_root = -1
        root_count = 0
        for row, index in enumerate(visible):
            while top_end <= index:
                top, top_end = pop()
            if top >= 0:
                vparent[row] = top
                nchildren[top] += 1
                last_child[top] = row
            else:
                last_root = row
                root_count += 1
            end = ends[index]
            if end > index + 1:  # only entries with descendants can be anyone's parent
                push((top, top_end))
                top = row
                top_end = end
        multiple_roots = root_count > 1

        # Pass 2: gutters, top-down (a parent's row always comes before its children's).
        folded = self._folded
        ids = self._ids
        prefixes = [""] * count
        # (indent, gutter) a row hands to its children
        handed: list[tuple[int, str]] = [(0, "")] * count
        # A row "passes through" when its one child gets the row's own indent and gutter: that
        # child then has the very same prefix, which is all a long single-child chain costs.
        through = bytearray(count)
        plain: dict[tuple[str, int], str] = {}
        row = -1
        for parent, own_children in zip(vparent, nchildren, strict=True):
            row += 1
            if (
                parent >= 0
                and through[parent]
                and own_children < 2
                and (not folded or ids[visible[row]] not in folded)
            ):
                prefixes[row] = prefixes[parent]
                handed[row] = handed[parent]
                through[row] = 1
                continue
            if parent < 0:
                indent = 1 if multiple_roots else 0
                connector = False  # children of the invisible root never draw one
                just_branched = multiple_roots
                is_last = row == last_root
                gutter = ""
            else:
                indent, gutter = handed[parent]
                just_branched = connector = nchildren[parent] > 1
                is_last = last_child[parent] == row
            display_indent = (indent - 1 if indent > 0 else 0) if multiple_roots else indent
            is_folded = ids[visible[row]] in folded if folded else False
            width = 3 * display_indent
            if connector and len(gutter) <= width - 3:
                sign = "⊞" if is_folded else ("⊟" if own_children else "─")
                prefix = gutter.ljust(width - 3) + ("└" if is_last else "├") + sign + " "
            else:
                key = (gutter, display_indent)
                prefix = plain.get(key)  # type: ignore[assignment]
                if prefix is None:
                    prefix = plain[key] = gutter[:width].ljust(width)
                if is_folded and not connector:
                    prefix += FOLDED_ROOT_MARKER
            prefixes[row] = prefix
            shift = own_children > 1 or (just_branched and indent > 0)
            if connector:
                level = 3 * (display_indent - 1)
                if len(gutter) <= level:
                    gutter = gutter.ljust(level) + ("   " if is_last else "│  ")
                handed[row] = (indent + 1 if shift else indent, gutter)
            else:
                handed[row] = (indent + 1, gutter) if shift else (indent, gutter)
                through[row] = not shift and not is_folded
        return _View(visible, vparent, nchildren, prefixes)

    def _make_row(self, view: _View, row: int) -> TreeRow:
        index = view.visible[row]
        entry_id = self._ids[index]
        parent = view.vparent[row]
        own_children = view.nchildren[row]
        text = self._texts[index]
        if text is None:
            text = self._text(index)
        folded = entry_id in self._folded
        return TreeRow(
            entry_id,
            view.prefixes[row],
            entry_id in self._path,
            self._labels.get(entry_id),
            text,
            # a root or a segment start (one of several siblings) with something to hide
            own_children > 0 and (parent < 0 or view.nchildren[parent] > 1),
            folded,
        )

    # ------------------------------------------------------------------ texts

    def _text(self, index: int) -> str:
        """The display text of one entry, cached: it never depends on the filter."""
        raw = self._raws[index]
        message = raw.get("message")
        call = None
        if isinstance(message, dict) and message.get("role") == "toolResult":
            call = self._tool_call_of(index)
        text = entry_text(raw, call)
        if raw["id"] in self.marks and isinstance(message, dict) and not has_text(message.get("content")):
            text = tools_text(message) or text  # a marked turn of tool calls only: name its tools
        self._texts[index] = text
        return text

    def _haystack(self, index: int) -> str:
        """Lower-cased search text of one entry: label, role, text, tool name and arguments."""
        text = self._haystacks[index]
        if text is None:
            words = search_parts(self._raws[index], self._tool_call_of, index)
            text = self._haystacks[index] = " ".join(words).lower()
        label = self._labels.get(self._ids[index])
        return f"{label.lower()} {text}" if label else text

    def _tool_call_of(self, index: int) -> dict[str, Any] | None:
        """The toolCall block a tool result answers: in the nearest assistant message above it.

        Looking in the ancestors first (rather than one id map over the whole session, as pi does)
        keeps the right call when two branches reuse an id, as scripted providers do.
        """
        message = self._raws[index].get("message")
        call_id = message.get("toolCallId") if isinstance(message, dict) else None
        if not isinstance(call_id, str):
            return None
        raws = self._raws
        current = self._parent_index(index)
        for _ in range(_TOOL_CALL_WALK):
            if current < 0:
                break
            raw = raws[current]
            if raw.get("type") == "message":
                candidate = raw.get("message")
                if isinstance(candidate, dict) and candidate.get("role") == "assistant":
                    call = find_call(candidate.get("content"), call_id)
                    if call is not None:
                        return call
                    break
            current = self._parent_index(current)
        if self._calls_by_id is None:
            calls: dict[str, dict[str, Any]] = {}
            for raw in raws:
                candidate = raw.get("message") if raw.get("type") == "message" else None
                if isinstance(candidate, dict) and candidate.get("role") == "assistant":
                    content = candidate.get("content")
                    if isinstance(content, list):
                        for block in content:
                            if isinstance(block, dict) and block.get("type") == "toolCall":
                                calls[str(block.get("id"))] = block
            self._calls_by_id = calls
        return self._calls_by_id.get(call_id)

    # ------------------------------------------------------------------ export

    def flat(self) -> FlatTree:
        """The whole tree in display order with everything a filter or search looks at.

        For the HTML export, whose page lays the tree out itself (any filter, any search) and so
        needs every entry's row text and search text, not only the rows somebody looks at.
        """
        ids = self._ids
        count = len(ids)
        texts = [self._texts[i] or self._text(i) for i in range(count)]
        raws = self._raws
        call_of = self._tool_call_of
        haystacks = [
            self._haystacks[i] or " ".join(search_parts(raws[i], call_of, i)).lower() for i in range(count)
        ]
        parents = [self._parent_index(i) for i in range(count)]
        path = [i for i in range(count) if ids[i] in self._path]
        return FlatTree(
            ids, parents, list(self._ends), list(self._kinds), texts, haystacks, dict(self._labels), path
        )

    # ------------------------------------------------------------------ filters, search, labels

    def set_filter(self, mode: str) -> None:
        """Switch the filter mode; folds are dropped (they would refer to another layout)."""
        if mode not in FILTER_MODES:
            raise ValueError(f"unknown tree filter mode: {mode!r}")
        self.filter_mode = mode
        self._folded.clear()
        self._rebuild()

    def cycle_filter(self, step: int = 1) -> None:
        """Ctrl+O (step 1) / Shift+Ctrl+O (step -1): default → no-tools → user-only → labeled-only → all."""
        position = FILTER_MODES.index(self.filter_mode)
        self.set_filter(FILTER_MODES[(position + step) % len(FILTER_MODES)])

    def toggle_filter(self, mode: str) -> None:
        """The direct keys: Ctrl+D sets default; the others switch to their mode, or back to default."""
        if mode not in FILTER_MODES:
            raise ValueError(f"unknown tree filter mode: {mode!r}")
        self.set_filter("default" if mode == self.filter_mode else mode)

    def set_search(self, text: str) -> None:
        """Type-to-search: case-insensitive AND of whitespace-separated words; folds are dropped."""
        self.search = text
        self._folded.clear()
        self._rebuild()

    def set_label(self, entry_id: str, label: str | None, timestamp: str | None = None) -> None:
        """Reflect a label saved from the Shift+L prompt (empty/None removes it) without a reload."""
        if self._index_of_id(entry_id) is None:
            return
        if label and label.strip():
            self._labels[entry_id] = label.strip()
            self._label_times[entry_id] = timestamp or datetime.now().astimezone().isoformat()
        else:
            self._labels.pop(entry_id, None)
            self._label_times[entry_id] = None
        self._views.pop("labeled-only", None)  # the only view that depends on labels
        self._rebuild()

    def toggle_label_times(self) -> None:
        """Shift+T: show when each label was set, before the entry text."""
        self.show_label_times = not self.show_label_times

    # ------------------------------------------------------------------ folds and navigation

    def fold(self, entry_id: str) -> bool:
        """Fold a segment start (or visible root) with visible children; False if not possible."""
        row = self.index_of(entry_id)
        if row is None or entry_id in self._folded or not self.rows[row].foldable:
            return False
        self._folded.add(entry_id)
        self._rebuild()
        return True

    def unfold(self, entry_id: str) -> bool:
        """Show a folded segment again (other folds stay); False if it was not folded."""
        if entry_id not in self._folded:
            return False
        self._folded.discard(entry_id)
        self._rebuild()
        return True

    def index_of(self, entry_id: str) -> int | None:
        """The row showing ``entry_id``, None if it is hidden or unknown."""
        index = self._index_of_id(entry_id)
        return None if index is None else self._view.row_of(index)

    def nearest_visible(self, entry_id: str) -> str | None:
        """Where the selection goes after a change: the entry, else its nearest visible ancestor.

        Like pi, an entry with no visible ancestor (or an unknown id) falls back to the last row;
        None only when nothing is visible (the widget then keeps its id for later).
        """
        view = self._view
        if not view.visible:
            return None
        ids = self._ids
        index = self._index_of_id(entry_id)
        for _ in range(len(ids)):
            if index is None or index < 0:
                break
            if view.row_of(index) is not None:
                return ids[index]
            index = self._parent_index(index)
        return ids[view.visible[-1]]

    def segment_left(self, index: int) -> int:
        """Ctrl/Alt+Left: fold the segment under the cursor, else jump to the previous segment start."""
        if not self.rows:
            return index
        row = self.rows[index]
        if row.foldable and not row.folded:
            self.fold(row.entry_id)
            return index  # folding hides only rows below this one
        vparent = self._view.vparent
        nchildren = self._view.nchildren
        current = index
        while True:
            parent = vparent[current]
            if parent < 0:
                return current
            if nchildren[parent] > 1 and current < index:
                return current
            current = parent

    def segment_right(self, index: int) -> int:
        """Ctrl/Alt+Right: unfold, else jump to the next branch point's first child or the chain end."""
        if not self.rows:
            return index
        row = self.rows[index]
        if row.folded:
            self.unfold(row.entry_id)
            return index
        nchildren = self._view.nchildren
        current = index
        # In pre-order a row's first visible child is the next row; a single child continues the chain.
        while nchildren[current] == 1:
            current += 1
        return current + 1 if nchildren[current] > 1 else current

    # ------------------------------------------------------------------ rendering

    def line(self, index: int, selected: bool) -> str:
        """The full line of one row (the widget cuts it to the terminal width)."""
        return "".join(self.line_parts(index, selected))

    def line_parts(self, index: int, selected: bool) -> tuple[str, str, str]:
        """The line of one row as (cursor, gutter, path marker and label; the mark with its
        space, or ""; the text), so the widget can draw the mark in its own colour."""
        row = self.rows[index]
        parts = [CURSOR if selected else "  ", row.gutter]
        if row.on_path:
            parts.append(PATH_MARKER)
        if row.label:
            parts.append(f"[{row.label}] ")
            if self.show_label_times:
                stamp = self._label_time(row.entry_id)
                if stamp:
                    parts.append(f"{stamp} ")
        mark = self.marks.get(row.entry_id)
        return "".join(parts), f"{mark} " if mark else "", row.text

    def _label_time(self, entry_id: str) -> str | None:
        if entry_id in self._label_times:
            iso = self._label_times[entry_id]
        else:
            iso = self._label_time_of(entry_id) if self._label_time_of is not None else None
        return format_label_time(iso, self.clock()) if iso else None

    def counter(self, selected: int) -> str:
        """``(selected/visible)`` for the 0-based row ``selected``, the filter tag and the label-time tag."""
        tags = FILTER_TAGS[self.filter_mode] + (LABEL_TIME_TAG if self.show_label_times else "")
        if not self.rows:
            return f"(0/0){tags}"
        return f"({selected + 1}/{len(self.rows)}){tags}"

    def raw(self, entry_id: str) -> dict[str, Any] | None:
        """The entry dict as in the file (to decide what Enter does with it)."""
        index = self._index_of_id(entry_id)
        return self._raws[index] if index is not None else None


# ---------------------------------------------------------------------- flattening


def _path_to(roots: list[TreeNode], leaf_id: str | None) -> set[str]:
    """Ids from a root down to the leaf: a depth-first search, newest branch first.

    The leaf usually sits in the newest branch of each branch point, so that order finds it early.
    """
    if leaf_id is None:
        return set()
    path: list[str] = []
    stack: list[tuple[TreeNode, int]] = [(root, 0) for root in roots]
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        while True:
            entry_id = node.raw["id"]
            path.append(entry_id)
            if entry_id == leaf_id:
                return set(path)
            children = node.children
            if len(children) != 1:
                break
            node = children[0]
        if children:
            depth = len(path)
            stack.extend([(child, depth) for child in children])
    return set()


def _active_first(nodes: list[TreeNode], path: set[str]) -> list[TreeNode]:
    """The node whose subtree holds the leaf (at most one) first; the rest keep their order."""
    if path:
        for index, node in enumerate(nodes):
            if node.raw["id"] in path:
                return nodes if index == 0 else [node, *nodes[:index], *nodes[index + 1 :]]
    return nodes


def _kinds(raws: list[dict[str, Any]], leaf_id: str | None) -> list[int]:
    """The filter kind of every entry (one tight loop: it runs over the whole session)."""
    kinds: list[int] = []
    append = kinds.append
    type_kinds = _TYPE_KINDS
    for raw in raws:
        kind = raw["type"]
        if kind != "message":
            append(type_kinds.get(kind, _OTHER))
            continue
        message: Any = raw.get("message")
        role = message.get("role") if message.__class__ is dict else None
        if role == "user":
            append(_USER)
        elif role == "toolResult":
            append(_TOOL)
        elif role != "assistant" or raw["id"] == leaf_id or has_text(message.get("content")):
            append(_OTHER)
        else:
            stop = message.get("stopReason")
            append(_SILENT if not stop or stop == "stop" or stop == "toolUse" else _OTHER)
    return kinds
