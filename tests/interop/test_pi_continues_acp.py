"""Issue 35: a session an editor had with ``pi-tui acp`` (a tool call, an edit through the
editor, a label, a move back in the tree with a summary of the branch left) opens in the real
pi, 0.73.1 and 1.5.2, which continues the branch the editor left current."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.acp_client import AcpClient
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.real_pi import PI_VERSIONS, run_pi
from tests.support.requires import PI_TUI

pytestmark = pytest.mark.pi_interop


@pytest.mark.parametrize("pi", PI_VERSIONS)
def test_pi_continues_a_session_an_editor_had(pi: str, tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("draft\n")
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        server.queue(
            Scripted(text="Checking.", tool_calls=[ToolCallSpec("bash", {"command": "cat notes.md"})])
        )
        server.queue(
            Scripted(
                tool_calls=[
                    ToolCallSpec(
                        "edit", {"path": "notes.md", "edits": [{"oldText": "draft", "newText": "final"}]}
                    )
                ]
            )
        )
        server.queue(Scripted(text="Edited."))
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        with AcpClient.start([PI_TUI, "acp"], cwd=project, env=dict(os.environ)) as client:
            client.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
            sid = client.request("session/new", {"cwd": str(project), "mcpServers": []})["sessionId"]
            for text in ("finish the notes", "second thoughts"):
                client.request(
                    "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
                )
            path = next((agent_dir / "sessions").rglob("*.jsonl"))
            lines = [json.loads(line) for line in path.read_text().splitlines()]
            users = [e["id"] for e in lines if e["type"] == "message" and e["message"]["role"] == "user"]
            server.queue(Scripted(text="A detour, summarised."))  # the branch summary
            for command in (f"/label {users[0]} start", f"/tree {users[1]} summarize"):
                client.request(
                    "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": command}]}
                )
            client.assert_clean()
        server.clear_requests()
        continued = run_pi(
            ["--provider", "test", "--model", "m", "--session", str(path), "-p", "third question"],
            agent_dir=agent_dir,
            cwd=project,
            env={"HOME": str(tmp_path), "PI_SKIP_VERSION_CHECK": "1"},
            pi=pi,
        )
        assert continued.returncode == 0, continued.stderr
        assert continued.stdout.strip() == "echo: third question"
        sent = server.requests[-1].body["messages"]
    texts = [json.dumps(m.get("content")) for m in sent if m["role"] not in ("system", "developer")]
    assert "finish the notes" in texts[0]
    assert any("draft" in text for text in texts)  # the command's output, through the editor's terminal
    assert any("Applied 1 edit to notes.md" in text for text in texts)
    assert not any("second thoughts" in text for text in texts)  # the branch the editor left...
    assert any("A detour, summarised." in text for text in texts)  # ...and its summary
    assert "third question" in texts[-1]
    assert (project / "notes.md").read_text() == "final\n"
