"""Mistral request shapes that need no server: tool call ids from other models, images, tool
result texts, thinking fields, headers. The expected ids were computed with pi 1.5.2's own
``shortHash`` (pi-ai/dist/utils/hash.js), so pi and pi-tui send a session's calls under the same ids.
"""

from __future__ import annotations

from typing import Any

from pi_tui.ai.mistral_conversations import (
    CLIENT,
    ToolCallIds,
    convert_messages,
    derive_tool_call_id,
    thinking_fields,
)
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

IMAGE = ImageContent(data="QUJD", mime_type="image/png")


def model(**fields: Any) -> Model:
    values: dict[str, Any] = {
        "id": "mistral-medium-latest",
        "api": "mistral-conversations",
        "provider": "mistral",
        "base_url": "https://api.mistral.ai/",
        "input": ["text", "image"],
    }
    values.update(fields)
    return Model(**values)


def other_reply(*calls: ToolCall, thinking: str = "") -> AssistantMessage:
    content: list[Any] = [ThinkingContent(thinking=thinking)] if thinking else []
    return AssistantMessage(
        content=[*content, *calls], api="anthropic-messages", provider="anthropic", model="claude-x"
    )


def result(call_id: str, *blocks: Any, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=list(blocks), is_error=is_error)


def test_the_url_has_v1_and_the_key_is_a_bearer_token() -> None:
    request = CLIENT.build_request(model(), Context(), StreamOptions(api_key="k1"))
    assert request.url == "https://api.mistral.ai/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer k1"
    assert request.headers["accept"] == "text/event-stream"


def test_ids_as_pi_derives_them() -> None:
    assert derive_tool_call_id("call_abc|fc_123") == "18g6kob34"
    assert derive_tool_call_id("toolu_01ABCdefGHIjklMNOpqrSTU") == "1vlfdalp2"
    assert derive_tool_call_id("toolu_01ABCdefGHIjklMNOpqrSTU", 1) == "12shaxr8a"
    assert derive_tool_call_id("toolcall:0") == "toolcall0"  # 9 letters and digits once cleaned
    ids = ToolCallIds()
    assert ids("abc") == ids("abc") == "y0biex7f9"
    # a second id that would land on a taken one gets the next attempt's hash instead
    ids.owner["18g6kob34"] = "someone-else"
    assert ids("call_abc|fc_123") == "h04n81i8r"


def test_another_models_calls_get_mistral_ids_and_their_results_follow() -> None:
    call = ToolCall(id="toolu_01ABCdefGHIjklMNOpqrSTU", name="read", arguments={"path": "a"})
    context = Context(
        messages=[
            UserMessage(content="go"),
            other_reply(call, thinking="I will read a."),
            result(call.id, TextContent(text="  contents  ")),
        ]
    )
    messages = convert_messages(model(), context)
    assistant, tool = messages[1], messages[2]
    # another model's thinking is left out (pi 1.x; pi 0.73.1 sent it as text)
    assert "content" not in assistant
    assert assistant["tool_calls"][0]["id"] == "1vlfdalp2"
    assert assistant["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"path":"a"}'}
    assert tool == {
        "role": "tool",
        "name": "read",
        "content": [{"type": "text", "text": "contents"}],
        "tool_call_id": "1vlfdalp2",
    }


def test_images_as_mistral_takes_them() -> None:
    context = Context(
        messages=[
            UserMessage(content=[TextContent(text="see"), IMAGE]),
            other_reply(ToolCall(id="c1", name="read", arguments={})),
            result("c1", IMAGE),
        ]
    )
    with_images = convert_messages(model(), context)
    assert with_images[0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": "data:image/png;base64,QUJD"},
    ]
    assert with_images[2]["content"] == [
        {"type": "text", "text": "(see attached image)"},
        {"type": "image_url", "image_url": "data:image/png;base64,QUJD"},
    ]
    text_only = convert_messages(model(input=["text"]), context)
    assert text_only[0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "text", "text": "(image omitted: model does not support images)"},
    ]
    assert all(part["type"] == "text" for part in text_only[2]["content"])


def test_tool_result_texts_are_never_empty_and_errors_are_marked() -> None:
    call = ToolCall(id="c1", name="read", arguments={})
    for blocks, is_error, want in (
        ([TextContent(text="boom")], True, "[tool error] boom"),
        ([], False, "(no tool output)"),
        ([], True, "[tool error] (no tool output)"),
    ):
        context = Context(
            messages=[UserMessage(content="x"), other_reply(call), result("c1", *blocks, is_error=is_error)]
        )
        assert convert_messages(model(), context)[2]["content"] == [{"type": "text", "text": want}]


def test_blank_assistant_content_is_left_out() -> None:
    own = AssistantMessage(
        content=[TextContent(text="  "), ThinkingContent(thinking="")],
        api="mistral-conversations",
        provider="mistral",
        model="mistral-medium-latest",
    )
    assert convert_messages(model(), Context(messages=[UserMessage(content="x"), own])) == [
        {"role": "user", "content": "x"}
    ]


def test_thinking_fields() -> None:
    assert thinking_fields(model(), "high") == {}  # not a reasoning model
    plain = model(reasoning=True)
    assert thinking_fields(plain, "high") == {"prompt_mode": "reasoning"}
    assert thinking_fields(plain, "off") == {}
    mapped = model(
        reasoning=True, thinking_level_map={"off": None, "low": "low", "high": "high", "max": "max"}
    )
    assert thinking_fields(mapped, "off") == {}  # null: "off" cannot be asked for, nothing is sent
    assert thinking_fields(mapped, "max") == {"reasoning_effort": "max"}
    assert thinking_fields(mapped, "low") == {"reasoning_effort": "low"}
    # a level the map does not name runs, and pi sends "high" for it
    assert thinking_fields(mapped, "minimal") == {"reasoning_effort": "high"}


def test_affinity_header_unless_configured() -> None:
    context = Context(messages=[UserMessage(content="x")])
    plain = CLIENT.build_request(model(), context, StreamOptions(api_key="k", session_id="s-1"))
    assert plain.headers["x-affinity"] == "s-1" and plain.body["prompt_cache_key"] == "s-1"
    pinned = CLIENT.build_request(
        model(headers={"X-Affinity": "mine"}), context, StreamOptions(api_key="k", session_id="s-1")
    )
    assert pinned.headers["X-Affinity"] == "mine" and "x-affinity" not in pinned.headers
    none = CLIENT.build_request(model(), context, StreamOptions(api_key="k"))
    assert "x-affinity" not in none.headers and "prompt_cache_key" not in none.body
