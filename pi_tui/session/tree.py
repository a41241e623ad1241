"""The entry index of one session, and the walks over its tree.

:class:`SessionManager <pi_tui.session.manager.SessionManager>` owns the file, the leaf and the
typed views; what is here works on the raw entry dicts only: the index kept up to date on each
append (ids, labels, the session name, whether an assistant spoke), the children of an entry,
the root-to-leaf path (grown, not walked again, after an append), and the forest of
:class:`TreeNode` the tree views draw. Siblings are ordered by time as pi orders them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pi_tui.gc_control import paused_gc
from pi_tui.session.context import path_to_root
from pi_tui.session.entries import typed_entry
from pi_tui.session.errors import EntryNotFoundError
from pi_tui.session.ids import timestamp_ms
from pi_tui.session.reader import RawEntry

_PATH_EXTEND_LIMIT = 256
"""How far up from a new leaf the last branch path is looked for before walking to the root."""


class TreeNode:
    """One node of :meth:`SessionManager.get_tree`: an entry, its children and its label.

    The typed ``entry`` is built on first access, so building the whole tree stays cheap.
    """

    __slots__ = ("_entry", "children", "label", "raw")

    def __init__(self, raw: RawEntry, label: str | None) -> None:
        self.raw = raw
        self.children: list[TreeNode] = []
        self.label = label
        self._entry: Any = None

    @property
    def id(self) -> str:
        entry_id: str = self.raw["id"]  # the reader gives every kept entry a text id
        return entry_id

    @property
    def entry(self) -> Any:
        """The typed entry (any of :mod:`pi_tui.session.entries`' entry models)."""
        if self._entry is None:
            self._entry = typed_entry(self.raw)
        return self._entry

    def __repr__(self) -> str:
        return f"TreeNode({self.raw.get('type')} {self.id}, {len(self.children)} children)"


@dataclass(slots=True)
class EntryIndex:
    """Everything derived from the entry list; rebuilt on load, updated on append."""

    entries: list[RawEntry] = field(default_factory=list)
    by_id: dict[str, RawEntry] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    label_times: dict[str, str] = field(default_factory=dict)
    session_name: str | None = None
    has_assistant: bool = False
    children: dict[str | None, list[RawEntry]] | None = None
    """parentId -> children in file order; built on first use (most opens never need it)."""
    last_path: tuple[str, list[RawEntry]] | None = None
    """The leaf the last :meth:`branch_path` answered for, and its path."""

    def add(self, raw: RawEntry) -> None:
        self.entries.append(raw)
        self.by_id[raw["id"]] = raw
        if self.children is not None:
            self.children.setdefault(raw.get("parentId"), []).append(raw)
        kind = raw.get("type")
        if kind == "message":
            if not self.has_assistant:
                message = raw.get("message")
                self.has_assistant = isinstance(message, dict) and message.get("role") == "assistant"
        elif kind == "label":
            target = raw.get("targetId")
            if isinstance(target, str):
                label = raw.get("label")
                if isinstance(label, str) and label.strip():
                    self.labels[target] = label
                    self.label_times[target] = str(raw.get("timestamp", ""))
                else:
                    self.labels.pop(target, None)
                    self.label_times.pop(target, None)
        elif kind == "session_info":
            name = raw.get("name")
            self.session_name = name.strip() if isinstance(name, str) and name.strip() else None

    def last_id(self) -> str | None:
        """The id of the last entry in file order."""
        if not self.entries:
            return None
        entry_id: str = self.entries[-1]["id"]
        return entry_id

    def children_of(self, parent_id: str | None) -> list[RawEntry]:
        """Direct children of ``parent_id`` (None: the roots), in timestamp order."""
        if self.children is None:
            self.children = {}
            for raw in self.entries:
                self.children.setdefault(raw.get("parentId"), []).append(raw)
        if parent_id is None:  # roots: a null parent, or one that is not in the file
            return [raw for key, rows in self.children.items() if key not in self.by_id for raw in rows]
        return sort_by_time(list(self.children.get(parent_id, ())), _same)

    def branch_path(self, leaf_id: str | None) -> list[RawEntry] | None:
        """Root-to-leaf raw entries, extending the last path when the leaf grew from it.

        A turn appends a handful of entries under the leaf; walking 40,000 parents again for
        each of the agent's context builds cost more than the rest of the build. None when the
        leaf is unknown (the context builder then falls back as it does).
        """
        by_id = self.by_id
        if leaf_id is None or leaf_id not in by_id:
            return None
        if self.last_path is not None:
            old_leaf, old_path = self.last_path
            if old_leaf == leaf_id:
                return old_path
            added: list[RawEntry] = []
            current = by_id.get(leaf_id)
            while current is not None and len(added) < _PATH_EXTEND_LIMIT:
                if current.get("id") == old_leaf:
                    path = old_path + added[::-1]
                    self.last_path = (leaf_id, path)
                    return path
                added.append(current)
                parent = current.get("parentId")
                current = by_id.get(parent) if parent is not None else None
        path = path_to_root(by_id, leaf_id)
        self.last_path = (leaf_id, path)
        return path

    def branch_and_labels(self, leaf_id: str) -> tuple[list[RawEntry], list[tuple[str, str]]]:
        """The root-to-``leaf_id`` entries without label entries, and the labels of those
        entries (a copy of a branch re-creates them, so no label points outside the copy)."""
        if leaf_id not in self.by_id:
            raise EntryNotFoundError(leaf_id)
        path = [raw for raw in path_to_root(self.by_id, leaf_id) if raw.get("type") != "label"]
        on_path = {raw["id"] for raw in path}
        labels = [(target, label) for target, label in self.labels.items() if target in on_path]
        return path, labels

    def tree(self) -> list[TreeNode]:
        """All entries as a forest; roots have a null or missing parent; children by timestamp."""
        with paused_gc():  # nodes hold no back-references: nothing here can form a cycle
            return self._build_tree()

    def _build_tree(self) -> list[TreeNode]:
        labels = self.labels
        nodes: dict[str, TreeNode] = {}
        for raw in self.entries:
            nodes[raw["id"]] = TreeNode(raw, labels.get(raw["id"]))
        roots: list[TreeNode] = []
        for raw in self.entries:
            node = nodes[raw["id"]]
            parent_id = raw.get("parentId")
            parent = nodes.get(parent_id) if isinstance(parent_id, str) else None
            (parent.children if parent is not None else roots).append(node)
        # Children are ordered by time as pi orders them; roots stay in file order (as in pi).
        for node in nodes.values():
            if len(node.children) > 1:
                node.children = sort_by_time(node.children, _node_raw)
        return roots


def _same(raw: RawEntry) -> RawEntry:
    return raw


def _node_raw(node: TreeNode) -> RawEntry:
    return node.raw


T = TypeVar("T")


def sort_by_time(items: list[T], raw_of: Callable[[T], RawEntry]) -> list[T]:
    """``items`` ordered by entry time as pi orders siblings (JavaScript's ``new Date`` and a
    stable sort in which an unreadable time compares equal to anything).

    File order is almost always time order, so that case is checked first and costs no sort.
    """
    times = [timestamp_ms(raw_of(item).get("timestamp")) for item in items]
    if all(a <= b for a, b in itertools.pairwise(times)):
        return items

    def compare(a: int, b: int) -> int:
        return _js_compare(times[a], times[b])

    order = sorted(range(len(items)), key=functools.cmp_to_key(compare))
    return [items[position] for position in order]


def _js_compare(a: float, b: float) -> int:
    difference = a - b
    if difference != difference:  # NaN: JavaScript's sort treats the pair as equal
        return 0
    return -1 if difference < 0 else (1 if difference > 0 else 0)
