"""The AWS event-stream decoder on the SDKs' shared test vectors (tests/data/aws_eventstream/),
on frames split at every byte, and on the sink names the Bedrock parser reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.aws_eventstream import (
    EventStreamDecoder,
    EventStreamError,
    encode_event,
    encode_exception,
    encode_message,
)

VECTORS = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "aws_eventstream" / "vectors.json").read_text()
)["vectors"]
GOOD = sorted(name for name, vector in VECTORS.items() if vector["expectation"] == "success")
BAD = sorted(name for name, vector in VECTORS.items() if vector["expectation"] == "failure")


@pytest.mark.parametrize("name", GOOD)
def test_valid_vectors_decode(name: str) -> None:
    vector = VECTORS[name]
    messages = EventStreamDecoder().feed(bytes(vector["encoded"]))
    assert messages == [(vector["headers"], bytes(vector["body"]))]


@pytest.mark.parametrize("name", GOOD)
def test_encoding_reproduces_the_vector(name: str) -> None:
    vector = VECTORS[name]
    assert encode_message(vector["headers"], bytes(vector["body"])) == bytes(vector["encoded"])


@pytest.mark.parametrize("name", BAD)
def test_corrupted_vectors_fail(name: str) -> None:
    with pytest.raises(EventStreamError, match="Malformed event stream"):
        EventStreamDecoder().feed(bytes(VECTORS[name]["encoded"]))


def test_frames_split_at_every_byte_decode_the_same() -> None:
    stream = b"".join(bytes(VECTORS[name]["encoded"]) for name in GOOD) + encode_event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "h\u00e9llo \U0001f600"}}
    )
    whole = EventStreamDecoder().feed(stream)
    decoder = EventStreamDecoder()
    pieces = [message for index in range(len(stream)) for message in decoder.feed(stream[index : index + 1])]
    assert pieces == whole
    assert len(whole) == len(GOOD) + 1


def test_sink_names_events_exceptions_and_errors() -> None:
    seen: list[tuple[str, str]] = []
    error = encode_message(
        {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom"}, b""
    )
    stream = (
        encode_event("messageStart", {"role": "assistant"})
        + encode_exception("throttlingException", "Too many requests")
        + error
    )
    decoder = EventStreamDecoder()
    decoder.feed_into(stream, lambda name, data: seen.append((name, data)))
    decoder.close_into(lambda name, data: seen.append((name, data)))
    assert seen == [
        ("messageStart", '{"role":"assistant"}'),
        ("exception:throttlingException", '{"message":"Too many requests"}'),
        ("error:InternalFailure", "boom"),
    ]


def test_a_stream_cut_inside_a_message_fails_at_close() -> None:
    frame = encode_event("messageStop", {"stopReason": "end_turn"})
    decoder = EventStreamDecoder()
    decoder.feed_into(frame[:-3], lambda name, data: None)
    with pytest.raises(EventStreamError, match="ended inside a message"):
        decoder.close_into(lambda name, data: None)
