"""Anthropic Messages: recorded streams assemble to the documented results; requests match pi's.

Stream expectations come from ``tests/data/sse/EXPECTED.json`` (computed by an independent
reference assembler); request expectations from the last request the real pi sent in
``tests/data/pi-sessions/04-thinking-anthropic``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.anthropic import CLIENT
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.registry import get_client
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_tui.session import SessionManager, convert_to_llm
from pi_tui.session.entries import MessageEntry
from tests.conftest import PI_SESSIONS
from tests.support.recordings import SSE_DIR, assemble, expected, parse_bytes, recorded_model, recordings

ANTHROPIC = recordings("anthropic")
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "toolUse", "max_tokens": "length"}
PNG = "iVBORw0KGgo="


# --- helpers --------------------------------------------------------------------------------


def fake_claude(**changes: Any) -> Model:
    """The model of the pi fixture 04 (a fake anthropic-messages provider)."""
    fields: dict[str, Any] = {
        "id": "fake-claude",
        "provider": "fakeant",
        "api": "anthropic-messages",
        "base_url": "http://127.0.0.1:8123",
        "reasoning": True,
        "max_tokens": 16000,
        "context_window": 200000,
    }
    fields.update(changes)
    return Model(**fields)


def body(model: Model, messages: list[Any], **options: Any) -> dict[str, Any]:
    return CLIENT.build_request(model, Context(messages=messages), StreamOptions(**options)).body


def reply(model: Model, *content: Any, stop_reason: str = "stop") -> AssistantMessage:
    """An assistant message as ``model`` would have produced it."""
    return AssistantMessage(
        content=list(content),
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason=stop_reason,
    )


def user(*content: Any) -> UserMessage:
    return UserMessage(content=list(content))


def result(call_id: str, *content: Any, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=list(content), is_error=is_error)


def close_json(text: str) -> dict[str, Any]:
    """Unterminated JSON closed as the shortest completion that parses (independent of our parser)."""
    for suffix in ("", '"', "}", '"}', "]}", '"]}', "}}", '"}}', "]}}", '"]}}'):
        try:
            return json.loads(text + suffix)
        except json.JSONDecodeError:
            continue
    raise AssertionError(f"cannot close {text!r}")


def expected_content(data: dict[str, Any]) -> list[dict[str, Any]]:
    """EXPECTED.json's Anthropic blocks in our message format; not-ours blocks left out."""
    unterminated = data.get("unterminated_tool_input_json", {})
    out: list[dict[str, Any]] = []
    for position, block in enumerate(data["content"]):
        kind = block["type"]
        if kind == "text":
            out.append({"type": "text", "text": block["text"]})
        elif kind == "thinking":
            out.append(
                {"type": "thinking", "thinking": block["thinking"], "thinkingSignature": block["signature"]}
            )
        elif kind == "redacted_thinking":
            out.append(
                {
                    "type": "thinking",
                    "thinking": "[Reasoning redacted]",
                    "thinkingSignature": block["data"],
                    "redacted": True,
                }
            )
        elif kind == "tool_use":
            arguments = block["input"]
            if arguments is None:
                arguments = close_json(unterminated[str(position)])
            out.append({"type": "toolCall", "id": block["id"], "name": block["name"], "arguments": arguments})
    return out


def run_parser(
    data: bytes, chunk_size: int = 0
) -> tuple[MessageBuilder, list[StreamEvent], ProviderError | None]:
    """Feed raw SSE bytes through decoder + parser, like the runner does, keeping the events."""
    run = parse_bytes("anthropic-messages", data, chunk_size)
    return run.builder, run.events, run.failure


def recording(name: str) -> bytes:
    return (SSE_DIR / name).read_bytes()


def cut_before(data: bytes, marker: bytes) -> bytes:
    position = data.index(marker)
    return data[:position]


# --- recorded streams ------------------------------------------------------------------------


def test_registered() -> None:
    assert get_client("anthropic-messages") is CLIENT


def test_every_recording_covered() -> None:
    assert len(ANTHROPIC) == 15


@pytest.mark.parametrize("chunk_size", [0, 7])
@pytest.mark.parametrize("name", ANTHROPIC)
def test_recording_assembles_to_expected(name: str, chunk_size: int) -> None:
    data = expected(name)
    message = assemble(name, chunk_size)
    if data["errors"]:
        (error,) = data["errors"]
        assert message.stop_reason == "error"
        assert message.error_message == error["message"]
        assert message.content == []
        return
    assert [block.to_json_dict() for block in message.content] == expected_content(data)
    assert message.stop_reason == STOP_REASONS[data["stop_reason"]]
    assert message.response_id == data["id"]
    usage = data["usage"]
    assert message.usage is not None
    assert message.usage.input == usage["input_tokens"]
    assert message.usage.output == usage["output_tokens"]
    assert message.usage.cache_read == usage.get("cache_read_input_tokens", 0)
    assert message.usage.cache_write == usage.get("cache_creation_input_tokens", 0)
    assert message.usage.total_tokens == (
        message.usage.input + message.usage.output + message.usage.cache_read + message.usage.cache_write
    )
    assert message.error_message is None


@pytest.mark.parametrize("name", ANTHROPIC)
def test_events_are_well_formed(name: str) -> None:
    """start first; every block opened once and closed once, in index order; done/error last."""
    builder, events, _ = run_parser(recording(name), 5)
    assert events[0].type == "start"
    assert events[-1].type in ("done", "error")
    assert sum(event.type in ("done", "error") for event in events) == 1
    starts = [e.content_index for e in events if e.type.endswith("_start") and e.type != "start"]
    ends = [e.content_index for e in events if e.type.endswith("_end")]
    assert starts == list(range(len(builder.blocks)))
    assert sorted(ends) == starts
    for event in events:
        if event.type.endswith("_delta"):
            kind = event.type.removesuffix("_delta")
            assert builder.blocks[event.content_index].kind == ("toolCall" if kind == "toolcall" else kind)


def test_tool_arguments_stream_partially() -> None:
    _, events, _ = run_parser(recording("anthropic/text-then-tool-use-args-sonnet4.sse"))
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert [e.delta for e in deltas] == ['{"locati', 'on": "P', "ar", 'is"}']
    assert deltas[-2].tool_call is not None and deltas[-2].tool_call.arguments == {"location": "Par"}
    (end,) = [e for e in events if e.type == "toolcall_end"]
    assert end.content_index == 1
    assert end.tool_call is not None and end.tool_call.arguments == {"location": "Paris"}


def test_skipped_blocks_do_not_shift_indices() -> None:
    """Wire blocks 0-1 are a server tool and its result; wire block 2 is our block 0."""
    builder, events, _ = run_parser(recording("anthropic/web-search-citations-opus41.sse"))
    text_starts = [e.content_index for e in events if e.type == "text_start"]
    assert text_starts == list(range(10))
    assert not any(e.type.startswith("toolcall") for e in events)
    assert builder.snapshot().stop_reason == "stop"


def test_overloaded_before_output_is_retryable() -> None:
    _, _, failure = run_parser(recording("anthropic/error-event-overloaded-DOCS-EXAMPLE.sse"))
    assert failure is not None
    assert str(failure) == "Overloaded"
    assert failure.retryable


def test_error_after_output_keeps_what_streamed_and_is_final() -> None:
    text = recording("anthropic/text-haiku45.sse")
    error = recording("anthropic/error-event-overloaded-DOCS-EXAMPLE.sse")
    builder, events, failure = run_parser(cut_before(text, b"event: message_delta") + error, 3)
    assert failure is not None and not failure.retryable
    message = builder.snapshot()
    assert message.stop_reason == "error"
    assert message.error_message == "Overloaded"
    assert [block.to_json_dict() for block in message.content] == [{"type": "text", "text": "Hello"}]
    assert events[-1].type == "error"


def test_invalid_request_error_is_not_retryable() -> None:
    data = (
        b'event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}\n\n'
    )
    _, _, failure = run_parser(data)
    assert failure is not None and str(failure) == "bad" and not failure.retryable


def test_stream_cut_before_stop_reason_is_an_error_keeping_output() -> None:
    data = cut_before(recording("anthropic/text-then-tool-use-args-sonnet4.sse"), b"event: message_delta")
    builder, _, failure = run_parser(data)
    assert failure is not None and not failure.retryable
    message = builder.snapshot()
    assert message.stop_reason == "error"
    assert message.error_message == "The stream ended before the reply was complete"
    assert message.content[0].to_json_dict() == {
        "type": "text",
        "text": "I'll check the current weather in Paris for you.",
    }
    assert isinstance(message.content[1], ToolCall) and message.content[1].arguments == {"location": "Paris"}


def test_stream_without_message_stop_finishes_with_its_stop_reason() -> None:
    data = cut_before(recording("anthropic/max-tokens-mid-tool-json-sonnet37.sse"), b"event: message_stop")
    builder, events, failure = run_parser(data, 11)
    assert failure is None
    message = builder.snapshot()
    assert message.stop_reason == "length"
    assert [block.to_json_dict() for block in message.content] == expected_content(
        expected("anthropic/max-tokens-mid-tool-json-sonnet37.sse")
    )
    assert events[-1].type == "done"


def test_empty_stream_is_retryable() -> None:
    _, _, failure = run_parser(b"")
    assert failure is not None and failure.retryable
    assert str(failure) == "The stream ended before the reply began"


def test_refusal_ends_in_error() -> None:
    data = recording("anthropic/text-haiku45.sse").replace(b'"end_turn"', b'"refusal"')
    builder, events, failure = run_parser(data)
    assert failure is None
    message = builder.snapshot()
    assert message.stop_reason == "error"
    assert message.error_message is not None and "refusal" in message.error_message
    assert message.content[0].to_json_dict() == {"type": "text", "text": "Hello"}
    assert events[-1].type == "error"


def test_malformed_json_names_the_line() -> None:
    _, _, failure = run_parser(b"event: message_start\ndata: {not json\n\n")
    assert failure is not None and "{not json" in str(failure)


def test_tool_input_given_whole_at_block_start() -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    data = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    builder, _, failure = run_parser(data)
    assert failure is None
    message = builder.snapshot()
    assert message.stop_reason == "toolUse"
    assert message.content[0].to_json_dict() == {
        "type": "toolCall",
        "id": "t1",
        "name": "ls",
        "arguments": {"path": "."},
    }
    assert message.usage is not None and (message.usage.input, message.usage.output) == (3, 5)


# --- request: pi's fixture ------------------------------------------------------------------


def fixture_request() -> dict[str, Any]:
    lines = (PI_SESSIONS / "04-thinking-anthropic" / "requests.jsonl").read_text().splitlines()
    return json.loads(lines[-1])


def test_last_request_of_pi_fixture(tmp_path: Path) -> None:
    """The whole body pi sent, key order included, from the session it was sent from."""
    copy = tmp_path / "session.jsonl"
    shutil.copy(PI_SESSIONS / "04-thinking-anthropic" / "session.jsonl", copy)
    manager = SessionManager.open(copy)
    leaf = manager.get_leaf_entry()
    assert isinstance(leaf, MessageEntry) and leaf.message.role == "assistant"
    manager.branch(leaf.parent_id)
    messages = convert_to_llm(manager.build_session_context().messages)
    manager.close()

    pi = fixture_request()
    # The recorded system text was replaced by a placeholder, and our tools are not pi's yet:
    # feed pi's own through our conversion, which must give back exactly what pi sent.
    tools = [
        Tool(name=tool["name"], description=tool["description"], parameters=tool["input_schema"])
        for tool in pi["tools"]
    ]
    context = Context(system_prompt=pi["system"][0]["text"], messages=messages, tools=tools)
    request = CLIENT.build_request(fake_claude(), context, StreamOptions(thinking="high", api_key="k"))

    assert request.url == "http://127.0.0.1:8123/v1/messages"
    assert list(request.body) == list(pi)
    assert request.body == pi
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 14976, "display": "summarized"}


def test_headers() -> None:
    options = StreamOptions(api_key="sk-test", thinking="high")
    headers = CLIENT.build_request(fake_claude(), Context(), options).headers
    assert headers["x-api-key"] == "sk-test"
    assert "authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "text/event-stream"


def test_auth_header_and_header_overrides() -> None:
    model = fake_claude(auth_header=True, headers={"x-team": "model", "anthropic-version": "2099-01-01"})
    options = StreamOptions(api_key="tok", headers={"x-team": "request"})
    headers = CLIENT.build_request(model, Context(), options).headers
    assert headers["authorization"] == "Bearer tok"
    assert "x-api-key" not in headers
    assert headers["x-team"] == "request"
    assert headers["anthropic-version"] == "2099-01-01"


def test_no_key_no_auth_header() -> None:
    headers = CLIENT.build_request(fake_claude(), Context(), StreamOptions()).headers
    assert "x-api-key" not in headers and "authorization" not in headers


# --- request: thinking ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_max", "level", "max_tokens", "budget"),
    [
        (16000, "minimal", 16000, 1024),
        (16000, "low", 16000, 2048),
        (16000, "medium", 16000, 8192),
        (16000, "high", 16000, 14976),
        (16000, "xhigh", 16000, 14976),
        (64000, "minimal", 64000, 1024),
        (64000, "low", 64000, 2048),
        (64000, "medium", 64000, 8192),
        (64000, "high", 64000, 16384),
        (64000, "xhigh", 64000, 16384),
    ],
)
def test_thinking_budget_per_level(model_max: int, level: str, max_tokens: int, budget: int) -> None:
    """pi 1.5.2: the model's maximum (0.73 capped it at 32000), the budget inside it, leaving 1024
    to answer."""
    sent = body(fake_claude(max_tokens=model_max), [user(TextContent(text="hi"))], thinking=level)
    assert sent["max_tokens"] == max_tokens
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": budget, "display": "summarized"}


def test_explicit_max_tokens_is_the_base() -> None:
    sent = body(
        fake_claude(max_tokens=64000), [user(TextContent(text="hi"))], thinking="low", max_tokens=4000
    )
    assert (sent["max_tokens"], sent["thinking"]["budget_tokens"]) == (6048, 2048)


def test_max_tokens_fits_beside_a_long_conversation() -> None:
    """pi 1.5.2's clampMaxTokensToContext: 180000 tokens used (the last reply's usage) plus "next"
    (1 token) in a 200000 window leave 200000 - 180001 - 4096 = 15903, below 32768, so the fixed
    margin alone applies; a short one gets the model's maximum."""
    model = fake_claude(max_tokens=64000)
    answered = reply(model, TextContent(text="ok"))
    answered.usage = Usage(input=179000, output=1000, total_tokens=180000)
    long = body(model, [user(TextContent(text="hi")), answered, user(TextContent(text="next"))])
    assert long["max_tokens"] == 15903
    assert body(model, [user(TextContent(text="hi"))])["max_tokens"] == 64000


def test_no_thinking_for_non_reasoning_model_or_off() -> None:
    plain = body(
        fake_claude(reasoning=False, max_tokens=64000), [user(TextContent(text="hi"))], thinking="high"
    )
    assert "thinking" not in plain
    assert plain["max_tokens"] == 64000
    off = body(fake_claude(), [user(TextContent(text="hi"))], thinking="off")
    assert off["thinking"] == {"type": "disabled"}  # pi 1.5.2 says so for a reasoning model
    assert off["max_tokens"] == 16000
    headers = CLIENT.build_request(
        fake_claude(reasoning=False), Context(), StreamOptions(thinking="high")
    ).headers
    assert "anthropic-beta" not in headers


def test_adaptive_thinking_models_send_effort() -> None:
    # pi 1.x: adaptive when compat says so; xhigh runs as max on a model that has only max
    model = fake_claude(
        id="claude-opus-4-6",
        max_tokens=128000,
        compat={"forceAdaptiveThinking": True},
        thinking_level_map={"max": "max"},
    )
    sent = body(model, [user(TextContent(text="hi"))], thinking="xhigh")
    assert sent["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert sent["output_config"] == {"effort": "max"}
    assert sent["max_tokens"] == 128000
    minimal = body(model, [user(TextContent(text="hi"))], thinking="minimal")
    assert minimal["output_config"] == {"effort": "low"}
    plain = fake_claude(id="claude-opus-4-6", compat={"forceAdaptiveThinking": True})
    assert body(plain, [user(TextContent(text="hi"))], thinking="max")["output_config"] == {"effort": "high"}


# --- request: messages ----------------------------------------------------------------------


def test_consecutive_tool_results_merge_into_one_user_message() -> None:
    model = fake_claude()
    calls = [ToolCall(id="toolu_a", name="read", arguments={"path": "a"}), ToolCall(id="toolu_b", name="ls")]
    messages = [
        user(TextContent(text="look")),
        reply(model, TextContent(text="Reading."), *calls, stop_reason="toolUse"),
        result("toolu_a", TextContent(text="line 1"), TextContent(text="line 2")),
        result("toolu_b", TextContent(text="no such dir"), is_error=True),
    ]
    sent = body(model, messages)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][1:] == [
        {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a"}},
        {"type": "tool_use", "id": "toolu_b", "name": "ls", "input": {}},
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "line 1\nline 2", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_b",
            "content": "no such dir",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]


def test_missing_tool_result_is_answered_and_ids_normalized() -> None:
    model = fake_claude()
    call = ToolCall(id="call_1|fc_2", name="read")
    messages = [
        user(TextContent(text="go")),
        reply(model, call, stop_reason="toolUse"),
        user(TextContent(text="stop")),
    ]
    sent = body(model, messages)["messages"]
    assert sent[1]["content"] == [{"type": "tool_use", "id": "call_1_fc_2", "name": "read", "input": {}}]
    assert sent[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_1_fc_2",
            "content": "No result provided",
            "is_error": True,
        }
    ]
    assert sent[3] == {
        "role": "user",
        "content": [{"type": "text", "text": "stop", "cache_control": {"type": "ephemeral"}}],
    }


def test_user_images_as_base64_blocks() -> None:
    model = fake_claude(input=["text", "image"])
    messages = [user(TextContent(text="what is this?"), ImageContent(data=PNG, mime_type="image/png"))]
    assert body(model, messages)["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    "cache_control": {"type": "ephemeral"},
                },
            ],
        }
    ]


def test_images_dropped_for_text_only_model() -> None:
    messages = [user(TextContent(text="what is this?"), ImageContent(data=PNG, mime_type="image/png"))]
    sent = body(fake_claude(), messages)["messages"]
    assert sent[0]["content"] == [  # pi's placeholder in place of the image
        {"type": "text", "text": "what is this?"},
        {
            "type": "text",
            "text": "(image omitted: model does not support images)",
            "cache_control": {"type": "ephemeral"},
        },
    ]


def test_tool_result_images() -> None:
    model = fake_claude(input=["text", "image"])
    call = ToolCall(id="toolu_1", name="read", arguments={"path": "a.png"})
    image = ImageContent(data=PNG, mime_type="image/png")
    messages = [
        user(TextContent(text="show")),
        reply(model, call, stop_reason="toolUse"),
        result("toolu_1", image),
    ]
    (block,) = body(model, messages)["messages"][2]["content"]
    assert block["content"] == [
        {"type": "text", "text": "(see attached image)"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    text_only = body(fake_claude(), messages)["messages"][2]["content"][0]
    assert text_only["content"] == "(tool image omitted: model does not support images)"


def test_string_user_content() -> None:
    sent = body(
        fake_claude(),
        [
            UserMessage(content="hello"),
            reply(fake_claude(), TextContent(text="hi")),
            UserMessage(content="again"),
        ],
    )["messages"]
    assert sent[0] == {"role": "user", "content": "hello"}
    assert sent[2] == {
        "role": "user",
        "content": [{"type": "text", "text": "again", "cache_control": {"type": "ephemeral"}}],
    }


def test_blank_blocks_and_failed_replies_are_not_sent() -> None:
    model = fake_claude()
    messages = [
        user(TextContent(text="one")),
        reply(model, TextContent(text="partial"), stop_reason="error"),
        user(TextContent(text="  "), TextContent(text="two")),
        reply(model, TextContent(text=" "), ThinkingContent(thinking=""), TextContent(text="ok")),
    ]
    sent = body(model, messages)["messages"]
    assert sent == [
        {"role": "user", "content": [{"type": "text", "text": "one"}]},
        {"role": "user", "content": [{"type": "text", "text": "two"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


def test_redacted_thinking_round_trip() -> None:
    """What streamed in goes back verbatim to the model that produced it."""
    name = "anthropic/redacted-thinking-sonnet45.sse"
    streamed = assemble(name)
    model = recorded_model("anthropic-messages")
    messages = [user(TextContent(text="magic string")), streamed, user(TextContent(text="and?"))]
    assistant = body(model, messages)["messages"][1]
    wire = expected(name)["content"]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "redacted_thinking", "data": wire[0]["data"]},
            {"type": "redacted_thinking", "data": wire[1]["data"]},
            {"type": "text", "text": wire[2]["text"]},
        ],
    }


def test_thinking_signature_round_trip() -> None:
    name = "anthropic/thinking-signature-haiku45.sse"
    streamed = assemble(name)
    model = recorded_model("anthropic-messages")
    messages = [user(TextContent(text="names?")), streamed, user(TextContent(text="more"))]
    first = body(model, messages)["messages"][1]["content"][0]
    wire = expected(name)["content"][0]
    assert first == {"type": "thinking", "thinking": wire["thinking"], "signature": wire["signature"]}


def test_thinking_from_another_model_is_left_out_and_unsigned_goes_as_text() -> None:
    """pi 1.x leaves another model's thinking out (pi 0.73.1 sent it as text); this model's
    unsigned thinking (a cut stream) still goes as text."""
    model = fake_claude()
    other = fake_claude(id="other-claude")
    messages = [
        user(TextContent(text="q")),
        reply(
            other,
            ThinkingContent(thinking="foreign", thinking_signature="sig"),
            ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque", redacted=True),
            TextContent(text="a"),
        ),
        user(TextContent(text="q2")),
        reply(model, ThinkingContent(thinking="unsigned"), TextContent(text="b")),
        user(TextContent(text="q3")),
    ]
    sent = body(model, messages)["messages"]
    assert sent[1]["content"] == [{"type": "text", "text": "a"}]
    assert sent[3]["content"] == [{"type": "text", "text": "unsigned"}, {"type": "text", "text": "b"}]


def test_tools_and_system() -> None:
    tools = [
        Tool(
            name="ls",
            description="List",
            parameters={"type": "object", "properties": {"p": {"type": "string"}}},
        ),
        Tool(name="noop"),
    ]
    context = Context(system_prompt="Be brief.", messages=[user(TextContent(text="hi"))], tools=tools)
    sent = CLIENT.build_request(fake_claude(), context, StreamOptions(temperature=0.2)).body
    assert list(sent) == [
        "model", "messages", "max_tokens", "stream", "system", "temperature", "tools", "thinking",
    ]  # fmt: skip
    assert sent["thinking"] == {"type": "disabled"}
    assert sent["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert sent["tools"] == [
        {
            "name": "ls",
            "description": "List",
            "eager_input_streaming": True,
            "input_schema": {"type": "object", "properties": {"p": {"type": "string"}}, "required": []},
        },
        {
            "name": "noop",
            "description": "",
            "eager_input_streaming": True,
            "input_schema": {"type": "object", "properties": {}, "required": []},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    bare = CLIENT.build_request(
        fake_claude(), Context(messages=[user(TextContent(text="hi"))]), StreamOptions()
    )
    assert list(bare.body) == ["model", "messages", "max_tokens", "stream", "thinking"]
