"""The agent message a session entry puts into the model's context, if any.

Compaction and branch summaries work on typed session entries (``SessionManager.get_branch()``)
but summarise and measure messages; this is the one place that maps between the two, the same
way context building does (custom messages become role ``custom``, branch summaries role
``branchSummary``, compactions role ``compactionSummary`` when asked for).
"""

from __future__ import annotations

from typing import Any

from pi_tui.messages import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    UserBlock,
)
from pi_tui.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
)
from pi_tui.session.entries import typed_entry as entry_view
from pi_tui.session.ids import parse_iso


def typed_entry(entry: Any) -> Any:
    """A typed entry from either a typed entry or its raw JSON dict (read leniently)."""
    return entry_view(entry) if isinstance(entry, dict) else entry


def entry_ms(entry: Any) -> int:
    """Unix milliseconds of an entry's ISO timestamp (0 when unreadable)."""
    moment = parse_iso(str(getattr(entry, "timestamp", "") or ""))
    return int(moment.timestamp() * 1000) if moment else 0


def entry_message(entry: Any, *, include_compaction: bool = False) -> Any | None:
    """The agent message ``entry`` contributes to a conversation, or None.

    ``message`` entries give their message; ``custom_message`` a :class:`CustomMessage`; a
    non-empty ``branch_summary`` a :class:`BranchSummaryMessage`. A ``compaction`` gives its
    :class:`CompactionSummaryMessage` only with ``include_compaction`` (compaction itself handles
    the previous summary separately, a branch summary wants it as part of the branch).
    """
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        content: str | list[UserBlock] = (
            entry.content if isinstance(entry.content, str) else list(entry.content)
        )
        return CustomMessage(
            custom_type=entry.custom_type,
            content=content,
            display=entry.display,
            details=entry.details,
            timestamp=entry_ms(entry),
        )
    if isinstance(entry, BranchSummaryEntry):
        if not entry.summary:
            return None
        return BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=entry_ms(entry))
    if include_compaction and isinstance(entry, CompactionEntry):
        return CompactionSummaryMessage(
            summary=entry.summary, tokens_before=entry.tokens_before, timestamp=entry_ms(entry)
        )
    return None


def generated_details(entry: Any) -> dict[str, Any] | None:
    """``details`` of a compaction / branch summary pi-tui or pi generated (not an extension's).

    Only those hold our ``{readFiles, modifiedFiles}`` shape; an extension's details are its own.
    """
    if not isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return None
    if entry.from_hook or getattr(entry, "from_extension", None):
        return None
    return entry.details if isinstance(entry.details, dict) else None
