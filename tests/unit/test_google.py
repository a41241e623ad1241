"""google-generative-ai: every Gemini recording assembles as EXPECTED.json says; requests are Gemini's.

Recording expectations are computed from EXPECTED.json (concatenated text and thought text,
function calls, which chunks carried a thoughtSignature, finishReason, last usageMetadata), so a
new recording dropped into ``tests/data/sse/gemini`` is checked without touching this file.
Wire shapes the recordings lack (arguments, parallel calls, errors, other finish reasons) are
fed as SSE bytes built here, through the same decoder and parser.
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
from pi_tui.ai.google import CLIENT, SKIP_SIGNATURE, convert_messages, function_declaration
from pi_tui.ai.sse import SSEDecoder
from pi_tui.ai.stream import complete
from pi_tui.ai.types import Context, Model, StreamOptions, ThinkingLevel, Tool
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

API = "google-generative-ai"
NAMES = recordings("gemini")
IMAGE = ImageContent(data="QUJD", mime_type="image/png")
GENERATED_ID = re.compile(r"(?P<name>.+)_\d+_\d+")


def blocks(message: AssistantMessage, kind: type) -> list[Any]:
    return [block for block in message.content if isinstance(block, kind)]


def recorded_chunks(name: str) -> list[dict[str, Any]]:
    """The recording's JSON payloads, read independently of the SSE decoder under test."""
    lines = (SSE_DIR / name).read_text().splitlines()
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: ")]


def expected_signatures(name: str) -> list[tuple[str, str]]:
    """(block kind, signature) for every part EXPECTED.json lists as carrying a thoughtSignature."""
    chunks = recorded_chunks(name)
    found = []
    for index in expected(name)["parts_with_thoughtSignature"]:
        for part in chunks[index]["candidates"][0]["content"]["parts"]:
            if "thoughtSignature" in part:
                kind = "toolCall" if "functionCall" in part else "thinking" if part.get("thought") else "text"
                found.append((kind, part["thoughtSignature"]))
    return found


def signatures(message: AssistantMessage) -> list[tuple[str, str]]:
    found = []
    for block in message.content:
        signature = {
            "text": getattr(block, "text_signature", None),
            "thinking": getattr(block, "thinking_signature", None),
            "toolCall": getattr(block, "thought_signature", None),
        }[block.type]
        if signature:
            found.append((block.type, signature))
    return found


# --- recordings -----------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [0, 1, 3])
@pytest.mark.parametrize("name", NAMES)
def test_recording_assembles_to_expected(name: str, chunk_size: int) -> None:
    message = assemble(name, chunk_size)
    want = expected(name)

    assert "".join(b.text for b in blocks(message, TextContent)) == want["text"]
    assert "".join(b.thinking for b in blocks(message, ThinkingContent)) == want["thought_text"]

    calls = blocks(message, ToolCall)
    assert [(c.name, c.arguments) for c in calls] == [(f["name"], f["args"]) for f in want["function_calls"]]
    for call, wanted in zip(calls, want["function_calls"], strict=True):
        if "id" in wanted:
            assert call.id == wanted["id"]
        else:
            match = GENERATED_ID.fullmatch(call.id)
            assert match is not None and match["name"] == call.name

    assert len(signatures(message)) == want["thought_signatures"]
    assert signatures(message) == expected_signatures(name)

    stop = {"STOP": "toolUse" if want["function_calls"] else "stop", "MAX_TOKENS": "length"}
    assert message.stop_reason == stop.get(want["finishReason"], "error")
    assert (message.error_message is None) == (message.stop_reason != "error")

    usage = want["usageMetadata"]
    cached = usage.get("cachedContentTokenCount", 0)
    assert message.usage.input == usage["promptTokenCount"] - cached
    assert message.usage.output == usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    assert message.usage.cache_read == cached
    assert message.response_id == recorded_chunks(name)[-1]["responseId"]


@pytest.mark.parametrize("name", NAMES)
def test_recording_events_are_well_formed(name: str) -> None:
    events, message = run_events((SSE_DIR / name).read_bytes(), chunk_size=5)
    kinds = [event.type for event in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    opened = [e.content_index for e in events if e.type.endswith("_start") and e.type != "start"]
    closed = [e.content_index for e in events if e.type.endswith("_end")]
    assert opened == closed == list(range(len(message.content)))  # each block closes before the next
    for event in events:
        if event.type == "text_end":
            assert event.content == message.content[event.content_index].text
        if event.type == "toolcall_end":
            call = message.content[event.content_index]
            assert event.tool_call is not None
            assert (event.tool_call.id, event.tool_call.name, event.tool_call.arguments) == (
                call.id,
                call.name,
                call.arguments,
            )


# --- wire shapes the recordings lack --------------------------------------------------------


def sse(*chunks: dict[str, Any]) -> bytes:
    """Gemini's framing: ``data: {json}`` and a blank line, CRLF like the real service."""
    return b"".join(b"data: " + orjson.dumps(chunk) + b"\r\n\r\n" for chunk in chunks)


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "responseId": "resp-1", **extra}


def run_events(data: bytes, chunk_size: int = 0) -> tuple[list[StreamEvent], AssistantMessage]:
    """Feed raw SSE bytes through decoder + parser; return every event and the final message."""
    run = parse_bytes(API, data, chunk_size)
    return run.events, run.message


def run(data: bytes) -> AssistantMessage:
    return run_events(data, chunk_size=3)[1]


def test_switching_between_thought_and_text_opens_new_blocks() -> None:
    events, message = run_events(
        sse(
            chunk({"text": "plan ", "thought": True}, {"text": "more", "thought": True}),
            chunk({"text": "Hello", "thoughtSignature": "c2ln"}, {"text": " world"}),
            chunk({"text": "again?", "thought": True}),
            chunk({"text": "Done."}, finish="STOP"),
        ),
        chunk_size=2,
    )
    assert [(b.type, b.text if b.type == "text" else b.thinking) for b in message.content] == [
        ("thinking", "plan more"),
        ("text", "Hello world"),
        ("thinking", "again?"),
        ("text", "Done."),
    ]
    assert message.content[1].text_signature == "c2ln"
    kinds = [e.type for e in events]
    assert kinds.index("thinking_end") < kinds.index("text_start")
    assert kinds.count("text_end") == kinds.count("thinking_end") == 2


def test_empty_part_carrying_a_signature_signs_the_open_block() -> None:
    message = run(
        sse(chunk({"text": "Answer"}), chunk({"text": "", "thoughtSignature": "bGF0ZQ=="}, finish="STOP"))
    )
    (text,) = message.content
    assert text.text == "Answer" and text.text_signature == "bGF0ZQ=="


def test_parallel_calls_with_arguments_ids_and_signature() -> None:
    message = run(
        sse(
            chunk({"text": "Checking both."}),
            chunk(
                {
                    "functionCall": {"name": "read", "args": {"path": "a.py"}, "id": "x1"},
                    "thoughtSignature": "U0lH",
                },
                {
                    "functionCall": {
                        "name": "read",
                        "args": {"path": "b.py", "opts": {"n": [1, 2]}},
                        "id": "x1",
                    }
                },
                {"functionCall": {"name": "ls"}},
                finish="STOP",
            ),
        )
    )
    text, first, second, third = message.content
    assert text.text == "Checking both."
    assert (first.id, first.arguments, first.thought_signature) == ("x1", {"path": "a.py"}, "U0lH")
    assert second.arguments == {"path": "b.py", "opts": {"n": [1, 2]}} and second.thought_signature is None
    assert second.id != "x1" and GENERATED_ID.fullmatch(second.id)  # a repeated id would pair wrongly
    assert third.arguments == {} and GENERATED_ID.fullmatch(third.id)["name"] == "ls"
    assert message.stop_reason == "toolUse"


def test_tool_call_events_carry_the_whole_arguments() -> None:
    events, _ = run_events(
        sse(chunk({"functionCall": {"name": "bash", "args": {"command": "ls"}}}, finish="STOP"))
    )
    (end,) = [e for e in events if e.type == "toolcall_end"]
    assert end.tool_call is not None and end.tool_call.arguments == {"command": "ls"}


def test_max_tokens_is_length() -> None:
    message = run(sse(chunk({"text": "cut"}, finish="MAX_TOKENS")))
    assert message.stop_reason == "length" and message.content[0].text == "cut"


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("SAFETY", "safety"),
        ("RECITATION", "reciting"),
        ("OTHER", "stopped"),
        ("MALFORMED_FUNCTION_CALL", "bad"),
    ],
)
def test_other_finish_reasons_are_errors_keeping_the_text(reason: str, words: str) -> None:
    last = chunk({"text": " more"}, finish=reason)
    last["candidates"][0]["finishMessage"] = "bad call"
    message = run(sse(chunk({"text": "partial"}), last))
    assert message.stop_reason == "error"
    assert reason in message.error_message and words in message.error_message.lower()
    assert message.content[0].text == "partial more"


def test_blocked_prompt_is_an_error() -> None:
    message = run(
        sse({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 5}})
    )
    assert message.stop_reason == "error" and "SAFETY" in message.error_message
    assert message.usage.input == 5


def test_error_object_mid_stream_fails_keeping_output() -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    message = run(sse(chunk({"text": "Hi"}), error))
    assert message.stop_reason == "error"
    assert message.error_message == "The model is overloaded. (503 UNAVAILABLE)"
    assert message.content[0].text == "Hi"


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        ({"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}, True),
        ({"code": 500, "message": "Internal", "status": "INTERNAL"}, True),
        ({"code": 400, "message": "Bad", "status": "INVALID_ARGUMENT"}, False),
    ],
)
def test_error_object_retry_hint(error: dict[str, Any], retryable: bool) -> None:
    parser = CLIENT.parser(MessageBuilder(recorded_model(API)))
    (event,) = SSEDecoder().feed(sse({"error": error}))
    with pytest.raises(ProviderError) as raised:
        parser.handle(event)
    assert raised.value.retryable is retryable and raised.value.status == error["code"]


def test_context_overflow_error_is_marked() -> None:
    parser = CLIENT.parser(MessageBuilder(recorded_model(API)))
    message = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    (event,) = SSEDecoder().feed(
        sse({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
    )
    with pytest.raises(ProviderError) as raised:
        parser.handle(event)
    assert raised.value.context_overflow


def test_malformed_json_names_the_line() -> None:
    message = run(b"data: {not json\r\n\r\n")
    assert message.stop_reason == "error" and "{not json" in message.error_message


def test_empty_stream_is_a_retryable_error() -> None:
    parser = CLIENT.parser(MessageBuilder(recorded_model(API)))
    with pytest.raises(ProviderError) as raised:
        parser.end()
    assert raised.value.retryable


def test_cached_tokens_are_cache_reads_not_input() -> None:
    usage = {"promptTokenCount": 1000, "cachedContentTokenCount": 800, "candidatesTokenCount": 7}
    message = run(sse(chunk({"text": "ok"}, finish="STOP", usageMetadata=usage)))
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (200, 7, 800)
    assert message.usage.total_tokens == 1007


# --- requests -------------------------------------------------------------------------------


def model(
    model_id: str = "recorded", *, reasoning: bool = False, images: bool = False, **extra: Any
) -> Model:
    return Model(
        id=model_id,
        provider="recorded",
        api=API,
        base_url="https://generativelanguage.googleapis.com/v1beta/",
        reasoning=reasoning,
        input=["text", "image"] if images else ["text"],
        max_tokens=65536,
        **extra,
    )


def body(target: Model, context: Context, **options: Any) -> dict[str, Any]:
    return CLIENT.build_request(target, context, StreamOptions(**options)).body


def test_request_url_headers_and_body_basics() -> None:
    target = model("gemini-2.5-flash", headers={"x-extra": "1"})
    context = Context(
        system_prompt="Be brief.", messages=[user("hi")], tools=[Tool(name="ls", description="List")]
    )
    request = CLIENT.build_request(target, context, StreamOptions(api_key="AIza", temperature=0.2))
    assert request.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert request.headers["x-goog-api-key"] == "AIza" and request.headers["x-extra"] == "1"
    assert "authorization" not in request.headers
    empty_schema = {"type": "object", "properties": {}}
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "ls", "description": "List", "parametersJsonSchema": empty_schema}
                ]
            }
        ],
        "generationConfig": {"maxOutputTokens": 65536, "temperature": 0.2},
    }
    plain = body(target, Context(messages=[user("hi")]), max_tokens=100)
    assert "systemInstruction" not in plain and "tools" not in plain
    assert plain["generationConfig"] == {"maxOutputTokens": 100}


def as_from(reply: AssistantMessage, target: Model) -> AssistantMessage:
    """A recorded reply as if ``target`` had sent it (recordings are assembled as ``recorded``)."""
    return reply.model_copy(update={"provider": target.provider, "model": target.id})


def test_tool_call_round_trip_keeps_signature_and_gemini_id() -> None:
    target = model("gemini-3-flash-preview")
    reply = as_from(assemble("gemini/gemini-3-flash-function-call-with-id.sse"), target)
    (call,) = blocks(reply, ToolCall)
    result = ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="France")]
    )
    contents = convert_messages(target, Context(messages=[user("where?"), reply, result]))
    assert contents[1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "get_user_country", "args": {}, "id": "96c1su3s"},
                    "thoughtSignature": call.thought_signature,
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_user_country",
                        "response": {"output": "France"},
                        "id": "96c1su3s",
                    }
                }
            ],
        },
    ]


def test_gemini_3_gets_every_call_id_and_older_gemini_none() -> None:
    """pi 1.5.2 sends ids to Gemini 3+ (its own or generated here), never to Gemini 2.5, even
    one Gemini 2.5 gave."""
    recorded = assemble("gemini/gemini-3-pro-function-call-thought-signature.sse")
    (call,) = blocks(recorded, ToolCall)
    assert GENERATED_ID.fullmatch(call.id)
    result = ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="no")], is_error=True
    )
    three = model("gemini-3-pro-preview")
    _, sent_call, sent_result = convert_messages(
        three, Context(messages=[user("q"), as_from(recorded, three), result])
    )
    assert sent_call["parts"] == [
        {
            "functionCall": {"name": "get_country", "args": {}, "id": call.id},
            "thoughtSignature": call.thought_signature,
        }
    ]
    assert sent_result["parts"] == [
        {"functionResponse": {"name": "get_country", "response": {"error": "no"}, "id": call.id}}
    ]
    given = ToolCall(id="96c1su3s", name="get_country", thought_signature=call.thought_signature)
    older = model("gemini-2.5-flash")
    reply = AssistantMessage(
        content=[given], api=API, provider=older.provider, model=older.id, stop_reason="toolUse"
    )
    answer = ToolResultMessage(
        tool_call_id="96c1su3s", tool_name="get_country", content=[TextContent(text="France")]
    )
    _, sent_call, sent_result = convert_messages(older, Context(messages=[user("q"), reply, answer]))
    assert sent_call["parts"] == [
        {"functionCall": {"name": "get_country", "args": {}}, "thoughtSignature": call.thought_signature}
    ]
    assert sent_result["parts"] == [
        {"functionResponse": {"name": "get_country", "response": {"output": "France"}}}
    ]


def test_blank_parts_go_back_only_when_signed() -> None:
    """Gemini may sign an empty part and needs the signature back (pi sends such parts)."""
    target = model("gemini-2.5-pro")
    reply = AssistantMessage(
        content=[
            ThinkingContent(thinking="", thinking_signature="dGhpbms="),
            ThinkingContent(thinking=" ", thinking_signature=None),
            TextContent(text="Done."),
            TextContent(text="", text_signature="c2lnbg=="),
            TextContent(text="  ", text_signature="not base64!"),
        ],
        api=API,
        provider=target.provider,
        model=target.id,
    )
    _, sent = convert_messages(target, Context(messages=[user("q"), reply]))
    assert sent["parts"] == [
        {"thought": True, "text": "", "thoughtSignature": "dGhpbms="},
        {"text": "Done."},
        {"text": "", "thoughtSignature": "c2lnbg=="},
    ]


def test_thinking_round_trip_sends_thought_parts_and_text_signature() -> None:
    reply = assemble("gemini/gemini-25-pro-thought-summaries.sse")
    _, sent = convert_messages(model(), Context(messages=[user("how?"), reply]))
    thought, text = sent["parts"]
    assert thought == {
        "text": expected("gemini/gemini-25-pro-thought-summaries.sse")["thought_text"],
        "thought": True,
    }
    assert text["text"].startswith("This is a great question!")
    assert text["thoughtSignature"] == blocks(reply, TextContent)[0].text_signature


def foreign_reply(*calls: ToolCall) -> AssistantMessage:
    return AssistantMessage(
        content=[
            ThinkingContent(thinking="hmm", thinking_signature="anthropic-sig"),
            TextContent(text="Let me look."),
            *calls,
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude",
        stop_reason="toolUse",
    )


def test_another_models_reply_loses_signatures_and_ids() -> None:
    call = ToolCall(id="toolu_1", name="read", arguments={"path": "x"}, thought_signature="nope")
    _, sent, result = convert_messages(
        model("gemini-2.5-pro"),
        Context(messages=[user("q"), foreign_reply(call), tool_result("toolu_1", "body")]),
    )
    assert sent["parts"] == [  # its thinking left out (pi 1.x; pi 0.73.1 sent it as text)
        {"text": "Let me look."},
        {"functionCall": {"name": "read", "args": {"path": "x"}}},
    ]
    assert result["parts"] == [{"functionResponse": {"name": "read", "response": {"output": "body"}}}]


def test_gemini_3_gets_the_documented_stand_in_signature_on_the_first_foreign_call() -> None:
    calls = [ToolCall(id=f"toolu_{n}", name="read", arguments={"n": n}) for n in (1, 2)]
    messages = [user("q"), foreign_reply(*calls), tool_result("toolu_1", "a"), tool_result("toolu_2", "b")]
    _, sent, results = convert_messages(model("gemini-3-pro-preview"), Context(messages=messages))
    first, second = sent["parts"][1:]  # after the text: the thinking is left out
    assert first["thoughtSignature"] == SKIP_SIGNATURE and "thoughtSignature" not in second
    assert [p["functionResponse"]["response"] for p in results["parts"]] == [{"output": "a"}, {"output": "b"}]


def test_consecutive_tool_results_share_one_content_and_unanswered_calls_get_one() -> None:
    calls = [ToolCall(id=f"c{n}", name="read") for n in range(3)]
    reply = AssistantMessage(content=calls, provider="recorded", model="recorded", stop_reason="toolUse")
    messages = [
        user("one"),
        AssistantMessage(content=[TextContent(text="aborted")], stop_reason="aborted"),
        reply,
        tool_result("c0", "zero"),
        tool_result("c1", "one"),
        user("next"),
    ]
    contents = convert_messages(model(), Context(messages=messages))
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    responses = [p["functionResponse"]["response"] for p in contents[2]["parts"]]
    assert responses == [{"output": "zero"}, {"output": "one"}, {"error": "No result provided"}]
    assert contents[3] == {"role": "user", "parts": [{"text": "next"}]}


def test_images_inline_when_the_model_sees_them() -> None:
    picture = UserMessage(content=[TextContent(text="what is this?"), IMAGE, TextContent(text="")])
    call = ToolCall(id="c1", name="read", arguments={"path": "a.png"})
    reply = AssistantMessage(content=[call], provider="recorded", model="recorded", stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[IMAGE])
    context = Context(messages=[picture, reply, result])

    seeing = convert_messages(model(images=True), context)
    inline = {"inlineData": {"mimeType": "image/png", "data": "QUJD"}}
    assert seeing[0]["parts"] == [{"text": "what is this?"}, inline]
    assert seeing[2]["parts"][0]["functionResponse"]["response"] == {"output": "(see attached image)"}
    # Not Gemini < 3: the image goes inside the response (pi 0.73.1).
    assert seeing[2]["parts"][0]["functionResponse"]["parts"] == [inline] and len(seeing) == 3

    blind = convert_messages(model(), context)
    placeholder = {"text": "(image omitted: model does not support images)"}
    assert blind[0]["parts"] == [{"text": "what is this?"}, placeholder] and len(blind) == 3


GEMINI_3_LEVELS = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high"}
GEMMA_4_LEVELS = {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}


@pytest.mark.parametrize(
    ("model_id", "levels", "level", "want"),
    [
        ("gemini-2.5-flash", None, "minimal", {"thinkingBudget": 128}),
        ("gemini-2.5-flash", None, "low", {"thinkingBudget": 2048}),
        ("gemini-2.5-flash", None, "high", {"thinkingBudget": 24576}),
        ("gemini-2.5-flash", None, "xhigh", {"thinkingBudget": 24576}),  # clamped to high
        ("gemini-2.5-flash-lite", None, "minimal", {"thinkingBudget": 512}),
        ("gemini-2.5-pro", None, "minimal", {"thinkingBudget": 128}),
        ("gemini-2.5-pro", None, "medium", {"thinkingBudget": 8192}),
        ("gemini-2.5-pro", None, "high", {"thinkingBudget": 32768}),
        (
            "gemini-pro-latest",
            GEMINI_3_LEVELS,
            "low",
            {"thinkingBudget": -1},
        ),  # a budget model pi has no table for
        ("deep-research-preview-04-2026", None, "medium", {"thinkingBudget": -1}),
        ("gemini-3.1-pro-preview", GEMINI_3_LEVELS, "minimal", {"thinkingLevel": "LOW"}),
        ("gemini-3.1-pro-preview", GEMINI_3_LEVELS, "medium", {"thinkingLevel": "MEDIUM"}),
        ("gemini-3-flash-preview", None, "minimal", {"thinkingLevel": "MINIMAL"}),
        ("gemini-3-flash-preview", None, "xhigh", {"thinkingLevel": "HIGH"}),
        ("gemini-flash-latest", None, "low", {"thinkingLevel": "LOW"}),
        ("gemini-4-argon", GEMINI_3_LEVELS, "high", {"thinkingLevel": "HIGH"}),
        ("gemma-4-31b-it", GEMMA_4_LEVELS, "medium", {"thinkingLevel": "HIGH"}),
        ("gemma-4-31b-it", GEMMA_4_LEVELS, "minimal", {"thinkingLevel": "MINIMAL"}),
    ],
)
def test_thinking_config_is_pis(
    model_id: str, levels: dict[str, str | None] | None, level: ThinkingLevel, want: dict[str, Any]
) -> None:
    """pi 1.5.2's choices (tests/interop/test_google_vs_pi.py checks some against the real pi):
    a Google level for Gemini 3+ / Gemma 4 / -latest Flash, else its budget for the level."""
    target = model(model_id, reasoning=True, thinking_level_map=levels)
    config = body(target, Context(), thinking=level, max_tokens=8000)
    assert config["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, **want}


def test_the_users_thinking_budgets_come_first() -> None:
    target = model("gemini-2.5-pro", reasoning=True)
    config = body(target, Context(), thinking="low", thinking_budgets={"low": 3000})
    assert config["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 3000}


def test_off_tells_a_thinking_model_not_to_think() -> None:
    off = body(model("gemini-2.5-pro", reasoning=True), Context())["generationConfig"]
    assert off["thinkingConfig"] == {"thinkingBudget": 0}
    # a level model that cannot stop thinking gets its weakest level
    pro = model("gemini-3.1-pro-preview", reasoning=True, thinking_level_map=GEMINI_3_LEVELS)
    assert body(pro, Context(), thinking="off")["generationConfig"]["thinkingConfig"] == {
        "thinkingLevel": "LOW"
    }
    assert (
        "thinkingConfig"
        not in body(model("gemini-2.0-flash"), Context(), thinking="high")["generationConfig"]
    )


def test_tools_go_as_their_whole_json_schema_with_const_as_enum() -> None:
    """Gemini takes full JSON Schema in ``parametersJsonSchema`` but ignores ``const``; pi sends
    string and number ``const``s as one-value ``enum``s and leaves everything else as it is."""
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "mode": {"const": "fast"},
            "const": {"type": "string", "default": {"const": "data"}},  # names and data stay
            "size": {"anyOf": [{"const": 1}, {"const": True}, {"type": "null"}]},
            "maybe": {"$ref": "#/$defs/Point"},
            "pick": {"const": "a", "enum": ["a"]},
        },
        "required": ["mode"],
        "$defs": {"Point": {"type": "object", "properties": {"x": {"const": 0.5}}}},
    }
    declaration = function_declaration(Tool(name="pick", description="Pick", parameters=schema))
    assert declaration == {
        "name": "pick",
        "description": "Pick",
        "parametersJsonSchema": {
            **schema,
            "properties": {
                "mode": {"enum": ["fast"]},
                "const": {"type": "string", "default": {"const": "data"}},
                "size": {"anyOf": [{"enum": [1]}, {"const": True}, {"type": "null"}]},
                "maybe": {"$ref": "#/$defs/Point"},
                "pick": {"const": "a", "enum": ["a"]},
            },
            "$defs": {"Point": {"type": "object", "properties": {"x": {"enum": [0.5]}}}},
        },
    }
    assert schema["properties"]["mode"] == {"const": "fast"}  # the tool's own schema is untouched


def test_a_tool_without_parameters_sends_its_empty_object_schema() -> None:
    assert function_declaration(Tool(name="now", description="Time")) == {
        "name": "now",
        "description": "Time",
        "parametersJsonSchema": {"type": "object", "properties": {}},
    }


# --- over real HTTP -------------------------------------------------------------------------


@pytest.fixture
def sse_server() -> Iterator[tuple[str, dict[str, Any]]]:
    """A 127.0.0.1 server that records the request and answers with a recording, in small writes."""
    seen: dict[str, Any] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen["path"] = self.path
            seen["headers"] = {key.lower(): value for key, value in self.headers.items()}
            seen["body"] = json.loads(self.rfile.read(int(self.headers["content-length"])))
            payload = (SSE_DIR / seen["recording"]).read_bytes()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for start in range(0, len(payload), 97):
                self.wfile.write(payload[start : start + 97])
                self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1beta", seen
    finally:
        server.shutdown()
        server.server_close()


def test_streams_a_recording_over_http(sse_server: tuple[str, dict[str, Any]]) -> None:
    base_url, seen = sse_server
    seen["recording"] = "gemini/gemini-25-pro-thought-summaries.sse"
    target = model("gemini-2.5-pro", reasoning=True).model_copy(update={"base_url": base_url})
    message = asyncio.run(
        complete(target, Context(messages=[user("How do I cross?")]), StreamOptions(api_key="k"))
    )
    assert seen["path"] == "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    assert seen["headers"]["x-goog-api-key"] == "k"
    assert seen["body"]["contents"] == [{"role": "user", "parts": [{"text": "How do I cross?"}]}]
    want = expected(seen["recording"])
    assert message.stop_reason == "stop"
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == want["thought_text"] and message.content[1].text == want["text"]
