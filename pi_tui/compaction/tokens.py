"""Token estimates for agent messages, and the size of a context.

Compaction must decide *before* a request whether the context still fits, and where to cut, for
any provider; a tokenizer per model is not available, so pi's heuristic is used: characters / 4
rounded up (an overestimate for English and code, which errs on the safe side), 1200 tokens per
image. Characters are counted as JavaScript does (UTF-16 units) so the numbers match pi's.

The real size of a context is known only from a provider's ``usage``; :func:`context_tokens`
uses the last trustworthy usage and estimates just the messages that came after it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pi_tui.js_semantics import js_length, js_stringify
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

IMAGE_TOKENS = 1200
"""Estimate for one image block, whatever its size (pi counts 4800 characters)."""
_IMAGE_CHARS = IMAGE_TOKENS * 4


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _content_chars(content: str | Sequence[Any]) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content:
        if isinstance(block, TextContent):
            chars += js_length(block.text)
        elif isinstance(block, ImageContent):
            chars += _IMAGE_CHARS
    return chars


def estimate_tokens(message: Any) -> int:
    """Estimated tokens of one agent message (0 for roles that never reach the model).

    Counts text, thinking, tool-call names plus their arguments as JSON, tool results, user
    shell commands with their output, and summaries.
    """
    if isinstance(message, UserMessage | CustomMessage | ToolResultMessage):
        return _tokens(_content_chars(message.content))
    if isinstance(message, AssistantMessage):
        chars = 0
        for block in message.content:
            if isinstance(block, TextContent):
                chars += js_length(block.text)
            elif isinstance(block, ThinkingContent):
                chars += js_length(block.thinking)
            elif isinstance(block, ToolCall):
                chars += js_length(block.name) + js_length(js_stringify(block.arguments))
        return _tokens(chars)
    if isinstance(message, BashExecutionMessage):
        return _tokens(js_length(message.command) + js_length(message.output))
    if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
        return _tokens(js_length(message.summary))
    return 0


def usage_tokens(usage: Usage) -> float:
    """Context size a response reports: ``totalTokens``, else the sum of its parts (a float when
    the file holds one: :class:`Usage` keeps its numbers as written)."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def last_usage_index(messages: Sequence[Any]) -> int | None:
    """Index of the newest assistant message whose usage can be trusted.

    Failed and aborted responses are skipped (their usage is partial or zero), and so is a
    usage of zero (providers that report none), so the estimate is used instead.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            isinstance(message, AssistantMessage)
            and message.usage is not None
            and message.stop_reason not in ("error", "aborted")
            and usage_tokens(message.usage) > 0
        ):
            return index
    return None


def context_tokens(messages: Sequence[Any], last_usage: Usage | None = None) -> float:
    """Tokens the context ``messages`` takes: the last usage plus estimates of what follows it.

    ``last_usage`` overrides the usage found in ``messages`` (for a caller that tracks it
    separately); it is taken to cover everything up to the newest assistant message. Without any
    usage every message is estimated.
    """
    if last_usage is not None and usage_tokens(last_usage) > 0:
        index = _last_assistant_index(messages)
        base = usage_tokens(last_usage)
    else:
        index = last_usage_index(messages)
        if index is None:
            return sum(estimate_tokens(message) for message in messages)
        usage = messages[index].usage
        assert usage is not None
        base = usage_tokens(usage)
    start = 0 if index is None else index + 1
    return base + sum(estimate_tokens(message) for message in messages[start:])


def _last_assistant_index(messages: Sequence[Any]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AssistantMessage):
            return index
    return None
