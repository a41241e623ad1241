"""One summarisation request: a single user message, no tools, the text of the answer.

Shared by compaction and branch summaries. The conversation goes in as serialised text inside
``<conversation>`` tags (see :mod:`pi_tui.compaction.serialize`), so the model reads it as
material rather than as turns to continue; no tools are offered, so it can only answer in text.
"""

from __future__ import annotations

import asyncio

import httpx

from pi_tui.ai.stream import stream_message
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.compaction.prompts import SYSTEM_PROMPT
from pi_tui.messages import AssistantMessage, Cost, TextContent, Usage, UserMessage, now_ms


class CompactionError(Exception):
    """A summarisation request failed; nothing was written to the session.

    ``str(error)`` is the provider's message. ``aborted`` tells a user's cancel apart from a
    failure (the UI says "cancelled" rather than showing an error).
    """

    def __init__(self, message: str, *, aborted: bool = False) -> None:
        super().__init__(message)
        self.aborted = aborted


def build_prompt(conversation: str, instructions: str, previous_summary: str | None = None) -> str:
    """The user message of a summarisation request (the tags are part of the data format)."""
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    return text + instructions


def summary_options(model: Model, options: StreamOptions | None, max_tokens: int) -> StreamOptions:
    """The caller's options (key, headers, thinking, retries) with the summary's output budget.

    The budget is capped at the model's own output limit, which a provider would otherwise reject.
    """
    budget = min(max_tokens, model.max_tokens) if model.max_tokens > 0 else max_tokens
    return (options or StreamOptions()).model_copy(update={"max_tokens": max(budget, 1)})


async def request_summary(
    model: Model,
    prompt: str,
    options: StreamOptions,
    *,
    http: httpx.AsyncClient | None = None,
) -> str:
    """Send one summarisation request and return the answer's text (see :func:`request_summary_reply`)."""
    text, _usage = await request_summary_reply(model, prompt, options, http=http)
    return text


async def request_summary_reply(
    model: Model,
    prompt: str,
    options: StreamOptions,
    *,
    http: httpx.AsyncClient | None = None,
) -> tuple[str, Usage]:
    """Send one summarisation request; return the answer's text blocks joined by newlines and
    the reply's usage (what writing the summary cost: pi 1.x stores it on the entry and counts
    it in the session's totals).

    Raises :class:`CompactionError` when the response ends in error or is aborted, or holds no
    text. Cancelling the awaiting task aborts the HTTP request.
    """
    context = Context(
        system_prompt=SYSTEM_PROMPT,
        messages=[UserMessage(content=[TextContent(text=prompt)], timestamp=now_ms())],
    )
    stream = stream_message(model, context, options, http=http)
    try:
        async for _event in stream:
            pass
        message: AssistantMessage = await stream.result()
    except asyncio.CancelledError:
        stream.abort()
        raise
    if message.stop_reason == "aborted":
        raise CompactionError(message.error_message or "Summarization was aborted", aborted=True)
    if message.stop_reason == "error":
        raise CompactionError(message.error_message or "Summarization failed")
    text = "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    if not text.strip():
        raise CompactionError("The model returned an empty summary")
    return text, message.usage if message.usage is not None else Usage()


def combine_usage(first: Usage, second: Usage) -> Usage:
    """Two requests' usage as one (a split turn's compaction asks twice; pi 1.x sums them)."""
    cost = Cost(
        input=first.cost.input + second.cost.input,
        output=first.cost.output + second.cost.output,
        cache_read=first.cost.cache_read + second.cost.cache_read,
        cache_write=first.cost.cache_write + second.cost.cache_write,
        total=first.cost.total + second.cost.total,
    )
    return Usage(
        input=first.input + second.input,
        output=first.output + second.output,
        cache_read=first.cache_read + second.cache_read,
        cache_write=first.cache_write + second.cache_write,
        total_tokens=first.total_tokens + second.total_tokens,
        cost=cost,
    )
