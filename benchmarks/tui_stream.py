"""Streaming a long reply into the chat: the cost of a token must not grow with the reply.

Streams a deterministic 20,000-token markdown answer (headings, paragraphs, bullet and numbered
lists, fenced code blocks, tables, quotes; about 4 characters per token) into a running PiApp
(``App.run_test(size=(120, 40))``) through the real path: ``LiveFeed.handle`` with the agent's
``message_start`` / ``message_update`` (``text_delta``) / ``message_end`` events, so the reply is a
live ``AssistantView`` whose Textual ``Markdown`` is fed in coalesced chunks.

The stream goes in steps of ``--per-frame`` tokens (default 10, i.e. 600 tokens/s at 60 frames/s,
or 100 tokens/s at 10 frames/s). After each step the benchmark waits until the view's markdown
widget has taken in every delta (its ``append`` calls have completed) and then draws a frame (what
the screen's refresh timer would do), so a step's time is the app's whole cost of those tokens:
events, markdown parsing, block widgets, layout, paint and the terminal's segments.

The first and the last 1,000 tokens are streamed that way, and 100 tokens at 25, 50 and 75 % of
the reply; to keep the run short the tokens between them go ``--fast-forward`` (1,000) tokens a
step (the widget ends in the same state; ``--fast-forward 0`` streams everything step by step).

Printed, for a new session and for a session of ``--history`` (300) finished messages:

- ms per token over the first 1,000 and over the last 1,000 tokens, and their ratio
  (target: < 1.5x, i.e. flat), the samples at 25/50/75 %, and the sustained tokens/s;
- tokens/s over the whole reply as streamed (wall time, frames included);
- the time to finish the reply (``message_end``: the live markdown becomes one static
  rendering) and draw it.

When the ratio target is missed, a shorter second run profiles the first and the last 200 tokens
(cProfile): the hot spots of the last ones, and the functions whose own time grew the most.

While the target is missed the whole run takes about 3 minutes (the last tokens are slow).

Run: ``python benchmarks/tui_stream.py [--tokens 20000] [--per-frame 10] [--history 300] [--profile]
[--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import re
import sys
import time
from pathlib import Path
from typing import Any

from session_load import SessionGenerator
from tui_support import (
    SIZE,
    FrameProbe,
    Profiled,
    hot_spots,
    isolate,
    line,
    make_pi_app,
    settle,
    target,
    where,
    write_linear_session,
)

TARGET_RATIO = 1.5
WINDOW = 1_000
"""Tokens in the first and last windows compared."""
SAMPLE = 100
"""Tokens measured at 25, 50 and 75 % of the reply (informational)."""
PROFILE_WINDOW = 200
"""Tokens profiled at the start and at the end of the reply when the target is missed."""
TOKEN = re.compile(r"\s*[^\s]{1,4}|\s+")
"""A token: optional whitespace and up to 4 non-space characters (about 4 characters a token)."""


# --- the answer --------------------------------------------------------------------------------


def make_answer(tokens: int, seed: int = 7) -> list[str]:
    """A long, realistic markdown answer cut into exactly ``tokens`` deltas."""
    gen = SessionGenerator(20, seed)
    rng, words, project = gen.rng, gen.words, gen.project
    parts: list[str] = ["# " + words.sentence().rstrip(".").capitalize() + "\n\n" + words.paragraph(3)]
    pieces: list[str] = []
    while True:
        parts.append("## " + words.sentence().rstrip(".").capitalize())
        for _ in range(rng.randint(2, 5)):
            roll = rng.random()
            if roll < 0.35:
                parts.append(words.paragraph(rng.randint(2, 5)))
            elif roll < 0.55:
                parts.append(
                    "\n".join(
                        f"- **{words.fill('{f}')}**: {words.sentence()} See `{project.pick()}`."
                        for _ in range(rng.randint(3, 7))
                    )
                )
            elif roll < 0.65:
                parts.append("\n".join(f"{n}. {words.sentence()}" for n in range(1, rng.randint(3, 8))))
            elif roll < 0.85:
                code = "\n".join(project.module(rng.randint(8, 30)))
                parts.append(f"```python\n{code}\n```")
            elif roll < 0.93:
                rows = [
                    f"| `{words.fill('{f}')}` | {rng.randint(1, 999)} ms | {words.sentence()} |"
                    for _ in range(rng.randint(3, 8))
                ]
                parts.append("| Step | Time | Note |\n| --- | ---: | --- |\n" + "\n".join(rows))
            else:
                parts.append("> " + words.paragraph(2))
        text = "\n\n".join(parts)
        pieces = TOKEN.findall(text)
        if len(pieces) >= tokens:
            return pieces[:tokens]


# --- one run ----------------------------------------------------------------------------------


def _delta(text: str) -> Any:
    from pi_tui.agent.events import AgentEvent
    from pi_tui.ai.events import StreamEvent

    return AgentEvent("message_update", {"assistantMessageEvent": StreamEvent("text_delta", 0, text)})


async def stream(
    deltas: list[str],
    cwd: Path,
    session: Path | None,
    parts: list[tuple[str, int, int, int]],
    profile_windows: bool,
) -> dict[str, Any]:
    from pi_tui.agent.events import AgentEvent
    from pi_tui.messages import AssistantMessage, TextContent

    app = make_pi_app(cwd, session)
    probe = FrameProbe(app)
    result: dict[str, Any] = {}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        chat, feed = app.chat, app.feed
        result["mounted_before"] = chat.mounted_count
        result["items_before"] = len(chat.items)

        def message(text: str = "", stop: str | None = None) -> AssistantMessage:
            content = [TextContent(text=text)] if text else []
            return AssistantMessage(
                content=content, api="offline", provider="offline", model="demo", stop_reason=stop
            )

        feed.handle(AgentEvent("agent_start", {}))
        feed.handle(AgentEvent("message_start", {"message": message()}))
        view = feed.reply_view

        def taken() -> int:
            """Characters the view has drawn (frozen chunks and the live tail); a frame's text
            is counted once its drawing is over."""
            return 0 if view._drawing.locked() else view._frozen + len(view._live_text)

        await settle()
        probe.force()

        events = [_delta(text) for text in deltas]
        handle = feed.handle
        fed = 0
        windows: dict[str, list[tuple[int, float, float]]] = {}  # name -> [(tokens, wall s, cpu s)]
        first_prof = Profiled() if profile_windows else None
        last_prof = Profiled() if profile_windows else None
        began = time.perf_counter()
        for name, start, stop, size in parts:
            prof = first_prof if name == "first" else last_prof if name == "last" else None
            steps = windows.setdefault(name, [])
            for low in range(start, stop, size):
                high = min(low + size, stop)
                if prof is not None:
                    prof.profile.enable()
                wall, cpu = time.perf_counter(), time.process_time()
                for index in range(low, high):
                    handle(events[index])
                    fed += len(deltas[index])
                while taken() < fed:
                    await asyncio.sleep(0)
                await settle()
                probe.force()
                steps.append((high - low, time.perf_counter() - wall, time.process_time() - cpu))
                if prof is not None:
                    prof.profile.disable()
        result["total"] = time.perf_counter() - began
        result["windows"] = windows
        result["blocks"] = len(view.children)
        result["widgets"] = len(list(view.walk_children()))
        result["screen_widgets"] = len(list(app.screen.walk_children()))

        text = "".join(deltas)
        begin = time.perf_counter()
        frames = probe.frames
        feed.handle(AgentEvent("message_end", {"message": message(text, "stop")}))
        feed.handle(AgentEvent("agent_end", {}))
        while view.live or view._live is not None:
            await asyncio.sleep(0)
        await settle()
        probe.force()
        await probe.wait(after=frames)
        result["finish"] = time.perf_counter() - begin
        result["profiles"] = (first_prof, last_prof)
        result["frames"] = probe.frames
    app.agent.manager.close()
    return result


def plan(
    tokens: int, per_frame: int, fast_forward: int, window: int = WINDOW, sample: int = SAMPLE
) -> list[tuple[str, int, int, int]]:
    """The stream as (window name, first token, end token, tokens a step) parts.

    The first and last ``window`` tokens, and ``sample`` tokens at 25/50/75 %, go ``per_frame``
    tokens a step; the rest is fast-forwarded ``fast_forward`` tokens a step (0: all ``per_frame``).
    """
    last = tokens - window
    if fast_forward <= 0:
        middle = ("middle", window, last, per_frame)
        return [("first", 0, window, per_frame), middle, ("last", last, tokens, per_frame)]
    parts = [("first", 0, window, per_frame)]
    position = window
    for share in (25, 50, 75) if sample else ():
        begin = max(position, tokens * share // 100)
        if begin + sample > last:
            break
        parts.append(("fast-forward", position, begin, fast_forward))
        parts.append((f"at {share} %", begin, begin + sample, per_frame))
        position = begin + sample
    parts.append(("fast-forward", position, last, fast_forward))
    parts.append(("last", last, tokens, per_frame))
    return [part for part in parts if part[2] > part[1]]


def cost(steps: list[tuple[int, float, float]]) -> tuple[float, float, int]:
    """(wall ms per token, cpu ms per token, tokens) of some steps."""
    tokens = sum(count for count, _, _ in steps)
    wall = sum(step_wall for _, step_wall, _ in steps)
    cpu = sum(step_cpu for _, _, step_cpu in steps)
    return wall / tokens * 1000, cpu / tokens * 1000, tokens


def growth(first: Profiled, last: Profiled, window: int, top: int = 12) -> str:
    """Functions whose own time grew the most from the first window to the last."""
    a = pstats.Stats(first.profile).stats  # type: ignore[attr-defined]
    b = pstats.Stats(last.profile).stats  # type: ignore[attr-defined]
    total_a = sum(entry[2] for entry in a.values())
    total_b = sum(entry[2] for entry in b.values())
    rows = []
    for key, entry in b.items():
        before = a.get(key, (0, 0, 0.0, 0.0, None))
        rows.append((entry[2] - before[2], before[2], entry[2], before[1], entry[1], key))
    rows.sort(reverse=True)
    grown = max(total_b - total_a, 1e-9)
    out = [
        f"  own-time growth from the first {window:,} tokens ({total_a * 1000:.0f} ms) to the last "
        f"{window:,} ({total_b * 1000:.0f} ms), top {top}:",
        f"  {'+ms':>8} {'of growth':>9} {'first ms':>9} {'last ms':>9} {'calls first / last':>21}  function",
    ]
    for delta, before, after, calls_a, calls_b, (filename, lineno, name) in rows[:top]:
        out.append(
            f"  {delta * 1000:8.1f} {delta / grown:9.1%} {before * 1000:9.1f} {after * 1000:9.1f} "
            f"{calls_a:>10,} / {calls_b:<8,}  {name} ({where(filename, lineno)})"
        )
    return "\n".join(out)


# --- main ---------------------------------------------------------------------------------------


def report(label: str, result: dict[str, Any], per_frame: int) -> bool:
    windows = result["windows"]
    first_wall, first_cpu, _ = cost(windows["first"])
    last_wall, last_cpu, _ = cost(windows["last"])
    ratio = last_wall / first_wall
    ok = ratio < TARGET_RATIO
    print(
        f"{label}: {result['items_before']} items in the chat ({result['mounted_before']} mounted); at the "
        f"end the live reply held {result['blocks']:,} chunk widgets, {result['widgets']:,} widgets "
        f"(screen: {result['screen_widgets']:,}); {result['frames']:,} frames drawn"
    )
    note = f"{per_frame} tokens a frame"
    line(f"  first {WINDOW:,} tokens", f"{first_wall:8.2f} ms/token", f"cpu {first_cpu:.2f}; {note}")
    line(f"  last {WINDOW:,} tokens", f"{last_wall:8.2f} ms/token", f"cpu {last_cpu:.2f}; {note}")
    line("  ratio last / first", f"{ratio:8.2f} x ", target(f"< {TARGET_RATIO} x", ok))
    for name, steps in windows.items():
        if name.startswith("at "):
            wall, cpu, count = cost(steps)
            line(f"  {count} tokens {name} of the reply", f"{wall:8.2f} ms/token", f"cpu {cpu:.2f}")
    line(
        "  sustained rate, first / last window", f"{1000 / first_wall:8.0f} / {1000 / last_wall:.0f} tokens/s"
    )
    total = sum(cost(steps)[2] for steps in windows.values())
    if "fast-forward" in windows:
        wall, _, count = cost(windows["fast-forward"])
        steps = len(windows["fast-forward"])
        line(
            "  whole reply (middle fast-forwarded)",
            f"{total / result['total']:8.0f} tokens/s",
            f"{result['total']:.1f} s; fast-forward: {count:,} tokens in {steps} steps, "
            f"{wall * count / steps:.0f} ms a step",
        )
    else:
        line(
            f"  whole reply, {total:,} tokens",
            f"{total / result['total']:8.0f} tokens/s",
            f"{result['total']:.1f} s",
        )
    line("  finish (static rendering) + frame", f"{result['finish'] * 1000:8.1f} ms")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--per-frame", type=int, default=10, help="tokens streamed between two frames")
    parser.add_argument(
        "--fast-forward",
        type=int,
        default=1_000,
        help="tokens a step between the measured windows (0: stream everything --per-frame a step)",
    )
    parser.add_argument("--history", type=int, default=300, help="finished messages in the second run")
    parser.add_argument("--profile", action="store_true", help="print the profiles even when targets pass")
    parser.add_argument("--quick", action="store_true", help="6,000 tokens and a 100-message history")
    args = parser.parse_args(argv)
    if args.quick:
        args.tokens, args.history = min(args.tokens, 6_000), min(args.history, 100)
    root = isolate()
    cwd = root / "project"
    deltas = make_answer(args.tokens)
    text = "".join(deltas)
    session = root / f"history-{args.history}.jsonl"
    write_linear_session(session, args.history)
    print(
        f"answer: {len(deltas):,} tokens, {len(text):,} characters "
        f"({len(text) / len(deltas):.1f} a token), {text.count(chr(10)):,} lines, "
        f"{text.count('```') // 2} code blocks; {args.per_frame} tokens a frame; "
        f"Textual headless {SIZE[0]}x{SIZE[1]}"
    )
    all_ok = profiled = True
    for label, path in (("new session", None), (f"{args.history}-message session", session)):
        parts = plan(len(deltas), args.per_frame, args.fast_forward)
        result = asyncio.run(stream(deltas, cwd, path, parts, False))
        ok = report(label, result, args.per_frame)
        all_ok = all_ok and ok
        if args.profile or (not ok and profiled):
            # A shorter second run: windows of PROFILE_WINDOW tokens, the rest in big steps.
            profiled = False
            parts = plan(len(deltas), args.per_frame, max(args.fast_forward, 1_000), PROFILE_WINDOW, 0)
            first, last = asyncio.run(stream(deltas, cwd, path, parts, True))["profiles"]
            title = f"  cProfile of the last {PROFILE_WINDOW} tokens ({label}, second run)"
            print(hot_spots(last.profile, top=12, title=title))
            print(growth(first, last, PROFILE_WINDOW))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
