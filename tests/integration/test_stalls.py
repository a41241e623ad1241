"""Stalled and slow streams, split surrogate pairs and rate limits, over real loopback HTTP.

A server that goes silent is given up after the idle limit (not the old whole-request 600 s read
timeout): retried when nothing had streamed, an error keeping the partial reply otherwise. The
agent announces the silence (``stream_stall``) once per second after the notice threshold. An
emoji whose UTF-16 halves arrive in two SSE events is joined for every API kind, in text,
thinking and tool-call arguments; a half that never finds its pair is kept and saved.
Limits are set to a second or three so every test ends in a few seconds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pi_tui.agent.events import AgentEvent, progress_line
from pi_tui.agent.session import AgentSession
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.stream import IdleLimits, RetryInfo, StallInfo, stream_message
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.config.settings import Settings, SettingsError, load_settings
from pi_tui.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from pi_tui.session import SessionManager
from tests.integration.test_agent_session import run
from tests.support.builders import user
from tests.support.model_server import (
    API_KINDS,
    HttpError,
    ModelServer,
    RawStream,
    Scripted,
    ToolCallSpec,
    encode,
)
from tests.support.waiting import poll_until

T = TypeVar("T")
EMOJI = "\U0001f600"


def options(**overrides: Any) -> StreamOptions:
    values: dict[str, Any] = {"api_key": "sk-test", "base_delay": 0.01, "max_retries": 2}
    values.update(overrides)
    return StreamOptions(**values)


def ask() -> Context:
    return Context(system_prompt="terse", messages=[user("hello")])


def completions_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    data = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    data["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]  # type: ignore[assignment]
    return b"data: " + json.dumps(data).encode() + b"\n\n"


async def collect(
    model: Model,
    opts: StreamOptions,
    idle: IdleLimits,
    stalls: list[StallInfo] | None = None,
    retries: list[RetryInfo] | None = None,
) -> tuple[AssistantMessage, list[StreamEvent]]:
    stream = stream_message(
        model,
        ask(),
        opts,
        idle=idle,
        on_stall=None if stalls is None else stalls.append,
        on_retry=None if retries is None else retries.append,
    )
    events = [event async for event in stream]
    return await stream.result(), events


# --- stalls --------------------------------------------------------------------------------------


def test_a_server_silent_after_some_text_ends_the_reply_after_the_idle_limit_keeping_the_text() -> None:
    body = completions_chunk({"role": "assistant", "content": "Hello"}) + completions_chunk(
        {"content": " world"}
    )
    with ModelServer(RawStream(body, event_delay=30)) as server:  # 30 s of silence after "Hello"
        started = time.monotonic()
        message, _ = run(lambda: collect(server.model(), options(), IdleLimits(between=1, first_byte=5)))
        seconds = time.monotonic() - started
        assert message.stop_reason == "error"
        assert message.error_message == "No data from the server for 1 s; the reply was cut"
        assert message.content == [TextContent(text="Hello")]
        assert 0.9 < seconds < 3, seconds  # was 600.5 s (the whole-request read timeout)
        assert len(server.requests) == 1, "a reply with output must not be retried"
        poll_until(lambda: server.requests[0].client_disconnected, "the stalled connection closed", timeout=2)


def test_no_first_byte_within_the_limit_is_retried_and_the_retry_succeeds() -> None:
    with ModelServer(Scripted(text="late", first_byte_delay=30), Scripted(text="on time")) as server:
        retries: list[RetryInfo] = []
        started = time.monotonic()
        message, _ = run(
            lambda: collect(server.model(), options(), IdleLimits(between=5, first_byte=1), retries=retries)
        )
        seconds = time.monotonic() - started
        assert message.stop_reason == "stop" and message.content == [TextContent(text="on time")]
        assert [info.error for info in retries] == ["No data from the server for 1 s"]
        assert 0.9 < seconds < 3, seconds  # was 600.5 s per attempt, about 40 minutes in all
        assert len(server.requests) == 2


def test_no_first_byte_on_every_attempt_gives_up_after_the_retries() -> None:
    silent = Scripted(text="never", first_byte_delay=30)
    with ModelServer(default=silent) as server:
        started = time.monotonic()
        message, _ = run(
            lambda: collect(server.model(), options(max_retries=1), IdleLimits(between=5, first_byte=0.5))
        )
        assert message.stop_reason == "error" and message.content == []
        assert message.error_message == "No data from the server for 0.5 s (gave up after 1 retries)"
        assert time.monotonic() - started < 3
        assert len(server.requests) == 2


def test_a_slow_but_steady_stream_is_not_cut_by_the_idle_limit() -> None:
    words = "one two three"
    with ModelServer(Scripted(text=words, event_delay=0.2)) as server:  # about 6 events, 1.2 s
        started = time.monotonic()
        message, _ = run(lambda: collect(server.model(), options(), IdleLimits(between=0.5, first_byte=0.5)))
        assert message.stop_reason == "stop", message.error_message
        assert message.content == [TextContent(text=words)]
        assert time.monotonic() - started > 0.75, "the stream was not slower than the limit as a whole"


def test_silence_is_reported_each_second_after_the_notice_and_once_more_when_data_flows() -> None:
    body = completions_chunk({"role": "assistant", "content": "Hel"}) + completions_chunk(
        {"content": "lo"}, "stop"
    )
    with ModelServer(RawStream(body, event_delay=2.6)) as server:
        stalls: list[StallInfo] = []
        message, _ = run(
            lambda: collect(server.model(), options(), IdleLimits(between=4, first_byte=4), stalls=stalls)
        )
        assert message.stop_reason == "stop" and message.content == [TextContent(text="Hello")]
        # The notice starts at half the 4 s limit (2 s); data comes back after 2.6 s.
        assert [(s.idle_seconds, s.timeout, s.received) for s in stalls] == [(2, 4, True), (0, 4, True)]


def test_the_agent_reads_the_limits_from_settings_and_emits_stream_stall(tmp_path: Path) -> None:
    body = completions_chunk({"role": "assistant", "content": "partial"}) + completions_chunk(
        {"content": "!"}
    )
    with ModelServer(RawStream(body, event_delay=30)) as server:
        manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        settings = Settings.model_validate(
            {"retry": {"idleTimeoutSeconds": 2.5, "firstByteTimeoutSeconds": 5}}
        )
        agent = AgentSession(manager, server.model(), settings=settings, request_options=lambda _m: options())
        events: list[Any] = []
        agent.subscribe(events.append)
        started = time.monotonic()
        final = run(lambda: agent.prompt("hi"))
        assert 2.4 < time.monotonic() - started < 4.5
        assert final is not None and final.stop_reason == "error"
        assert final.error_message == "No data from the server for 2.5 s; the reply was cut"
        stall_events = [event for event in events if event.type == "stream_stall"]
        assert [progress_line(event) for event in stall_events] == ["no data for 2 s - Ctrl+C to stop", None]
        stalls = [event.to_json() for event in stall_events]
        assert stalls == [
            {
                "type": "stream_stall",
                "stalled": True,
                "idleSeconds": 2,
                "timeoutSeconds": 2.5,
                "receivedData": True,
            },
            {
                "type": "stream_stall",
                "stalled": False,
                "idleSeconds": 0,
                "timeoutSeconds": 2.5,
                "receivedData": True,
            },
        ]
        saved = [json.loads(line) for line in manager.session_file.read_text().splitlines()]  # type: ignore[union-attr]
        reply = saved[-1]["message"]
        assert reply["stopReason"] == "error" and reply["content"] == [{"type": "text", "text": "partial"}]


def test_idle_settings_are_read_from_settings_json_and_bad_values_are_named(agent_dir: Path) -> None:
    path = agent_dir / "settings.json"
    path.write_text('{"retry": {"idleTimeoutSeconds": 30}}\n')
    retry = load_settings().retry
    assert (retry.idle_timeout_seconds, retry.first_byte_timeout_seconds) == (30, 120)
    assert (Settings().retry.idle_timeout_seconds, Settings().retry.first_byte_timeout_seconds) == (90, 120)
    path.write_text('{\n  "retry": {\n    "idleTimeoutSeconds": 0\n  }\n}\n')
    with pytest.raises(SettingsError, match=r"line 3: setting 'retry.idleTimeoutSeconds'"):
        load_settings()


def test_progress_lines_for_a_long_silence_come_at_the_notice_and_every_10_s_after() -> None:
    def line(idle: int, timeout: float = 90) -> str | None:
        event = AgentEvent("stream_stall", {"stalled": True, "idleSeconds": idle, "timeoutSeconds": timeout})
        return progress_line(event)

    shown = [idle for idle in range(1, 90) if line(idle) is not None]
    assert shown == [10, 20, 30, 40, 50, 60, 70, 80]
    assert line(14) is None and line(3, timeout=6) == "no data for 3 s - Ctrl+C to stop"
    assert progress_line(AgentEvent("stream_stall", {"stalled": False, "idleSeconds": 0})) is None


# --- surrogate pairs split across events ---------------------------------------------------------


def split_pair_body(api: str) -> bytes:
    """A reply whose emoji comes as ``\\ud83d`` at the end of one delta and ``\\ude00`` at the start
    of the next, in thinking, text and tool-call arguments (Gemini sends arguments whole)."""
    reply = Scripted(
        thinking="thnkHIGHLOW more",
        text="abcdHIGHLOW done",
        tool_calls=[ToolCallSpec("echo", {"a": "123456HIGHLOW x"}, id="call_1")],
        delta_size=4,
    )
    body = b"".join(encode(api, reply))
    assert body.count(b"HIGH") >= 3, body
    return body.replace(b"HIGH", b"\\ud83d").replace(b"LOW", b"\\ude00")


@pytest.mark.parametrize("api", API_KINDS)
def test_a_surrogate_pair_split_across_two_events_is_joined(api: str) -> None:
    with ModelServer(RawStream(split_pair_body(api))) as server:
        model = server.model(api, reasoning=True)
        message, events = run(lambda: collect(model, options(), IdleLimits()))
    assert message.stop_reason == "toolUse", message.error_message  # was "Malformed JSON in the stream"
    by_type = {type(block): block for block in message.content}
    assert by_type[TextContent].text == f"abcd{EMOJI} done"  # type: ignore[union-attr]
    assert by_type[ThinkingContent].thinking == f"thnk{EMOJI} more"  # type: ignore[union-attr]
    assert by_type[ToolCall].arguments == {"a": f"123456{EMOJI} x"}  # type: ignore[union-attr]
    streamed = "".join(event.delta for event in events if event.type == "text_delta")
    assert streamed == f"abcd{EMOJI} done", "the deltas shown live differ from the final text"
    assert not any("\ud800" <= char <= "\udfff" for event in events for char in event.delta)


def test_a_half_that_never_finds_its_pair_is_kept_and_saved(tmp_path: Path) -> None:
    body = (
        completions_chunk({"role": "assistant", "content": "cut \\ud83d"}, None).replace(b"\\\\", b"\\")
        + completions_chunk({"content": "next"})
        + completions_chunk({}, "stop")
    )
    with ModelServer(RawStream(body)) as server:
        manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        agent = AgentSession(manager, server.model(), request_options=lambda _m: options())
        final = run(lambda: agent.prompt("hi"))
    assert final is not None and final.stop_reason == "stop", final and final.error_message
    assert final.content == [TextContent(text="cut \ud83dnext")]  # as Node keeps it
    line = manager.session_file.read_bytes().splitlines()[-1]  # type: ignore[union-attr]
    assert b'"text":"cut \\ud83dnext"' in line
    assert json.loads(line)["message"]["content"][0]["text"] == "cut \ud83dnext"


def test_tool_call_arguments_with_a_half_that_never_finds_its_pair_are_kept() -> None:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "echo", "arguments": ""}}
    body = (
        completions_chunk({"role": "assistant", "tool_calls": [call]})
        + completions_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":"x\\ud83d'}}]})
        + completions_chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'y"}'}}]})
        + completions_chunk({}, "tool_calls")
    ).replace(b"\\\\ud83d", b"\\ud83d")
    assert b'"{\\"a\\":\\"x\\ud83d"' in body, body  # a lone escape in the SSE event's JSON
    with ModelServer(RawStream(body)) as server:
        message, _ = run(lambda: collect(server.model(), options(), IdleLimits()))
    assert message.stop_reason == "toolUse", message.error_message
    (tool_call,) = message.content
    assert isinstance(tool_call, ToolCall) and tool_call.arguments == {"a": "x\ud83dy"}


# --- rate limits ---------------------------------------------------------------------------------


def test_429_is_worded_as_rate_limiting_and_print_mode_gets_a_countdown_line(tmp_path: Path) -> None:
    limited = HttpError(429, message="Too many tokens per minute", headers={"retry-after-ms": "50"})
    with ModelServer(limited, Scripted(text="ok")) as server:
        manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
        agent = AgentSession(manager, server.model(), request_options=lambda _m: options())
        events: list[Any] = []
        agent.subscribe(events.append)
        final = run(lambda: agent.prompt("hi"))
    assert final is not None and final.stop_reason == "stop"
    (retry,) = [event for event in events if event.type == "auto_retry_start"]
    reason = retry["errorMessage"]
    assert reason.startswith("Rate limited by the provider (HTTP 429): Too many tokens per minute"), reason
    assert "overloaded" not in reason.lower()
    assert retry["delayMs"] == 50
    # print mode's stderr line: whole seconds (a 50 ms wait is "1 s", never "0s") and how to stop
    assert progress_line(retry) == f"{reason} - retrying in 1 s (attempt 1/2) - Ctrl+C to cancel"
