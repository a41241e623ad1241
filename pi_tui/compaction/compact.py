"""Compaction: replace the older part of a branch by a model-written summary.

Two steps, so the agent (and extensions) can look at or veto a compaction before paying for it:

1. :func:`prepare_compaction` (pure): from the branch's entries and the settings, pick the cut
   (:mod:`pi_tui.compaction.cut_point`), the messages to summarise, the beginning of a split
   turn, the previous summary to update and the files touched.
2. :func:`compact` (one request, two for a split turn): ask the model for the summary and return
   what the ``compaction`` entry needs. Appending it is the caller's job
   (:meth:`CompactionResult.append_to`), so a failed or cancelled request leaves no trace.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from pi_tui.ai.types import Model, StreamOptions
from pi_tui.compaction.cut_point import compaction_boundary, find_cut_point, previous_compaction_index
from pi_tui.compaction.entries import entry_message, generated_details, typed_entry
from pi_tui.compaction.prompts import (
    NO_HISTORY,
    SPLIT_TURN_HEADING,
    SUMMARY_INSTRUCTIONS,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_INSTRUCTIONS,
    with_focus,
)
from pi_tui.compaction.request import (
    CompactionError,
    build_prompt,
    combine_usage,
    request_summary_reply,
    summary_options,
)
from pi_tui.compaction.serialize import (
    FileOperations,
    format_file_tags,
    serialize_conversation,
    strip_file_tags,
)
from pi_tui.compaction.tokens import context_tokens
from pi_tui.config.settings import CompactionSettings
from pi_tui.messages import CompactionSummaryMessage, Usage
from pi_tui.session.entries import CompactionEntry

SUMMARY_BUDGET_SHARE = 0.8
"""Share of ``reserveTokens`` the summary may use as output tokens."""
TURN_PREFIX_BUDGET_SHARE = 0.5
"""Share for the summary of a split turn's beginning (a smaller, narrower text)."""


@dataclass(slots=True)
class CompactionPreparation:
    """Everything :func:`compact` needs, decided without talking to a model."""

    first_kept_entry_id: str
    messages_to_summarize: list[Any]
    """Agent messages before the cut (or before the split turn), oldest first."""
    turn_prefix_messages: list[Any]
    """For a split turn: the turn's messages before the cut; else empty."""
    is_split_turn: bool
    tokens_before: float
    """Context tokens now (last usage plus estimates of what came after it)."""
    previous_summary: str | None
    """The summary of the previous compaction on this branch (to be updated, not repeated)."""
    file_ops: FileOperations
    settings: CompactionSettings = field(default_factory=CompactionSettings)


@dataclass(slots=True)
class CompactionResult:
    """What the ``compaction`` entry stores."""

    summary: str
    """Model text (history, plus the split-turn part) followed by the file tags."""
    first_kept_entry_id: str
    tokens_before: float
    details: dict[str, list[str]]
    """``{"readFiles": [...], "modifiedFiles": [...]}``."""
    usage: Usage | None = None
    """What the summary requests cost (both, for a split turn); None when nobody asked a model
    (an extension's summary). Stored on the entry, as pi 1.x does, so it counts in the totals."""

    def append_to(self, manager: Any, *, from_hook: bool = False) -> str:
        """Append the ``compaction`` entry to ``manager`` (a SessionManager); returns its id.
        ``from_hook``: an extension wrote the summary (pi's ``fromHook``)."""
        return str(
            manager.append_compaction(
                self.summary,
                self.first_kept_entry_id,
                self.tokens_before,
                self.details,
                from_hook=from_hook,
                usage=self.usage,
            )
        )


def should_compact(context_tokens: float, context_window: int, settings: CompactionSettings) -> bool:
    """True when automatic compaction is on and the context leaves less than ``reserveTokens``."""
    return settings.enabled and context_tokens > context_window - settings.reserve_tokens


def branch_context_messages(entries: Sequence[Any]) -> list[Any]:
    """The agent messages the model currently sees for this branch (the last compaction's
    summary, the entries it kept, everything after it), as context building produces them."""
    previous = previous_compaction_index(entries)
    if previous is None:
        messages = (entry_message(entry) for entry in entries)
        return [message for message in messages if message is not None]
    compaction = entries[previous]
    context: list[Any] = [
        CompactionSummaryMessage(summary=compaction.summary, tokens_before=compaction.tokens_before)
    ]
    for entry in entries[compaction_boundary(entries) :]:
        message = entry_message(entry)
        if message is not None:
            context.append(message)
    return context


def prepare_compaction(
    entries: Sequence[Any], settings: CompactionSettings | None = None
) -> CompactionPreparation | None:
    """Plan a compaction of the branch ``entries`` (root to leaf, ``SessionManager.get_branch()``).

    Returns None when there is nothing to summarise: the branch ends with a compaction, has no
    valid cut point, or everything since the previous compaction fits in ``keepRecentTokens``.
    """
    settings = settings or CompactionSettings()
    entries = [typed_entry(entry) for entry in entries]
    if not entries or isinstance(entries[-1], CompactionEntry):
        return None
    start = compaction_boundary(entries)
    cut = find_cut_point(entries, settings.keep_recent_tokens, start)
    if cut is None:
        return None

    history_end = cut.turn_start_index if cut.turn_start_index is not None else cut.first_kept_index
    to_summarize = _messages(entries[start:history_end])
    prefix = _messages(entries[history_end : cut.first_kept_index]) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None

    file_ops = FileOperations()
    previous_summary: str | None = None
    previous = previous_compaction_index(entries)
    if previous is not None:
        previous_summary = entries[previous].summary or None
        file_ops.add_details(generated_details(entries[previous]))
    file_ops.add_messages(to_summarize)
    file_ops.add_messages(prefix)

    return CompactionPreparation(
        first_kept_entry_id=cut.first_kept_entry_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn and bool(prefix),
        tokens_before=context_tokens(branch_context_messages(entries)),
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )


def _messages(entries: Sequence[Any]) -> list[Any]:
    found = (entry_message(entry) for entry in entries)
    return [message for message in found if message is not None]


def history_prompt(preparation: CompactionPreparation, custom_instructions: str | None = None) -> str:
    """The user message of the main summarisation request."""
    previous = strip_file_tags(preparation.previous_summary) if preparation.previous_summary else None
    instructions = UPDATE_INSTRUCTIONS if previous else SUMMARY_INSTRUCTIONS
    conversation = serialize_conversation(preparation.messages_to_summarize)
    return build_prompt(conversation, with_focus(instructions, custom_instructions), previous)


def turn_prefix_prompt(preparation: CompactionPreparation) -> str:
    """The user message of the split-turn request."""
    return build_prompt(serialize_conversation(preparation.turn_prefix_messages), TURN_PREFIX_INSTRUCTIONS)


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    options: StreamOptions | None = None,
    custom_instructions: str | None = None,
    *,
    http: httpx.AsyncClient | None = None,
) -> CompactionResult:
    """Have ``model`` write the summary for ``preparation``.

    One request (no tools, ``max_tokens`` = 80% of ``reserveTokens``) for the history, updating
    the previous summary if there is one; for a split turn a second, concurrent one (50%) for the
    turn's beginning, merged under its own heading. ``options`` carries the API key, headers and
    thinking level. Raises :class:`~pi_tui.compaction.request.CompactionError` when a request
    fails or is aborted; cancelling the task cancels the requests.
    """
    reserve = preparation.settings.reserve_tokens
    history_options = summary_options(model, options, math.floor(SUMMARY_BUDGET_SHARE * reserve))
    has_history = bool(preparation.messages_to_summarize)

    if preparation.is_split_turn and preparation.turn_prefix_messages:
        prefix_options = summary_options(model, options, math.floor(TURN_PREFIX_BUDGET_SHARE * reserve))
        history_prompt_text = history_prompt(preparation, custom_instructions)
        try:
            async with asyncio.TaskGroup() as group:
                history_task = (
                    group.create_task(
                        request_summary_reply(model, history_prompt_text, history_options, http=http)
                    )
                    if has_history
                    else None
                )
                prefix_task = group.create_task(
                    request_summary_reply(model, turn_prefix_prompt(preparation), prefix_options, http=http)
                )
        except ExceptionGroup as failure:  # one request failed: the other was cancelled
            raise _first_error(failure) from None
        prefix_text, usage = prefix_task.result()
        if history_task is not None:
            history, history_usage = history_task.result()
            usage = combine_usage(history_usage, usage)
        elif preparation.previous_summary:
            history = strip_file_tags(preparation.previous_summary)
        else:
            history = NO_HISTORY
        text = f"{history}\n\n---\n\n{SPLIT_TURN_HEADING}\n\n{prefix_text}"
    else:
        prompt = history_prompt(preparation, custom_instructions)
        text, usage = await request_summary_reply(model, prompt, history_options, http=http)

    read_files, modified_files = preparation.file_ops.file_lists()
    return CompactionResult(
        summary=text + format_file_tags(read_files, modified_files),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        usage=usage,
    )


def _first_error(group: BaseExceptionGroup[Any]) -> BaseException:
    """The CompactionError inside a task group's failure (else its first exception)."""
    for error in group.exceptions:
        if isinstance(error, CompactionError):
            return error
    first = group.exceptions[0]
    return _first_error(first) if isinstance(first, BaseExceptionGroup) else first
