"""Issue 12's whole table in one run: every "speed at scale" row, pi-tui beside the real pi.

Runs the scripts that measure each row, one after another in their own processes (so one's
memory does not weigh on the next), and prints the table rows they print, in the issue's order:

1. ``big_session.py``: ``--session BIG -p hi``; open + context vs the parse floor; interactive
   open until the last reply is on screen (50k entries, branches, labels, a compaction);
2. ``sse_big_event.py``: one SSE event of 10 MB and of 100 MB;
3. ``big_file_tools.py``: ``read`` of a 2 GB text file; the grep tool's Python fallback over a
   folder holding it;
4. ``resume_index.py``: ``/resume`` and ``pi-tui -r`` over 2,000 sessions / 2 GB.

Each script's own output is kept in the folder given by ``--log`` (default: a temp folder).

Run: ``python benchmarks/scale_table.py [--quick] [--no-pi]`` (``--quick``: smaller inputs).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def steps(quick: bool, no_pi: bool) -> list[tuple[str, list[str]]]:
    pi = ["--no-pi"] if no_pi else []
    pi_read = [] if no_pi else ["--pi"]
    return [
        ("big_session", ["big_session.py", *(["--entries", "10000"] if quick else []), *pi]),
        ("sse_big_event", ["sse_big_event.py", *(["--quick"] if quick else [])]),
        ("big_file_tools", ["big_file_tools.py", *(["--size-mb", "200"] if quick else []), *pi_read]),
        ("resume_index", ["resume_index.py", *(["--quick"] if quick else []), *pi]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs everywhere")
    parser.add_argument("--no-pi", action="store_true", help="leave out the real pi")
    parser.add_argument("--log", type=Path, help="keep each script's whole output here")
    args = parser.parse_args(argv)
    log = args.log or Path(tempfile.mkdtemp(prefix="pi-tui-scale-"))
    log.mkdir(parents=True, exist_ok=True)
    failed = 0
    tables: list[tuple[str, list[str]]] = []
    for name, command in steps(args.quick, args.no_pi):
        began = time.perf_counter()
        script = [sys.executable, str(HERE / command[0]), *command[1:]]
        done = subprocess.run(script, capture_output=True, text=True)
        (log / f"{name}.txt").write_text(done.stdout + done.stderr)
        took = time.perf_counter() - began
        table = [line for line in done.stdout.splitlines() if line.startswith("|")]
        status = "ok" if done.returncode in (0, 1) else f"exit {done.returncode}"  # 1: a target missed
        print(f"{name}: {len(table)} table lines in {took:.0f} s ({status}; output in {log / name}.txt)")
        failed += done.returncode not in (0, 1)
        tables.append((name, table))
    for name, table in tables:
        print(f"\n{name}:")
        print("\n".join(table) if table else "(no rows: see its output)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
