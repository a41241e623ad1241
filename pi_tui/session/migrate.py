"""Bringing v1 and v2 session files up to v3.

v1: no ids, a linear list of entries; compactions point at the first kept entry by line index
(counted over the raw lines, header included). v2: ids and parentIds. v3: the message role
``hookMessage`` is called ``custom``.

:func:`migrate_entries` is pure and idempotent: run on v3 data it reports no change.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from pi_tui.session.entries import CURRENT_SESSION_VERSION
from pi_tui.session.ids import new_entry_id
from pi_tui.session.reader import RawEntry
from pi_tui.session.store import atomic_rewrite


def file_version(header: RawEntry) -> int:
    version = header.get("version")
    return version if isinstance(version, int) else 1


def migrate_entries(header: RawEntry, entries: list[RawEntry]) -> bool:
    """Migrate ``header`` and ``entries`` in place to the current version; True if anything changed."""
    version = file_version(header)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _v1_to_v2(entries)
    if version < 3:
        _v2_to_v3(entries)
    header["version"] = CURRENT_SESSION_VERSION
    return True


def _v1_to_v2(entries: list[RawEntry]) -> None:
    taken = {entry["id"] for entry in entries if isinstance(entry.get("id"), str)}
    # Raw line index i (header = line 0) is entries[i - 1].
    ids: list[str] = []
    previous: str | None = None
    for entry in entries:
        entry_id = entry.get("id") if isinstance(entry.get("id"), str) else None
        if entry_id is None:
            entry_id = new_entry_id(taken)
            taken.add(entry_id)
        _put_first(entry, entry_id, previous)
        ids.append(entry_id)
        previous = entry_id
    for entry in entries:
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry.pop("firstKeptEntryIndex")
            if isinstance(index, int) and 1 <= index <= len(ids):
                entry["firstKeptEntryId"] = ids[index - 1]
            else:
                entry["firstKeptEntryId"] = ids[0] if ids else None


def _put_first(entry: RawEntry, entry_id: str, parent_id: str | None) -> None:
    """Give a v1 entry ``id``/``parentId`` keeping pi's key order (type, id, parentId, ...)."""
    rest = {key: value for key, value in entry.items() if key not in ("type", "id", "parentId")}
    kind = entry.get("type")
    entry.clear()
    entry["type"] = kind
    entry["id"] = entry_id
    entry["parentId"] = parent_id
    entry.update(rest)


def _v2_to_v3(entries: list[RawEntry]) -> None:
    for entry in entries:
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"


def backup_path(path: Path, old_version: int) -> Path:
    return path.with_name(f"{path.name}.v{old_version}.bak")


def rewrite_migrated(
    path: Path,
    header: RawEntry,
    entries: list[RawEntry],
    old_version: int,
    title_slot: RawEntry | None = None,
) -> None:
    """Keep the original as ``<name>.v<old>.bak`` (never overwritten), then rewrite atomically
    (oh-my-pi's title slot, if the file had one, stays the first line)."""
    backup = backup_path(path, old_version)
    if not backup.exists():
        temp = backup.with_name(backup.name + ".tmp")
        shutil.copy2(path, temp)
        os.replace(temp, backup)
    atomic_rewrite(path, [*([title_slot] if title_slot is not None else []), header, *entries])
    with contextlib.suppress(OSError):
        os.utime(path, (backup.stat().st_atime, backup.stat().st_mtime))
