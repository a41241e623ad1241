"""openai-responses: every recording assembles as EXPECTED.json says; requests round-trip pi's ids.

Expectations are computed from EXPECTED.json (the recordings' final ``response.output``), so a
new recording dropped into the folder is checked without touching this file.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import pytest

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.openai_responses import CLIENT, convert_input
from pi_tui.ai.sse import SSEDecoder, SSEEvent
from pi_tui.ai.stream import complete
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.support.builders import tool_result, user
from tests.support.recordings import SSE_DIR, assemble, expected, parse_bytes, recorded_model, recordings

API = "openai-responses"
NAMES = recordings(API)
IMAGE = ImageContent(data="QUJD", mime_type="image/png")


def outputs(name: str, kind: str) -> list[dict[str, Any]]:
    return [item for item in expected(name)["output"] if item["type"] == kind]


def expected_stop(name: str) -> str:
    want = expected(name)
    if want["errors"] or want["status"] == "failed":
        return "error"
    if want["status"] == "incomplete":
        return "length"
    return "toolUse" if outputs(name, "function_call") else "stop"


def blocks(message: AssistantMessage, kind: type) -> list[Any]:
    return [block for block in message.content if isinstance(block, kind)]


def run_events(data: bytes, chunk_size: int = 0) -> tuple[list[StreamEvent], AssistantMessage]:
    """Feed raw SSE bytes through decoder + parser; return every event and the final message."""
    run = parse_bytes(API, data, chunk_size)
    return run.events, run.message


def recorded_items(name: str, event_type: str) -> list[dict[str, Any]]:
    """The JSON payloads of one event type, straight from the recording."""
    payloads = []
    for event in SSEDecoder().feed((SSE_DIR / name).read_bytes()):
        if event.data != "[DONE]":
            payload = json.loads(event.data)
            if payload.get("type") == event_type:
                payloads.append(payload)
    return payloads


# --- recordings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [0, 5])
@pytest.mark.parametrize("name", NAMES)
def test_recording_assembles_to_expected(name: str, chunk_size: int) -> None:
    message = assemble(name, chunk_size)
    want = expected(name)

    assert [b.text for b in blocks(message, TextContent)] == [o["text"] for o in outputs(name, "message")]
    assert [b.thinking for b in blocks(message, ThinkingContent)] == [
        o["summary_text"] or o["content_text"] for o in outputs(name, "reasoning")
    ]
    assert [(c.id, c.name, c.arguments) for c in blocks(message, ToolCall)] == [
        (f"{o['call_id']}|{o['id']}", o["name"], o["parsed_arguments"])
        for o in outputs(name, "function_call")
    ]
    kinds = {"message": "text", "reasoning": "thinking", "function_call": "toolCall"}
    assert [block.type for block in message.content] == [kinds[o["type"]] for o in want["output"]]

    assert message.stop_reason == expected_stop(name)
    assert message.response_id == want["response_id"]
    usage = want["usage"] or {}
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens", 0)
    assert message.usage.input == usage.get("input_tokens", 0) - cached
    assert message.usage.cache_read == cached
    assert message.usage.output == usage.get("output_tokens", 0)
    assert message.usage.total_tokens == usage.get("total_tokens", 0)


@pytest.mark.parametrize("name", NAMES)
def test_signatures_keep_what_a_later_request_needs(name: str) -> None:
    message = assemble(name)
    assert [b.text_signature for b in blocks(message, TextContent)] == [
        o["id"] for o in outputs(name, "message")
    ]
    for block, output in zip(blocks(message, ThinkingContent), outputs(name, "reasoning"), strict=True):
        item = json.loads(block.thinking_signature)
        assert item["type"] == "reasoning"
        assert ("encrypted_content" in item) == output["has_encrypted_content"]


def test_error_event_fails_the_message_naming_the_error() -> None:
    (name,) = [n for n in NAMES if expected(n)["errors"]]
    error = expected(name)["errors"][0]["error"]
    for chunk_size in (0, 5):
        message = assemble(name, chunk_size)
        assert message.stop_reason == "error"
        assert error["message"] in message.error_message
        assert error["code"] in message.error_message
        assert message.content == []
        assert message.response_id == expected(name)["response_id"]


def test_error_event_is_not_retryable_for_quota() -> None:
    (payload,) = recorded_items("openai-responses/responses-error-insufficient-quota-gpt5nano.sse", "error")
    parser = CLIENT.parser(MessageBuilder(recorded_model(API)))
    with pytest.raises(ProviderError) as caught:
        parser.handle(_sse(payload))
    assert not caught.value.retryable


@pytest.mark.parametrize("name", NAMES)
def test_events_are_well_formed_and_deltas_add_up(name: str) -> None:
    """Every block opens once and closes once, and what streamed is exactly the final content."""
    events, message = run_events((SSE_DIR / name).read_bytes(), chunk_size=7)
    assert events[0].type == "start"
    assert events[-1].type == ("error" if message.stop_reason == "error" else "done")
    streamed: dict[int, str] = {}
    for event in events:
        if event.type.endswith("_start") and event.type != "start":
            assert event.content_index not in streamed
            streamed[event.content_index] = ""
        elif event.type.endswith("_delta"):
            streamed[event.content_index] += event.delta
    ends = [event.content_index for event in events if event.type.endswith("_end")]
    assert sorted(ends) == sorted(streamed)
    for index, block in enumerate(message.content):
        if isinstance(block, TextContent):
            assert streamed[index] == block.text
        elif isinstance(block, ThinkingContent):
            assert streamed[index] == block.thinking
        else:
            assert json.loads(streamed[index]) == block.arguments


def test_interleaved_items_close_in_wire_order() -> None:
    """OpenRouter finishes the reasoning item after the message item; both blocks stay intact."""
    data = (SSE_DIR / "openai-responses/openrouter-responses-no-event-lines-done.sse").read_bytes()
    events, _ = run_events(data)
    order = [
        (e.type, e.content_index) for e in events if e.type.endswith(("_start", "_end")) and e.type != "start"
    ]
    assert order == [("thinking_start", 0), ("text_start", 1), ("text_end", 1), ("thinking_end", 0)]


def test_stream_cut_before_completion_is_an_error_keeping_partial_text() -> None:
    data = (SSE_DIR / "openai-responses/responses-text-gpt4o.sse").read_bytes()
    cut = data[: data.index(b"event: response.output_text.done")]
    _, message = run_events(cut)
    assert message.stop_reason == "error"
    assert "ended before" in message.error_message
    assert message.content[0].text == "The capital of France is Paris."


def test_incomplete_for_max_output_tokens_is_length() -> None:
    name = "openai-responses/responses-text-gpt4o.sse"
    (completed,) = recorded_items(name, "response.completed")
    incomplete = {**completed, "type": "response.incomplete"}
    incomplete["response"] = {
        **completed["response"],
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    data = (SSE_DIR / name).read_bytes()
    head = data[: data.index(b"event: response.completed")]
    _, message = run_events(head + b"event: response.incomplete\ndata: " + orjson.dumps(incomplete) + b"\n\n")
    assert message.stop_reason == "length"
    assert message.content[0].text == "The capital of France is Paris."
    assert message.usage.output == completed["response"]["usage"]["output_tokens"]


def test_malformed_json_names_the_line() -> None:
    parser = CLIENT.parser(MessageBuilder(recorded_model(API)))
    with pytest.raises(ProviderError, match="not json"):
        parser.handle(_sse_text("not json"))


def _sse(payload: dict[str, Any]) -> SSEEvent:
    return _sse_text(json.dumps(payload))


def _sse_text(data: str) -> SSEEvent:
    return SSEEvent(event="message", data=data)


# --- requests -----------------------------------------------------------------------------------


def model(*, reasoning: bool = False, images: bool = False) -> Model:
    """The model the recordings were 'made' with, so assembled replies count as its own."""
    base = recorded_model(API)
    return base.model_copy(
        update={
            "reasoning": reasoning,
            "input": ["text", "image"] if images else ["text"],
            "max_tokens": 4096,
        }
    )


def test_request_url_headers_and_body_basics() -> None:
    target = model().model_copy(update={"base_url": "http://127.0.0.1:9/v1/", "headers": {"x-model": "1"}})
    context = Context(
        system_prompt="be brief", messages=[user("hi")], tools=[Tool(name="read", description="d")]
    )
    request = CLIENT.build_request(target, context, StreamOptions(api_key="sk", headers={"x-opt": "2"}))
    assert request.url == "http://127.0.0.1:9/v1/responses"
    assert request.headers == {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "authorization": "Bearer sk",
        "x-model": "1",
        "x-opt": "2",
    }
    body = request.body
    assert body["model"] == "recorded"
    assert body["stream"] is True and body["store"] is False
    assert body["max_output_tokens"] == 4096
    assert body["input"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "d",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }
    ]


def test_system_prompt_is_developer_for_reasoning_models() -> None:
    context = Context(system_prompt="rules", messages=[user("hi")])
    assert convert_input(model(reasoning=True), context)[0] == {"role": "developer", "content": "rules"}
    assert convert_input(model(), context)[0] == {"role": "system", "content": "rules"}


def test_reasoning_options_only_for_reasoning_models_with_thinking_on() -> None:
    context = Context(messages=[user("hi")])
    on = CLIENT.build_request(model(reasoning=True), context, StreamOptions(thinking="low")).body
    assert on["reasoning"] == {"effort": "low", "summary": "auto"}
    assert on["include"] == ["reasoning.encrypted_content"]
    for target, thinking in ((model(), "high"), (model(reasoning=True), "off")):
        body = CLIENT.build_request(target, context, StreamOptions(thinking=thinking)).body
        assert "reasoning" not in body and "include" not in body


def test_tool_call_and_result_round_trip_with_pipe_id() -> None:
    name = "openai-responses/responses-function-call-gpt4o.sse"
    reply = assemble(name)
    (call,) = blocks(reply, ToolCall)
    (output,) = outputs(name, "function_call")
    context = Context(messages=[user("capital?"), reply, tool_result(call.id, "Paris")])
    items = convert_input(model(), context)
    assert items[1:] == [
        {
            "type": "function_call",
            "id": output["id"],
            "call_id": output["call_id"],
            "name": "get_capital",
            "arguments": '{"country":"France"}',
        },
        {"type": "function_call_output", "call_id": output["call_id"], "output": "Paris"},
    ]


def test_assistant_text_is_sent_back_with_its_item_id() -> None:
    name = "openai-responses/responses-text-gpt4o.sse"
    reply = assemble(name)
    (output,) = outputs(name, "message")
    items = convert_input(model(), Context(messages=[user("q"), reply, user("more")]))
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": output["text"], "annotations": []}],
        "status": "completed",
        "id": output["id"],
    }


def test_reasoning_item_is_sent_back_verbatim_before_its_call() -> None:
    name = "openai-responses/responses-reasoning-encrypted-then-function-call.sse"
    reply = assemble(name)
    (call,) = blocks(reply, ToolCall)
    done = [p["item"] for p in recorded_items(name, "response.output_item.done")]
    context = Context(messages=[user("go"), reply, tool_result(call.id, "ok")])
    items = convert_input(model(reasoning=True), context)
    assert items[1] == done[0]  # the reasoning item, encrypted_content and all
    assert items[2]["type"] == "function_call"
    assert items[2]["id"] == done[1]["id"]  # kept: its reasoning item travels with it
    assert items[2]["call_id"] == done[1]["call_id"]
    assert items[3] == {"type": "function_call_output", "call_id": done[1]["call_id"], "output": "ok"}


def test_summary_reasoning_round_trip() -> None:
    name = "openai-responses/responses-reasoning-summary-o3mini.sse"
    reply = assemble(name)
    done = [p["item"] for p in recorded_items(name, "response.output_item.done")]
    items = convert_input(model(reasoning=True), Context(messages=[user("how?"), reply, user("thanks")]))
    assert items[1] == done[0]
    assert items[2]["id"] == done[1]["id"]


def test_replies_of_another_model_lose_item_ids_and_reasoning() -> None:
    name = "openai-responses/responses-reasoning-encrypted-then-function-call.sse"
    reply = assemble(name).model_copy(update={"model": "other-model"})
    reply.content.insert(0, ThinkingContent(thinking="I should call it."))
    (call,) = blocks(reply, ToolCall)
    items = convert_input(
        model(reasoning=True), Context(messages=[user("go"), reply, tool_result(call.id, "ok")])
    )
    # its thinking is left out (pi 1.x; pi 0.73.1 sent it as a message)
    assert [item.get("type") for item in items[1:]] == ["function_call", "function_call_output"]
    assert "id" not in items[1]
    # Not an OpenAI provider: pi sanitises the whole id (no "|", at most 64 characters).
    assert items[1]["call_id"] == re.sub(r"[^a-zA-Z0-9_-]", "_", call.id)[:64].rstrip("_")


def test_thinking_without_replayable_item_keeps_fc_id_as_pi() -> None:
    """The same model's call keeps its fc_ id even when its reasoning has no item (pi 0.73.1)."""
    call = ToolCall(id="call_1|fc_1", name="read", arguments={"path": "a"})
    reply = AssistantMessage(
        content=[ThinkingContent(thinking="hm"), call],
        api=API,
        provider="recorded",
        model="recorded",
        stop_reason="toolUse",
    )
    items = convert_input(
        model(reasoning=True), Context(messages=[user("go"), reply, tool_result(call.id, "x")])
    )
    assert items[1] == {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path":"a"}',
    }


def test_images_in_user_messages_and_tool_results() -> None:
    look = UserMessage(content=[TextContent(text="look"), IMAGE])
    call = ToolCall(id="call_9|fc_9", name="read", arguments={"path": "a.png"})
    reply = AssistantMessage(
        content=[call], api=API, provider="recorded", model="recorded", stop_reason="toolUse"
    )
    result = ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[IMAGE])
    context = Context(messages=[look, reply, result])
    image_part = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,QUJD"}

    items = convert_input(model(images=True), context)
    assert items[0] == {"role": "user", "content": [{"type": "input_text", "text": "look"}, image_part]}
    assert items[2] == {"type": "function_call_output", "call_id": "call_9", "output": [image_part]}
    assert len(items) == 3

    text_only = convert_input(model(), context)
    placeholder = {"type": "input_text", "text": "(image omitted: model does not support images)"}
    assert text_only[0] == {"role": "user", "content": [{"type": "input_text", "text": "look"}, placeholder]}
    assert text_only[-1]["type"] == "function_call_output"


def test_failed_replies_are_not_resent() -> None:
    broken = assemble("openai-responses/responses-error-insufficient-quota-gpt5nano.sse")
    items = convert_input(model(), Context(messages=[user("a"), broken, user("b")]))
    assert [item["content"][0]["text"] for item in items] == ["a", "b"]


# --- over real HTTP -----------------------------------------------------------------------------


@pytest.fixture
def sse_server() -> Iterator[tuple[str, dict[str, Any]]]:
    """A 127.0.0.1 server that answers POST /v1/responses with a recording and keeps the request."""
    seen: dict[str, Any] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["content-length"])
            seen["path"] = self.path
            seen["headers"] = dict(self.headers)
            seen["body"] = json.loads(self.rfile.read(length))
            payload = (SSE_DIR / seen["recording"]).read_bytes()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def test_streams_a_recording_over_http(sse_server: tuple[str, dict[str, Any]]) -> None:
    base_url, seen = sse_server
    seen["recording"] = "openai-responses/responses-function-call-args-gpt55.sse"
    target = model(reasoning=True).model_copy(update={"base_url": base_url})
    context = Context(messages=[user("1231 * 2331?")], tools=[Tool(name="multiply")])
    message = asyncio.run(complete(target, context, StreamOptions(api_key="sk", thinking="low")))
    assert seen["path"] == "/v1/responses"
    assert seen["headers"]["authorization"] == "Bearer sk"
    assert seen["body"]["reasoning"] == {"effort": "low", "summary": "auto"}
    assert message.stop_reason == "toolUse"
    (call,) = blocks(message, ToolCall)
    assert call.arguments == {"a": 1231, "b": 2331}
