"""``message_update`` on the JSON wire carries the reply's usage so far, even when the message
being streamed has none (``AssistantMessage.usage`` is optional: pi's files may lack it)."""

from __future__ import annotations

from pi_tui.agent.events import AgentEvent
from pi_tui.ai.events import StreamEvent
from pi_tui.messages import AssistantMessage, TextContent, Usage


def _reply(usage: Usage | None) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text="hi")],
        api="openai-completions",
        provider="test",
        model="m",
        usage=usage,
        stop_reason="stop",
        timestamp=1,
    )


def test_message_update_without_usage_reports_zeros() -> None:
    event = StreamEvent("text_delta", 0, "hi", snapshot=lambda: _reply(None))
    wire = AgentEvent("message_update", {"assistantMessageEvent": event}).to_json()
    assert wire["usage"] == Usage().model_dump(by_alias=True, mode="json")
    assert wire["usage"]["totalTokens"] == 0


def test_message_update_reports_the_message_usage() -> None:
    usage = Usage(input=12, output=3, total_tokens=15)
    event = StreamEvent("text_delta", 0, "hi", snapshot=lambda: _reply(usage))
    wire = AgentEvent("message_update", {"assistantMessageEvent": event}).to_json()
    assert (wire["usage"]["input"], wire["usage"]["output"], wire["usage"]["totalTokens"]) == (12, 3, 15)
