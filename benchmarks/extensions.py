"""What extensions cost (issue 15): start-up with twenty loaded, and streaming per token.

1. Start-up: ``pi-tui --no-session -p hi`` on the offline demo model, with no extension and with
   twenty in the agent dir (each registers a command and a tool and listens to five events, none
   of them ``message_update``). Medians of ``--runs`` launches after a warm-up; the difference is
   the cost, target <= 50 ms. The in-process cost of finding, importing and activating them is
   printed beside it.
2. Streaming: one reply of ``--tokens`` words over loopback HTTP through the real agent, with
   no extension and with the same twenty loaded; the time per token should be the same (no one
   listens to ``message_update``). A third row has one ``message_update`` listener, to show what
   a listener costs.

Run: ``python benchmarks/extensions.py [--runs 7] [--tokens 20000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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

EXTENSION = """
def activate(pi):
    seen = []

    def note(event):
        seen.append(event.type)
    for event in ("session_start", "agent_start", "turn_start", "turn_end", "agent_end"):
        pi.on(event, note)

    def gate(event):
        if "rm -rf" in str(event.input.get("command", "")):
            return {{"block": True, "reason": "no"}}
    pi.on("tool_call", gate)
    pi.register_command("cmd{n}", handler=lambda args: None, description="command {n}")
    pi.register_tool("tool{n}", description="tool {n}", execute=lambda params: "ok",
                     parameters={{"type": "object", "properties": {{}}}})
"""
LISTENER = """
def activate(pi):
    count = [0]
    pi.on("message_update", lambda e: count.__setitem__(0, count[0] + 1))
"""


def write_extensions(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"ext{n:02d}.py").write_text(EXTENSION.format(n=n))


def launch_times(agent: Path, project: Path, runs: int) -> list[float]:
    script = str(Path(sys.executable).with_name("pi-tui"))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_TUI_OFFLINE_DELAY": "0"}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        env.pop(name, None)
    times = []
    for _ in range(runs + 1):
        began = time.perf_counter()
        done = subprocess.run([script, "--no-session", "-p", "hi"], cwd=project, env=env, capture_output=True)
        took = time.perf_counter() - began
        if done.returncode != 0:
            raise RuntimeError(done.stderr.decode())
        times.append(took)
    return times[1:]


def activation_time(agent: Path, project: Path, runs: int) -> float:
    """In process: discover, import and activate the extensions (fresh imports each time)."""
    os.environ["PI_CODING_AGENT_DIR"] = str(agent)
    from pi_tui.extensions.setup import setup_extensions

    times = []
    for _ in range(runs):
        began = time.perf_counter()
        setup = setup_extensions(None, str(project), None)
        times.append(time.perf_counter() - began)
        assert len(setup.runner.extensions) == 20, setup.lines
        for loaded in list(setup.runner.extensions):
            setup.runner._drop(loaded)
    return statistics.median(times)


def stream_time(agent_folder: Path | None, tokens: int, listener: bool = False) -> float:
    """Seconds for one reply of ``tokens`` words through the agent (extensions from the folder)."""
    from pi_tui.agent.session import AgentSession
    from pi_tui.ai.http import close_shared_client
    from pi_tui.ai.types import StreamOptions
    from pi_tui.config.extension_sources import ExtensionSource
    from pi_tui.extensions.runner import ExtensionRunner
    from pi_tui.session import SessionManager

    text = " ".join(f"w{n}" for n in range(tokens))
    with ModelServer(Scripted(text=text)) as server, tempfile.TemporaryDirectory() as work:
        agent = AgentSession(
            SessionManager.in_memory(work),
            server.model(),
            request_options=lambda _model: StreamOptions(api_key="k"),
        )
        if agent_folder is not None:
            runner = ExtensionRunner(agent)
            runner.load([ExtensionSource(path, "user") for path in sorted(agent_folder.glob("*.py"))])

        async def main() -> float:
            try:
                began = time.perf_counter()
                await agent.prompt("go")
                if agent_folder is not None:
                    await runner.settle()
                return time.perf_counter() - began
            finally:
                await close_shared_client()

        return asyncio.run(main())


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=20_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ["PI_TUI_LOG_DIR"] = str(root / "logs")
        project = root / "project"
        project.mkdir()
        bare, loaded = root / "bare", root / "loaded"
        bare.mkdir()
        write_extensions(loaded / "extensions", 20)
        listening = root / "listening"
        write_extensions(listening, 20)
        (listening / "listener.py").write_text(LISTENER)

        without = statistics.median(launch_times(bare, project, args.runs))
        with_twenty = statistics.median(launch_times(loaded, project, args.runs))
        activation = activation_time(loaded, project, args.runs)
        print("| work | figure | target |")
        print("|---|---|---|")
        added = (with_twenty - without) * 1000
        verdict = "(met)" if added <= 50 else "(MISSED)"
        print(
            f"| `pi-tui -p hi` start-up, no extension / twenty | {without * 1000:.0f} ms / "
            f"{with_twenty * 1000:.0f} ms (+{added:.0f} ms) | <= +50 ms {verdict} |"
        )
        print(f"| finding, importing and activating twenty (in process) | {activation * 1000:.1f} ms | - |")

        plain = statistics.median(stream_time(None, args.tokens) for _ in range(3))
        twenty = statistics.median(stream_time(loaded / "extensions", args.tokens) for _ in range(3))
        heard = statistics.median(stream_time(listening, args.tokens, listener=True) for _ in range(3))
        per = 1e6 / args.tokens
        ratio = twenty / plain
        print(
            f"| streaming {args.tokens:,} tokens, no extension / twenty (no message_update listener) | "
            f"{plain * per:.1f} / {twenty * per:.1f} µs a token ({ratio:.2f}x) | the same "
            f"{'(met)' if ratio <= 1.05 else '(MISSED)'} |"
        )
        print(f"| the same with one message_update listener | {heard * per:.1f} µs a token | - |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
