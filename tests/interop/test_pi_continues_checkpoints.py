"""Issue 34: a session whose files followed the tree (checkpoint entries, restores, a branch made
after a restore), written by the installed ``pi-tui --mode rpc``, is continued by the real pi
(0.73.1 and 1.5.2) with ``pi -c -p``: pi's request carries the branch's conversation with the
``pi-tui.files`` custom entries left out, pi appends its answer, and pi-tui still reads the file
afterwards: its checkpoints still restore each branch's files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import configure, entries, session_files
from tests.integration.test_checkpoint_rpc import BRANCH, SECOND, PiTuiRpc, folder, make_project, two_turns
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.real_pi import PI_VERSIONS, run_pi

pytestmark = pytest.mark.pi_interop


def branch_turn() -> list[Scripted]:
    return [
        Scripted(
            tool_calls=[
                ToolCallSpec("write", {"path": "other.txt", "content": "on the branch\n"}),
                ToolCallSpec("bash", {"command": "rm keep.md"}),
            ]
        ),
        Scripted(text="branch done"),
    ]


def texts_of(message: dict[str, Any]) -> str:
    return json.dumps(message.get("content"))


@pytest.mark.parametrize("pi", PI_VERSIONS)
def test_pi_continues_a_session_with_file_checkpoints(pi: str, tmp_path: Path, agent_dir: Path) -> None:
    project = make_project(tmp_path)
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(*two_turns(), *branch_turn())
        rpc = PiTuiRpc(project)
        try:
            rpc.turn("one")
            rpc.turn("two")
            one, two = rpc.reply("one done"), rpc.reply("two done")
            assert rpc.ok({"type": "navigate_tree", "targetId": one, "restoreFiles": True})["files"]
            rpc.turn("three")
            assert folder(project) == BRANCH
            assert rpc.close() == 0
        finally:
            rpc.kill()
        (path,) = session_files(agent_dir)
        written = entries(path)
        checkpoints = [e for e in written if e.get("customType") == "pi-tui.files"]
        assert len(checkpoints) == 3

        server.clear_requests()
        continued = run_pi(
            ["--provider", "test", "--model", "m", "-c", "-p", "fourth question"],
            agent_dir=agent_dir,
            cwd=project,
            env={"HOME": str(tmp_path), "PI_SKIP_VERSION_CHECK": "1"},
            pi=pi,
        )
        assert continued.returncode == 0, continued.stderr
        assert continued.stdout.strip() == "echo: fourth question"
        sent = [m for m in server.requests[-1].body["messages"] if m["role"] != "system"]
        # the branch's conversation: turn one, then the branch's turn, never turn two
        said = [texts_of(m) for m in sent]
        assert sent[0]["role"] == "user" and "one" in said[0]
        assert any("one done" in text for text in said) and any("branch done" in text for text in said)
        assert any("other.txt" in text for text in said)  # the branch's tool call went along
        assert not any("two done" in text or "v2" in text for text in said)
        assert "fourth question" in said[-1]
        everything = json.dumps(server.requests[-1].body)
        assert "pi-tui.files" not in everything
        assert not any(cp["data"]["after"] in everything for cp in checkpoints)

        # pi appended its turn to the same file, after pi-tui's entries
        after = entries(path)
        assert after[: len(written)] == written
        added = after[len(written) :]
        replies = [e for e in added if e.get("type") == "message" and e["message"]["role"] == "assistant"]
        assert replies and "echo: fourth question" in texts_of(replies[-1]["message"])

        # pi-tui still reads the file: the checkpoints still bring back each branch's files
        reopened = PiTuiRpc(project, "--session", str(path))
        try:
            ids = [e["id"] for e in reopened.entries()]
            assert ids == [e["id"] for e in after[1:]]
            assert reopened.leaf() == after[-1]["id"]
            back = reopened.ok({"type": "navigate_tree", "targetId": two, "restoreFiles": True})
            assert folder(project) == SECOND and back["leafId"] == two
            pi_reply = replies[-1]["id"]
            reopened.ok({"type": "navigate_tree", "targetId": pi_reply, "restoreFiles": True})
            assert folder(project) == BRANCH
        finally:
            reopened.kill()
