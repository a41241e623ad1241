"""What a conversation looks like to the model it is sent to (pi-ai's message transformation).

A session may hold replies of several models, APIs and providers. Before any request builder
turns messages into wire JSON, the conversation is adapted to the *target* model, exactly as the
real pi 1.5.2 does it (checked against its requests in ``tests/data/cross-provider``; pi 0.73.1
sent another model's thinking as text, and pi 1.x's rule wins where the two differ):

- images go to a text-only model (``input`` without ``"image"``) as one placeholder text per run
  of consecutive images, in user messages and tool results;
- a reply of the same provider, API and model is kept as it was (thinking, signatures, ids),
  but for empty thinking that is neither signed nor redacted;
- from any other model: thinking is left out, all of it (signed, redacted or readable: its
  signature means nothing to another model, and as text it would read as part of the visible
  reply), text loses its signature, tool calls lose ``thoughtSignature`` and get
  ids the target API accepts (``normalize_id``, one per API kind), and every tool result follows
  its call's new id;
- replies that ended in ``error`` or ``aborted`` are left out (their results are not: pi sends
  them), and a tool call with no result by the next assistant or user message (or the end) gets
  a synthetic error result ``"No result provided"`` right there.

Pure: the input messages are never changed; changed messages are copies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from pi_tui.ai.types import Model
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

ProviderMessage = UserMessage | AssistantMessage | ToolResultMessage
IdNormalizer = Callable[[str, Model, AssistantMessage], str]
"""(tool call id, target model, the assistant message it comes from) -> id the target accepts."""

NO_RESULT_TEXT = "No result provided"
USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
_NOT_ID_CHARACTER = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_id(value: str, limit: int) -> str:
    """Every character outside ``[a-zA-Z0-9_-]`` becomes ``_``; then cut to ``limit``."""
    return _NOT_ID_CHARACTER.sub("_", value)[:limit]


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def transform_messages(
    messages: Iterable[ProviderMessage], model: Model, normalize_id: IdNormalizer | None = None
) -> list[ProviderMessage]:
    """The messages as ``model`` is sent them (see the module docstring for the rules)."""
    messages = list(messages)
    if "image" not in model.input:
        messages = [_without_images(message) for message in messages]
    renamed: dict[str, str] = {}
    adapted: list[ProviderMessage] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            adapted.append(_adapt_assistant(message, model, normalize_id, renamed))
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in renamed:
            adapted.append(message.model_copy(update={"tool_call_id": renamed[message.tool_call_id]}))
        else:
            adapted.append(message)
    return _answer_every_call(adapted)


BLOCKED_IMAGE_TEXT = "(An image was here; it is not sent because images are blocked in the settings.)"


def block_images(messages: Iterable[ProviderMessage]) -> list[ProviderMessage]:
    """``messages`` with every image replaced by a short note (``images.blockImages``): the
    session keeps the images, the provider never gets them."""
    out: list[ProviderMessage] = []
    for message in messages:
        if isinstance(message, AssistantMessage) or isinstance(message.content, str):
            out.append(message)
        elif any(isinstance(block, ImageContent) for block in message.content):
            out.append(
                message.model_copy(
                    update={"content": images_as_placeholder(message.content, BLOCKED_IMAGE_TEXT)}
                )
            )
        else:
            out.append(message)
    return out


def _without_images(message: ProviderMessage) -> ProviderMessage:
    """``message`` itself when it holds no image (nearly always: copying 25,000 messages of a
    long session for nothing was a third of building its request)."""
    if isinstance(message, AssistantMessage) or isinstance(message.content, str):
        return message
    if not any(isinstance(block, ImageContent) for block in message.content):
        return message
    if isinstance(message, UserMessage):
        return message.model_copy(
            update={"content": images_as_placeholder(message.content, USER_IMAGE_PLACEHOLDER)}
        )
    return message.model_copy(
        update={"content": images_as_placeholder(message.content, TOOL_IMAGE_PLACEHOLDER)}
    )


def images_as_placeholder(blocks: list[Any], placeholder: str) -> list[Any]:
    """Each run of images becomes one placeholder text (a placeholder already there counts)."""
    out: list[Any] = []
    after_placeholder = False
    for block in blocks:
        if isinstance(block, ImageContent):
            if not after_placeholder:
                out.append(TextContent(text=placeholder))
            after_placeholder = True
            continue
        out.append(block)
        after_placeholder = getattr(block, "text", None) == placeholder
    return out


def _adapt_assistant(
    message: AssistantMessage, model: Model, normalize_id: IdNormalizer | None, renamed: dict[str, str]
) -> AssistantMessage:
    same = is_same_model(message, model)
    content: list[Any] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            # Another model's thinking is left out whole (pi 1.x): its signature means nothing
            # here, and sent as text the new model would take it for part of the visible reply.
            if same and (block.redacted or block.thinking_signature or block.thinking.strip()):
                content.append(block)
        elif isinstance(block, TextContent):
            content.append(block if same else TextContent(text=block.text))
        elif isinstance(block, ToolCall):
            content.append(_adapt_call(block, message, model, same, normalize_id, renamed))
        else:
            content.append(block)
    if len(content) == len(message.content) and all(
        new is old for new, old in zip(content, message.content, strict=True)
    ):
        return message  # the same model's reply, sent as it is: no copy
    return message.model_copy(update={"content": content})


def _adapt_call(
    call: ToolCall,
    message: AssistantMessage,
    model: Model,
    same: bool,
    normalize_id: IdNormalizer | None,
    renamed: dict[str, str],
) -> ToolCall:
    if same:
        return call
    update: dict[str, object] = {}
    if call.thought_signature:
        update["thought_signature"] = None
    if normalize_id is not None:
        new_id = normalize_id(call.id, model, message)
        if new_id != call.id:
            renamed[call.id] = new_id
            update["id"] = new_id
    return call.model_copy(update=update) if update else call


def _answer_every_call(messages: list[ProviderMessage]) -> list[ProviderMessage]:
    """Drop failed replies; give every unanswered call a synthetic error result.

    The results are added when the next assistant or user message starts, or at the end, after
    the results that did come; results of a failed reply's calls are still sent, as pi does.
    """
    out: list[ProviderMessage] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()

    def settle() -> None:
        for call in pending:
            if call.id not in answered:
                out.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text=NO_RESULT_TEXT)],
                        is_error=True,
                    )
                )
        pending.clear()
        answered.clear()

    for message in messages:
        if isinstance(message, AssistantMessage):
            settle()
            if message.stop_reason in ("error", "aborted"):
                continue
            calls = [block for block in message.content if isinstance(block, ToolCall)]
            if calls:
                pending[:] = calls
            out.append(message)
        elif isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
            out.append(message)
        else:
            settle()
            out.append(message)
    settle()
    return out
