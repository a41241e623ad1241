"""Importing another agent's transcript (issue 18): a 100 MB Claude Code transcript.

The transcript is built from the real fixture ``yoavf-pomodoro-v2.0.24.jsonl`` repeated with
fresh uuids (each copy continues the last), up to ``--megabytes``. Rows: the first import (the
installed ``pi-tui import``, wall time and the entries written) and importing it again with
nothing new. Target: <= 3 s for 100 MB. Then listing: 2,000 Claude Code transcripts of one
folder beside 2,000 pi sessions of it, as ``/resume`` lists them (our sessions through the
resume index, warm and cold). Target: the transcripts take no longer than our own.

Run: ``python benchmarks/import_transcripts.py [--megabytes 100]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code" / "yoavf-pomodoro-v2.0.24.jsonl"


def build(target: Path, megabytes: int) -> int:
    lines = [json.loads(line) for line in SOURCE.read_text().splitlines() if line.strip()]
    size = 0
    last: str | None = None
    with target.open("w") as out:
        copy = 0
        while size < megabytes * 1_000_000:
            first = True
            for record in lines:
                record = dict(record)
                for key in ("uuid", "parentUuid"):
                    if isinstance(record.get(key), str):
                        record[key] = f"{copy}-{record[key]}"
                if first and record.get("uuid") and last is not None:
                    record["parentUuid"] = last
                    first = False
                if record.get("uuid") and not record.get("isSidechain"):
                    last = record["uuid"]
                text = json.dumps(record) + "\n"
                out.write(text)
                size += len(text)
            copy += 1
    return size


def listing(work: Path, count: int) -> None:
    """Time /resume's two lists for ``count`` sessions each (best of three, in this process)."""
    import re as regex

    from pi_tui.session.listing import list_sessions
    from pi_tui.transcripts.listing import transcript_infos

    project = work / "listed"
    project.mkdir()
    claude = work / "claude"
    folder = claude / "projects" / regex.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    transcript = (SOURCE.parent / "ccl-v2.1.42-rewind-branch.jsonl").read_bytes()
    ours = work / "agent" / "sessions" / "listed"
    ours.mkdir(parents=True)
    session = (
        ROOT.parent / "shared" / "fixtures" / "pi-sessions" / "02-tool-calls" / "session.jsonl"
    ).read_bytes()
    for number in range(count):
        (folder / f"{number:05d}.jsonl").write_bytes(transcript)
        (ours / f"2026-01-01T00-00-00-000Z_{number:05d}.jsonl").write_bytes(session)
    os.environ["CLAUDE_CONFIG_DIR"] = str(claude)
    os.environ["PI_TUI_CACHE_DIR"] = str(work / "cache")

    def best(run: object) -> float:
        times = []
        for _ in range(3):
            began = time.perf_counter()
            run()  # type: ignore[operator]
            times.append(time.perf_counter() - began)
        return min(times)

    began = time.perf_counter()
    list_sessions(ours)
    cold = time.perf_counter() - began
    warm = best(lambda: list_sessions(ours))
    began = time.perf_counter()
    transcript_infos(str(project))
    others_cold = time.perf_counter() - began
    others = best(lambda: transcript_infos(str(project)))
    ok = "met" if others <= warm * 1.2 and others_cold <= cold * 1.2 else "MISSED"
    label = f"list {count:,} pi sessions (resume index), first time / warm"
    print(f"| {label} | {cold:.2f} s / {warm:.3f} s | - |")
    label = f"list {count:,} Claude Code transcripts of the folder, first time / warm"
    print(f"| {label} | {others_cold:.2f} s / {others:.3f} s | no longer than ours: {ok} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--listed", type=int, default=2000)
    args = parser.parse_args(argv)
    script = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
    work = Path(tempfile.mkdtemp(prefix="pi-tui-import-"))
    try:
        source = work / "big.jsonl"
        size = build(source, args.megabytes)
        project = work / "project"
        project.mkdir()
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(work / "agent")}
        rows = []
        for label in ("first import", "again, nothing new"):
            began = time.perf_counter()
            done = subprocess.run(
                [script, "import", str(source)], cwd=project, env=env, capture_output=True, text=True
            )
            took = time.perf_counter() - began
            if done.returncode != 0:
                raise SystemExit(done.stderr)
            rows.append((label, took, done.stdout.strip()[:120]))
        print(f"transcript: {size / 1e6:.0f} MB")
        print()
        print("| work | time | target |")
        print("|---|---|---|")
        for label, took, _ in rows:
            ok = "met" if took <= 3.0 else "MISSED"
            print(f"| `pi-tui import` {label} | {took:.2f} s | <= 3 s: {ok} |")
        listing(work, args.listed)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
