"""``--mode json`` and ``--mode rpc`` side by side with the real pi 1.5.2 on the same scripted turn.

Both run against one loopback model server with the same script: a reply with thinking, text
and a ``read`` tool call, then a text reply. What an editor or script built for pi 1.x reads
must match: the sequence of records (events by type, ``message_update`` by its inner event
type, responses by command and success) and the field names of each record and of each inner
stream event. Values (ids, timestamps, durations) differ by nature and are not compared.

One difference is known and left out on purpose: pi 1.x records its system prompt and tool
declarations as a ``role: "system"`` message at the start of a session and announces it with
``message_start`` / ``message_end``; pi-tui keeps the system prompt out of the session file
(pi 0.73 cannot read such a message), so those two records are dropped from pi's stream.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.real_pi import pi_cli, pi_env, write_models_json

pytestmark = pytest.mark.pi_interop

TIMEOUT = 120.0
ARGS = ["--provider", "loop", "--model", "m"]
RPC_COMMANDS: list[dict[str, Any]] = [
    # after the turn: every command a pi 1.x client may send, each answered before the next
    {"type": "get_state"},
    {"type": "get_messages"},
    {"type": "get_available_thinking_levels"},
    {"type": "get_available_models"},
    {"type": "clear_queue"},
    {"type": "set_auto_retry", "enabled": True},
    {"type": "abort_retry"},
    {"type": "set_auto_compaction", "enabled": True},
    {"type": "set_steering_mode", "mode": "one-at-a-time"},
    {"type": "set_follow_up_mode", "mode": "one-at-a-time"},
    {"type": "set_thinking_level", "level": "low"},
    {"type": "bash", "command": "echo from-bash", "excludeFromContext": True},
    {"type": "set_session_name", "name": "compared"},
    {"type": "get_entries"},
    {"type": "get_entries", "since": "no-such-entry"},
    {"type": "get_tree"},
    {"type": "get_fork_messages"},
    {"type": "get_last_assistant_text"},
    {"type": "get_session_stats"},
    {"type": "get_commands"},
    {"type": "export_html", "outputPath": "page.html"},
    {"type": "clone"},
    {"type": "cycle_thinking_level"},
    {"type": "cycle_model"},
    {"type": "steer", "message": "queued while idle"},
    {"type": "follow_up", "message": "also queued"},
    {"type": "clear_queue"},
    {"type": "abort_bash"},
    {"type": "new_session"},
    {"type": "get_state"},
    {"type": "abort"},
    {"type": "no_such_command"},
]


def script() -> list[Scripted]:
    return [
        Scripted(
            thinking="Let me look.",
            text="Reading the notes.",
            tool_calls=[ToolCallSpec("read", {"path": "notes.txt"})],
        ),
        Scripted(text="The notes say hello."),
    ]


def shape(record: dict[str, Any]) -> tuple[Any, ...]:
    """What is compared of one record: its kind and its field names (never the values)."""
    kind = record.get("type")
    if kind == "response":
        data = record.get("data")
        return (
            "response",
            record.get("command"),
            record.get("success"),
            tuple(sorted(record)),
            tuple(sorted(data)) if isinstance(data, dict) else type(data).__name__,
        )
    inner = record.get("assistantMessageEvent")
    if kind == "message_update" and isinstance(inner, dict):
        return (kind, tuple(sorted(record)), inner.get("type"), tuple(sorted(inner)))
    return (kind, tuple(sorted(record)))


def without_system_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pi 1.x's system-prompt message events (see the module docstring)."""
    return [
        r
        for r in records
        if not (
            r.get("type") in ("message_start", "message_end")
            and isinstance(r.get("message"), dict)
            and r["message"].get("role") == "system"
        )
    ]


def merge_deltas(shapes: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Runs of the same record shape as one: how many deltas a text is streamed in depends on
    how each program splits the server's chunks, not on the protocol."""
    merged: list[tuple[Any, ...]] = []
    for item in shapes:
        if not merged or merged[-1] != item or item[0] not in ("message_update", "bash_execution_update"):
            merged.append(item)
    return merged


def ours_env(agent_dir: Path, home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update({"PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(home), "PI_OFFLINE": "1"})
    env["PI_TUI_PI_AGENT_DIR"] = str(home / "no-pi-agent")
    return env


def setup(tmp_path: Path, name: str, server: ModelServer) -> tuple[Path, Path]:
    """A project holding notes.txt and an agent folder whose models.json points at ``server``."""
    project = tmp_path / f"{name}-project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    agent = tmp_path / f"{name}-agent"
    write_models_json(agent, server.base_url, "anthropic-messages", reasoning=True)
    return project, agent


def command_for(who: str, tmp_path: Path, agent: Path) -> tuple[list[str], dict[str, str]]:
    if who == "pi":
        return pi_cli("1.5.2"), pi_env(agent, home=tmp_path, version="1.5.2")
    return ["pi-tui"], ours_env(agent, tmp_path)


def run_json(who: str, tmp_path: Path, server: ModelServer) -> list[dict[str, Any]]:
    project, agent = setup(tmp_path, f"{who}-json", server)
    argv, env = command_for(who, tmp_path, agent)
    server.queue(*script())
    done = subprocess.run(
        [*argv, "--mode", "json", *ARGS, "-p", "read notes.txt"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, f"{who}: {done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def run_rpc(who: str, tmp_path: Path, server: ModelServer) -> list[dict[str, Any]]:
    """The turn, then :data:`RPC_COMMANDS` one at a time; every stdout record in order."""
    project, agent = setup(tmp_path, f"{who}-rpc", server)
    argv, env = command_for(who, tmp_path, agent)
    server.queue(*script())
    process = subprocess.Popen(
        [*argv, "--mode", "rpc", *ARGS],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    timer = threading.Timer(TIMEOUT, process.kill)  # a hung program fails the test, never hangs it
    timer.start()
    records: list[dict[str, Any]] = []

    def send(command: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(command).encode() + b"\n")
        process.stdin.flush()

    def read_until(done: Any) -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            record = json.loads(line)
            records.append(record)
            if done(record):
                return
        raise AssertionError(f"{who} closed stdout early: {process.stderr.read() if process.stderr else ''}")

    try:
        send({"id": "turn", "type": "prompt", "message": "read notes.txt"})
        read_until(lambda r: r.get("type") == "agent_settled")
        for number, command in enumerate(RPC_COMMANDS):
            request_id = f"c{number}"
            send({"id": request_id, **command})
            read_until(lambda r, wanted=request_id: r.get("type") == "response" and r.get("id") == wanted)
        process.stdin.close()
        assert process.wait(30) == 0
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait(5)
    return records


def announced(records: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """The role and stop reason of every message as it starts and ends (a reply under way is
    ``pending``), the values a client's message list is built on."""
    return [
        (r["type"], r["message"].get("role"), r["message"].get("stopReason"))
        for r in records
        if r.get("type") in ("message_start", "message_end")
    ]


def compare(theirs: list[dict[str, Any]], ours: list[dict[str, Any]]) -> None:
    theirs = without_system_messages(theirs)
    expected = merge_deltas([shape(r) for r in theirs])
    actual = merge_deltas([shape(r) for r in ours])
    assert [item[:3] for item in actual] == [item[:3] for item in expected]  # the sequence first
    assert actual == expected  # then every record's field names
    assert announced(ours) == announced(theirs)


def test_json_mode_matches_pi_1_5_2(tmp_path: Path) -> None:
    with ModelServer() as server:
        theirs = run_json("pi", tmp_path, server)
        ours = run_json("ours", tmp_path, server)
    kinds = [r["type"] for r in theirs]
    assert kinds[0] == "session" and kinds[-1] == "agent_settled" and "tool_execution_end" in kinds
    compare(theirs, ours)


def test_rpc_mode_matches_pi_1_5_2(tmp_path: Path) -> None:
    with ModelServer() as server:
        theirs = run_rpc("pi", tmp_path, server)
        ours = run_rpc("ours", tmp_path, server)
    assert any(r.get("type") == "bash_execution_update" for r in theirs)
    assert any(r.get("type") == "session_info_changed" for r in theirs)
    compare(theirs, ours)
