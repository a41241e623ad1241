"""Issue 19: a session written by ``pi-tui serve`` (a label, a move with a branch summary, a
fork) opens in the real pi (0.73.1 and 1.5.2), which continues the branch the server left current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer, Scripted
from tests.support.real_pi import PI_VERSIONS, run_pi
from tests.support.serve import ServeProcess, configure_agent, wait_idle

pytestmark = pytest.mark.pi_interop


@pytest.mark.parametrize("pi", PI_VERSIONS)
def test_pi_continues_a_session_the_server_wrote(pi: str, tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer() as server:
        configure_agent(agent_dir, server)
        with ServeProcess(project) as serve, serve.client() as client:
            sid = client.post("/sessions", json={}).json()["id"]
            url = f"/sessions/{sid}/commands"
            for text in ("first question", "second question"):
                client.post(url, json={"type": "prompt", "message": text})
                wait_idle(client, sid)
            tree = client.get(f"/sessions/{sid}/tree").json()["tree"]
            first_reply = tree["ids"][tree["texts"].index("assistant: echo: first question")]
            client.post(url, json={"type": "set_label", "entryId": first_reply, "label": "good"})
            server.queue(Scripted(text="They asked a second question."))
            moved = client.post(
                url, json={"type": "navigate_tree", "targetId": first_reply, "summarize": True}
            )
            assert moved.status_code == 200, moved.text
            path = client.get(f"/sessions/{sid}").json()["path"]
        server.clear_requests()
        continued = run_pi(
            ["--provider", "test", "--model", "m", "--session", path, "-p", "third question"],
            agent_dir=agent_dir,
            cwd=project,
            env={"HOME": str(tmp_path), "PI_SKIP_VERSION_CHECK": "1"},
            pi=pi,
        )
        assert continued.returncode == 0, continued.stderr
        assert continued.stdout.strip() == "echo: third question"
        sent = server.requests[-1].body["messages"]
    texts = [json.dumps(m["content"]) for m in sent if m["role"] != "system"]
    assert "first question" in texts[0] and "echo: first question" in texts[1]
    assert "They asked a second question." in texts[2]  # pi sends the server's branch summary
    assert not any("second question" in text and "They asked" not in text for text in texts)
    assert "third question" in texts[-1]
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    assert {"type": "label", "targetId": first_reply, "label": "good"}.items() <= next(
        line for line in lines if line["type"] == "label"
    ).items()
