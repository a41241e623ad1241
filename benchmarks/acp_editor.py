"""``pi-tui acp`` as an editor meets it: start, first words, cancel, and loading a long session.

Drives the installed ``pi-tui acp`` with the ACP Python SDK's client (``acp.spawn_agent_process``)
against a loopback model server and prints medians over ``--runs`` runs:

1. process start -> ``initialize`` answered, -> ``session/new`` answered (the editor's wait
   before the prompt box works);
2. ``session/prompt`` sent -> first ``agent_message_chunk`` received, and -> the answer, for a
   short reply served at once (what pi-tui adds on top of the model): the first prompt, sent
   half a second after the session opened (someone typing), and the next one;
3. ``session/cancel`` sent -> the prompt answered ``cancelled``, during a slow reply (issue 35:
   within a second);
4. ``session/load`` of a generated session of ``--entries`` entries (benchmarks/big_session.py's
   generator), asked half a second after ``initialize`` (someone picking it): the answer, after
   every history update has been received.

Run: ``python benchmarks/acp_editor.py [--runs 5] [--entries 5000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from acp import spawn_agent_process, text_block  # noqa: E402
from big_session import generate  # noqa: E402
from bytecode import compile_pi_tui  # noqa: E402

from tests.support.model_server import ModelServer, Scripted  # noqa: E402

TYPING = 0.5
"""Seconds between the session's answer and the first prompt (a person typing it)."""
PI_TUI = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


class Client:
    """Counts what the agent sends and notes when the first answer text arrived."""

    def __init__(self) -> None:
        self.updates = 0
        self.first_chunk: float | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1
        if self.first_chunk is None and getattr(update, "session_update", "") == "agent_message_chunk":
            self.first_chunk = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        return {"outcome": {"outcome": "cancelled"}}

    def on_connect(self, conn: Any) -> None:
        return None


async def one_run(env: dict[str, str], project: Path, server: ModelServer) -> dict[str, float]:
    client = Client()
    figures: dict[str, float] = {}
    started = time.perf_counter()
    async with spawn_agent_process(client, PI_TUI, "acp", env=env, cwd=str(project)) as (conn, _process):
        await conn.initialize(protocol_version=1)
        figures["initialize"] = time.perf_counter() - started
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        figures["session/new"] = time.perf_counter() - started
        await asyncio.sleep(TYPING)  # the user types the first prompt
        for name in ("first prompt", "next prompt"):
            client.first_chunk = None
            server.queue(Scripted(text="A short answer of a few words."))
            sent = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
            assert client.first_chunk is not None
            figures[f"{name}: first chunk"] = client.first_chunk - sent
            figures[f"{name}: turn"] = time.perf_counter() - sent

        client.first_chunk = None
        server.queue(Scripted(text=" ".join(f"w{i}" for i in range(2000)), event_delay=0.02))
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("talk")]))
        while client.first_chunk is None:
            await asyncio.sleep(0.005)
        asked = time.perf_counter()
        await conn.cancel(session_id=session.session_id)
        answer = await turn
        assert answer.stop_reason == "cancelled", answer
        figures["cancel"] = time.perf_counter() - asked
    return figures


async def load_run(env: dict[str, str], project: Path, session_id: str) -> tuple[float, int]:
    client = Client()
    async with spawn_agent_process(client, PI_TUI, "acp", env=env, cwd=str(project)) as (conn, _process):
        await conn.initialize(protocol_version=1)
        await asyncio.sleep(TYPING)  # the user picks the session to load
        asked = time.perf_counter()
        await conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
        return time.perf_counter() - asked, client.updates


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--entries", type=int, default=5000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch, ModelServer() as server:
        root = Path(scratch)
        agent, project = root / "agent", root / "project"
        agent.mkdir()
        project.mkdir()
        (agent / "models.json").write_text(json.dumps(server.models_json()))
        (agent / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        env = dict(os.environ, PI_CODING_AGENT_DIR=str(agent), PI_TUI_PI_AGENT_DIR="", HOME=str(root))
        runs = [asyncio.run(one_run(env, project, server)) for _ in range(args.runs)]
        for name in runs[0]:
            values = [run[name] * 1000 for run in runs]
            print(f"{name:<26} median {statistics.median(values):7.1f} ms   max {max(values):7.1f} ms")

        folder = agent / "sessions" / "big"
        folder.mkdir(parents=True)
        big = folder / "big.jsonl"
        generate(big, entries=args.entries, cwd=str(project))
        session_id = json.loads(big.read_text().splitlines()[0])["id"]
        loads = [asyncio.run(load_run(env, project, session_id)) for _ in range(args.runs)]
        median = statistics.median(seconds for seconds, _ in loads) * 1000
        size = big.stat().st_size / 1e6
        print(
            f"session/load of {args.entries} entries ({size:.1f} MB): median {median:.0f} ms, "
            f"{loads[0][1]} updates replayed"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
