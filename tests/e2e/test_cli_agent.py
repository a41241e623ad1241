"""The installed ``pi-tui`` console script end to end, against the loopback model server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PI_SESSIONS
from tests.support.in_process import run_main
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.waiting import poll_until

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
pytestmark = requires("pi-tui")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n\nA tiny demo project.\n")
    (root / "src" / "app.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    return root


def configure(agent_dir: Path, server: ModelServer, **model: Any) -> None:
    models = [{"id": "m", "name": "Test model", **model}]
    (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=models)))


def pi_tui(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
    )


def session_files(agent_dir: Path) -> list[Path]:
    return sorted((agent_dir / "sessions").rglob("*.jsonl"))


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def scripted_task() -> list[Scripted]:
    return [
        Scripted(text="Reading first.", tool_calls=[ToolCallSpec("read", {"path": "README.md"})]),
        Scripted(
            tool_calls=[
                ToolCallSpec("edit", {"path": "src/app.py", "edits": [{"oldText": "Hello", "newText": "Hi"}]})
            ]
        ),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "ls src && exit 3"})]),
        Scripted(tool_calls=[ToolCallSpec("write", {"path": "NOTES.md", "content": "# Notes\n- Hi now\n"})]),
        Scripted(text="Done: greeting changed, notes written."),
    ]


def test_multi_turn_task_then_continue_session_prefix_fork_and_no_session(
    agent_dir: Path, project: Path
) -> None:
    with ModelServer(*scripted_task()) as server:
        configure(agent_dir, server)
        result = pi_tui("--provider", "test", "--model", "m", "-p", "Change the greeting", cwd=project)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "Done: greeting changed, notes written.\n"
        assert (project / "src" / "app.py").read_text() == 'def greet(name):\n    return "Hi, " + name\n'
        assert (project / "NOTES.md").read_text() == "# Notes\n- Hi now\n"

        (session,) = session_files(agent_dir)
        lines = entries(session)
        assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(project)
        kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in lines[1:]]
        assert kinds == [
            "model_change",
            "thinking_level_change",
            "user",
            "assistant",
            "toolResult",  # read: no file changed, no checkpoint entry
            "assistant",
            "toolResult",
            "custom",  # the edit's file checkpoint (pi-tui.files; pi skips custom entries)
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "custom",  # the write's
            "assistant",
        ]
        results = [e["message"] for e in lines if e.get("message", {}).get("role") == "toolResult"]
        assert [r["isError"] for r in results] == [False, False, True, False]
        assert results[2]["content"][0]["text"].endswith("Command exited with code 3")
        assert results[1]["details"]["firstChangedLine"] == 2
        # every request carried the whole conversation so far
        assert len(server.requests[-1].body["messages"]) == 1 + 9  # system + 9 messages

        # -c continues the same file
        result = pi_tui("-c", "-p", "And now?", cwd=project)
        assert result.returncode == 0 and result.stdout == "echo: And now?\n"
        assert session_files(agent_dir) == [session]
        assert len(server.requests[-1].body["messages"]) == 1 + 11

        # --session by id prefix
        prefix = lines[0]["id"][:13]
        result = pi_tui("--session", prefix, "-p", "By prefix", cwd=project)
        assert result.returncode == 0 and result.stdout == "echo: By prefix\n"
        assert entries(session)[-1]["message"]["content"][0]["text"] == "echo: By prefix"

        # --fork copies into a new file naming its parent
        result = pi_tui("--fork", str(session), "-p", "In the fork", cwd=project)
        assert result.returncode == 0
        forks = [path for path in session_files(agent_dir) if path != session]
        assert len(forks) == 1
        fork_lines = entries(forks[0])
        assert fork_lines[0]["parentSession"] == str(session)
        assert fork_lines[-1]["message"]["content"][0]["text"] == "echo: In the fork"
        assert not any("In the fork" in json.dumps(e) for e in entries(session))

        # --no-session writes nothing
        before = {path: path.read_bytes() for path in session_files(agent_dir)}
        result = pi_tui("--no-session", "-p", "Nothing kept", cwd=project)
        assert result.returncode == 0 and result.stdout == "echo: Nothing kept\n"
        assert {path: path.read_bytes() for path in session_files(agent_dir)} == before


def test_json_mode_prints_header_then_events_in_order(agent_dir: Path, project: Path) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("read", {"path": "README.md"})]),
        Scripted(text="It is a demo."),
    ]
    with ModelServer(*replies) as server:
        configure(agent_dir, server)
        result = pi_tui(
            "--provider", "test", "--model", "m", "--mode", "json", "-p", "What is this?", cwd=project
        )
        assert result.returncode == 0, result.stderr
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert records[0]["type"] == "session" and records[0]["version"] == 3
        kinds = [r["type"] for r in records[1:]]
        expected = [
            "agent_start",
            "turn_start",
            "message_start",
            "message_update",
            "message_end",
            "tool_execution_start",
            "tool_execution_end",
            "turn_end",
            "agent_end",
        ]
        remaining = iter(kinds)
        assert all(kind in remaining for kind in expected), kinds  # in this order (a subsequence)
        update = next(r for r in records if r["type"] == "message_update")
        assert list(update) == ["type", "usage", "assistantMessageEvent"]  # pi 1.x: delta-only
        assert "partial" not in update["assistantMessageEvent"] and "totalTokens" in update["usage"]
        kinds = {r["assistantMessageEvent"]["type"] for r in records if r["type"] == "message_update"}
        assert not kinds & {"start", "done", "error"}, kinds  # told by message_start / _end, as pi does
        call = next(
            r["assistantMessageEvent"]
            for r in records
            if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "toolcall_start"
        )
        assert call["toolName"] == "read" and call["id"]
        end = next(r for r in records if r["type"] == "tool_execution_end")
        assert end["toolName"] == "read" and end["isError"] is False and "Demo" in json.dumps(end["result"])
        assert records[-2]["type"] == "agent_end" and len(records[-2]["messages"]) == 4
        assert records[-1] == {"type": "agent_settled", "aborted": False}  # pi 1.x: the run's last word


def alive(pid: int) -> bool:
    """Running (a zombie left for an absent init to reap counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def interrupt_after(process: subprocess.Popen[str], marker: str, server: ModelServer | None = None) -> float:
    """Send SIGINT once ``marker`` shows in the server's traffic (or after a moment)."""
    if server is not None:
        poll_until(
            lambda: any(marker in json.dumps(r.body) for r in server.requests), f"{marker!r} sent", timeout=20
        )
    time.sleep(0.5)  # time is what is tested: the run is well under way when Ctrl+C comes
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=10)
    return time.monotonic() - started


def test_ctrl_c_during_stream_and_during_long_bash(agent_dir: Path, project: Path) -> None:
    replies = [
        Scripted(text="one two three four five six seven eight nine ten", event_delay=0.3),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "sleep 30 & echo $! > child.pid; sleep 30"})]),
    ]
    with ModelServer(*replies) as server:
        configure(agent_dir, server)
        process = subprocess.Popen(
            [SCRIPT, "--provider", "test", "--model", "m", "-p", "slow please"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        elapsed = interrupt_after(process, "slow please", server)
        assert process.returncode == 130 and elapsed < 2.0
        (session,) = session_files(agent_dir)
        last = entries(session)[-1]["message"]
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"

        process = subprocess.Popen(
            [SCRIPT, "-c", "-p", "run the long command"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        pid_file = project / "child.pid"
        # The shell creates the file before `echo` writes to it: wait for the whole line.
        poll_until(
            lambda: pid_file.exists() and pid_file.read_text().endswith("\n"),
            "the child's pid file",
            timeout=20,
        )
        child = int(pid_file.read_text())
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        assert time.monotonic() - started < 2.0 and process.returncode == 130
        # a busy CI machine may take a moment to show the kill
        poll_until(lambda: not alive(child), f"the tool's child {child} to be killed", timeout=8)
        *_, result_line, checkpoint = entries(session)
        result_entry = result_line["message"]
        assert result_entry["role"] == "toolResult" and result_entry["isError"] is True
        # the stopped turn's files are recorded too (the command wrote child.pid)
        assert checkpoint["customType"] == "pi-tui.files" and checkpoint["parentId"] == result_line["id"]
        assert checkpoint["data"]["changes"] == [{"status": "A", "path": "child.pid"}]

        result = pi_tui("-c", "-p", "still there?", cwd=project)
        assert result.returncode == 0 and result.stdout == "echo: still there?\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--provider", "nope", "-p", "hi"], 'Unknown provider "nope"'),
        (["--model", "no-such-model-anywhere", "-p", "hi"], "not found"),
        (["--provider", "anthropic", "-p", "hi"], "offline demo model"),
        (["--session", "/no/such/file.jsonl", "-p", "hi"], "Session file not found"),
        (["--thinking", "extreme", "-p", "hi"], "Unknown thinking level"),
        (["@missing.txt", "-p", "hi"], "Cannot attach missing.txt"),
    ],
)
def test_bad_input_is_one_clear_line(agent_dir: Path, project: Path, args: list[str], message: str) -> None:
    env_keys = [key for key in os.environ if key.endswith("_API_KEY")]
    for key in env_keys:
        os.environ.pop(key)
    result = pi_tui(*args, cwd=project)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr


def test_unreadable_session_file_is_one_clear_line(agent_dir: Path, project: Path) -> None:
    broken = project / "broken.jsonl"
    broken.write_text("this is not a session\n")
    result = pi_tui("--session", str(broken), "-p", "hi", cwd=project)
    assert result.returncode == 2 and "not a session file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert broken.read_text() == "this is not a session\n"


def test_edit_with_missing_old_text_is_a_clear_tool_error(agent_dir: Path, project: Path) -> None:
    edit = ToolCallSpec("edit", {"path": "src/app.py", "edits": [{"oldText": "Goodbye", "newText": "Bye"}]})
    with ModelServer(Scripted(tool_calls=[edit]), Scripted(text="Could not edit.")) as server:
        configure(agent_dir, server)
        result = pi_tui("--provider", "test", "--model", "m", "-p", "edit it", cwd=project)
        assert result.returncode == 0
        tool_message = server.requests[-1].body["messages"][-1]
        assert tool_message["role"] == "tool"
        assert "not found" in tool_message["content"] and "src/app.py" in tool_message["content"]
        assert "\n" not in tool_message["content"].strip()


def test_offline_demo_model_without_any_configuration(agent_dir: Path, project: Path) -> None:
    for key in [key for key in os.environ if key.endswith("_API_KEY")]:
        os.environ.pop(key)
    env_delay = os.environ.get("PI_TUI_OFFLINE_DELAY")
    os.environ["PI_TUI_OFFLINE_DELAY"] = "0"
    try:
        # A script gets the demo only by name (tests/e2e/test_print_no_model.py: refused otherwise).
        result = pi_tui("--model", "offline/demo", "-p", "read README.md", cwd=project)
    finally:
        if env_delay is None:
            os.environ.pop("PI_TUI_OFFLINE_DELAY")
    assert result.returncode == 0, result.stderr
    assert "Demo" in result.stdout or "README" in result.stdout


# --- sessions written by pi continue in pi-tui with the same request -----------------------------

CASES = [
    case.name
    for case in sorted(PI_SESSIONS.iterdir())
    if case.is_dir() and case.name != "00-tree-label-summary"
]
SESSION_OF_LAST_REQUEST = {"14-fork-clone": "clone.jsonl"}  # that case's last turn ran on its clone


@pytest.mark.parametrize("case", CASES)
def test_pi_session_continues_with_pis_request(agent_dir: Path, project: Path, case: str) -> None:
    """Drop the fixture's final "next" turn, continue with --session FILE -c -p next, and compare.

    (00 is left out: its last turn was typed in the TUI, not a "next".)
    """
    lines = (PI_SESSIONS / case / SESSION_OF_LAST_REQUEST.get(case, "session.jsonl")).read_text().splitlines()
    session = project / "pi-session.jsonl"
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    session.write_text("\n".join([json.dumps(header), *lines[1:-2]]) + "\n")
    pi_request = json.loads((PI_SESSIONS / case / "requests.jsonl").read_text().splitlines()[-1])
    anthropic = isinstance(pi_request.get("system"), list)
    with ModelServer() as server:
        if anthropic:
            model = {"id": "fake-claude", "reasoning": True, "maxTokens": 16000, "contextWindow": 200000}
            models = server.models_json(provider="fakeant", api="anthropic-messages", models=[model])
        else:
            model = {"id": pi_request["model"], "maxTokens": pi_request["max_completion_tokens"]}
            if "vision" in pi_request["model"]:
                model["input"] = ["text", "image"]
            models = server.models_json(provider="fake", models=[model])
        (agent_dir / "models.json").write_text(json.dumps(models))
        args = ("--session", str(session), "-c", "-p", "next")
        # the first case through the installed script, the others through its entry point in this
        # process (tests/support/in_process.py): the same request, without a start-up each
        result = pi_tui(*args, cwd=project) if case == CASES[0] else run_main(args, cwd=project)
        assert result.returncode == 0, result.stderr
        ours = server.requests[-1].body
    if anthropic:  # the system prompt is its own field there
        assert ours["messages"] == pi_request["messages"]
        assert ours["thinking"] == pi_request["thinking"] and ours["max_tokens"] == pi_request["max_tokens"]
    else:
        assert ours["messages"][1:] == pi_request["messages"][1:]  # system prompt aside
    assert ours["model"] == pi_request["model"]


def test_json_mode_stops_quietly_when_its_reader_goes_away(agent_dir: Path, project: Path) -> None:
    with ModelServer(Scripted(text="one two three four five six", event_delay=0.1)) as server:
        configure(agent_dir, server)
        process = subprocess.Popen(
            [SCRIPT, "--provider", "test", "--model", "m", "--mode", "json", "-p", "count"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        process.stdout.readline()  # the header: the run has started
        process.stdout.close()  # the reader is gone mid-stream
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
        assert b"subscriber failed" not in stderr and b"Broken pipe" not in stderr
