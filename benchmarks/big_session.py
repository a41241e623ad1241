"""Speed at scale (issue 12): a 50,000-entry session, pi-tui beside the real pi 0.73.1.

The session is generated here, deterministically, in pi's exact JSON shapes:

- 50,000 entries after the header: user prompts and assistant replies of about 2 KB of text,
  every fifth turn a ``read`` tool call with a 2 KB result;
- a branch every 250 entries (the next prompt goes under the reply six entries back, so the
  file holds 200 abandoned branches; every fourth one carries a branch summary);
- a label every 500 entries, on a recent entry;
- one compaction in the middle of the active path, keeping the last ~20 entries before it.

Rows printed (medians after one warm-up; pi only where pi has the feature):

1. ``--session BIG -p hi``: wall time and peak RSS, pi-tui and pi, and the ratio;
2. ``SessionManager.open`` + ``build_session_context`` against the floor (read the bytes and
   ``orjson.loads`` every line), and the ratio;
3. interactive ``--session BIG`` in tmux until the last reply's closing words are on screen,
   pi-tui and pi.

Targets: (1) <= 1.0 s and <= 200 MB; (2) <= 2x the floor; (3) <= 0.7 s.

Run: ``python benchmarks/big_session.py [--entries 50000] [--runs 3] [--no-pi] [--keep DIR]``.
The generator alone: ``python benchmarks/big_session.py --write FILE``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bytecode import compile_pi_tui  # noqa: E402  (benchmarks/ is on sys.path)

from tests.support.model_server import ModelServer  # noqa: E402
from tests.support.real_pi import pi_package_dir  # noqa: E402
from tests.support.tmux import TmuxPane  # noqa: E402

ENTRIES = 50_000
BRANCH_EVERY = 250
LABEL_EVERY = 500
BRANCH_BACK = 6
TEXT_BYTES = 2_000
START_MS = 1_772_442_000_000  # 2026-03-02T09:00:00Z
LAST_WORDS = "closing-words-of-the-last-reply"
"""The end of the last reply: interactive open is done when this is on screen."""

PROVIDER, API, MODEL = "bench", "openai-completions", "m"

WORDS = [
    "session",
    "parser",
    "config",
    "buffer",
    "token",
    "request",
    "response",
    "cache",
    "index",
    "record",
    "payload",
    "handler",
    "widget",
    "layout",
    "theme",
    "message",
    "stream",
    "chunk",
    "provider",
    "model",
    "context",
    "result",
    "node",
    "tree",
    "label",
    "writer",
    "reader",
    "lock",
    "prompt",
    "editor",
    "history",
    "keymap",
    "render",
    "diff",
    "patch",
    "tool",
    "schema",
    "load",
    "parse",
    "build",
    "flush",
    "resolve",
    "validate",
    "encode",
    "decode",
    "apply",
    "collect",
    "merge",
    "split",
    "update",
    "compute",
    "format",
]


class _Generator:
    """Appends entries on a moving leaf; every id, time and text comes from one seeded RNG."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ms = START_MS
        self.leaf: str | None = None
        self.lines: list[bytes] = []
        self.path: list[str] = []
        """The active path so far (ids), so branches and the compaction can point back."""
        self.used: set[str] = set()

    def text(self, size: int, tail: str = "") -> str:
        words: list[str] = []
        length = 0
        while length < size:
            word = self.rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        body = " ".join(words)
        return f"{body} {tail}" if tail else body

    def _id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate

    def add(self, kind: str, fields: dict[str, Any], parent: str | None = None) -> str:
        self.ms += self.rng.randint(500, 20_000)
        entry_id = self._id()
        stamp = datetime.fromtimestamp(self.ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        entry = {
            "type": kind,
            "id": entry_id,
            "parentId": self.leaf if parent is None else parent,
            "timestamp": f"{stamp}{self.ms % 1000:03d}Z",
            **fields,
        }
        self.lines.append(orjson.dumps(entry))
        if parent is not None:
            cut = self.path.index(parent) + 1 if parent in self.path else len(self.path)
            del self.path[cut:]
        self.path.append(entry_id)
        self.leaf = entry_id
        return entry_id

    def usage(self, output: int) -> dict[str, Any]:
        fresh = self.rng.randint(50, 3_000)
        cost = {"input": fresh * 3e-6, "output": output * 15e-6, "cacheRead": 0, "cacheWrite": 0}
        cost["total"] = cost["input"] + cost["output"]
        return {
            "input": fresh,
            "output": output,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": fresh + output,
            "cost": cost,
        }

    def message(self, message: dict[str, Any], parent: str | None = None) -> str:
        message["timestamp"] = self.ms
        return self.add("message", {"message": message}, parent)

    def user(self, parent: str | None = None) -> str:
        content = [{"type": "text", "text": self.text(self.rng.randint(80, 400))}]
        return self.message({"role": "user", "content": content}, parent)

    def assistant(self, content: list[dict[str, Any]], stop: str = "stop") -> str:
        return self.message(
            {
                "role": "assistant",
                "content": content,
                "api": API,
                "provider": PROVIDER,
                "model": MODEL,
                "usage": self.usage(TEXT_BYTES // 4),
                "stopReason": stop,
            }
        )


def generate(path: Path, entries: int = ENTRIES, seed: int = 20_261_124, cwd: str = "/tmp/project") -> int:
    """Write the issue's big session to ``path``; returns its size in bytes."""
    gen = _Generator(seed)
    header = {
        "type": "session",
        "version": 3,
        "id": str(uuid.UUID(int=gen.rng.getrandbits(128), version=4)),
        "timestamp": "2026-03-02T08:59:59.000Z",
        "cwd": cwd,
    }
    gen.add("model_change", {"provider": PROVIDER, "modelId": MODEL})
    gen.add("thinking_level_change", {"thinkingLevel": "off"})
    compacted = False
    turn = 0
    branches = 0
    next_branch = BRANCH_EVERY
    next_label = LABEL_EVERY
    while len(gen.lines) < entries - 3:
        count = len(gen.lines)
        parent = None
        if count >= next_branch and len(gen.path) > BRANCH_BACK + 2:
            next_branch += BRANCH_EVERY
            branches += 1
            parent = gen.path[-BRANCH_BACK - 1]
            if branches % 4 == 0:
                summary = "The user explored another branch before coming back here.\n\n" + gen.text(600)
                gen.add("branch_summary", {"fromId": parent, "summary": summary, "fromHook": False}, parent)
                parent = None
        if count >= next_label:
            next_label += LABEL_EVERY
            target = gen.path[-gen.rng.randint(1, min(8, len(gen.path)))]
            gen.add("label", {"targetId": target, "label": f"checkpoint-{count // LABEL_EVERY}"})
        if not compacted and len(gen.lines) >= entries // 2:
            compacted = True
            kept = gen.path[-20]
            summary = "## Goal\n" + gen.text(800) + "\n\n## Progress\n" + gen.text(1_200)
            fields = {"summary": summary, "firstKeptEntryId": kept, "tokensBefore": 180_000}
            gen.add("compaction", {**fields, "details": {"readFiles": [], "modifiedFiles": []}})
        turn += 1
        gen.user(parent)
        if turn % 5 == 0:
            call_id = f"call_{gen.rng.getrandbits(96):024x}"
            arguments = {"path": f"src/{gen.rng.choice(WORDS)}.py"}
            gen.assistant(
                [{"type": "toolCall", "id": call_id, "name": "read", "arguments": arguments}], "toolUse"
            )
            result = [{"type": "text", "text": gen.text(TEXT_BYTES)}]
            gen.message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "content": result,
                    "isError": False,
                }
            )
        gen.assistant([{"type": "text", "text": gen.text(TEXT_BYTES)}])
    gen.user()
    gen.assistant([{"type": "text", "text": gen.text(TEXT_BYTES, LAST_WORDS)}])
    data = b"\n".join([orjson.dumps(header), *gen.lines]) + b"\n"
    path.write_bytes(data)
    return len(data)


# --- measuring ----------------------------------------------------------------------------------


def median_runs(run: Callable[[], tuple[float, int]], runs: int) -> tuple[float, int]:
    run()
    results = [run() for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def peak_rss_of(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (bytes) and stdout of one run of ``command``."""
    timer = "/usr/bin/time"  # GNU time: the child's own peak RSS, not the largest of all children
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        began = time.perf_counter()
        result = subprocess.run(
            [timer, "-f", "%M", "-o", report.name, *command],
            env=env,
            cwd=cwd,
            capture_output=True,
            timeout=600,
        )
        elapsed = time.perf_counter() - began
        if result.returncode != 0:
            raise RuntimeError(f"{command[:2]} failed ({result.returncode}): {result.stderr.decode()[-800:]}")
        kilobytes = int(report.read().strip().splitlines()[-1])
    return elapsed, kilobytes * 1024, result.stdout.decode()


def floor_and_open(path: Path, runs: int) -> tuple[float, float]:
    """Best floor (read + orjson every line) and best open + build_session_context, in-process."""
    from pi_tui.session.manager import SessionManager

    def floor() -> float:
        gc.disable()  # the fastest honest floor: pi-tui pauses the collector while reading too
        began = time.perf_counter()
        with open(path, "rb") as handle:
            rows = [orjson.loads(line) for line in handle.read().splitlines() if line]
        elapsed = time.perf_counter() - began
        gc.enable()
        del rows
        return elapsed

    def open_build() -> float:
        began = time.perf_counter()
        manager = SessionManager.open(path, read_only=True)
        manager.build_session_context()
        elapsed = time.perf_counter() - began
        manager.close()
        return elapsed

    best_floor = best_open = float("inf")
    for _ in range(runs + 1):
        gc.collect()
        best_floor = min(best_floor, floor())
        gc.collect()
        best_open = min(best_open, open_build())
    return best_floor, best_open


def interactive_open(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 120.0) -> float:
    """Seconds from starting ``argv`` in a tmux pane to :data:`LAST_WORDS` being on screen."""
    wanted = {key: value for key, value in env.items() if key.startswith(("PI_", "HOME"))}
    began = time.perf_counter()
    pane = TmuxPane.start(argv, cwd=cwd, env=wanted, width=120, height=40)
    try:
        deadline = began + timeout
        while time.perf_counter() < deadline:
            screen = pane.capture() or ""
            if LAST_WORDS in screen:
                return time.perf_counter() - began
            time.sleep(0.01)
        raise RuntimeError(f"{argv[0]}: the last reply never showed up:\n{pane.capture()}")
    finally:
        pane.kill()
        time.sleep(0.3)


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()  # launched pi-tui starts from .pyc files, as installed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=ENTRIES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-pi", action="store_true", help="leave out the real pi")
    parser.add_argument("--no-tmux", action="store_true", help="leave out the interactive row")
    parser.add_argument("--keep", type=Path, help="keep the generated files in this folder")
    parser.add_argument("--write", type=Path, help="only write the session to this file and exit")
    args = parser.parse_args(argv)

    if args.write:
        size = generate(args.write, args.entries)
        print(f"wrote {args.write} ({size / 1e6:.1f} MB, {args.entries:,} entries)")
        return 0

    ours = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
    node = shutil.which("node")
    with_pi = not args.no_pi and node is not None and shutil.which("npm") is not None
    pi_cli = pi_package_dir() / "dist" / "cli.js" if with_pi else Path("-")  # npm-installs it once
    work = args.keep or Path(tempfile.mkdtemp(prefix="pi-tui-big-"))
    work.mkdir(parents=True, exist_ok=True)
    project = work / "project"
    agent = work / "agent"
    project.mkdir(exist_ok=True)
    agent.mkdir(exist_ok=True)
    big = work / "big.jsonl"
    began = time.perf_counter()
    size = generate(big, args.entries, cwd=str(project))
    took = time.perf_counter() - began
    print(f"session: {args.entries:,} entries, {size / 1e6:.1f} MB ({took:.1f} s to write)")
    print(f"pi: {'node ' + str(pi_cli) if with_pi else 'left out'}")
    print()
    print("| work | pi 0.73.1 | pi-tui | ratio | target |")
    print("|---|---|---|---|---|")
    try:
        with ModelServer() as server:
            (agent / "models.json").write_text(json.dumps(server.models_json(provider=PROVIDER, api=API)))
            env = {
                **os.environ,
                "PI_CODING_AGENT_DIR": str(agent),
                "HOME": str(work),
                "PI_OFFLINE": "1",
                "PI_SKIP_VERSION_CHECK": "1",
            }

            def print_turn(program: list[str]) -> tuple[float, int]:
                copy = work / "turn.jsonl"
                shutil.copyfile(big, copy)
                args_ = ["--provider", PROVIDER, "--model", MODEL, "--session", str(copy), "-p", "hi"]
                elapsed, rss, _ = peak_rss_of([*program, *args_], env, project)
                server.clear_requests()  # a recorded 36 MB request is ~150 MB of objects: drop it
                gc.collect()
                return elapsed, rss

            ours_p = median_runs(lambda: print_turn([ours]), args.runs)
            pi_p = median_runs(lambda: print_turn([node, str(pi_cli)]), args.runs) if with_pi else None
            _row(
                f"`--session BIG -p hi` ({args.entries // 1000}k entries, {size / 1e6:.0f} MB)",
                pi_p,
                ours_p,
                "<= 1.0 s, <= 200 MB",
                ours_p[0] <= 1.0 and ours_p[1] <= 200e6,
            )

            floor, opened = floor_and_open(big, args.runs)
            print(
                "| open + build_session_context vs read + orjson.loads | - "
                f"| {opened:.2f} s vs {floor:.2f} s "
                f"| {opened / floor:.1f}x | <= 2x {_ok(opened <= 2 * floor)} |"
            )

            if not args.no_tmux and shutil.which("tmux"):

                def interactive(program: list[str]) -> tuple[float, int]:
                    copy = work / "open.jsonl"
                    shutil.copyfile(big, copy)
                    argv_ = [*program, "--provider", PROVIDER, "--model", MODEL, "--session", str(copy)]
                    return interactive_open(argv_, env, project), 0

                ours_i = median_runs(lambda: interactive([ours]), args.runs)
                pi_i = median_runs(lambda: interactive([node, str(pi_cli)]), 1) if with_pi else None
                _row(
                    "interactive `--session BIG` until the last reply is on screen (tmux)",
                    pi_i,
                    ours_i,
                    "<= 0.7 s",
                    ours_i[0] <= 0.7,
                    rss=False,
                )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _row(
    label: str,
    pi: tuple[float, int] | None,
    ours: tuple[float, int],
    goal: str,
    ok: bool,
    rss: bool = True,
) -> None:
    def cell(value: tuple[float, int] | None) -> str:
        if value is None:
            return "-"
        return f"{value[0]:.2f} s, {value[1] / 1e6:.0f} MB" if rss else f"{value[0]:.2f} s"

    ratio = f"{ours[0] / pi[0]:.2f}" if pi else "-"
    print(f"| {label} | {cell(pi)} | {cell(ours)} | {ratio} | {goal} {_ok(ok)} |", flush=True)


def _ok(ok: bool) -> str:
    return "(met)" if ok else "(MISSED)"


if __name__ == "__main__":
    raise SystemExit(main())
