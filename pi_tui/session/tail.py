"""The end of a session file's current branch, read from its last megabytes only.

Opening a 70 MB session means parsing every line (about a third of a second) before the manager
knows its tree. The newest turns, which are all the first screen shows, sit at the end of the
file: the leaf a session opens on is its last entry, and its parents are almost always close
before it. So the interactive mode draws those from the tail at once and lets the full load
replace them when it is done.

This is a preview, never a source of truth: anything unusual (an old file version, a tail
without the leaf's parents, an unreadable header) gives None and the screen simply waits for
the full load. Nothing here writes, locks or migrates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.jsonio import JSONDecodeError, loads
from pi_tui.session.entries import CURRENT_SESSION_VERSION, typed_entry
from pi_tui.session.errors import SessionFileError
from pi_tui.session.reader import header_of

TAIL_BYTES = 2 << 20
"""How much of the end of the file is read: a first screen of turns in nearly every session."""


@dataclass(slots=True)
class TailBranch:
    """The newest entries of the branch (typed, oldest first) and the labels seen in the tail."""

    entries: list[Any]
    labels: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    """The walk reached the branch's root: this is the whole branch, not only its end."""

    def label_of(self, entry_id: str) -> str | None:
        return self.labels.get(entry_id)


def read_tail_branch(path: Path, max_entries: int, tail_bytes: int = TAIL_BYTES) -> TailBranch | None:
    """Up to ``max_entries`` entries ending at the file's last entry, or None (see the module)."""
    try:
        with open(path, "rb") as handle:
            header = header_of(handle.read(64 * 1024), str(path))
            size = os.fstat(handle.fileno()).st_size
            start = max(0, size - tail_bytes)
            handle.seek(start)
            data = handle.read(tail_bytes)
    except (OSError, SessionFileError):
        return None
    if header.get("version") != CURRENT_SESSION_VERSION:
        return None  # older files get ids and new shapes from migration: only the full load knows
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line is cut by the seek
    by_id: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    leaf: str | None = None
    for line in lines:
        if not line.strip():
            continue
        try:
            raw = loads(line)
        except JSONDecodeError:
            continue
        if type(raw) is not dict or type(raw.get("id")) is not str or raw.get("type") == "session":
            continue
        by_id[raw["id"]] = raw
        leaf = raw["id"]
        if raw.get("type") == "label" and isinstance(raw.get("targetId"), str):
            value = raw.get("label")
            if isinstance(value, str) and value.strip():
                labels[raw["targetId"]] = value.strip()
            else:
                labels.pop(raw["targetId"], None)
    branch: list[dict[str, Any]] = []
    current = by_id.get(leaf) if leaf is not None else None
    seen: set[str] = set()
    while current is not None and len(branch) < max_entries and current["id"] not in seen:
        seen.add(current["id"])
        branch.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    if not branch:
        return None
    complete = branch[-1].get("parentId") is None and start == 0
    branch.reverse()
    return TailBranch([typed_entry(raw) for raw in branch], labels, complete)
