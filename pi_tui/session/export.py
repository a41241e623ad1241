"""Writing a session to a file of its own (``/export FILE.jsonl``, ``--export``).

The copy is a session file pi reads as it is: a fresh header with the session's id and folder,
then either the entries of the current branch from the root to the leaf, each re-parented to
the one before it (one straight line however branched the original is), or with ``whole_tree``
every entry as it is, so the copy keeps every branch and label. Written atomically through the
store (a crash leaves no half file).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.session.entries import CURRENT_SESSION_VERSION
from pi_tui.session.ids import iso_now
from pi_tui.session.store import atomic_rewrite, make_private_folders

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager


def branch_lines(manager: SessionManager) -> list[dict[str, Any]]:
    """The header and the current branch, re-chained into a straight line."""
    lines: list[dict[str, Any]] = [_fresh_header(manager)]
    parent: str | None = None
    for entry_id in manager.get_branch_ids():
        raw = manager.get_raw_entry(entry_id)
        if raw is None:
            continue
        lines.append({**raw, "parentId": parent})
        parent = entry_id
    return lines


def tree_lines(manager: SessionManager) -> list[dict[str, Any]]:
    """The header and every entry in file order, unchanged: the whole tree."""
    return [_fresh_header(manager), *manager.iter_raw_entries()]


def _fresh_header(manager: SessionManager) -> dict[str, Any]:
    return {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": manager.session_id,
        "timestamp": iso_now(),
        "cwd": manager.get_header().cwd,
    }


def default_export_name(now: datetime | None = None) -> str:
    """``session-<time>.jsonl`` in the working folder, when no file is named."""
    moment = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H-%M-%S-%f")[:-3]
    return f"session-{moment}Z.jsonl"


def export_jsonl(manager: SessionManager, output: Path, *, whole_tree: bool = False) -> Path:
    """Write the current branch (or ``whole_tree``) to ``output`` (folders made as needed);
    returns the full path."""
    path = output.expanduser().resolve()
    make_private_folders(path.parent)
    atomic_rewrite(path, tree_lines(manager) if whole_tree else branch_lines(manager))
    return path
