"""A live session's tree as the clients get it: the export page's flattened tree (the same
order, row texts, labels and filter rules as ``/tree``), so the web page lays it out with the
export's own layout code and an editor plugin gets ready-made row texts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_tui.html_export.payload import session_payload

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager


ENTRY_CHOICES = ("", "0", "1", "all", "path")


def tree_json(manager: SessionManager, *, entries: str = "") -> dict[str, Any]:
    """``{"leafId", "tree", "summary"}``; ``entries`` ``all`` (or ``1``) adds ``entries``: the
    raw entries as JSON lines, line ``i`` being tree row ``i``; ``path`` fills only the lines of
    the current branch (what the page renders the chat from), the others empty."""
    payload = session_payload(manager, path_entries_only=entries == "path")
    out: dict[str, Any] = {"leafId": manager.get_leaf_id(), "tree": payload.tree, "summary": payload.summary}
    if entries in ("1", "all", "path"):
        out["entries"] = payload.entries.decode("utf-8", "replace")
    return out
