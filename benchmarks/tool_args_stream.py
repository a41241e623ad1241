"""Streaming a tool call's JSON arguments: total cost of the partial parses, before and after.

Every ``toolcall_delta`` asks :class:`pi_tui.ai.partial_json.PartialJson` for the arguments "as
far as they go". The previous implementation re-parsed the whole text per delta and walked back
over the open string in Python, so a ``write`` of N bytes in small deltas cost O(N²). This prints,
for each case, the old time (the previous algorithm, kept in the unit test as the reference) and
the new one, best of ``--runs``; old times above ``--old-limit`` bytes of arguments streamed in
deltas are extrapolated quadratically from the largest measured size (marked ``~``), because
measuring them takes minutes.

The "edit call" rows stream one object with thousands of small edits: each answer is a fresh
copy of the open ``edits`` list, so that case stays O(edits) per delta (C-speed list copy).

Target (issue 12): 1 MB in 100-char deltas well under 1 s; 10 MB in one event < 0.2 s.
Run: ``python benchmarks/tool_args_stream.py [--runs 3] [--old-limit 200000]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_tui.ai.partial_json import PartialJson  # noqa: E402
from tests.support.partial_json_reference import Reference  # noqa: E402

KB = 1000
LINE = 'def handler(event):\n    return {"name": event["name"], "path": "caf\u00e9\\\\x"}  # \u2603\n'


def write_args(size: int) -> str:
    """A ``write`` call whose ``content`` makes the arguments about ``size`` characters."""
    content = (LINE * (size // len(LINE) + 1))[:size]
    text = json.dumps({"path": "src/generated.py", "content": content})
    return text[: size - 2] + text[-2:] if len(text) > size else text


def edit_args(size: int) -> str:
    """An ``edit`` call with many small edits (a delta crosses member boundaries all the time)."""
    edits, text = [], ""
    while len(text) < size:
        n = len(edits)
        edits.append({"oldText": f"value_{n} = old({n})", "newText": f"value_{n} = new({n}, 'x')"})
        if n % 64 == 0:
            text = json.dumps({"path": "src/app.py", "edits": edits})
    return json.dumps({"path": "src/app.py", "edits": edits})


def run(parser_type: Callable[[], Any], pieces: list[str]) -> float:
    parser = parser_type()
    started = time.perf_counter()
    for piece in pieces:
        parser.feed(piece)
    parser.final() if hasattr(parser, "final") else None
    return time.perf_counter() - started


def best(parser_type: Callable[[], Any], pieces: list[str], runs: int) -> float:
    return min(run(parser_type, pieces) for _ in range(runs))


def deltas(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=3)
    options.add_argument("--old-limit", type=int, default=200 * KB)
    args = options.parse_args()

    rows: list[tuple[str, str, float]] = []
    for label, maker in (("write call", write_args), ("edit call (many edits)", edit_args)):
        measured: tuple[int, float] | None = None
        for size in (50 * KB, 200 * KB, 1000 * KB, 10_000 * KB):
            text = maker(size)
            pieces = deltas(text, 100)
            new = best(PartialJson, pieces, args.runs)
            if size <= args.old_limit:
                old = best(Reference, pieces, 1)
                old_text = f"{old:.2f} s"
                measured = (len(text), old)
            else:
                assert measured is not None
                old_text = f"~{measured[1] * (len(text) / measured[0]) ** 2:.0f} s"
            name = f"{label}, {_size(size)} args in 100-char deltas"
            rows.append((name, old_text, new))
    for label, cut in (("one event", None), ("two events, cut mid-string", 0.6)):
        text = write_args(10_000 * KB)
        pieces = [text] if cut is None else [text[: int(len(text) * cut)], text[int(len(text) * cut) :]]
        old = best(Reference, pieces, args.runs)
        new = best(PartialJson, pieces, args.runs)
        rows.append((f"write call, 10 MB args in {label}", f"{old:.2f} s", new))

    print("| case | old -> new |")
    print("|---|---|")
    for name, old_text, new in rows:
        print(f"| {name} | {old_text} -> {new:.3f} s |")


def _size(size: int) -> str:
    return f"{size // 1000} KB" if size < 1000 * KB else f"{size // (1000 * KB)} MB"


if __name__ == "__main__":
    main()
