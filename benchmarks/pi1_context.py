"""Context building with pi 1.x's entries on a 50,000-entry session (issue 27's speed point).

The session is session_load.py's generated one (same seed, same shapes), without its compaction
so that the whole active path is the context. Beside it a pi 1.x
variant is written: a leading system message with pi's prompt sections and four tool
declarations, a system message that removes ``write`` every 5,000 entries of the active path
(re-adding it the next time), and 200 context edits after the leaf (half omit, half replace a
message of the active path). Both are opened read-only and their context built; each figure is
the best of 5 rounds (the two files in turn) after a warm-up.

Target: the pi 1.x variant's context costs no more than 10% over the plain file's before pi 1.x
support (0.36 s on the reference machine). Run the script on an older checkout to get that
figure (``PYTHONPATH=<checkout> python benchmarks/pi1_context.py``): it prints which pi_tui it
imported.

    python benchmarks/pi1_context.py [--entries 50000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from session_load import SessionGenerator, write_session

import pi_tui
from pi_tui.session import SessionManager

RUNS = 5
STAMP = "2026-11-26T10:00:00.000Z"


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": {}},
    }


def write_pi1_variant(plain: Path, out: Path, seed: int) -> tuple[int, int]:
    """``plain`` with system messages on its active path and context edits after its leaf;
    (system messages, edits) added."""
    entries = [orjson.loads(line) for line in plain.read_bytes().splitlines()]
    header, body = entries[0], entries[1:]
    by_id = {entry["id"]: entry for entry in body}
    path: list[dict[str, Any]] = []
    current: dict[str, Any] | None = body[-1]
    while current is not None:
        path.append(current)
        current = by_id.get(current["parentId"]) if current["parentId"] else None
    path.reverse()

    inserted: dict[str, dict[str, Any]] = {}  # id of the entry that gets a system parent -> it
    root = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "You are a coding agent.", "cwd": header.get("cwd", "/")},
        "toolsAdded": [_tool(name) for name in ("read", "bash", "edit", "write")],
        "timestamp": 1,
    }
    inserted[path[0]["id"]] = root
    for number, index in enumerate(range(5000, len(path), 5000)):
        change = "toolsRemoved" if number % 2 == 0 else "toolsAdded"
        tool = {"name": "write"} if change == "toolsRemoved" else _tool("write")
        inserted[path[index]["id"]] = {"role": "system", "content": "", change: [tool], "timestamp": 1}

    lines = [header]
    for entry in body:
        system = inserted.get(entry["id"])
        if system is not None:
            system_id = f"sys-{entry['id']}"
            lines.append(
                {
                    "type": "message",
                    "id": system_id,
                    "parentId": entry["parentId"],
                    "timestamp": STAMP,
                    "message": system,
                }
            )
            entry = {**entry, "parentId": system_id}
        lines.append(entry)

    rng = random.Random(seed)
    targets = [entry["id"] for entry in path if entry["type"] == "message"]
    parent = body[-1]["id"]
    edits = 200
    for number in range(edits):
        replacement = None if number % 2 == 0 else {"content": "[edited]"}
        edit_id = f"edit-{number}"
        lines.append(
            {
                "type": "context_edit",
                "id": edit_id,
                "parentId": parent,
                "timestamp": STAMP,
                "targetId": rng.choice(targets),
                "replacement": replacement,
            }
        )
        parent = edit_id
    out.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return len(inserted), edits


def context_seconds(path: Path) -> tuple[float, int]:
    """CPU time of one build_session_context on a fresh read-only open, and the message count."""
    manager = SessionManager.open(path, read_only=True)
    start = time.process_time()  # CPU time: steadier than the wall clock on a busy machine
    context = manager.build_session_context()
    return time.process_time() - start, len(context.messages)


def best_of_interleaved(paths: list[Path], rounds: int = RUNS) -> list[tuple[float, int]]:
    """The best time of each path over ``rounds`` rounds that take the paths in turn, after a
    warm-up of each: whichever file went first would otherwise pay for the heap's growth."""
    for path in paths:
        context_seconds(path)
    best: list[tuple[float, int]] = [(float("inf"), 0)] * len(paths)
    for _ in range(rounds):
        for index, path in enumerate(paths):
            seconds, count = context_seconds(path)
            best[index] = (min(best[index][0], seconds), count)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=20_260_302)
    args = parser.parse_args(argv)
    print(f"pi_tui from {Path(pi_tui.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="pi-tui-pi1-") as folder:
        plain = Path(folder) / "plain.jsonl"
        # Without its compaction, so the context is the whole active path (the costly case).
        write_session(SessionGenerator(args.entries, args.seed).generate(), plain, with_compaction=False)
        variant = Path(folder) / "pi1.jsonl"
        systems, edits = write_pi1_variant(plain, variant, args.seed)
        try:
            (seconds, messages), (seconds_v, messages_v) = best_of_interleaved([plain, variant])
        except Exception as error:  # an older checkout may not read pi 1.x entries at all
            print(f"pi 1.x variant: not built ({type(error).__name__}: {error})")
            return 0
        print(f"plain file ({args.entries:,} entries):       context {seconds:.3f} s, {messages:,} messages")
        print(
            f"pi 1.x variant (+{systems} system, +{edits} edits): context {seconds_v:.3f} s, "
            f"{messages_v:,} messages ({(seconds_v / seconds - 1) * 100:+.1f}% vs plain)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
