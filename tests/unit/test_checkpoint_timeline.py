"""Where the files stood at each point of a session tree (pi_tui.checkpoints.timeline), over
hand-built raw entry lists: the rules of :func:`state_at` (a checkpoint on the way, a turn whose
tools had finished or not yet run, a tool result in the middle of a turn), branches, the state
before any turn, and malformed entries skipped.

The tree used by most tests (``C`` entries are checkpoints, ``T`` tool results)::

    u1 - a1 - t1a - t1b - c1 - u2 - a2 - t2 - c2 - u3 - a3(no tools)
                                  \\- a2x - t2x - c2x          (a second reply to u2)
                           \\- u2y - a2y                      (a branch from the last tool result)
       \\- a1z (a reply that ran no tools)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_tui.checkpoints.timeline import (
    CHECKPOINT_TYPE,
    TurnCheckpoint,
    by_turn,
    checkpoint_data,
    checkpoints,
    first_state_below,
    latest,
    read_checkpoint,
    state_at,
)

S0, S1, S2, S2X, S3 = ("0" * 39 + c for c in "01234")


def message(entry_id: str, parent: str | None, role: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "message": {"role": role, "content": []}}


def checkpoint(
    entry_id: str, parent: str, turn: str | None, before: str, after: str, **extra: Any
) -> dict[str, Any]:
    data = checkpoint_data(turn, before, after, [{"status": "M", "path": f"{entry_id}.txt"}], [])
    data.update(extra)
    return {"type": "custom", "customType": CHECKPOINT_TYPE, "id": entry_id, "parentId": parent, "data": data}


def session() -> list[dict[str, Any]]:
    return [
        message("u1", None, "user"),
        message("a1", "u1", "assistant"),
        message("t1a", "a1", "toolResult"),
        message("t1b", "t1a", "toolResult"),
        checkpoint("c1", "t1b", "a1", S0, S1),
        message("u2", "c1", "user"),
        message("a2", "u2", "assistant"),
        message("t2", "a2", "toolResult"),
        checkpoint("c2", "t2", "a2", S1, S2),
        message("u3", "c2", "user"),
        message("a3", "u3", "assistant"),
        message("a2x", "u2", "assistant"),
        message("t2x", "a2x", "toolResult"),
        checkpoint("c2x", "t2x", "a2x", S1, S2X),
        message("u2y", "t1b", "user"),
        message("a2y", "u2y", "assistant"),
        message("a1z", "u1", "assistant"),
    ]


def parents_of(raws: list[dict[str, Any]]) -> dict[str, str | None]:
    return {raw["id"]: raw.get("parentId") for raw in raws}


def way(raws: list[dict[str, Any]], entry_id: str) -> list[str]:
    """Entry ids from the root to ``entry_id``."""
    parents = parents_of(raws)
    out: list[str] = []
    walker: str | None = entry_id
    while walker is not None:
        out.append(walker)
        walker = parents[walker]
    return out[::-1]


def files_at(raws: list[dict[str, Any]], entry_id: str | None) -> str | None:
    """As :meth:`FileHistory.state_for` asks: the rules, then the state before any turn."""
    found = checkpoints(raws)
    path = way(raws, entry_id) if entry_id is not None else []
    return state_at(found, path) or first_state_below(found, path, parents_of(raws))


def test_a_turns_tools_not_yet_run_then_finished() -> None:
    raws = session()
    assert files_at(raws, "a1") == S0  # the assistant message whose tools ran: before them
    assert files_at(raws, "t1a") == S0  # a tool result in the middle of the turn: its start
    assert files_at(raws, "t1b") == S1  # the turn's last tool result: the tools had finished
    assert files_at(raws, "c1") == S1
    assert files_at(raws, "u2") == S1
    assert files_at(raws, "a2") == S1
    assert files_at(raws, "t2") == S2
    assert files_at(raws, "u3") == S2
    assert files_at(raws, "a3") == S2  # a reply without tools: the last turn's after


def test_branches_have_their_own_files() -> None:
    raws = session()
    assert files_at(raws, "a2x") == S1
    assert files_at(raws, "t2x") == S2X
    assert files_at(raws, "c2x") == S2X
    # a branch from the turn's last tool result, beside the checkpoint: the tools had run
    assert files_at(raws, "u2y") == S1
    assert files_at(raws, "a2y") == S1


def test_before_any_turn_changed_files() -> None:
    raws = session()
    assert files_at(raws, None) == S0  # before the first entry
    assert files_at(raws, "u1") == S0
    # a reply beside the first turn that ran no tools: the files of their fork point, u1
    assert files_at(raws, "a1z") == S0


def test_a_sibling_branch_that_never_changed_files_has_its_fork_points_files() -> None:
    """u1 - a1 - t1 - c1 (S0 -> S1) - u2 - a2 - t2 - c2 (S1 -> S2); u2 - a2b (no tools): at a2b the
    files are u2's (S1), and at u1's other reply b1 those of u1 (S0)."""
    raws = [
        message("u1", None, "user"),
        message("a1", "u1", "assistant"),
        message("t1", "a1", "toolResult"),
        checkpoint("c1", "t1", "a1", S0, S1),
        message("u2", "c1", "user"),
        message("a2", "u2", "assistant"),
        message("t2", "a2", "toolResult"),
        checkpoint("c2", "t2", "a2", S1, S2),
        message("a2b", "u2", "assistant"),
        message("b1", "u1", "assistant"),
    ]
    assert files_at(raws, "a2b") == S1
    assert files_at(raws, "b1") == S0


def test_a_branch_with_no_checkpoint_anywhere_near_has_none() -> None:
    raws = [message("u1", None, "user"), message("a1", "u1", "assistant")]
    assert files_at(raws, "a1") is None
    assert state_at([], ["u1"]) is None
    assert first_state_below([], [], {}) is None


def test_the_nearest_checkpoint_wins() -> None:
    raws = session()
    found = checkpoints(raws)
    # walking from u3 to the root meets c2 first, then c1
    assert state_at(found, way(raws, "u3")) == S2
    assert state_at(found, way(raws, "u2")) == S1


MALFORMED: list[Any] = [
    {"type": "custom", "customType": CHECKPOINT_TYPE, "id": "x1", "parentId": "t1b"},  # no data
    {"type": "custom", "customType": CHECKPOINT_TYPE, "id": "x2", "parentId": "t1b", "data": "text"},
    {"type": "custom", "customType": CHECKPOINT_TYPE, "parentId": "t1b", "data": {"before": S0, "after": S3}},
    {"type": "custom", "customType": CHECKPOINT_TYPE, "id": "x4", "parentId": "t1b", "data": {"before": S0}},
    {"type": "custom", "customType": CHECKPOINT_TYPE, "id": "x5", "data": {"before": "HEAD", "after": S3}},
    {
        "type": "custom",
        "customType": CHECKPOINT_TYPE,
        "id": "x6",
        "data": {"before": S0, "after": S3[:-1]},
    },
    {"type": "custom", "customType": CHECKPOINT_TYPE, "id": 7, "data": {"before": S0, "after": S3}},
    {
        "type": "custom",
        "customType": "other.ext",
        "id": "x8",
        "parentId": "t1b",
        "data": {"before": S0, "after": S3},
    },
    {
        "type": "custom_message",
        "customType": CHECKPOINT_TYPE,
        "id": "x9",
        "data": {"before": S0, "after": S3},
    },
    ["not", "an", "object"],
    "a string",
    None,
]


def test_malformed_entries_are_skipped() -> None:
    raws = [*session(), *MALFORMED]
    found = checkpoints(raws)
    assert [cp.entry_id for cp in found] == ["c1", "c2", "c2x"]
    assert all(read_checkpoint(raw) is None for raw in MALFORMED)


def test_lenient_fields_are_cleaned() -> None:
    raw = checkpoint("c9", "t9", None, S0, S1)
    raw["parentId"] = 12
    raw["data"]["turn"] = {"not": "an id"}
    raw["data"]["changes"] = [{"status": "A", "path": "ok.txt"}, {"status": "M"}, "junk", {"path": 3}]
    raw["data"]["skipped"] = ["big.bin", 5, None]
    found = read_checkpoint(raw)
    assert found == TurnCheckpoint(
        "c9", None, None, S0, S1, ({"status": "A", "path": "ok.txt"},), ("big.bin",)
    )
    assert found.changed_paths == ["ok.txt"]
    assert by_turn([found]) == {}


def test_by_turn_and_latest() -> None:
    found = checkpoints(session())
    turns = by_turn(found)
    assert sorted(turns) == ["a1", "a2", "a2x"]
    assert turns["a2x"].after == S2X and turns["a1"].changed_paths == ["c1.txt"]
    last = latest(found)
    assert last is not None and last.entry_id == "c2x"
    assert latest([]) is None


def test_checkpoint_data_round_trips() -> None:
    data = checkpoint_data("a1", S0, S1, [{"status": "R", "path": "b", "from": "a"}], ["big.bin"])
    raw: Mapping[str, Any] = {
        "type": "custom",
        "customType": CHECKPOINT_TYPE,
        "id": "c",
        "parentId": "t",
        "data": data,
    }
    found = read_checkpoint(raw)
    assert found is not None
    assert found.turn == "a1" and found.changes == ({"status": "R", "path": "b", "from": "a"},)
    assert found.skipped == ("big.bin",)
    assert "skipped" not in checkpoint_data("a1", S0, S1, [], [])
