"""examples/server/ask.py, the client script the docs point to, against the real server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.model_server import ModelServer, Scripted, model_server  # noqa: F401
from tests.support.serve import ServeProcess, configure_agent

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "server" / "ask.py"


def test_the_example_client_streams_an_answer_and_continues_the_session(
    tmp_path: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    model_server.queue(Scripted(text="The README holds a demo."))
    project = tmp_path / "project"
    project.mkdir()
    with ServeProcess(project) as server:
        command = [sys.executable, str(EXAMPLE), "--url", server.url, "--token", str(server.token)]
        first = subprocess.run(
            [*command, "What is in README.md?"], capture_output=True, text=True, timeout=60
        )
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == "The README holds a demo."
        session = first.stderr.strip().rsplit(" ", 1)[-1].rstrip(")")
        again = subprocess.run(
            [*command, "--session", session, "and then?"], capture_output=True, text=True, timeout=60
        )
        assert again.returncode == 0 and again.stdout.strip() == "echo: and then?"
        with server.client() as client:
            messages = client.get(f"/sessions/{session}/messages").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"] * 2
