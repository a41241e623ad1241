"""Where to cut a branch for compaction: everything before the cut is summarised, the rest kept.

The newest ``keep_recent_tokens`` of conversation stay verbatim (the model needs recent detail
most). Walking back from the newest entry and summing estimates, the cut goes to the first valid
cut point at or after the entry where the budget is reached, so at least that much is kept.

A valid cut point is an entry the kept context can start with: a user, assistant,
``bashExecution`` or ``custom`` message, a ``custom_message`` or a ``branch_summary`` entry. Never
a tool result: providers reject a result whose call is gone. Cutting at an assistant message
keeps its tool results with it; if that assistant message is not the start of its turn, the cut
*splits* the turn, and the turn's beginning is summarised separately so the kept half still
makes sense.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_tui.compaction.entries import entry_message
from pi_tui.compaction.tokens import estimate_tokens
from pi_tui.session.entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry, MessageEntry

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Result of :func:`find_cut_point` (indices into the entries it was given)."""

    first_kept_entry_id: str
    first_kept_index: int
    """Index of the first kept entry (context settings just before a cut point are kept too)."""
    is_split_turn: bool
    """The cut is at an assistant message whose turn began before it."""
    turn_start_index: int | None
    """For a split turn: index of the entry that began the turn (a user message or the like)."""


def is_valid_cut_point(entry: Any) -> bool:
    """Can the kept part of the context begin with ``entry``? (Never with a tool result.)"""
    if isinstance(entry, MessageEntry):
        return entry.message.role in _CUT_ROLES
    return isinstance(entry, CustomMessageEntry | BranchSummaryEntry)


def is_turn_start(entry: Any) -> bool:
    """Does ``entry`` begin a turn (input from the user's side rather than the model's)?"""
    if isinstance(entry, MessageEntry):
        return entry.message.role in _TURN_START_ROLES
    return isinstance(entry, CustomMessageEntry | BranchSummaryEntry)


def find_turn_start(entries: Sequence[Any], index: int, start: int = 0) -> int | None:
    """Index of the entry that began the turn containing ``entries[index]`` (None: not found
    at or after ``start``)."""
    for position in range(index, start - 1, -1):
        if is_turn_start(entries[position]):
            return position
    return None


def previous_compaction_index(entries: Sequence[Any]) -> int | None:
    """Index of the last compaction entry on the path."""
    for index in range(len(entries) - 1, -1, -1):
        if isinstance(entries[index], CompactionEntry):
            return index
    return None


def compaction_boundary(entries: Sequence[Any]) -> int:
    """First index compaction may look at: the previous compaction's first kept entry.

    Entries before it are already inside the previous summary. The kept entries between that
    first kept entry and the compaction entry itself are still verbatim in the context, so they
    are candidates for the new summary (pi starts after the compaction entry instead, which drops
    them from the context without ever summarising them).
    """
    previous = previous_compaction_index(entries)
    if previous is None:
        return 0
    first_kept = entries[previous].first_kept_entry_id
    for index in range(previous):
        if entries[index].id == first_kept:
            return index
    return previous + 1


def find_cut_point(
    entries: Sequence[Any],
    keep_recent_tokens: int,
    start: int | None = None,
    end: int | None = None,
) -> CutPoint | None:
    """The cut of the branch ``entries`` (root to leaf) that keeps about ``keep_recent_tokens``;
    None when there is no valid cut point at all.

    Only ``entries[start:end]`` are considered; ``start`` defaults to
    :func:`compaction_boundary` (the previous compaction's first kept entry), ``end`` to the
    leaf. When the whole range fits in the budget the cut is at the first valid cut point
    (everything kept). When the budget is reached after the last valid cut point (a huge tool
    result at the end), the cut falls back to the last valid point before it rather than keeping
    everything (pi keeps everything there, so that compaction cannot free anything).
    """
    start = compaction_boundary(entries) if start is None else start
    end = len(entries) if end is None else end
    cut_points = [index for index in range(start, end) if is_valid_cut_point(entries[index])]
    if not cut_points:
        return None

    cut = cut_points[0]
    accumulated = 0
    for index in range(end - 1, start - 1, -1):
        message = entry_message(entries[index])
        if message is None:
            continue
        accumulated += estimate_tokens(message)
        if accumulated >= keep_recent_tokens:
            after = [point for point in cut_points if point >= index]
            cut = after[0] if after else max(point for point in cut_points if point < index)
            break

    cut_entry = entries[cut]
    split_start: int | None = None
    if not is_turn_start(cut_entry):
        split_start = find_turn_start(entries, cut - 1, start) if cut > start else None

    # Settings changes (model, thinking level, labels, extension state) right before the cut
    # belong to what follows them: keep them.
    first_kept = cut
    while first_kept > start:
        previous = entries[first_kept - 1]
        if isinstance(previous, MessageEntry | CustomMessageEntry | BranchSummaryEntry | CompactionEntry):
            break
        first_kept -= 1

    return CutPoint(
        first_kept_entry_id=entries[first_kept].id,
        first_kept_index=first_kept,
        is_split_turn=split_start is not None,
        turn_start_index=split_start,
    )
