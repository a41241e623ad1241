"""Helpers shared by the request builders: message preparation and content encoding."""

from __future__ import annotations

from collections.abc import Iterable

from pi_tui.ai.types import Model, StreamOptions
from pi_tui.session.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

ProviderMessage = UserMessage | AssistantMessage | ToolResultMessage
NO_RESULT_TEXT = "No result provided"


def prepare_messages(messages: Iterable[ProviderMessage]) -> list[ProviderMessage]:
    """What every API is sent: failed/aborted replies dropped, every tool call answered.

    An assistant message that ended in ``error`` or ``aborted`` is not resent (its tool calls
    never ran). A tool call with no result (the run was interrupted) gets a synthetic error
    result, because every API rejects a call without one.
    """
    prepared: list[ProviderMessage] = []
    pending: list[ToolCall] = []
    dropped_calls: set[str] = set()

    def settle() -> None:
        for call in pending:
            prepared.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text=NO_RESULT_TEXT)],
                    is_error=True,
                )
            )
        pending.clear()

    for message in messages:
        if isinstance(message, AssistantMessage):
            settle()
            if message.stop_reason in ("error", "aborted"):
                dropped_calls.update(b.id for b in message.content if isinstance(b, ToolCall))
                continue
            prepared.append(message)
            pending.extend(b for b in message.content if isinstance(b, ToolCall))
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id in dropped_calls:
                continue
            pending[:] = [call for call in pending if call.id != message.tool_call_id]
            prepared.append(message)
        else:
            settle()
            prepared.append(message)
    settle()
    return prepared


def text_of(blocks: Iterable[object]) -> str:
    return "\n".join(block.text for block in blocks if isinstance(block, TextContent))


def images_of(blocks: Iterable[object]) -> list[ImageContent]:
    return [block for block in blocks if isinstance(block, ImageContent)]


def data_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def stream_headers(
    model: Model,
    options: StreamOptions,
    key_header: str = "authorization",
    *,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """JSON in, SSE out, the API key in ``key_header``; models.json headers, then the request's
    own headers, override. ``authorization`` gets the ``Bearer`` scheme."""
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if extra:
        headers.update(extra)
    if options.api_key:
        scheme = "Bearer " if key_header == "authorization" else ""
        headers[key_header] = scheme + options.api_key
    headers.update(model.headers)
    headers.update(options.headers)
    return headers
