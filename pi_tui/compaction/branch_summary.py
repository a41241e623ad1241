"""Branch summaries: what the user did on a path of the tree they are leaving (``/tree``).

When the user moves the leaf to another entry, the entries only the old path has are
"abandoned"; :func:`collect_entries_for_branch_summary` finds them and :func:`summarize_branch`
has the model summarise them, so the new path keeps what was learned there. The result is stored
with ``SessionManager.branch_with_summary``.

Unlike compaction there is no cut: the newest abandoned messages are taken until the model's
context budget is used, tool results are left out (the calls say what was done; the output is
bulk), and earlier summaries inside the branch come along as context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from pi_tui.ai.types import Model, StreamOptions
from pi_tui.compaction.entries import entry_message, generated_details, typed_entry
from pi_tui.compaction.prompts import BRANCH_INSTRUCTIONS, with_focus
from pi_tui.compaction.request import build_prompt, request_summary_reply, summary_options
from pi_tui.compaction.serialize import FileOperations, format_file_tags, serialize_conversation
from pi_tui.compaction.tokens import estimate_tokens
from pi_tui.messages import Usage
from pi_tui.session.context import GENERATED_BRANCH_SUMMARY_PREFIX
from pi_tui.session.entries import BranchSummaryEntry, CompactionEntry, MessageEntry

BRANCH_SUMMARY_MAX_TOKENS = 2048
"""Output budget of a branch summary: it is context for a side path, not a full checkpoint."""
DEFAULT_CONTEXT_WINDOW = 128_000
SUMMARY_ENTRY_SHARE = 0.9
"""An earlier summary that overflows the budget is still taken while less than this share of the
budget is used: it stands for many messages, so it is worth more than its size."""


@dataclass(slots=True)
class BranchSummaryResult:
    """What the ``branch_summary`` entry stores."""

    summary: str
    """:data:`GENERATED_BRANCH_SUMMARY_PREFIX` + model text + file tags."""
    details: dict[str, list[str]]
    """``{"readFiles": [...], "modifiedFiles": [...]}``."""
    usage: Usage | None = None
    """What the summary request cost; stored on the entry (pi 1.x) so it counts in the totals."""


def collect_entries_for_branch_summary(
    manager: Any, old_leaf_id: str | None, target_id: str | None
) -> list[Any]:
    """Entries of the path to ``old_leaf_id`` that are not on the path to ``target_id``, oldest
    first: from just after the deepest common ancestor down to the old leaf.

    ``target_id`` is the entry the user selected (for a user message: that message, even though
    the leaf then moves to its parent), so the selected message itself is never part of it.
    ``target_id`` None means "before the root": the whole old path.
    """
    if old_leaf_id is None:
        return []
    old_path = manager.get_branch(old_leaf_id)
    target_ids = {entry.id for entry in manager.get_branch(target_id)} if target_id is not None else set()
    for index in range(len(old_path) - 1, -1, -1):
        if old_path[index].id in target_ids:
            return list(old_path[index + 1 :])
    return list(old_path)


def branch_message(entry: Any) -> Any | None:
    """The message an abandoned entry contributes to a branch summary (tool results: none)."""
    if isinstance(entry, MessageEntry) and entry.message.role == "toolResult":
        return None
    return entry_message(entry, include_compaction=True)


def prepare_branch_messages(
    entries: Sequence[Any], token_budget: int = 0
) -> tuple[list[Any], FileOperations]:
    """(messages to summarise oldest first, files touched) for the abandoned ``entries``.

    Messages are taken newest first while they fit in ``token_budget`` (0: no limit). Files come
    from every entry, also those beyond the budget, and from earlier generated summaries'
    ``details``, so the file lists stay complete across nested branches.
    """
    entries = [typed_entry(entry) for entry in entries]
    file_ops = FileOperations()
    for entry in entries:
        file_ops.add_details(generated_details(entry))
        if isinstance(entry, MessageEntry):
            file_ops.add_message(entry.message)

    picked: list[Any] = []
    total = 0
    for entry in reversed(entries):
        message = branch_message(entry)
        if message is None:
            continue
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            is_summary = isinstance(entry, CompactionEntry | BranchSummaryEntry)
            if is_summary and total < token_budget * SUMMARY_ENTRY_SHARE:
                picked.append(message)
            break
        picked.append(message)
        total += tokens
    picked.reverse()
    return picked, file_ops


def branch_prompt(messages: Sequence[Any], custom_focus: str | None = None) -> str:
    """The user message of a branch summarisation request."""
    return build_prompt(serialize_conversation(messages), with_focus(BRANCH_INSTRUCTIONS, custom_focus))


async def summarize_branch(
    entries: Sequence[Any],
    model: Model,
    options: StreamOptions | None = None,
    custom_focus: str | None = None,
    reserve_tokens: int = 16384,
    *,
    http: httpx.AsyncClient | None = None,
) -> BranchSummaryResult | None:
    """Have ``model`` summarise the abandoned ``entries`` (from
    :func:`collect_entries_for_branch_summary`).

    The budget for the conversation is the model's context window minus ``reserve_tokens``
    (``branchSummary.reserveTokens``); the answer may use 2048 tokens; no tools. Returns None
    without a request when the entries hold no message (nothing to record). Raises
    :class:`~pi_tui.compaction.request.CompactionError` when the request fails or is aborted.
    """
    window = model.context_window or DEFAULT_CONTEXT_WINDOW
    messages, file_ops = prepare_branch_messages(entries, max(window - reserve_tokens, 1))
    if not messages:
        return None
    text, usage = await request_summary_reply(
        model,
        branch_prompt(messages, custom_focus),
        summary_options(model, options, BRANCH_SUMMARY_MAX_TOKENS),
        http=http,
    )
    read_files, modified_files = file_ops.file_lists()
    return BranchSummaryResult(
        summary=GENERATED_BRANCH_SUMMARY_PREFIX + text + format_file_tags(read_files, modified_files),
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        usage=usage,
    )
