"""The Converse request body for the content the stream tests do not send: images, tool results
with images (Claude's error-result rule), replayed reasoning of Claude and other models, blank
texts, and GPT reasoning effort."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.ai.bedrock import request_body
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

PNG = "iVBORw0KGgo="


def model(model_id: str, name: str = "", **extra: Any) -> Model:
    return Model(
        id=model_id,
        name=name,
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
        reasoning=True,
        input=["text", "image"],
        max_tokens=8192,
        **extra,
    )


CLAUDE = model("anthropic.claude-3-7-sonnet-20250219-v1:0", "Claude Sonnet 3.7")
NOVA = model("amazon.nova-pro-v1:0", "Nova Pro")


def reply(target: Model, *blocks: Any) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api=target.api,
        provider=target.provider,
        model=target.id,
        stop_reason="toolUse",
        timestamp=1,
    )


def result(call_id: str, *blocks: Any, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="shot", content=list(blocks), is_error=is_error, timestamp=2
    )


def test_images_and_blank_texts() -> None:
    context = Context(
        messages=[
            UserMessage(
                content=[TextContent(text="  "), ImageContent(data=PNG, mime_type="image/png")], timestamp=1
            ),
            UserMessage(content="", timestamp=1),
        ]
    )
    body = request_body(NOVA, context, StreamOptions())
    assert body["messages"] == [
        {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": PNG}}}]},
        {"role": "user", "content": [{"text": "<empty>"}]},
    ]
    assert "system" not in body


def test_an_image_type_bedrock_lacks_is_one_clear_error() -> None:
    context = Context(
        messages=[UserMessage(content=[ImageContent(data=PNG, mime_type="image/bmp")], timestamp=1)]
    )
    with pytest.raises(ConfigError, match="Amazon Bedrock cannot take images of type image/bmp"):
        request_body(NOVA, context, StreamOptions())


def test_claude_gets_error_result_images_after_the_results() -> None:
    shot = ImageContent(data=PNG, mime_type="image/png")
    context = Context(
        messages=[
            UserMessage(content="go", timestamp=1),
            reply(
                CLAUDE,
                ToolCall(id="a", name="shot", arguments={}),
                ToolCall(id="b", name="shot", arguments={}),
            ),
            result("a", TextContent(text="failed"), shot, is_error=True),
            result("b", shot),
        ]
    )
    results = request_body(CLAUDE, context, StreamOptions())["messages"][-1]["content"]
    assert results == [
        {
            "toolResult": {
                "toolUseId": "a",
                "content": [{"text": "failed"}, {"text": "(image attached after the tool results)"}],
                "status": "error",
            }
        },
        {
            "toolResult": {
                "toolUseId": "b",
                "content": [{"image": {"format": "png", "source": {"bytes": PNG}}}],
                "status": "success",
            }
        },
        {"text": "Images from the error result of tool call a (shot):"},
        {"image": {"format": "png", "source": {"bytes": PNG}}},
        {"cachePoint": {"type": "default"}},
    ]
    # Other models keep the images in the error result.
    nova_results = request_body(
        NOVA,
        context.model_copy(
            update={
                "messages": [
                    UserMessage(content="go", timestamp=1),
                    reply(NOVA, ToolCall(id="a", name="shot", arguments={})),
                    result("a", TextContent(text="failed"), shot, is_error=True),
                ]
            }
        ),
        StreamOptions(),
    )["messages"][-1]["content"]
    assert nova_results == [
        {
            "toolResult": {
                "toolUseId": "a",
                "content": [{"text": "failed"}, {"image": {"format": "png", "source": {"bytes": PNG}}}],
                "status": "error",
            }
        }
    ]


def test_replayed_reasoning_per_model() -> None:
    signed = ThinkingContent(thinking="why", thinking_signature="sig")
    unsigned = ThinkingContent(thinking="cut short")
    redacted = ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="AAECAw==", redacted=True)
    broken = ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="not base64!", redacted=True)

    def sent(target: Model) -> list[dict[str, Any]]:
        context = Context(
            messages=[
                UserMessage(content="q", timestamp=1),
                reply(target, signed, unsigned, redacted, broken, TextContent(text="a")),
                UserMessage(content="again", timestamp=3),
            ]
        )
        return request_body(target, context, StreamOptions())["messages"][1]["content"]

    assert sent(CLAUDE) == [
        {"reasoningContent": {"reasoningText": {"text": "why", "signature": "sig"}}},
        {"text": "cut short"},
        {"reasoningContent": {"redactedContent": "AAECAw=="}},
        {"text": "a"},
    ]
    assert sent(NOVA) == [
        {"reasoningContent": {"reasoningText": {"text": "why"}}},
        {"reasoningContent": {"reasoningText": {"text": "cut short"}}},
        {"reasoningContent": {"redactedContent": "AAECAw=="}},
        {"text": "a"},
    ]


def test_reasoning_fields_for_gpt_and_long_cache_retention() -> None:
    gpt = model("openai.gpt-5.4-v1:0", "GPT-5.4", thinking_level_map={"xhigh": "xhigh"})
    body = request_body(
        gpt, Context(messages=[UserMessage(content="q", timestamp=1)]), StreamOptions(thinking="minimal")
    )
    assert body["additionalModelRequestFields"] == {"reasoning": {"effort": "low"}}
    options = StreamOptions(provider_env={"PI_CACHE_RETENTION": "long"})
    body = request_body(
        CLAUDE, Context(system_prompt="s", messages=[UserMessage(content="q", timestamp=1)]), options
    )
    assert body["system"] == [{"text": "s"}, {"cachePoint": {"type": "default", "ttl": "1h"}}]
    off = request_body(
        NOVA, Context(messages=[UserMessage(content="q", timestamp=1)]), StreamOptions(thinking="off")
    )
    assert "additionalModelRequestFields" not in off
