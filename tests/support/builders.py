"""Small constructors for messages used across tests."""

from __future__ import annotations

from pi_tui.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage, now_ms


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=now_ms())


def assistant(text: str, *calls: ToolCall, stop_reason: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text), *calls],
        api="openai-completions",
        provider="fake",
        model="fake-model",
        stop_reason=stop_reason,
        timestamp=now_ms(),
    )


def tool_result(call_id: str, text: str, *, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name="read",
        content=[TextContent(text=text)],
        is_error=is_error,
        timestamp=now_ms(),
    )
