"""Compaction and branch summaries: keeping long sessions inside the model's context.

- :mod:`.tokens`: token estimates and the current context size.
- :mod:`.cut_point`: where to cut a branch (never at a tool result; split turns).
- :mod:`.serialize`: the conversation as text for the summariser (pi's format) and file tracking.
- :mod:`.compact`: :func:`prepare_compaction` (pure) then :func:`compact` (the model request).
- :mod:`.branch_summary`: summaries of the path left behind by ``/tree``.

Typical use by the agent (``for_model`` applies pi 1.x's ``compaction.modelOverrides`` entry for
the active model; every threshold check and cut reads the settings through it)::

    chosen = settings.compaction.for_model(model.provider, model.id)
    if should_compact(context_tokens(messages), model.context_window, chosen):
        preparation = prepare_compaction(manager.get_branch(), chosen)
        if preparation is not None:
            result = await compact(preparation, model, options)
            result.append_to(manager)
"""

from pi_tui.compaction.branch_summary import (
    BranchSummaryResult,
    collect_entries_for_branch_summary,
    prepare_branch_messages,
    summarize_branch,
)
from pi_tui.compaction.compact import (
    CompactionPreparation,
    CompactionResult,
    branch_context_messages,
    compact,
    prepare_compaction,
    should_compact,
)
from pi_tui.compaction.cut_point import CutPoint, compaction_boundary, find_cut_point, is_valid_cut_point
from pi_tui.compaction.request import CompactionError
from pi_tui.compaction.serialize import (
    FileOperations,
    format_file_tags,
    serialize_conversation,
    strip_file_tags,
)
from pi_tui.compaction.tokens import IMAGE_TOKENS, context_tokens, estimate_tokens, usage_tokens

__all__ = [
    "IMAGE_TOKENS",
    "BranchSummaryResult",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CutPoint",
    "FileOperations",
    "branch_context_messages",
    "collect_entries_for_branch_summary",
    "compact",
    "compaction_boundary",
    "context_tokens",
    "estimate_tokens",
    "find_cut_point",
    "format_file_tags",
    "is_valid_cut_point",
    "prepare_branch_messages",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
    "strip_file_tags",
    "summarize_branch",
    "usage_tokens",
]
