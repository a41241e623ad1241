"""Real HTTP through the loopback model server with :func:`pi_tui.ai.stream.stream_message`.

Retries (Retry-After, overload, give-up), dropped connections, abort latency, every SSE
recording served over HTTP in small chunks, the server's scripted-reply encoders round-tripping
through our parsers, request bodies as built, and clear errors.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from pi_tui.ai.events import StreamEvent
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.registry import get_client
from pi_tui.ai.stream import RetryInfo, stream_message
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from tests.support.builders import assistant, tool_result, user
from tests.support.model_server import (
    API_KINDS,
    Drop,
    HttpError,
    ModelServer,
    RawStream,
    Recording,
    Scripted,
    ScriptUsage,
    ToolCallSpec,
    last_user_text,
    model_server,
    reply_from_dict,
)
from tests.support.recordings import API_OF_FOLDER, SSE_DIR, assemble, recorded_model, recordings

ROOT = Path(__file__).resolve().parents[2]
__all__ = ["model_server"]  # the fixture, imported so pytest finds it


def fast(**overrides: Any) -> StreamOptions:
    """Options with tiny backoff so retry tests stay fast."""
    values: dict[str, Any] = {"base_delay": 0.01, "max_delay": 5.0, "timeout": 10.0, "api_key": "sk-test"}
    values.update(overrides)
    return StreamOptions(**values)


def ask(text: str = "hello") -> Context:
    return Context(system_prompt="You are terse.", messages=[user(text)])


@dataclass
class Outcome:
    message: AssistantMessage
    events: list[StreamEvent]
    elapsed: float
    retries: list[RetryInfo] = field(default_factory=list)

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.message.content if isinstance(b, TextContent))


SSL_CONTEXT = ssl.create_default_context()
"""Made once: an httpx client loading certifi costs ~40 ms, most of a loopback request."""


def run(
    model: Model,
    context: Context | None = None,
    options: StreamOptions | None = None,
    *,
    pooled: bool = False,
    timeout: float = 10.0,
) -> Outcome:
    """Stream one message in a fresh event loop and collect everything.

    ``pooled``: use the production per-loop shared client instead of a cheap one passed as
    ``http=`` (the runner behaves the same; only the client differs).
    """
    retries: list[RetryInfo] = []

    async def main() -> Outcome:
        http = None if pooled else httpx.AsyncClient(verify=SSL_CONTEXT)
        try:
            started = time.perf_counter()
            stream = stream_message(
                model, context or ask(), options or fast(), on_retry=retries.append, http=http
            )
            events = [event async for event in stream]
            message = await stream.result()
            return Outcome(message, events, time.perf_counter() - started, retries)
        finally:
            if http is not None:
                await http.aclose()

    return in_loop(asyncio.wait_for(main(), timeout))


def in_loop(awaitable: Any) -> Any:
    """``asyncio.run`` that also closes the loop's pooled httpx client before the loop ends."""

    async def main() -> Any:
        try:
            return await awaitable
        finally:
            await close_shared_client()

    return asyncio.run(main())


def assert_one_clean_sequence(types: list[str]) -> None:
    """One ``start`` first, exactly one terminal event, and it is the last."""
    assert types[0] == "start" and types.count("start") == 1, types
    terminal = [t for t in types if t in ("done", "error")]
    assert len(terminal) == 1 and types[-1] == terminal[0], types


def comparable(message: AssistantMessage, wire: bytes = b"") -> dict[str, Any]:
    """The message without its timestamp; tool-call ids not on the ``wire`` (generated, e.g. with
    a clock for Gemini) are blanked, since two parses cannot agree on them."""
    data = message.model_dump(mode="json", exclude_none=True)
    data.pop("timestamp", None)
    data.pop("durationMs", None)  # how long the stream took: only a streamed message has one
    for block in data.get("content", []):
        if block.get("type") == "toolCall" and wire and block["id"].encode() not in wire:
            block["id"] = "<generated>"
    return data


def test_every_final_message_says_how_long_the_reply_took_retries_included() -> None:
    """pi 1.x's ``durationMs``: from asking to the last event, on done, error and aborted
    replies; a retry's wait counts (it is part of getting the reply)."""
    with ModelServer(Scripted(text="slow", first_byte_delay=0.3)) as server:
        done = run(server.model(), options=fast(max_retries=0))
    assert done.message.stop_reason == "stop"
    assert done.message.duration_ms is not None and 300 <= done.message.duration_ms <= done.elapsed * 1000 + 1
    with ModelServer(HttpError(429, headers={"Retry-After": "1"}), Scripted(text="ok")) as server:
        retried = run(server.model(), options=fast(max_retries=1))
    assert retried.message.stop_reason == "stop" and (retried.message.duration_ms or 0) >= 1000
    with ModelServer(HttpError(400, first_byte_delay=0.1)) as server:
        failed = run(server.model(), options=fast(max_retries=0))
    assert failed.message.stop_reason == "error" and (failed.message.duration_ms or 0) >= 100


# --- 1-2: retries -----------------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_once_after_the_servers_delay() -> None:
    with ModelServer(
        HttpError(429, headers={"Retry-After": "1"}), Scripted(text="ok after waiting")
    ) as server:
        outcome = run(server.model(), options=fast(max_retries=3), pooled=True)
        assert [(r.attempt, r.delay) for r in outcome.retries] == [(1, 1.0)]
        assert "429" in outcome.retries[0].error
        assert outcome.message.stop_reason == "stop" and outcome.text == "ok after waiting"
        assert outcome.elapsed >= 0.95
        first, second = server.requests
        assert len(server.requests) == 2 and first.body == second.body
        assert first.status == 429 and second.completed


def test_retry_then_success_emits_one_clean_event_sequence() -> None:
    """After a retried failure the consumer sees start ... done once (no stale error after done)."""
    with ModelServer(HttpError(503), Scripted(text="fine")) as server:
        outcome = run(server.model())
        assert outcome.message.stop_reason == "stop"
        assert_one_clean_sequence(outcome.types)


def test_retry_then_cut_mid_stream_keeps_the_second_attempts_text() -> None:
    """The final message after a retry is the retry's message, with what it streamed."""
    with ModelServer(HttpError(500), Scripted(text="alpha beta gamma delta", cut_after_events=3)) as server:
        outcome = run(server.model())
        assert len(server.requests) == 2
        assert outcome.message.stop_reason == "error"
        assert outcome.text == "alpha beta "


def test_unparsable_retry_after_falls_back_to_backoff() -> None:
    with ModelServer(HttpError(429, headers={"Retry-After": "soon"}), Scripted(text="ok")) as server:
        outcome = run(server.model())
        assert outcome.text == "ok" and [r.delay for r in outcome.retries] == [0.01]
        assert len(server.requests) == 2


def test_three_overloaded_answers_give_up_after_max_retries() -> None:
    with ModelServer(HttpError(529), HttpError(529), HttpError(529), Scripted(text="never")) as server:
        outcome = run(server.model(), options=fast(max_retries=2))
        message = outcome.message
        assert message.stop_reason == "error"
        error = message.error_message or ""
        assert "overloaded" in error.lower() and "529" in error and "2 retries" in error, error
        assert "\n" not in error
        assert len(server.requests) == 3 and server.pending == 1
        assert [r.delay for r in outcome.retries] == [0.01, 0.02]  # exponential backoff
        assert outcome.types[-1] == "error"


def test_dropped_connection_before_any_output_is_retried() -> None:
    with ModelServer(Drop(), Scripted(text="hi", cut_after_events=1), Scripted(text="third time")) as server:
        outcome = run(server.model())
        assert outcome.text == "third time" and outcome.message.stop_reason == "stop"
        assert len(server.requests) == 3 and len(outcome.retries) == 2
        assert server.requests[0].cut and server.requests[1].cut


# --- 3: a connection cut after output began ---------------------------------------------------------


@pytest.mark.parametrize(
    "cut",
    [
        {"cut_after_events": 4},
        {"cut_after_events": 4, "cut_mode": "reset"},
        {"cut_after_bytes": 400},
    ],
    ids=["fin", "rst", "mid-event"],
)
def test_connection_cut_mid_stream_keeps_partial_text_and_does_not_retry(cut: dict[str, Any]) -> None:
    words = "one two three four five six seven eight nine ten"
    with ModelServer(Scripted(text=words, **cut), Scripted(text="retried?")) as server:
        outcome = run(server.model())
        message = outcome.message
        assert message.stop_reason == "error" and message.error_message
        assert outcome.text and words.startswith(outcome.text) and outcome.text != words
        if "cut_after_events" in cut:
            assert outcome.text == "one two three "  # role chunk + three words, then the cut
        assert len(server.requests) == 1 and server.requests[0].cut
        assert not outcome.retries
        assert outcome.types[-1] == "error"


# --- 4: abort -------------------------------------------------------------------------------------


def test_abort_during_a_slow_stream_ends_at_once_and_closes_the_connection() -> None:
    marks: dict[str, float] = {}

    def on_event(event: StreamEvent, stream: Any) -> None:
        if event.type == "text_delta" and "abort" not in marks:
            marks["abort"] = time.perf_counter()
            stream.abort()

    async def main(server: ModelServer) -> tuple[AssistantMessage, list[str]]:
        stream = stream_message(server.model(), ask(), fast())
        types: list[str] = []
        async for event in stream:
            types.append(event.type)
            on_event(event, stream)
        message = await stream.result()
        marks["result"] = time.perf_counter()
        return message, types

    reply = Scripted(text="first second third fourth fifth sixth", event_delay=0.2)
    with ModelServer(reply) as server:
        message, types = in_loop(asyncio.wait_for(main(server), 10))
        latency = marks["result"] - marks["abort"]
        assert latency < 0.1, f"abort took {latency * 1000:.0f} ms"
        assert message.stop_reason == "aborted"
        assert [b.text for b in message.content if isinstance(b, TextContent)] == ["first "]
        assert types[-1] == "error"
        record = server.requests[0]
        assert record.wait_finished(2.0), "the server never noticed the client left"
        assert record.client_disconnected and not record.completed
        assert record.disconnected_at is not None
        assert len(server.requests) == 1


def test_abort_right_after_starting_still_ends_the_message() -> None:
    """abort() before the request task first runs must not leave result() hanging."""

    async def main(server: ModelServer) -> AssistantMessage:
        stream = stream_message(server.model(), ask(), fast())
        stream.abort()
        return await asyncio.wait_for(stream.result(), 0.5)

    with ModelServer(Scripted(text="slow", first_byte_delay=1)) as server:
        message = in_loop(main(server))
        assert message.stop_reason == "aborted"


def test_abort_while_waiting_for_the_first_byte() -> None:
    async def main(server: ModelServer) -> tuple[AssistantMessage, float]:
        stream = stream_message(server.model(), ask(), fast())
        await server.wait_for_requests_async(1)
        started = time.perf_counter()
        stream.abort()
        message = await stream.result()
        return message, time.perf_counter() - started

    with ModelServer(Scripted(text="late", first_byte_delay=3)) as server:
        message, latency = in_loop(asyncio.wait_for(main(server), 10))
        assert message.stop_reason == "aborted" and latency < 0.1
        assert server.requests[0].wait_finished(2.0) and server.requests[0].client_disconnected


# --- 5: every recording over HTTP ------------------------------------------------------------------

ALL_RECORDINGS = [name for folder in API_OF_FOLDER for name in recordings(folder)]


@pytest.mark.parametrize("name", ALL_RECORDINGS)
def test_recording_over_http_in_small_chunks_assembles_like_the_direct_parse(name: str) -> None:
    api = API_OF_FOLDER[name.split("/", 1)[0]]
    wire = (SSE_DIR / name).read_bytes()
    expected = comparable(assemble(name), wire)
    with ModelServer(Recording(name, chunk_size=37)) as server:
        model = recorded_model(api).model_copy(update={"base_url": server.base_url})
        outcome = run(model, options=fast(max_retries=0))
        assert comparable(outcome.message, wire) == expected
        if outcome.message.stop_reason != "error":  # on an error event the client may hang up early
            assert server.requests[0].completed
        assert outcome.types[-1] in ("done", "error")


# --- 6: the scripted-reply encoders ---------------------------------------------------------------

RICH = Scripted(
    thinking="Let me look at the file first.\nThen run the tests.",
    thinking_signature="sig-abc123",
    text="I will read it and run the tests — ünïcödé too.",
    tool_calls=[
        ToolCallSpec("read", {"path": "src/app.py", "limit": 40}, id="call_one"),
        ToolCallSpec("bash", {"command": "pytest -q", "env": {"A": "1"}, "tags": ["x", "y"]}, id="call_two"),
    ],
    usage=ScriptUsage(input=120, output=45, cache_read=30),
)


def expected_blocks(reply: Scripted) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for block in reply.content_blocks():
        if isinstance(block, ToolCallSpec):
            out.append(("toolCall", block.id, block.name, block.arguments))
        elif hasattr(block, "thinking"):
            out.append(("thinking", block.thinking))
        else:
            out.append(("text", block.text))
    return out


def got_blocks(message: AssistantMessage) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            out.append(
                ("toolCall", block.id.split("|")[0], block.name, block.arguments)
            )  # responses: call|item
        elif isinstance(block, ThinkingContent):
            out.append(("thinking", block.thinking))
        elif isinstance(block, TextContent):
            out.append(("text", block.text))
    return out


@pytest.mark.parametrize("api", API_KINDS)
def test_scripted_reply_round_trips_through_our_parser(api: str) -> None:
    with ModelServer(RICH) as server:
        outcome = run(server.model(api, reasoning=True), options=fast(thinking="medium"))
        message = outcome.message
        assert message.stop_reason == "toolUse", message.error_message
        assert got_blocks(message) == expected_blocks(RICH)
        usage = message.usage
        assert usage is not None
        assert (usage.input, usage.output, usage.cache_read) == (120, 45, 30)
        if api in ("anthropic-messages", "google-generative-ai"):
            thinking = next(b for b in message.content if isinstance(b, ThinkingContent))
            assert thinking.thinking_signature == "sig-abc123"
        assert_one_clean_sequence(outcome.types)
        assert server.requests[0].api == api


@pytest.mark.parametrize("api", API_KINDS)
def test_scripted_length_stop_round_trips(api: str) -> None:
    with ModelServer(Scripted(text="cut short by the token limit", stop_reason="length")) as server:
        message = run(server.model(api)).message
        assert message.stop_reason == "length", message.error_message
        assert got_blocks(message) == [("text", "cut short by the token limit")]


@pytest.mark.parametrize("api", API_KINDS)
def test_scripted_mid_stream_error_event_keeps_partial_text(api: str) -> None:
    reply = Scripted(text="partial answer", error="Overloaded right now", error_type="overloaded_error")
    with ModelServer(reply, Scripted(text="retried")) as server:
        message = run(server.model(api)).message
        assert message.stop_reason == "error"
        assert "Overloaded right now" in (message.error_message or "")
        assert got_blocks(message) == [("text", "partial answer")]
        assert len(server.requests) == 1  # output began: no retry


@pytest.mark.parametrize("api", API_KINDS)
def test_default_reply_echoes_the_last_user_text(api: str) -> None:
    context = Context(messages=[user("first question"), assistant("an answer"), user("second question")])
    with ModelServer() as server:
        assert run(server.model(api), context).text == "echo: second question"


# --- 7: the request as built is the request received ----------------------------------------------


def rich_context() -> Context:
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.txt"})
    return Context(
        system_prompt="You are a careful coding agent.",
        messages=[
            user("read a.txt please"),
            assistant("Reading it.", call, stop_reason="toolUse"),
            tool_result("call_1", "contents of a.txt"),
            user("thanks — now summarise"),
        ],
        tools=[
            Tool(
                name="read",
                description="Read a file",
                parameters={
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            )
        ],
    )


@pytest.mark.parametrize("api", API_KINDS)
def test_the_server_receives_exactly_the_built_request(api: str) -> None:
    options = fast(temperature=0.2, headers={"x-trace": "t-1"})
    with ModelServer(Scripted(text="ok")) as server:
        model = server.model(api, headers={"x-model-header": "yes"})
        context = rich_context()
        request = get_client(api).build_request(model, context, options)
        outcome = run(model, context, options)
        assert outcome.message.stop_reason == "stop", outcome.message.error_message
        record = server.requests[0]
        url = urlsplit(request.url)
        assert (record.method, record.path) == ("POST", url.path)
        assert record.query == dict(parse_qsl(url.query))
        assert record.body == json.loads(json.dumps(request.body))
        for name, value in request.headers.items():
            assert record.header(name) == value, name
        assert record.header("x-trace") == "t-1" and record.header("x-model-header") == "yes"


def test_openai_completions_also_served_under_a_v1_prefix() -> None:
    with ModelServer(Scripted(text="via v1")) as server:
        model = server.model(base_url=server.base_url + "/v1")
        assert run(model).text == "via v1"
        assert server.requests[0].path == "/v1/chat/completions"


# --- 8: clear errors ------------------------------------------------------------------------------


def test_400_with_a_json_error_body_is_one_clear_line() -> None:
    body = json.dumps(
        {"error": {"message": "Invalid value for 'temperature'.", "type": "invalid_request_error"}}, indent=2
    )
    with ModelServer(HttpError(400, body=body), Scripted(text="never")) as server:
        message = run(server.model()).message
        error = message.error_message or ""
        assert message.stop_reason == "error"
        assert "400" in error and "Invalid value for 'temperature'." in error, error
        assert "\n" not in error and len(error) < 600
        assert len(server.requests) == 1  # a 400 is not retried


def test_malformed_json_in_the_stream_names_the_line_and_never_hangs() -> None:
    good = b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    bad = b'data: {"id":"c1","choices": [oops\n\n'
    later = b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":" there"}}]}\n\ndata: [DONE]\n\n'
    with ModelServer(RawStream(good + bad + later, event_delay=0.1)) as server:
        outcome = run(server.model(), timeout=5)
        error = outcome.message.error_message or ""
        assert outcome.message.stop_reason == "error"
        assert '{"id":"c1","choices": [oops' in error, error
        assert outcome.text == "Hi"
        assert len(server.requests) == 1


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_stream_is_read(encoding: str) -> None:
    """httpx asks for gzip and deflate; a server that uses them must not give an empty reply."""
    import zlib

    events = (
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    packer = zlib.compressobj(wbits=wbits)
    body = packer.compress(events) + packer.flush()
    with ModelServer(RawStream(body, headers={"content-encoding": encoding})) as server:
        outcome = run(server.model(), timeout=5)
    assert outcome.message.stop_reason == "stop", outcome.message.error_message
    assert outcome.text == "Hi there"


def test_malformed_json_fails_at_once_even_if_the_server_stalls() -> None:
    bad = b"data: not json at all\n\n"
    stall = b'data: {"choices":[]}\n\n'
    with ModelServer(RawStream(bad + stall, event_delay=5)) as server:
        outcome = run(server.model(), timeout=5)
        assert outcome.elapsed < 1.0
        assert "not json at all" in (outcome.message.error_message or "")


# --- the server itself ----------------------------------------------------------------------------


def test_fixture_records_requests_and_falls_back_to_echo(model_server: ModelServer) -> None:
    assert run(model_server.model(), ask("ping")).text == "echo: ping"
    record = model_server.wait_for_requests(1)[0]
    assert record.api == "openai-completions" and record.model == "m"
    assert record.header("authorization") == "Bearer sk-test"
    assert record.body["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "ping"}]}


def test_first_byte_delay_and_slow_events_are_honoured() -> None:
    with ModelServer(Scripted(text="a b c", first_byte_delay=0.3, event_delay=0.05)) as server:
        outcome = run(server.model())
        assert outcome.text == "a b c" and outcome.elapsed >= 0.3 + 3 * 0.05 - 0.02


def test_callable_replies_and_unknown_paths() -> None:
    def by_model(record: Any) -> Scripted:
        return Scripted(text=f"you asked {record.model}")

    def broken(record: Any) -> Scripted:
        raise RuntimeError("typo in the test")

    with ModelServer(by_model, broken) as server:
        assert run(server.model(id="big-model")).text == "you asked big-model"
        message = run(server.model(), options=fast(max_retries=0)).message
        assert "500" in (message.error_message or "") and "typo in the test" in (message.error_message or "")
        answer = httpx.post(server.base_url + "/nope", json={})
        assert answer.status_code == 404 and "No model API" in answer.text
        assert server.last_request.api is None


def test_http_error_bodies_follow_each_api() -> None:
    with ModelServer(
        HttpError(529), HttpError(429), HttpError(500, message="boom"), default=HttpError(418, body="teapot")
    ) as server:
        anthropic = httpx.post(server.base_url + "/v1/messages", json={})
        assert anthropic.status_code == 529 and anthropic.json()["error"]["type"] == "overloaded_error"
        google = httpx.post(server.base_url + "/v1beta/models/g:streamGenerateContent?alt=sse", json={})
        assert google.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert server.last_request.model == "g" and server.last_request.query == {"alt": "sse"}
        openai = httpx.post(server.base_url + "/responses", json={})
        assert openai.json()["error"]["message"] == "boom"
        plain = httpx.post(server.base_url + "/chat/completions", json={})
        assert plain.status_code == 418 and plain.text == "teapot"


def test_last_user_text_of_each_api_shape() -> None:
    assert last_user_text("anthropic-messages", {"messages": [{"role": "user", "content": "hi"}]}) == "hi"
    anthropic_tool_turn = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "do it"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "r"}]},
        ]
    }
    assert last_user_text("anthropic-messages", anthropic_tool_turn) == "do it"
    responses = {"input": [{"role": "user", "content": [{"type": "input_text", "text": "yo"}]}]}
    assert last_user_text("openai-responses", responses) == "yo"
    google = {"contents": [{"role": "user", "parts": [{"text": "g"}]}, {"role": "model", "parts": []}]}
    assert last_user_text("google-generative-ai", google) == "g"
    assert last_user_text(None, None) == ""


def test_reply_from_dict() -> None:
    error = reply_from_dict({"type": "error", "status": 429, "headers": {"Retry-After": "2"}})
    assert isinstance(error, HttpError) and error.status == 429 and error.headers == {"Retry-After": "2"}
    scripted = reply_from_dict(
        {"text": "hi", "tool_calls": [{"name": "read", "arguments": {"path": "x"}}], "event_delay": 0.1}
    )
    assert isinstance(scripted, Scripted) and scripted.tool_calls[0].name == "read"
    assert scripted.final_stop_reason() == "toolUse"
    with pytest.raises(ValueError, match="unknown field"):
        reply_from_dict({"type": "recording", "name": "x.sse", "colour": "red"})


def test_cli_prints_its_base_url_and_serves_the_script(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"type": "error", "status": 503}, {"text": "from the script"}]))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.model_server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        model = Model(id="m", api="openai-completions", provider="cli", base_url=base_url)
        outcome = run(model)
        assert outcome.text == "from the script" and len(outcome.retries) == 1
    finally:
        process.terminate()
        process.communicate(timeout=5)  # reaps it and closes the pipes
