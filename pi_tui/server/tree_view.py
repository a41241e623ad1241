"""A live session's tree as the clients get it: the export page's flattened tree (the same
order, row texts, labels and filter rules as ``/tree``), so the web page lays it out with the
export's own layout code and an editor plugin gets ready-made row texts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_tui.html_export.payload import session_payload

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager


def tree_json(manager: SessionManager, *, with_entries: bool = False) -> dict[str, Any]:
    """``{"leafId", "tree", "summary"}``; ``with_entries`` adds ``entries``: the raw entries
    as JSON lines, line ``i`` being tree row ``i`` (what the page renders the chat from)."""
    payload = session_payload(manager)
    out: dict[str, Any] = {"leafId": manager.get_leaf_id(), "tree": payload.tree, "summary": payload.summary}
    if with_entries:
        out["entries"] = payload.entries.decode("utf-8", "replace")
    return out
