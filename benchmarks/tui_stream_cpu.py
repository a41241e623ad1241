"""CPU that a streamed reply costs: the installed ``pi-tui`` beside the real pi 0.73.1.

Both programs run interactively in tmux at 120x40 with a scratch ``PI_CODING_AGENT_DIR`` whose
``models.json`` points at the loopback model server (tests/support/model_server.py, in this
process). The server answers one prompt with the same scripted stream for both: a markdown
answer (headings, paragraphs, bullet and numbered lists, fenced code) cut into ``--deltas``
(2,000) text deltas of ``--delta-chars`` (16) characters, one every ``--interval-ms`` (2 ms).

For each run the CPU time (user + system) of the program's whole process tree is read from
``/proc`` right before the prompt is typed and again as soon as the reply's last words are on
the screen (a condition polled on tmux's pane, not a clock), so start-up is excluded. Printed:
CPU seconds, wall seconds from Enter to the last words, and pi-tui's CPU over pi's.

By default the measured reply is the program's first. With ``--warm-up`` a short reply (a list
and a code block) streams first and the second reply is measured: a reply's cost in a session
that is already running, without what either program does once per process.

Each side runs ``--runs`` (3) times, alternating pi, pi-tui, pi, ... so that both see the same
load on a shared machine; the medians and the ratio of the medians are printed, and also the
ratio of each back-to-back pair. Figures, not a timed test: the target is a ratio <= 1.0.
``--py-spy FILE`` samples pi-tui while it streams and prints its hot spots; ``--cprofile FILE``
runs it under cProfile (start-up and exit included).

Run: ``python benchmarks/tui_stream_cpu.py [--runs 3] [--deltas 2000] [--delta-chars 16]
[--interval-ms 2] [--warm-up] [--only pi-tui|pi] [--py-spy FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/x.py`
    sys.path.insert(0, str(ROOT))

from tests.support.model_server import ModelServer, RecordedRequest, Scripted  # noqa: E402
from tests.support.real_pi import pi_cli, pi_env, write_models_json  # noqa: E402
from tests.support.tmux import TmuxPane  # noqa: E402

MARKER = "Stream finished: zebra quartz 4242."
"""The answer's last words; their arrival on screen ends a measurement."""
PROMPT = "explain the plan"
WARM_UP_PROMPT = "say ready"
WARM_UP_END = "Warm-up over."
WARM_UP_REPLY = "Ready:\n\n- a list\n\n```python\nprint('ready')\n```\n\n" + WARM_UP_END
TICKS = os.sysconf("SC_CLK_TCK")
WORDS = tuple(
    " ".join(
        [
            "agent session branch stream render frame token widget buffer parser model reply entry",
            "layout cursor scroll chunk queue event delta footer status header block paragraph list",
            "value change cache file folder input output memory thread timer signal network request",
        ]
    ).split()
)


# --- the answer ----------------------------------------------------------------------------------


def make_answer(total: int, seed: int = 31) -> str:
    """Markdown of exactly ``total`` characters ending with :data:`MARKER` in its own paragraph
    (every code fence is closed before it, so the marker is plain text on both programs)."""
    rng = random.Random(seed)

    def sentence() -> str:
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 14))]
        return " ".join(words).capitalize() + "."

    def paragraph() -> str:
        return " ".join(sentence() for _ in range(rng.randint(2, 5)))

    parts = ["# " + sentence().rstrip("."), paragraph()]
    tail = "\n\n" + MARKER
    while sum(len(p) + 2 for p in parts) < total - 400:
        roll = rng.random()
        if roll < 0.15:
            parts.append("## " + sentence().rstrip("."))
        elif roll < 0.5:
            parts.append(paragraph())
        elif roll < 0.7:
            parts.append(
                "\n".join(f"- **{rng.choice(WORDS)}**: {sentence()}" for _ in range(rng.randint(3, 6)))
            )
        elif roll < 0.8:
            parts.append("\n".join(f"{n}. {sentence()}" for n in range(1, rng.randint(3, 6))))
        else:
            lines = [
                f"def {rng.choice(WORDS)}_{n}(value: int) -> int:\n    return value + {n}" for n in range(3)
            ]
            parts.append("```python\n" + "\n\n".join(lines) + "\n```")
    body = "\n\n".join(parts) + "\n\n"
    filler = ""
    while len(body) + len(filler) + len(tail) < total:
        filler += sentence() + " "
    filler = filler[: total - len(body) - len(tail)].rstrip()
    filler += "." * (total - len(body) - len(tail) - len(filler))
    text = body + filler + tail
    assert len(text) == total, (len(text), total)
    return text


# --- CPU of a process tree -------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, utime + stime + cutime + cstime in ticks) of one process, None when gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def tree_cpu(root: int) -> float:
    """CPU seconds used so far by ``root`` and every live descendant (children that ended and
    were waited for are in their parent's cutime/cstime)."""
    stats: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                stats[int(entry)] = found
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _) in stats.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(stats[pid][1] for pid in tree if pid in stats) / TICKS


# --- one run -------------------------------------------------------------------------------------


@dataclass
class Run:
    program: str
    cpu: float
    wall: float


def _quiet_screen(pane: TmuxPane, ready: str, timeout: float = 60.0) -> None:
    """Wait for ``ready`` on screen and then for the screen to stop changing (start-up over)."""
    pane.wait_for(lambda s: ready in s, f"{ready!r}", timeout)
    last, still = pane.capture(), 0
    while still < 10:  # 0.5 s of an unchanged screen
        time.sleep(0.05)
        now = pane.capture()
        still = still + 1 if now == last else 0
        last = now


def measure(
    program: str,
    server: ModelServer,
    work: Path,
    py_spy: Path | None = None,
    cprofile: Path | None = None,
    warm_up: bool = False,
) -> Run:
    """One prompt on a fresh agent dir: CPU and wall time from Enter to the marker on screen.

    With ``warm_up`` a short reply (a paragraph and a code block) is streamed first, so the
    figure is a reply's steady cost in a running session, without what a program does once per
    process on its first reply (pi-tui imports the markdown widget and builds its HTTP client then)."""
    folder = Path(tempfile.mkdtemp(prefix=f"{program}-", dir=work))
    agent, project, home = folder / "agent", folder / "project", folder / "home"
    for path in (agent, project, home):
        path.mkdir()
    if program == "pi":
        write_models_json(agent, server.base_url, model="m")
        argv = [*pi_cli("0.73.1"), "--provider", "loop", "--model", "m"]
        env = pi_env(agent, home=home, version="0.73.1")
        env = {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}
        ready = "m"  # any paint; then the screen settles
    else:
        (agent / "models.json").write_text(json.dumps(server.models_json(provider="loop")))
        script = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
        argv = [script, "--provider", "loop", "--model", "m"]
        if cprofile is not None:  # the whole run, start-up and exit included, with call counts
            argv = [sys.executable, "-m", "cProfile", "-o", str(cprofile), *argv]
        env = {
            "PI_CODING_AGENT_DIR": str(agent),
            "HOME": str(home),
            "PI_TUI_CACHE_DIR": str(folder / "cache"),
        }
        ready = "m"
    pane = TmuxPane.start(argv, cwd=project, env=env, width=120, height=40)
    try:
        _quiet_screen(pane, ready)
        shown = pane.tmux("display-message", "-p", "-t", pane.session, "#{pane_pid}", check=False)
        if shown.returncode != 0:
            raise RuntimeError(f"{program} ended before the prompt; it showed:\n{pane.last_screen}")
        pid = int(shown.stdout.strip())
        if warm_up:
            pane.type(WARM_UP_PROMPT)
            pane.wait_for(lambda s: WARM_UP_PROMPT in s, "the typed warm-up prompt")
            pane.press("Enter")
            pane.wait_for(lambda s: WARM_UP_END in s, "the warm-up reply", 60)
            _quiet_screen(pane, WARM_UP_END)
        pane.type(PROMPT)
        pane.wait_for(lambda s: PROMPT in s, "the typed prompt")
        spy = _start_py_spy(pid, py_spy) if py_spy is not None and program == "pi-tui" else None
        before, start = tree_cpu(pid), time.monotonic()
        pane.press("Enter")
        pane.wait_for(lambda s: MARKER in s, "the reply's last words", 120)
        wall = time.monotonic() - start
        after = tree_cpu(pid)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(30)
        if cprofile is not None and program == "pi-tui":
            pane.press("C-d")  # a clean exit writes the profile
            pane.wait_gone(30)
    finally:
        pane.kill()
    return Run(program, after - before, wall)


def _start_py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling the pi-tui process (its child when tmux ran a shell) into ``out``
    (collapsed stacks); started before the prompt, stopped at the marker."""
    target = pid
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _stat(int(entry))) is not None and found[0] == pid:
            target = int(entry)
    spy = subprocess.Popen(
        ["py-spy", "record", "--pid", str(target), "--format", "raw", "--rate", "250", "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # py-spy attaches
    return spy


def print_py_spy(out: Path, top: int = 30) -> None:
    """Inclusive and own shares of the sampled functions."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for raw in out.read_text().splitlines():
        stack, _, count = raw.rpartition(" ")
        frames = stack.split(";")
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            inclusive[frame] += int(count)
    print(f"py-spy: {total} samples")
    for title, counter in (("inclusive", inclusive), ("own", own)):
        print(f"-- {title}")
        for frame, count in counter.most_common(top):
            print(f"{100 * count / total:5.1f}%  {frame[:150]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--delta-chars", type=int, default=16)
    parser.add_argument("--interval-ms", type=float, default=2.0)
    parser.add_argument("--only", choices=("pi-tui", "pi"))
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="stream a short reply first and measure the second (a reply's cost in a running session)",
    )
    parser.add_argument("--cprofile", type=Path, help="run pi-tui under cProfile, writing this file")
    parser.add_argument(
        "--py-spy", type=Path, help="sample pi-tui with py-spy into this file and print its hot spots"
    )
    args = parser.parse_args(argv)
    answer = make_answer(args.deltas * args.delta_chars)
    programs = [args.only] if args.only else ["pi", "pi-tui"]

    def reply(request: RecordedRequest) -> Scripted:
        delay = args.interval_ms / 1000
        if WARM_UP_PROMPT in json.dumps((request.body or {}).get("messages", [])[-1:]):
            return Scripted(text=WARM_UP_REPLY, delta_size=args.delta_chars, event_delay=delay)
        return Scripted(text=answer, delta_size=args.delta_chars, event_delay=delay)

    work = Path(tempfile.mkdtemp(prefix="pi-tui-stream-cpu-"))
    runs: dict[str, list[Run]] = {p: [] for p in programs}
    print(
        f"{args.deltas} deltas of {args.delta_chars} chars every {args.interval_ms:g} ms "
        f"({len(answer):,} chars of markdown), tmux 120x40, {args.runs} runs each, alternating"
        + (", after a warm-up reply" if args.warm_up else ", the first reply")
    )
    try:
        with ModelServer(default=reply) as server:  # type: ignore[arg-type]
            for index in range(args.runs):
                for program in programs:
                    run = measure(program, server, work, args.py_spy, args.cprofile, args.warm_up)
                    runs[program].append(run)
                    print(
                        f"  run {index + 1} {program:7} CPU {run.cpu:6.2f} s   wall {run.wall:6.2f} s",
                        flush=True,
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for program in programs:
        cpus = [r.cpu for r in runs[program]]
        walls = [r.wall for r in runs[program]]
        print(
            f"{program:7} median CPU {statistics.median(cpus):6.2f} s   "
            f"median wall {statistics.median(walls):6.2f} s"
        )
    if len(programs) == 2:
        pairs = [t.cpu / p.cpu for p, t in zip(runs["pi"], runs["pi-tui"], strict=True) if p.cpu]
        median_ratio = statistics.median(r.cpu for r in runs["pi-tui"]) / statistics.median(
            r.cpu for r in runs["pi"]
        )
        print(
            f"ratio pi-tui/pi (medians) {median_ratio:.2f}x   "
            f"back-to-back pairs: {', '.join(f'{r:.2f}x' for r in pairs)}"
        )
        print("target <= 1.00x: " + ("met" if median_ratio <= 1.0 else "missed"))
    if args.py_spy is not None and args.py_spy.exists():
        print_py_spy(args.py_spy)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
