"""pi 1.x entries in /tree and in the session's totals, against what pi 1.5.2's own code makes of
a hand-made file (tests/data/pi1-totals, whose README says how the figures were taken).

- /tree: ``usage`` entries never show (their children hang under the nearest shown ancestor),
  ``context_edit`` rows only in ``all`` (and ``labeled-only`` when labelled), ``system``
  messages as ``[system]``; the expected rows are pi 1.5.2's TreeList output, recorded in
  ``pi-1.5.2-tree.json`` by tests/interop/pi_reference.mjs.
- totals: usage entries, summary usage and a tool result's usage count, as pi's
  ``getSessionStats`` counts them (62,120 tokens, $0.042645 for this file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.html_export.payload import session_payload
from pi_tui.session import SessionManager
from pi_tui.view.stats import UsageTotals, footer_usage_line, session_usage, usage_totals
from pi_tui.view.tree_model import FILTER_MODES, NO_ENTRIES, TreeModel

DATA = Path(__file__).resolve().parents[1] / "data" / "pi1-totals"
SESSION = DATA / "session.jsonl"
PI_TREE = json.loads((DATA / "pi-1.5.2-tree.json").read_text())

PI_TOTALS = UsageTotals(input=5070, output=350, cache_read=55200, cache_write=1500, cost=0.042645)
"""pi 1.5.2's ``AgentSession.prototype.getSessionStats`` on session.jsonl (README.md)."""


@pytest.fixture
def manager() -> SessionManager:
    return SessionManager.open(SESSION, read_only=True)


def tree_view(manager: SessionManager, mode: str, search: str = "") -> dict[str, Any]:
    """Rows as the selector draws them when it opens (cursor on the leaf or where it went)."""
    model = TreeModel(manager.get_tree(), manager.get_leaf_id(), filter_mode=mode)
    if search:
        model.set_search(search)
    if not model.rows:
        return {"rows": [], "counter": model.counter(0), "empty": NO_ENTRIES}
    leaf = manager.get_leaf_id()
    visible = model.nearest_visible(leaf) if leaf else None
    cursor = model.index_of(visible) if visible else None
    if cursor is None:
        cursor = len(model.rows) - 1
    rows = [model.line(index, index == cursor) for index in range(len(model.rows))]
    return {"rows": rows, "counter": model.counter(cursor), "empty": None}


def same_as_pi(ours: dict[str, Any], pi: dict[str, Any]) -> None:
    assert ours["rows"] == pi["rows"]
    assert ours["counter"] == pi["counter"].strip()
    assert (ours["empty"] or "") == (pi["empty"] or "").strip()


@pytest.mark.parametrize("mode", FILTER_MODES)
def test_tree_rows_equal_pi_1_5_2_in_every_filter(manager: SessionManager, mode: str) -> None:
    same_as_pi(tree_view(manager, mode), PI_TREE["tree"][mode])


@pytest.mark.parametrize("words", sorted(PI_TREE["search"]))
@pytest.mark.parametrize("mode", ["default", "all"])
def test_tree_search_equals_pi_1_5_2(manager: SessionManager, words: str, mode: str) -> None:
    same_as_pi(tree_view(manager, mode, words), PI_TREE["search"][words][mode])


def test_usage_entries_never_show_and_their_children_hang_under_the_nearest_shown_entry(
    manager: SessionManager,
) -> None:
    usage_ids = {raw["id"] for raw in manager.iter_raw_entries() if raw["type"] == "usage"}
    assert usage_ids == {"a0000007", "a0000014"}
    for mode in FILTER_MODES:
        model = TreeModel(manager.get_tree(), manager.get_leaf_id(), filter_mode=mode)
        assert not usage_ids & {row.entry_id for row in model.rows}, mode
        assert all(row.text for row in model.rows), f"{mode}: a row without text"
    # The leaf is a usage entry: the selection goes to its nearest shown ancestor.
    model = TreeModel(manager.get_tree(), manager.get_leaf_id())
    assert manager.get_leaf_id() == "a0000014"
    assert model.nearest_visible("a0000014") == "a0000012"  # the reply (the label is hidden too)
    # a0000007 (usage) and a0000008 (context edit) hide: their children become the reply's.
    reply = model.index_of("a0000006")
    children = [row.entry_id for row in model.rows if row.gutter.lstrip(" │").startswith(("├", "└"))]
    assert children == ["a000000c", "a0000009"] and reply is not None
    assert model.rows[reply + 1].entry_id == "a000000c"


def test_context_edits_show_only_where_pi_shows_them(manager: SessionManager) -> None:
    shown = {}
    for mode in FILTER_MODES:
        model = TreeModel(manager.get_tree(), manager.get_leaf_id(), filter_mode=mode)
        shown[mode] = [row.text for row in model.rows if row.entry_id in ("a0000008", "a000000b")]
    assert shown == {
        "default": [],
        "no-tools": [],
        "user-only": [],
        "labeled-only": ["[context omit: a0000005]"],  # it carries the label hid-output
        "all": ["[context omit: a0000005]", "[context replace: a0000009]"],
    }


def test_totals_equal_pi_1_5_2s(manager: SessionManager) -> None:
    raw = session_usage(manager.iter_raw_entries())
    typed = usage_totals(manager.get_entries())
    for totals in (raw, typed):
        assert (totals.input, totals.output, totals.cache_read, totals.cache_write) == (
            PI_TOTALS.input,
            PI_TOTALS.output,
            PI_TOTALS.cache_read,
            PI_TOTALS.cache_write,
        )
        assert totals.cost == pytest.approx(PI_TOTALS.cost, abs=1e-12)
    assert footer_usage_line(raw, None, 200_000, True) == "↑5.1k ↓350 R55k W1.5k $0.043 ?/200k (auto)"


def test_export_header_counts_the_same_totals(manager: SessionManager) -> None:
    summary = session_payload(manager).summary
    assert summary["tokens"] == {"input": 5070, "output": 350, "cacheRead": 55200, "cacheWrite": 1500}
    assert summary["cost"] == pytest.approx(PI_TOTALS.cost, abs=1e-6)


def test_only_replies_counted_before_is_what_the_issue_reported() -> None:
    """The same file with the pi 1.x spending taken out sums to the replies alone: the new rule
    adds exactly the usage entries, the two summaries and the tool result."""
    raws = [json.loads(line) for line in SESSION.read_text().splitlines()[1:]]
    replies = [r for r in raws if r["type"] == "message" and r["message"]["role"] == "assistant"]
    alone = session_usage(replies)
    assert (alone.input, alone.output, alone.cache_read) == (1770, 95, 4800)
    extra = session_usage(
        [r for r in raws if r["type"] in ("usage", "compaction", "branch_summary")]
        + [r for r in raws if r["type"] == "message" and r["message"]["role"] == "toolResult"]
    )
    assert alone.input + extra.input == PI_TOTALS.input
    assert alone.cost + extra.cost == pytest.approx(PI_TOTALS.cost)
