"""Lone UTF-16 surrogates out of what is sent to a provider, as pi does before every request.

Node cuts strings by UTF-16 units, so an emoji cut in half by a length limit leaves a lone
``"\\ud83d"`` in a session file (the file keeps it; :mod:`pi_tui.jsonio` reads and writes it back
unchanged). Some providers refuse a request holding one. pi removes every unpaired surrogate from
the texts it sends: the system prompt, user and assistant text, thinking, and tool-result text
(tool-call arguments, tool definitions and signatures go as they are). This module does the same
for a request's :class:`Context`, returning copies only of what changes; the session's own
messages are never touched.

The check is cheap where it matters: an ASCII string (nearly all of them) cannot hold a
surrogate and is passed after one flag test.
"""

from __future__ import annotations

import re
from typing import Any

from pi_tui.ai.types import Context
from pi_tui.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    UserMessage,
)

_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """``text`` without unpaired surrogates; a high + low pair that a Python string holds as
    two characters is kept, as the one character it stands for."""
    if text.isascii() or not _ANY_SURROGATE.search(text):
        return text
    kept = _LONE_SURROGATE.sub("", text)
    return kept.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def _clean_blocks(blocks: list[Any]) -> list[Any] | None:
    """The blocks with clean text, or None when none needed a change (no copy made)."""
    out: list[Any] | None = None
    for index, block in enumerate(blocks):
        changed: TextContent | ThinkingContent | None
        if isinstance(block, TextContent):
            text = without_lone_surrogates(block.text)
            changed = None if text is block.text else block.model_copy(update={"text": text})
        elif isinstance(block, ThinkingContent):
            text = without_lone_surrogates(block.thinking)
            changed = None if text is block.thinking else block.model_copy(update={"thinking": text})
        else:
            changed = None
        if changed is not None:
            if out is None:
                out = list(blocks)
            out[index] = changed
    return out


def _clean_message(
    message: UserMessage | AssistantMessage | ToolResultMessage,
) -> UserMessage | AssistantMessage | ToolResultMessage:
    content = message.content
    if isinstance(content, str):
        text = without_lone_surrogates(content)
        return message if text is content else message.model_copy(update={"content": text})
    blocks = _clean_blocks(content)
    return message if blocks is None else message.model_copy(update={"content": blocks})


def clean_context(context: Context) -> Context:
    """``context`` as it may be sent: itself when no text holds a lone surrogate (the usual
    case, no copy), else a copy whose changed messages are copies."""
    prompt = without_lone_surrogates(context.system_prompt)
    messages = [_clean_message(message) for message in context.messages]
    if prompt is context.system_prompt and all(
        new is old for new, old in zip(messages, context.messages, strict=True)
    ):
        return context
    return context.model_copy(update={"system_prompt": prompt, "messages": messages})
