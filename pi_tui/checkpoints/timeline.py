"""Where the files stood at each point of a session tree: pure functions over the session's raw
entries, no git, no disk.

After a turn whose tools ran, the agent appends one ``custom`` entry (pi keeps custom entries
and leaves them out of the model's context, so pi 0.73 and 1.x open and continue the file)::

    {"type": "custom", "customType": "pi-tui.files", "data": {
        "version": 1, "turn": "<id of the assistant message whose tools ran>",
        "before": "<commit>", "after": "<commit>",
        "changes": [{"status": "M", "path": "app.py"}, {"status": "R", "path": "b", "from": "a"}],
        "skipped": ["big.bin"]}}

``before`` is the state the tools started from, ``after`` the state they left; the entry's
parent is the turn's last tool result. The state at an entry is then (:func:`state_at`):

- the ``after`` of the nearest checkpoint on the way from the entry to the root, or of a
  checkpoint whose parent is on that way (the tools had finished at that point);
- the ``before`` of a checkpoint whose turn is on that way (its tools had not run yet);
- before any turn changed files: the ``before`` of the first checkpoint that descends from it,
  or from the nearest entry on the way that has one (:func:`first_state_below`: a branch that
  never changed files has the files of the point it forked from).

Tool results in the middle of a turn with several tool calls count as the turn's start: the
record is per turn, as the issue and Gemini CLI have it, not per call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CHECKPOINT_TYPE = "pi-tui.files"


@dataclass(frozen=True, slots=True)
class TurnCheckpoint:
    """One checkpoint entry, read leniently (a hand-edited or foreign entry is skipped)."""

    entry_id: str
    parent_id: str | None
    turn: str | None
    before: str
    after: str
    changes: tuple[Mapping[str, str], ...]
    skipped: tuple[str, ...]

    @property
    def changed_paths(self) -> list[str]:
        return [str(change.get("path", "")) for change in self.changes]


def checkpoint_data(
    turn: str | None, before: str, after: str, changes: Sequence[Mapping[str, str]], skipped: Sequence[str]
) -> dict[str, Any]:
    """The ``data`` of a checkpoint entry (the one shape :func:`read_checkpoint` reads)."""
    data: dict[str, Any] = {"version": 1, "turn": turn, "before": before, "after": after}
    data["changes"] = [dict(change) for change in changes]
    if skipped:
        data["skipped"] = list(skipped)
    return data


def read_checkpoint(raw: Mapping[str, Any]) -> TurnCheckpoint | None:
    """The checkpoint in a raw entry, or None for any other entry (or a malformed one, a line
    that is not even an object included)."""
    if not isinstance(raw, Mapping):
        return None
    if raw.get("type") != "custom" or raw.get("customType") != CHECKPOINT_TYPE:
        return None
    data = raw.get("data")
    entry_id = raw.get("id")
    if not isinstance(data, Mapping) or not isinstance(entry_id, str):
        return None
    before, after = data.get("before"), data.get("after")
    if not (is_commit(before) and is_commit(after)):
        return None
    turn = data.get("turn")
    changes = data.get("changes")
    skipped = data.get("skipped")
    return TurnCheckpoint(
        entry_id=entry_id,
        parent_id=raw.get("parentId") if isinstance(raw.get("parentId"), str) else None,
        turn=turn if isinstance(turn, str) else None,
        before=str(before),
        after=str(after),
        changes=tuple(
            {str(k): str(v) for k, v in change.items()}
            for change in (changes if isinstance(changes, list) else [])
            if isinstance(change, Mapping) and isinstance(change.get("path"), str)
        ),
        skipped=tuple(str(p) for p in (skipped if isinstance(skipped, list) else []) if isinstance(p, str)),
    )


def checkpoints(raws: Iterable[Mapping[str, Any]]) -> list[TurnCheckpoint]:
    """Every checkpoint of a session, in file order."""
    return [found for raw in raws if (found := read_checkpoint(raw)) is not None]


def by_turn(found: Iterable[TurnCheckpoint]) -> dict[str, TurnCheckpoint]:
    """Checkpoints by the id of the assistant message whose tools they recorded (for /tree's
    marks and the export's lists)."""
    return {cp.turn: cp for cp in found if cp.turn is not None}


def state_at(found: Sequence[TurnCheckpoint], path: Sequence[str]) -> str | None:
    """The commit holding the files at the end of ``path`` (entry ids from the root to the
    entry; empty for "before the first entry"), or None when no checkpoint says."""
    if not found:
        return None
    ids = {cp.entry_id: cp for cp in found}
    by_parent: dict[str, TurnCheckpoint] = {}
    turns: dict[str, TurnCheckpoint] = {}
    for cp in found:
        if cp.parent_id is not None:
            by_parent.setdefault(cp.parent_id, cp)
        if cp.turn is not None:
            turns.setdefault(cp.turn, cp)
    for entry_id in reversed(path):
        if entry_id in ids:
            return ids[entry_id].after
        if entry_id in by_parent:
            return by_parent[entry_id].after
        if entry_id in turns:
            return turns[entry_id].before
    return None


def first_state_below(
    found: Sequence[TurnCheckpoint], path: Sequence[str], parents: Mapping[str, str | None]
) -> str | None:
    """For a point with no checkpoint on its way: the ``before`` of the first checkpoint (in
    file order) that descends from it or, when none does (a branch that never changed files),
    from the nearest entry on its way that has one: no turn changed files between that fork
    point and this one. ``parents`` maps entry id -> parent id."""
    if not found:
        return None
    if not path:
        return found[0].before
    first_below: dict[str, str] = {}
    for cp in found:
        walker: str | None = cp.entry_id
        seen: set[str] = set()
        while walker is not None and walker not in seen:  # a hand-made cycle ends the walk
            seen.add(walker)
            first_below.setdefault(walker, cp.before)
            walker = parents.get(walker)
    for entry_id in reversed(path):
        if entry_id in first_below:
            return first_below[entry_id]
    return None


def latest(found: Sequence[TurnCheckpoint]) -> TurnCheckpoint | None:
    """The last checkpoint written (the files as pi-tui last saw them at the end of a turn)."""
    return found[-1] if found else None


_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
"""A git object id: SHA-1 (40 hex digits) or SHA-256 (64)."""


def is_commit(value: Any) -> bool:
    """Whether ``value`` is a git object id as the store writes them (read from files that
    may have been edited by hand)."""
    return isinstance(value, str) and _COMMIT.fullmatch(value) is not None
