"""Mistral (``mistral-conversations``) over real loopback HTTP: what pi 1.5.2 sends to
``{baseUrl}/v1/chat/completions`` and how Mistral's streams come back as messages.

The streams are tests/data/mistral_conversations (shaped as Mistral documents its chunks; see
the README there) and the real Magistral recording in tests/data/sse/openai-compat. The last test
runs the installed ``pi-tui -p`` with ``MISTRAL_API_KEY`` and a models.json ``baseUrl`` override.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from pi_tui.ai.http import close_shared_client
from pi_tui.ai.stream import stream_message
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from tests.support.builders import tool_result, user
from tests.support.model_server import HttpError, ModelServer, RawStream, Recording
from tests.support.recordings import SSE_DIR, expected

DATA = Path(__file__).resolve().parents[1] / "data" / "mistral_conversations"
MAGISTRAL = "openai-compat/mistral-magistral-thinking-content-array.sse"
API = "mistral-conversations"
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
READ_TOOL = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def mistral_model(server: ModelServer, model_id: str = "mistral-small-latest", **fields: Any) -> Model:
    """A Mistral model as pi's catalogue has it: the base URL without ``/v1``."""
    values: dict[str, Any] = {"id": model_id, "api": API, "provider": "mistral", "base_url": server.base_url}
    values.update(fields)
    return Model(**values)


def options(**overrides: Any) -> StreamOptions:
    values: dict[str, Any] = {"api_key": "mk-test-4f2a", "base_delay": 0.01, "max_retries": 0}
    values.update(overrides)
    return StreamOptions(**values)


def stream(model: Model, context: Context, opts: StreamOptions | None = None) -> AssistantMessage:
    """One streamed message over HTTP (a fresh event loop and client each time)."""

    async def main() -> AssistantMessage:
        async with httpx.AsyncClient() as http:
            try:
                events = stream_message(model, context, opts or options(), http=http)
                async for _ in events:
                    pass
                return await events.result()
            finally:
                await close_shared_client()

    return asyncio.run(asyncio.wait_for(main(), 20))


def text_of(message: AssistantMessage, kind: type = TextContent) -> str:
    return "".join(
        getattr(block, "text", None) or getattr(block, "thinking", "")
        for block in message.content
        if isinstance(block, kind)
    )


def test_text_reply_with_the_request_pi_sends() -> None:
    with ModelServer(Recording(DATA / "text-mistral-small.sse", chunk_size=7)) as server:
        context = Context(system_prompt="Be brief.", messages=[user("Capital of France?")])
        message = stream(mistral_model(server), context, options(session_id="sess-42", temperature=0.3))
        request = server.last_request
    assert request.path == "/v1/chat/completions"
    assert request.header("authorization") == "Bearer mk-test-4f2a"
    assert request.header("x-affinity") == "sess-42"  # the conversation goes where its cache is
    assert request.body == {
        "model": "mistral-small-latest",
        "stream": True,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]},
        ],
        "temperature": 0.3,
        "max_tokens": 16_384,
        "prompt_cache_key": "sess-42",
    }
    assert message.stop_reason == "stop" and message.error_message is None
    assert text_of(message) == "Paris is the capital of France."
    assert message.response_id == "4b1c6a2e9d8f4e7a9c3b2a1f0e9d8c7b"
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.total_tokens) == (5, 16, 8, 29)


def test_real_magistral_thinking_recording() -> None:
    """Thinking arrives as ``content`` parts of type ``thinking`` (Mistral's own shape)."""
    want = expected(MAGISTRAL)
    with ModelServer(Recording(SSE_DIR / MAGISTRAL, chunk_size=64)) as server:
        model = mistral_model(server, "magistral-medium-latest", reasoning=True)
        message = stream(
            model, Context(messages=[user("How do I cross the street?")]), options(thinking="high")
        )
        body = server.last_request.body
    assert body["prompt_mode"] == "reasoning"  # a reasoning model without a level map
    assert "reasoning_effort" not in body
    assert [type(block) for block in message.content] == [ThinkingContent, TextContent]
    choice = want["choices"]["0"]
    thinking, answer = choice["thinking(content[].thinking)"], choice["content"]
    assert text_of(message, ThinkingContent) == thinking
    assert text_of(message) == answer
    assert message.stop_reason == "stop"
    assert (message.usage.input, message.usage.output) == (10, 232)


def test_thinking_then_a_tool_call_and_the_next_turn_sent_back() -> None:
    level_map = {"off": "none", "low": "low", "medium": None, "high": "high"}
    with ModelServer(
        Recording(DATA / "thinking-tool-call-magistral.sse", chunk_size=11),
        Recording(DATA / "text-mistral-small.sse"),
    ) as server:
        model = mistral_model(
            server, "magistral-medium-latest", reasoning=True, input=["text"], thinking_level_map=level_map
        )
        context = Context(messages=[user("Weather in Lyon?")], tools=[READ_TOOL])
        first = stream(model, context, options(thinking="medium"))
        call = first.content[-1]
        assert isinstance(call, ToolCall)
        context.messages += [first, tool_result(call.id, "18 C, sunny")]
        stream(model, context, options(thinking="off"))
        asked, answered = server.requests
    # medium is null in the map: the nearest stronger level the model has runs, under its value
    assert asked.body["reasoning_effort"] == "high" and "prompt_mode" not in asked.body
    assert asked.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather of a city",
                "parameters": READ_TOOL.parameters,
                "strict": False,
            },
        }
    ]
    assert [type(block) for block in first.content] == [ThinkingContent, TextContent, ToolCall]
    assert text_of(first, ThinkingContent) == "The user wants the weather in Lyon; I should call get_weather."
    assert text_of(first) == "Let me check."
    assert (call.id, call.name, call.arguments) == (
        "Xk3pQ9aZt",
        "get_weather",
        {"city": "Lyon", "unit": "celsius"},
    )
    assert first.stop_reason == "toolUse"
    assert (first.usage.input, first.usage.output) == (112, 58)
    # The next turn: thinking off is the map's "off" value; the reply goes back in Mistral's shapes.
    assert answered.body["reasoning_effort"] == "none"
    assert answered.body["messages"][1:] == [
        {
            "role": "assistant",
            "prefix": False,
            "content": [
                {
                    "type": "thinking",
                    "thinking": [
                        {
                            "type": "text",
                            "text": "The user wants the weather in Lyon; I should call get_weather.",
                        }
                    ],
                },
                {"type": "text", "text": "Let me check."},
            ],
            "tool_calls": [
                {
                    "id": "Xk3pQ9aZt",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Lyon","unit":"celsius"}'},
                    "index": 0,
                }
            ],
        },
        {
            "role": "tool",
            "name": "read",
            "content": [{"type": "text", "text": "18 C, sunny"}],
            "tool_call_id": "Xk3pQ9aZt",
        },
    ]


def test_tool_calls_in_pieces_with_a_null_id_and_object_arguments() -> None:
    with ModelServer(Recording(DATA / "tool-calls-pieces-devstral.sse", chunk_size=5)) as server:
        message = stream(mistral_model(server, "devstral-medium-latest"), Context(messages=[user("look")]))
    calls = [block for block in message.content if isinstance(block, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("read", {"path": "README.md"}),
        ("ls", {"path": "src"}),
    ]
    # "null" is no id: one is made up (9 letters and digits, as Mistral's own), the same every time
    assert calls[0].id == "toolcall0" and calls[1].id == "b7Tq2LmNc"  # pi: "toolcall:<index>", cleaned
    assert message.stop_reason == "toolUse"
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (44, 256, 40)


def test_finish_reason_error_keeps_the_partial_reply() -> None:
    with ModelServer(Recording(DATA / "finish-error-mistral-medium.sse")) as server:
        message = stream(mistral_model(server, "mistral-medium-latest"), Context(messages=[user("go")]))
    assert message.stop_reason == "error"
    assert message.error_message == "Provider stopped with: error (server error)"
    assert text_of(message) == "Partial"


def test_a_stream_without_finish_reason_or_with_an_error_object_fails_clearly() -> None:
    cut = (DATA / "text-mistral-small.sse").read_text().split("\n\n")
    unfinished = "\n\n".join(cut[:4]) + "\n\n"  # a few text chunks, then the connection ends
    error_event = (
        'data: {"object":"error","message":"Service tier capacity exceeded",'
        '"type":"service_tier_capacity_exceeded","code":"3505"}\n\n'
    )
    with ModelServer(RawStream(unfinished), RawStream(error_event), HttpError(401)) as server:
        model = mistral_model(server)
        ended = stream(model, Context(messages=[user("a")]))
        errored = stream(model, Context(messages=[user("b")]))
        refused = stream(model, Context(messages=[user("c")]))
    assert (
        ended.stop_reason == "error" and ended.error_message == "Mistral stream ended without a finish reason"
    )
    assert text_of(ended) == "Paris is the"
    assert errored.stop_reason == "error"
    assert errored.error_message == "Mistral API error: Service tier capacity exceeded (3505)"
    assert refused.stop_reason == "error" and "401" in (refused.error_message or "")


def test_pi_tui_print_with_mistral_api_key_and_a_base_url_override(agent_dir: Path, tmp_path: Path) -> None:
    """The built-in ``mistral`` provider from its environment variable; models.json only moves it."""
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"mistral": {"baseUrl": server.base_url}}})
        )
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        done = subprocess.run(
            [SCRIPT, "--no-session", "--model", "mistral/devstral-medium-latest", "-p", "bonjour"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**env, "PI_CODING_AGENT_DIR": str(agent_dir), "MISTRAL_API_KEY": "mk-env-91c3"},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "echo: bonjour\n"
        request = server.last_request
    assert request.path == "/v1/chat/completions"
    assert request.header("authorization") == "Bearer mk-env-91c3"
    assert request.body["model"] == "devstral-medium-latest"
    assert request.body["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "bonjour"}]}
    assert request.header("x-affinity") == request.body["prompt_cache_key"]  # the session's id
