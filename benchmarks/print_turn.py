"""Wall time of a whole ``-p`` turn, process start to exit, against a loopback model server.

Measures, as medians over ``--runs`` runs:

1. ``pi-tui -p hi --no-session`` (our installed console script);
2. the same with the real pi, when installed (``--pi PATH/TO/cli.js``, default: the harness
   folder used for compatibility checks, ``/tmp/pi-harness``), run with node;
3. one pi-tui turn whose reply streams 20,000 chunks.

Both programs get a models.json whose provider points at the same server, so they do the same
work: start, read settings, send one request, stream the reply, print it, exit. Target (issue 4):
our median at most half of pi's.

Run: ``python benchmarks/print_turn.py [--runs 7] [--pi /path/to/pi/dist/cli.js]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bytecode import compile_pi_tui  # noqa: E402  (benchmarks/ is on sys.path)

from tests.support.model_server import ModelServer, Scripted  # noqa: E402

DEFAULT_PI = Path("/tmp/pi-harness/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")


def time_command(command: list[str], env: dict[str, str], cwd: Path, runs: int) -> tuple[float, str]:
    """Median wall seconds of ``command`` over ``runs`` runs (after one warm-up), and its output."""
    times: list[float] = []
    output = ""
    for run in range(runs + 1):
        started = time.perf_counter()
        result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - started
        if result.returncode != 0:
            raise RuntimeError(f"{command[0]} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
        output = result.stdout.strip()
        if run:
            times.append(elapsed)
    return statistics.median(times), output


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()  # launched pi-tui starts from .pyc files, as installed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pi", type=Path, default=DEFAULT_PI, help="pi's dist/cli.js (skipped if missing)")
    parser.add_argument("--chunks", type=int, default=20_000)
    args = parser.parse_args(argv)

    ours = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
    if not Path(ours).exists():
        print("pi-tui is not installed in this environment (pip install .)")
        return 2
    with tempfile.TemporaryDirectory() as scratch, ModelServer() as server:
        home = Path(scratch)
        agent = home / "agent"
        project = home / "project"
        agent.mkdir()
        project.mkdir()
        models = server.models_json(provider="bench", api="openai-completions")
        (agent / "models.json").write_text(json.dumps(models))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(home), "PI_OFFLINE": "1"}
        env["PI_SKIP_VERSION_CHECK"] = "1"

        command = [ours, "--provider", "bench", "--model", "m", "--no-session", "-p", "hi"]
        our_median, our_output = time_command(command, env, project, args.runs)
        print(f"pi-tui -p hi --no-session: median {our_median * 1000:7.0f} ms ({our_output!r})")

        pi_median = None
        node = shutil.which("node")
        if args.pi.exists() and node:
            pi_command = [
                node,
                str(args.pi),
                "--provider",
                "bench",
                "--model",
                "m",
                "--no-session",
                "-p",
                "hi",
            ]
            pi_median, pi_output = time_command(pi_command, env, project, args.runs)
            print(f"pi     -p hi --no-session: median {pi_median * 1000:7.0f} ms ({pi_output!r})")
            ratio = our_median / pi_median
            verdict = "PASS" if ratio <= 0.5 else "MISS"
            print(f"ratio pi-tui / pi: {ratio:.2f}   target <= 0.5: {verdict}")
        else:
            print(f"pi not found at {args.pi} (or no node): comparison skipped")

        words = [f"w{number} " for number in range(args.chunks)]
        server.default = Scripted(text="".join(words))  # streamed one word per delta
        long_median, long_output = time_command(command, env, project, max(3, args.runs // 2))
        print(
            f"pi-tui turn streaming {args.chunks:,} chunks: median {long_median * 1000:7.0f} ms "
            f"({len(long_output):,} characters printed)"
        )
    return 0 if pi_median is None or our_median / pi_median <= 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
