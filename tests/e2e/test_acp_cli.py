"""``pi-tui acp`` as a command: its flags, stdin and stdout as files or pipes, lines that are not
JSON, and how it ends (input closed, SIGTERM) with its session file intact and nothing left
running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import PI_TUI, requires
from tests.support.waiting import poll_until

pytestmark = requires("pi-tui")


def line(request_id: int, method: str, **params: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [PI_TUI, "acp", "--bogus"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "pi-tui: acp: unrecognized arguments: --bogus (see pi-tui acp --help)"
    helped = subprocess.run(
        [PI_TUI, "acp", "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert (
        helped.returncode == 0 and "Agent Client Protocol" in helped.stdout and "--approve" in helped.stdout
    )


def test_requests_from_a_file_and_lines_that_are_not_json(agent_dir: Path, tmp_path: Path) -> None:
    with ModelServer(Scripted(text="Answered.")) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        requests = tmp_path / "requests.jsonl"
        requests.write_text(
            "\n".join(
                [
                    "not json at all",
                    "[1, 2, 3]",
                    line(1, "initialize", protocolVersion=1),
                    line(2, "no/such/method"),
                    line(3, "session/prompt", sessionId=3),
                    "",
                    line(4, "session/list", cwd=str(tmp_path)),
                    line(5, "_pi/unknown"),
                ]
            )  # no newline after the last line
        )
        answers = tmp_path / "answers.jsonl"
        with open(requests, "rb") as stdin, open(answers, "wb") as stdout:
            done = subprocess.run(
                [PI_TUI, "acp"], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, cwd=tmp_path, timeout=60
            )
    assert done.returncode == 0, done.stderr
    written = [json.loads(text) for text in answers.read_text().splitlines()]  # JSON-RPC lines only
    by_id = {message["id"]: message for message in written}
    assert [m["error"]["code"] for m in written if m["id"] is None] == [-32700, -32600]
    assert by_id[1]["result"]["agentInfo"]["name"] == "pi-tui"
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] == -32602
    assert by_id[4]["result"] == {"sessions": []}
    assert by_id[5]["error"]["code"] == -32601
    stderr = done.stderr.decode()
    assert "not a JSON-RPC message" in stderr and "Traceback" not in stderr


class RawAgent:
    """``pi-tui acp`` spoken to with raw JSON-RPC lines (what an editor writes), in ``project``."""

    def __init__(self, project: Path) -> None:
        self.process = subprocess.Popen(
            [PI_TUI, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
        )
        self.project = project

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        self.process.stdin.flush()

    def until(self, *, method: str | None = None, answer_to: int | None = None) -> dict[str, Any]:
        """Read messages up to the request ``method`` or the answer to request ``answer_to``."""
        assert self.process.stdout is not None
        while True:
            message: dict[str, Any] = json.loads(self.process.stdout.readline())
            if method is not None and message.get("method") == method:
                return message
            if answer_to is not None and message.get("id") == answer_to and "method" not in message:
                return message

    def open_session(self, capabilities: dict[str, Any]) -> str:
        self.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": capabilities},
            }
        )
        self.until(answer_to=1)
        self.send({"id": 2, "method": "session/new", "params": {"cwd": str(self.project), "mcpServers": []}})
        session_id: str = self.until(answer_to=2)["result"]["sessionId"]
        return session_id

    def prompt(self, session_id: str, text: str) -> None:
        prompt = [{"type": "text", "text": text}]
        self.send(
            {"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": prompt}}
        )

    def stderr(self) -> str:
        return self.process.stderr.read().decode() if self.process.stderr else ""


def configure(agent_dir: Path, server: ModelServer) -> None:
    (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))


def test_sigterm_mid_command_ends_it_and_keeps_the_session(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "sleeper.pid"
    command = f"echo $$ > {marker}; sleep 60"
    with ModelServer(
        Scripted(text="Running it.", tool_calls=[ToolCallSpec("bash", {"command": command})])
    ) as server:
        configure(agent_dir, server)
        agent = RawAgent(project)
        try:
            session_id = agent.open_session({})
            agent.prompt(session_id, "run it")
            poll_until(
                lambda: marker.exists() and marker.read_text().strip(), timeout=30, what="the command running"
            )
            sleeper = int(marker.read_text())
            agent.process.send_signal(signal.SIGTERM)
            assert agent.process.wait(timeout=30) == 128 + signal.SIGTERM
        finally:
            agent.process.kill()
    with pytest.raises(ProcessLookupError):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the group is killed at once; reaping may take a moment
            os.kill(sleeper, 0)
            time.sleep(0.05)
    saved = [
        json.loads(text)
        for path in (agent_dir / "sessions").rglob("*.jsonl")
        for text in path.read_text().splitlines()
    ]
    assert saved[0]["id"] == session_id
    assert [e["message"]["role"] for e in saved if e["type"] == "message"][:2] == ["user", "assistant"]
    assert "Traceback" not in agent.stderr()


def test_sigterm_while_the_editors_terminal_runs_a_command_still_exits(
    agent_dir: Path, tmp_path: Path
) -> None:
    """The editor never answers terminal/wait_for_exit (nor the kill that follows): the agent
    still ends soon after SIGTERM, instead of holding the session's lock forever."""
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(Scripted(tool_calls=[ToolCallSpec("bash", {"command": "sleep 60"})])) as server:
        configure(agent_dir, server)
        agent = RawAgent(project)
        try:
            session_id = agent.open_session({"terminal": True})
            agent.prompt(session_id, "wait")
            create = agent.until(method="terminal/create")
            agent.send({"id": create["id"], "result": {"terminalId": "t1"}})
            agent.until(method="terminal/wait_for_exit")  # and never answered
            asked = time.monotonic()
            agent.process.send_signal(signal.SIGTERM)
            assert agent.process.wait(timeout=20) == 128 + signal.SIGTERM
            assert time.monotonic() - asked < 10
        finally:
            agent.process.kill()
    assert "Traceback" not in agent.stderr()
