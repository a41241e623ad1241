"""Streaming throughput: SSE parsing + event assembly vs the bare floor.

For anthropic-messages and openai-completions, builds a stream of 100,000 small text deltas in
the API's real wire format and measures, best of 5 (``time.perf_counter``):

- floor: split the bytes into lines and JSON-decode every ``data:`` line with orjson;
- ours: the runner's :class:`WirePipeline` (SSE decoder, the API's parser, the MessageBuilder,
  events taken after every chunk) fed 4 KiB network chunks, and the final message.

Target (issue 3): ours within 2x of the floor. Floor and ours run alternately; both wall and
CPU (process) time are shown, since other processes on a small VM disturb wall time.
Because wall time jitters on a small VM, ``--instructions`` also counts executed instructions
with callgrind (deterministic). Run: ``python benchmarks/stream_parse.py [--instructions]``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.registry import get_client
from pi_tui.ai.stream import WirePipeline
from pi_tui.ai.types import Model

WORDS = ["the ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ", "lazy ", "dog. ", "\n"]
CHUNK = 4096


def openai_stream(deltas: int) -> bytes:
    lines = []
    for number in range(deltas):
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "model": "bench",
            "choices": [
                {"index": 0, "delta": {"content": WORDS[number % len(WORDS)]}, "finish_reason": None}
            ],
        }
        lines.append(b"data: " + orjson.dumps(chunk) + b"\n\n")
    final = {"id": "chatcmpl-bench", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    usage = {
        "id": "chatcmpl-bench",
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": deltas},
    }
    lines += [b"data: " + orjson.dumps(final) + b"\n\n", b"data: " + orjson.dumps(usage) + b"\n\n"]
    return b"".join(lines) + b"data: [DONE]\n\n"


def anthropic_stream(deltas: int) -> bytes:
    def event(name: str, data: dict[str, object]) -> bytes:
        return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"

    start = {
        "type": "message_start",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "bench",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    parts = [
        event("message_start", start),
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
    ]
    for number in range(deltas):
        delta = {"type": "text_delta", "text": WORDS[number % len(WORDS)]}
        parts.append(
            event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    parts += [
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": deltas},
            },
        ),
        event("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(parts)


def floor(data: bytes) -> int:
    decoded = 0
    loads = orjson.loads
    for line in data.split(b"\n"):
        if line.startswith(b"data: ") and line != b"data: [DONE]":
            loads(line[6:])
            decoded += 1
    return decoded


def ours(api: str, data: bytes) -> int:
    """What the runner does with a response body: the same pipeline, 4 KiB network chunks."""
    model = Model(id="bench", api=api, provider="bench")
    builder = MessageBuilder(model)
    pipeline = WirePipeline(get_client(api), builder)
    events = 0
    for start in range(0, len(data), CHUNK):
        events += len(pipeline.feed(data[start : start + CHUNK]))
    events += len(pipeline.close())
    message = builder.snapshot()
    assert message.stop_reason == "stop", message.stop_reason
    return events


def best_pair(
    first: Callable[[], object], second: Callable[[], object], repeat: int, clock: Callable[[], float]
) -> tuple[float, float]:
    """Best time of each, running them alternately so background load hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for run, bucket in ((first, times[0]), (second, times[1])):
            started = clock()
            run()
            bucket.append(clock() - started)
    return min(times[0]), min(times[1])


def instructions(mode: str, api: str, deltas: int) -> int:
    """Instructions executed by one run of ``mode`` (floor | ours), counted by callgrind.

    A run with no deltas is subtracted, so interpreter start-up and imports cancel out.
    """
    counts = []
    for count in (deltas, 0):
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
        command += [__file__, "--single", mode, "--api", api, "--deltas", str(count)]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stderr
        match = re.search(r"Collected : (\d+)", output)
        if match is None:
            raise RuntimeError(f"no callgrind total in: {output[-500:]}")
        counts.append(int(match.group(1)))
    return counts[0] - counts[1]


def single(mode: str, api: str, deltas: int) -> None:
    """One run for the instruction counter (both modes warm the same code paths first)."""
    make = anthropic_stream if api == "anthropic-messages" else openai_stream
    data = make(deltas)
    floor(make(10))
    ours(api, make(10))
    if deltas:
        floor(data) if mode == "floor" else ours(api, data)


def report_instructions(deltas: int) -> bool:
    missed = False
    print(f"instructions (callgrind, {deltas:,} deltas, start-up subtracted):")
    for api in ("anthropic-messages", "openai-completions"):
        base, mine = instructions("floor", api, deltas), instructions("ours", api, deltas)
        ratio = mine / base
        missed |= ratio >= 2.0
        print(
            f"  {api}: floor {base / deltas:,.0f}/delta, ours {mine / deltas:,.0f}/delta, ratio {ratio:.2f}x"
        )
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count instructions with valgrind (deterministic; ~3 min at 20,000 deltas)",
    )
    parser.add_argument("--single", choices=("floor", "ours"), help=argparse.SUPPRESS)
    parser.add_argument("--api", default="openai-completions", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.single:
        single(args.single, args.api, args.deltas)
        return 0
    print(f"{args.deltas:,} text deltas per stream, best of {args.repeat} (Python {sys.version.split()[0]})")
    missed = False
    for api, make in (("anthropic-messages", anthropic_stream), ("openai-completions", openai_stream)):
        data = make(args.deltas)
        print(f"{api}: {len(data) / 1e6:.1f} MB")
        for clock_name, clock in (("wall", time.perf_counter), ("cpu", time.process_time)):
            floor_time, our_time = best_pair(
                lambda data=data: floor(data), lambda data=data, api=api: ours(api, data), args.repeat, clock
            )
            ratio = our_time / floor_time
            ok = ratio < 2.0
            missed |= not ok
            for label, seconds in (
                ("floor (split + orjson)", floor_time),
                ("ours (SSE + parser + events)", our_time),
            ):
                rate = args.deltas / seconds
                print(f"  {clock_name:<4} {label:<30}{seconds * 1000:8.1f} ms  {rate:>12,.0f} deltas/s")
            print(f"  {clock_name:<4} ratio: {ratio:.2f}x   target < 2x: {'PASS' if ok else 'MISS'}")
    if args.instructions:
        missed |= report_instructions(min(args.deltas, 20_000))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
