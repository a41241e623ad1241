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
    stderr = done.stderr.decode()
    assert "not a JSON-RPC message" in stderr and "Traceback" not in stderr


def test_sigterm_mid_command_ends_it_and_keeps_the_session(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "sleeper.pid"
    command = f"echo $$ > {marker}; sleep 60"
    with ModelServer(
        Scripted(text="Running it.", tool_calls=[ToolCallSpec("bash", {"command": command})])
    ) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        agent = subprocess.Popen(
            [PI_TUI, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
        )
        assert agent.stdin is not None and agent.stdout is not None
        try:
            agent.stdin.write((line(1, "initialize", protocolVersion=1) + "\n").encode())
            agent.stdin.write((line(2, "session/new", cwd=str(project), mcpServers=[]) + "\n").encode())
            agent.stdin.flush()
            answers = [json.loads(agent.stdout.readline()) for _ in range(2)]
            session_id = answers[1]["result"]["sessionId"]
            prompt = [{"type": "text", "text": "run it"}]
            agent.stdin.write(
                (line(3, "session/prompt", sessionId=session_id, prompt=prompt) + "\n").encode()
            )
            agent.stdin.flush()
            poll_until(
                lambda: marker.exists() and marker.read_text().strip(), timeout=30, what="the command running"
            )
            sleeper = int(marker.read_text())
            agent.send_signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 128 + signal.SIGTERM
        finally:
            agent.kill()
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


def test_sigterm_while_the_editors_terminal_runs_a_command_still_exits(
    agent_dir: Path, tmp_path: Path
) -> None:
    """The editor never answers terminal/wait_for_exit (nor the kill that follows): the agent
    still ends soon after SIGTERM, instead of holding the session's lock forever."""
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(Scripted(tool_calls=[ToolCallSpec("bash", {"command": "sleep 60"})])) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        agent = subprocess.Popen(
            [PI_TUI, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
        )
        assert agent.stdin is not None and agent.stdout is not None

        def send(message: dict[str, object]) -> None:
            assert agent.stdin is not None
            agent.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
            agent.stdin.flush()

        def until(method: str | None = None, answer_to: int | None = None) -> dict[str, object]:
            assert agent.stdout is not None
            while True:
                message: dict[str, object] = json.loads(agent.stdout.readline())
                if method is not None and message.get("method") == method:
                    return message
                if answer_to is not None and message.get("id") == answer_to and "method" not in message:
                    return message

        try:
            send(
                {
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": 1, "clientCapabilities": {"terminal": True}},
                }
            )
            until(answer_to=1)
            send({"id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}})
            session_id = until(answer_to=2)["result"]["sessionId"]  # type: ignore[index]
            prompt = [{"type": "text", "text": "wait"}]
            send({"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": prompt}})
            create = until(method="terminal/create")
            send({"id": create["id"], "result": {"terminalId": "t1"}})
            until(method="terminal/wait_for_exit")  # and never answered
            asked = time.monotonic()
            agent.send_signal(signal.SIGTERM)
            assert agent.wait(timeout=20) == 128 + signal.SIGTERM
            assert time.monotonic() - asked < 10
        finally:
            agent.kill()
    assert b"Traceback" not in (agent.stderr.read() if agent.stderr else b"")
