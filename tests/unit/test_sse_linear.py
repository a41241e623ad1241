"""The SSE decoder on huge events and arbitrary cuts: same events as a plain reading of the whole
stream, and work linear in the bytes received (one event may be many megabytes)."""

from __future__ import annotations

import itertools
import re
import sys
import tracemalloc
from types import FrameType
from typing import Any

import pytest

from pi_tui.ai.sse import SSEDecoder

Event = tuple[str, str, str | None, int | None]

CORPUS = (
    ": keep-alive\r\n"
    "event: first\r\n"
    "data: caf\u00e9 \u2603 \U0001f600\r\n"
    "\r\n"
    "data\n"
    "data:\n"
    "data:  two spaces\n"
    "id: 42\r"
    "retry: 250\r"
    "\r"
    "event: e\n"
    "bogus: field\n"
    "retry: 1x\n"
    "data: x\r\n"
    "\n"
    "\n"
).encode() + b"data: \xff\xfe bad bytes\r\n\r\ndata: unterminated at EOF\r"
"""Every kind of line ending (CRLF pairs a cut may separate), multi-byte characters a cut may
split, comments, empty and space-only values, id/retry, unknown fields, invalid UTF-8, and an
event that only the EOF leniency dispatches."""


def reference(data: bytes) -> list[Event]:
    """The WHATWG reading of a whole stream at once, written independently of the decoder."""
    events: list[Event] = []
    event, lines, last_id, retry = "", [], None, None
    has_fields = False
    text = data.decode("utf-8", "replace")
    *complete, rest = re.split(r"\r\n|\r|\n", text)
    for line in [*complete, rest] if rest else complete:
        if not line:
            if lines:
                events.append((event or "message", "\n".join(lines), last_id, retry))
            event, lines, has_fields = "", [], False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            lines.append(value)
        elif name == "event":
            event = value
        elif name == "id":
            last_id = value
        elif name == "retry":
            retry = int(value) if value.isdigit() else retry
        else:
            continue
        has_fields = True
    if has_fields and lines:
        events.append((event or "message", "\n".join(lines), last_id, retry))
    return events


def decode(pieces: list[bytes]) -> list[Event]:
    decoder = SSEDecoder()
    events = []
    for piece in pieces:
        events += decoder.feed(piece)
    events += decoder.close()
    return [(e.event, e.data, e.id, e.retry) for e in events]


def cut(data: bytes, *positions: int) -> list[bytes]:
    bounds = [0, *positions, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


def test_reference_reading_of_the_corpus() -> None:
    """Pin the reference itself, so both cannot drift together."""
    assert reference(CORPUS) == [
        ("first", "caf\u00e9 \u2603 \U0001f600", None, None),
        ("message", "\n\n two spaces", "42", 250),
        ("e", "x", "42", 250),
        ("message", "\ufffd\ufffd bad bytes", "42", 250),
        ("message", "unterminated at EOF", "42", 250),
    ]
    assert decode([CORPUS]) == reference(CORPUS)


def test_one_cut_anywhere() -> None:
    expected = reference(CORPUS)
    for position in range(len(CORPUS) + 1):
        assert decode(cut(CORPUS, position)) == expected, position


def test_two_cuts_anywhere() -> None:
    """Every pair of cut positions: a CR, an LF and a multi-byte character can each land in a
    chunk of their own, between two pieces of a line that spans three chunks."""
    expected = reference(CORPUS)
    for first, second in itertools.combinations(range(1, len(CORPUS)), 2):
        assert decode(cut(CORPUS, first, second)) == expected, (first, second)


@pytest.mark.parametrize("size", range(1, 12))
def test_fixed_chunk_sizes(size: int) -> None:
    pieces = [CORPUS[start : start + size] for start in range(0, len(CORPUS), size)]
    assert decode(pieces) == reference(CORPUS)


def test_empty_chunks_change_nothing() -> None:
    pieces = [piece for byte in cut(CORPUS, *range(1, len(CORPUS))) for piece in (b"", byte, b"")]
    assert decode(pieces) == reference(CORPUS)


def big_value(characters: int) -> str:
    """Text of about ``characters`` characters with multi-byte ones, so 1 KB cuts split them."""
    unit = 'caf\u00e9 \u2603 \U0001f600 {"k": 1} '
    return (unit * (characters // len(unit) + 1))[:characters]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_five_megabyte_event_in_one_kilobyte_chunks(ending: str) -> None:
    value = big_value(5_000_000)
    stream = (f"event: big{ending}data: {value}{ending}data: tail{ending}{ending}data: next{ending}").encode()
    pieces = [stream[start : start + 1024] for start in range(0, len(stream), 1024)]
    events = decode(pieces)
    assert [name for name, *_ in events] == ["big", "message"]
    assert events[0][1] == value + "\ntail"
    assert events[1][1] == "next"


def test_a_huge_line_in_tiny_chunks_is_held_compactly() -> None:
    """Tiny chunks are folded together: a pending line does not cost an object per chunk."""
    decoder = SSEDecoder()
    line = b"data: " + b"xyz" * 100_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, len(line), 3):
            decoder.feed(line[start : start + 3])
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # About one byte per character once folded; one str object per 3-byte chunk would be ~20.
    assert held < 3 * len(line)
    assert [e.data for e in decoder.feed(b"\n\n")] == ["xyz" * 100_000]


class ScanCounter:
    """Counts the characters of every ``str`` that a ``str`` method is called on (``find``,
    ``split``, ``partition``...) while installed as the profiler.

    A decoder that re-scans its whole pending line for each network chunk calls such a method
    on an ever longer string, so this count grows with (bytes x chunks); a linear decoder keeps
    it within a small multiple of the bytes fed. It counts work without timing it, so it cannot
    be flaky.
    """

    def __init__(self) -> None:
        self.characters = 0

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call" and isinstance(getattr(arg, "__self__", None), str):
            self.characters += len(arg.__self__)


def scanned_characters(stream: bytes, chunk: int) -> int:
    counter = ScanCounter()
    decoder = SSEDecoder()
    sink: list[str] = []
    sys.setprofile(counter)
    try:
        for start in range(0, len(stream), chunk):
            decoder.feed_into(stream[start : start + chunk], lambda _name, data: sink.append(data))
        decoder.close_into(lambda _name, data: sink.append(data))
    finally:
        sys.setprofile(None)
    assert len(sink) == 1
    return counter.characters


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_decode_work_is_linear_in_the_event_size(ending: str) -> None:
    small = f"data: {big_value(250_000)}{ending}{ending}".encode()
    large = f"data: {big_value(1_000_000)}{ending}{ending}".encode()
    small_count = scanned_characters(small, 1024)
    large_count = scanned_characters(large, 1024)
    # The counter sees the decoder's scans at all (a change of profiler semantics would make
    # every bound below pass vacuously).
    assert small_count >= 250_000
    # Four times the bytes: about four times the work, and a few scans per character at most.
    assert large_count <= 5 * small_count
    assert large_count <= 4 * len(large)
