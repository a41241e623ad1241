"""Decoding one huge SSE event: is the cost linear in its size?

A single event can be megabytes (a whole file pasted into a tool call's arguments, a model
dumping a large text block in one delta). The decoder must not re-scan or re-copy the pending
line for every network chunk, or a 100 MB event costs minutes. Measured, best of ``--runs``:

1. the bare :class:`SSEDecoder`: one ``data: {...}`` event of 1, 10 and 100 MB (``--quick``:
   1 and 10 MB) fed in 64 KB and 16 KB chunks, with the time per MB (flat when linear);
2. end to end over real loopback HTTP: a server on 127.0.0.1 sends one OpenAI chat-completions
   chunk whose text delta is N MB, then ``[DONE]``; pi_tui's real provider stream
   (:func:`pi_tui.ai.stream.stream_message`: httpx, the decoder, the Chat Completions parser, the
   message builder) receives it, and the total time to the final message is printed.

Target (issue 12): one 10 MB event <= 0.2 s, 100 MB <= 2 s in the decoder.
Run: ``python benchmarks/sse_big_event.py [--quick] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_tui.ai.sse import SSEDecoder  # noqa: E402
from pi_tui.ai.stream import stream_message  # noqa: E402
from pi_tui.ai.types import Context, StreamOptions  # noqa: E402
from pi_tui.messages import TextContent, UserMessage  # noqa: E402
from tests.support.model_server import ModelServer, RawStream  # noqa: E402

MB = 1024 * 1024
WORDS = "the quick brown fox jumps over a lazy dog; caf\u00e9 \u2603\n"
"""Filler text with multi-byte characters (so UTF-8 sequences are cut by the chunking) and
newlines (escaped as ``\\n`` in the JSON, so the event stays one SSE line)."""


def big_text(megabytes: int) -> str:
    """About ``megabytes`` MB of filler text."""
    size = megabytes * MB
    return (WORDS * (size // len(WORDS.encode()) + 1))[: size - size // 20]


def completion_chunk(text: str) -> bytes:
    """One Chat Completions stream chunk carrying ``text`` as its content delta, as an SSE event."""
    chunk = {
        "id": "chatcmpl-big",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def stream_body(text: str) -> bytes:
    final = {"id": "chatcmpl-big", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return completion_chunk(text) + b"data: " + orjson.dumps(final) + b"\n\ndata: [DONE]\n\n"


def decode_seconds(body: bytes, chunk: int, runs: int) -> float:
    """Best wall time to decode ``body`` fed in ``chunk``-byte pieces (slicing excluded)."""
    pieces = [body[start : start + chunk] for start in range(0, len(body), chunk)]
    expected = len(body.decode()) - len("data: \n\n")
    best = float("inf")
    for _ in range(runs):
        received: list[int] = []

        def sink(_name: str, data: str, received: list[int] = received) -> None:
            received.append(len(data))

        decoder = SSEDecoder()
        started = time.perf_counter()
        for piece in pieces:
            decoder.feed_into(piece, sink)
        decoder.close_into(sink)
        best = min(best, time.perf_counter() - started)
        if received != [expected]:
            raise RuntimeError(f"decoded {received} instead of one event of {expected} characters")
    return best


def end_to_end_seconds(server: ModelServer, text: str, runs: int) -> float:
    """Best wall time for pi_tui's provider stream to receive ``text`` as one delta over loopback."""
    best = float("inf")
    for _ in range(runs):
        server.queue(RawStream(stream_body(text)))
        best = min(best, asyncio.run(_one_turn(server, len(text))))
    return best


async def _one_turn(server: ModelServer, expected: int) -> float:
    context = Context(messages=[UserMessage(content=[TextContent(text="hi")], timestamp=0)])
    options = StreamOptions(api_key="sk-bench", timeout=600.0, max_retries=0)
    async with httpx.AsyncClient() as http:
        started = time.perf_counter()
        stream = stream_message(server.model("openai-completions"), context, options, http=http)
        async for _event in stream:
            pass
        message = await stream.result()
        elapsed = time.perf_counter() - started
    got = sum(len(block.text) for block in message.content if isinstance(block, TextContent))
    if message.stop_reason != "stop" or got != expected:
        raise RuntimeError(f"stream ended {message.stop_reason!r} with {got} of {expected} characters")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 and 10 MB only")
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs (default 3)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    sizes = (1, 10) if args.quick else (1, 10, 100)

    print("| measurement | time | per MB |")
    print("|---|---|---|")
    for megabytes in sizes:
        body = completion_chunk(big_text(megabytes))
        for chunk in (64 * 1024, 16 * 1024):
            seconds = decode_seconds(body, chunk, args.runs)
            label = f"one SSE event of {megabytes} MB, {chunk // 1024} KB chunks"
            print(f"| {label} | {seconds:.3f} s | {seconds * 1000 / megabytes:.1f} ms |", flush=True)
        del body

    with ModelServer() as server:
        for megabytes in sizes:
            seconds = end_to_end_seconds(server, big_text(megabytes), args.runs)
            label = f"one {megabytes} MB text delta, loopback HTTP -> stream_message"
            print(f"| {label} | {seconds:.3f} s | {seconds * 1000 / megabytes:.1f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
