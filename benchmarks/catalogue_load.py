"""What the built-in catalogue costs: start-up with it loaded, and filtering it.

The catalogue went from 51 hand-written models to the 1,643 of pi 1.5.2 (issue 33). Every run of
pi-tui loads it (the model registry is built before anything else), so this measures, as medians:

1. ``pi-tui --list-models`` (every model printed) and ``pi-tui --list-models sonnet``;
2. ``pi-tui -p hi --no-session`` against a loopback model server (print-mode start to exit);
3. in process: ``ModelRegistry()`` (read the catalogue, merge models.json), and one filter of
   every model by a query as the ``/model`` picker does per keystroke (``model_matches``), and
   ``registry.find`` of a fragment (``--model`` / ``/model <text>``).

Run: ``python benchmarks/catalogue_load.py [--runs 7]``.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bytecode import compile_pi_tui  # noqa: E402  (benchmarks/ is on sys.path)

from tests.support.model_server import ModelServer  # noqa: E402


def time_command(command: list[str], env: dict[str, str], cwd: Path, runs: int) -> tuple[float, str]:
    """Median wall seconds of ``command`` over ``runs`` runs (after one warm-up), and its output."""
    times: list[float] = []
    output = ""
    for run in range(runs + 1):
        started = time.perf_counter()
        result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - started
        if result.returncode != 0:
            raise RuntimeError(f"{command} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
        output = result.stdout
        if run:
            times.append(elapsed)
    return statistics.median(times), output


def time_call(call: Callable[[], object], runs: int) -> float:
    """Median seconds of ``call()`` over ``runs`` runs (after one warm-up)."""
    times: list[float] = []
    for run in range(runs + 1):
        started = time.perf_counter()
        call()
        if run:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()  # launched pi-tui starts from .pyc files, as installed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
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
        (agent / "models.json").write_text(json.dumps(server.models_json(provider="bench")))
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.endswith(("_API_KEY", "_TOKEN")) and key != "PI_CODING_AGENT_DIR"
        }
        env.update(PI_CODING_AGENT_DIR=str(agent), HOME=str(home), PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1")

        listed, output = time_command([ours, "--list-models"], env, project, args.runs)
        rows = len(output.splitlines()) - 1
        print(f"pi-tui --list-models:          median {listed * 1000:7.0f} ms ({rows:,} models)")
        searched, output = time_command([ours, "--list-models", "sonnet"], env, project, args.runs)
        rows = len(output.splitlines()) - 1
        print(f"pi-tui --list-models sonnet:   median {searched * 1000:7.0f} ms ({rows:,} models)")
        command = [ours, "--provider", "bench", "--model", "m", "--no-session", "-p", "hi"]
        printed, output = time_command(command, env, project, args.runs)
        print(f"pi-tui -p hi --no-session:     median {printed * 1000:7.0f} ms ({output.strip()!r})")

        os.environ.update({"PI_CODING_AGENT_DIR": str(agent), "HOME": str(home)})
        from pi_tui.ai.models import ModelRegistry
        from pi_tui.tui.screens.model_picker import model_matches

        loaded = time_call(ModelRegistry, args.runs * 3)
        registry = ModelRegistry()
        models = registry.all()
        print(f"ModelRegistry() in process:    median {loaded * 1000:7.1f} ms ({len(models):,} models)")
        for query in ("c", "claude sonnet", "openrouter/"):
            filtered = time_call(lambda q=query: [m for m in models if model_matches(m, q)], args.runs * 3)
            count = sum(1 for m in models if model_matches(m, query))
            print(f"picker filter {query!r:16} median {filtered * 1000:7.2f} ms ({count:,} shown)")
        found = time_call(lambda: registry.find("sonnet"), args.runs * 3)
        print(f"registry.find('sonnet'):       median {found * 1000:7.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
