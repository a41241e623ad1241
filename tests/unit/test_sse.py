"""The SSE decoder: WHATWG framing, cut anywhere."""

from __future__ import annotations

import pytest

from pi_tui.ai.sse import SSEDecoder, SSEEvent


def decode(data: bytes, size: int = 0) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    step = size or len(data) or 1
    for start in range(0, len(data), step):
        events += decoder.feed(data[start : start + step])
    return events + decoder.close()


STREAM = (
    ": keep-alive comment\r\n"
    "event: message_start\r\n"
    'data: {"a": 1}\r\n'
    "\r\n"
    "data: line one\n"
    "data: line two\n"
    "id: 7\n"
    "retry: 3000\n"
    "\n"
    "data:no space\r"
    "\r"
    "data: caf\u00e9 \u2603 \U0001f600\n"
    "\n"
    "event: tail\n"
    "data: no blank line at the end"
).encode()


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 64])
def test_framing_survives_any_cut(size: int) -> None:
    events = decode(STREAM, size)
    assert [(e.event, e.data) for e in events] == [
        ("message_start", '{"a": 1}'),
        ("message", "line one\nline two"),
        ("message", "no space"),
        ("message", "caf\u00e9 \u2603 \U0001f600"),
        ("tail", "no blank line at the end"),
    ]
    assert events[1].id == "7" and events[1].retry == 3000


def test_events_without_data_and_unknown_fields_are_dropped() -> None:
    assert decode(b"event: ping\n\nfoo: bar\n\n:comment only\n\n") == []


def test_crlf_split_between_chunks_is_one_line_break() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n") == []
    assert [e.data for e in decoder.feed(b"\r\n")] == ["a"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode(b"data: \xff\xfe ok\n\n")[0].data == "\ufffd\ufffd ok"
