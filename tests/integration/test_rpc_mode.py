"""``--mode rpc`` end to end: the real CLI as a subprocess against the loopback model server.

Every wait has a timeout and every process is killed on the way out, so a broken RPC mode fails
a test instead of hanging the suite.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Scripted, last_user_text
from tests.support.rpc_client import RpcClient

# --- fixtures ------------------------------------------------------------------------------------


MODELS = [
    {"id": "m", "name": "Test model"},
    {"id": "m2", "name": "Second test model", "reasoning": True},
]


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as model_server:
        config = model_server.models_json(models=MODELS)
        (agent_dir / "models.json").write_text(json.dumps(config))
        yield model_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def rpc(server: ModelServer, project: Path) -> Iterator[RpcClient]:
    client = RpcClient(project)
    try:
        yield client
    finally:
        client.kill()


def assistant_text(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"] if block.get("type") == "text")


def types(records: list[dict[str, Any]]) -> list[str]:
    return [record["type"] for record in records]


def last_user(server: ModelServer, index: int) -> str:
    request = server.requests[index]
    return last_user_text(request.api, request.body)


# --- tests ---------------------------------------------------------------------------------------

PI_ORDER = [
    "agent_start",
    "turn_start",
    "message_start",  # the user message
    "message_end",
    "message_start",  # the assistant message (message_update events in between)
    "message_end",
    "turn_end",
    "agent_end",
]
USER_BEFORE_TURN_ORDER = [PI_ORDER[0], *PI_ORDER[2:4], PI_ORDER[1], *PI_ORDER[4:]]


def test_prompt_streams_events_in_order(rpc: RpcClient, server: ModelServer) -> None:
    # U+2028 is a line separator for generic readers but plain text in JSON: it must survive.
    response = rpc.request({"type": "prompt", "message": "hello\u2028world"})
    assert response == {
        "type": "response",
        "command": "prompt",
        "success": True,
        "id": "req-1",
        "data": {"disposition": "started"},  # pi 1.x
    }
    records = rpc.collect_until("agent_end")
    lifecycle = [t for t in types(records) if t != "message_update"]
    # pi announces the user message after turn_start; AgentSession does it before (see the
    # xfail test below), so either place is accepted here and everything else is exact.
    assert lifecycle in (PI_ORDER, USER_BEFORE_TURN_ORDER)
    updates = [r for r in records if r["type"] == "message_update"]
    # pi 1.x's wire: delta-only (cumulative usage, the stream event without its partial).
    assert updates and all(set(r) == {"type", "usage", "assistantMessageEvent"} for r in updates)
    assert all("partial" not in r["assistantMessageEvent"] for r in updates)
    deltas = [
        r["assistantMessageEvent"] for r in updates if r["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert "".join(d["delta"] for d in deltas) == "echo: hello\u2028world"
    assert any(r["assistantMessageEvent"]["type"] == "text_delta" for r in updates)
    final = [r for r in records if r["type"] == "message_end"][-1]["message"]
    assert final["stopReason"] == "stop"
    assert assistant_text(final) == "echo: hello\u2028world"
    assert records[-1]["messages"][-1]["role"] == "assistant"

    text = rpc.request({"type": "get_last_assistant_text"})
    assert text["data"] == {"text": "echo: hello\u2028world"}

    state = rpc.request({"type": "get_state"})["data"]
    assert state["model"]["id"] == "m" and state["model"]["provider"] == "test"
    assert state["isStreaming"] is False and state["messageCount"] == 2
    assert "sessionName" not in state
    session_file = Path(state["sessionFile"])

    messages = rpc.request({"type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"][0]["text"] == "hello\u2028world"

    stats = rpc.request({"type": "get_session_stats"})["data"]
    assert stats["userMessages"] == 1 and stats["assistantMessages"] == 1 and stats["totalMessages"] == 2
    assert stats["tokens"]["input"] == 10 and stats["tokens"]["output"] == 5
    assert stats["sessionFile"] == str(session_file) and stats["sessionId"] == state["sessionId"]
    assert stats["contextUsage"]["contextWindow"] > 0

    assert rpc.close() == 0
    # split("\n"), not splitlines(): the U+2028 inside the message is not a record boundary
    lines = [json.loads(line) for line in session_file.read_text().split("\n") if line]
    assert lines[0]["type"] == "session"
    assert [e["message"]["role"] for e in lines if e["type"] == "message"] == ["user", "assistant"]


def test_steer_and_follow_up_while_streaming(rpc: RpcClient, server: ModelServer) -> None:
    server.queue(Scripted(text="one two three four five six seven eight", event_delay=0.1))
    assert rpc.request({"type": "prompt", "message": "start"})["success"]
    rpc.wait_text_delta()

    busy = rpc.request({"type": "prompt", "message": "no behaviour"})
    assert busy["success"] is False and "streamingBehavior" in busy["error"]
    assert rpc.request({"type": "steer", "message": "change course"})["success"]
    queued = rpc.request({"type": "prompt", "message": "and then this", "streamingBehavior": "followUp"})
    assert queued["success"]
    assert rpc.request({"type": "get_state"})["data"]["isStreaming"] is True

    records = rpc.collect_until("agent_end", timeout=15)
    queue_updates = [r for r in rpc.seen if r["type"] == "queue_update"]
    assert {"type": "queue_update", "steering": ["change course"], "followUp": []} in queue_updates
    assert len(server.requests) == 3
    assert last_user(server, 0) == "start"
    assert last_user(server, 1) == "change course"  # before the next model call
    assert last_user(server, 2) == "and then this"  # only when the agent would stop
    roles = [m["role"] for m in records[-1]["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]


def test_abort_during_slow_stream(rpc: RpcClient, server: ModelServer) -> None:
    # An abort that arrives together with its prompt stops it before it begins.
    rpc.send_raw(b'{"type":"prompt","message":"never mind","id":"p"}\n{"type":"abort","id":"a"}\n')
    assert rpc.wait_for(lambda r: r.get("id") == "p")["success"]
    assert rpc.wait_for(lambda r: r.get("id") == "a")["success"]
    assert rpc.request({"type": "get_state"})["data"]["isStreaming"] is False
    assert not server.requests

    server.queue(Scripted(text="word " * 60, event_delay=0.2))
    assert rpc.request({"type": "prompt", "message": "talk slowly"})["success"]
    rpc.wait_text_delta()
    started = time.monotonic()
    start = len(rpc.seen)
    response = rpc.request({"type": "abort"})
    assert response["success"] and time.monotonic() - started < 3
    before_response = rpc.seen[start:]
    ends = [r for r in before_response if r["type"] == "message_end"]
    assert ends and ends[-1]["message"]["stopReason"] == "aborted"
    assert "agent_end" in types(before_response)  # abort answers once the run is over
    assert server.requests[0].wait_finished(5) and not server.requests[0].completed

    records = rpc.prompt("again")
    final = [r for r in records if r["type"] == "message_end"][-1]["message"]
    assert assistant_text(final) == "echo: again" and final["stopReason"] == "stop"


def test_fork_and_fork_messages(rpc: RpcClient, server: ModelServer) -> None:
    rpc.prompt("first")
    rpc.prompt("second")
    before = rpc.request({"type": "get_state"})["data"]["sessionFile"]
    listed = rpc.request({"type": "get_fork_messages"})["data"]["messages"]
    assert [m["text"] for m in listed] == ["first", "second"]
    assert all(isinstance(m["entryId"], str) and m["entryId"] for m in listed)

    bad = rpc.request({"type": "fork", "entryId": "nope"})
    assert bad["success"] is False and "nope" in bad["error"]

    forked = rpc.request({"type": "fork", "entryId": listed[1]["entryId"]})
    assert forked["success"] and forked["data"] == {"text": "second", "cancelled": False}
    state = rpc.request({"type": "get_state"})["data"]
    assert state["sessionFile"] != before
    messages = rpc.request({"type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert [m["text"] for m in rpc.request({"type": "get_fork_messages"})["data"]["messages"]] == ["first"]

    rpc.prompt("second, edited")
    assert last_user(server, -1) == "second, edited"
    sent = json.dumps(server.last_request.body)
    assert "echo: first" in sent and "echo: second" not in sent
    assert rpc.close() == 0
    header = json.loads(Path(state["sessionFile"]).read_text().splitlines()[0])
    assert header["parentSession"] == before


def test_bash_output_reaches_the_next_prompt(rpc: RpcClient, server: ModelServer) -> None:
    response = rpc.request({"type": "bash", "command": "echo hi-from-bash"})
    assert response["success"], response
    data = response["data"]
    assert data["output"] == "hi-from-bash\n" and "role" not in data  # pi 1.x's BashResult
    assert data["exitCode"] == 0 and data["cancelled"] is False and data["truncated"] is False

    failed = rpc.request({"type": "bash", "command": "exit 3"})
    assert failed["success"] and failed["data"]["exitCode"] == 3

    roles = [m["role"] for m in rpc.request({"type": "get_messages"})["data"]["messages"]]
    assert roles == ["bashExecution", "bashExecution"]
    rpc.prompt("what did it print?")
    sent = json.dumps(server.last_request.body)
    assert "Ran `echo hi-from-bash`" in sent and "hi-from-bash" in sent


def test_models_and_thinking(rpc: RpcClient, server: ModelServer) -> None:
    unknown = rpc.request({"type": "set_model", "provider": "test", "modelId": "nope"})
    assert unknown["success"] is False and unknown["error"] == "Model not found: test/nope"

    chosen = rpc.request({"type": "set_model", "provider": "test", "modelId": "m2"})
    assert chosen["success"] and chosen["data"]["id"] == "m2"
    level = rpc.request({"type": "set_thinking_level", "level": "high"})
    assert level["success"] and "data" not in level
    bad_level = rpc.request({"type": "set_thinking_level", "level": "extreme"})
    assert bad_level["success"] is False and "thinking level" in bad_level["error"]
    state = rpc.request({"type": "get_state"})["data"]
    assert state["model"]["id"] == "m2" and state["thinkingLevel"] == "high"

    rpc.prompt("which model?")
    assert server.last_request.body["model"] == "m2"

    cycled = rpc.request({"type": "cycle_model"})
    assert cycled["success"] and cycled["data"]["model"]["id"] == "m"
    available = rpc.request({"type": "get_available_models"})["data"]["models"]
    assert [m["id"] for m in available] == ["m", "m2"]


def test_new_session_switch_and_name(rpc: RpcClient, server: ModelServer) -> None:
    rpc.prompt("one")
    first = rpc.request({"type": "get_state"})["data"]["sessionFile"]
    assert rpc.request({"type": "set_session_name", "name": "first work"})["success"]
    assert rpc.request({"type": "get_state"})["data"]["sessionName"] == "first work"

    created = rpc.request({"type": "new_session"})
    assert created["success"] and created["data"] == {"cancelled": False}
    state = rpc.request({"type": "get_state"})["data"]
    assert state["sessionFile"] != first and state["messageCount"] == 0
    rpc.prompt("two")
    second = rpc.request({"type": "get_state"})["data"]["sessionFile"]

    missing = rpc.request(
        {"type": "switch_session", "sessionPath": str(Path(first).parent / "missing.jsonl")}
    )
    assert missing["success"] is False and missing["error"]

    switched = rpc.request({"type": "switch_session", "sessionPath": first})
    assert switched["success"] and switched["data"] == {"cancelled": False}
    state = rpc.request({"type": "get_state"})["data"]
    assert state["sessionFile"] == first and state["sessionName"] == "first work"
    messages = rpc.request({"type": "get_messages"})["data"]["messages"]
    assert [assistant_text(m) for m in messages if m["role"] == "assistant"] == ["echo: one"]

    rpc.prompt("three")
    assert rpc.close() == 0
    first_roles = [
        json.loads(line).get("message", {}).get("role") for line in Path(first).read_text().splitlines()
    ]
    assert first_roles.count("user") == 2  # "one" and "three"
    assert "two" in Path(second).read_text()


def test_protocol_errors_never_crash(rpc: RpcClient, server: ModelServer) -> None:
    rpc.send_raw(b"{not json\n")
    parse = rpc.next()
    assert parse["type"] == "response" and parse["command"] == "parse" and parse["success"] is False
    assert parse["error"].startswith("Failed to parse command")

    rpc.send_raw(b"[1, 2]\n\n")  # not an object; the blank line is ignored
    assert rpc.next()["command"] == "parse"

    unknown = rpc.request({"type": "frobnicate"})
    assert unknown == {
        "type": "response",
        "command": "frobnicate",
        "success": False,
        "id": unknown["id"],
        "error": "Unknown command: frobnicate",
    }
    no_message = rpc.request({"type": "prompt"})
    assert no_message["success"] is False and "message" in no_message["error"]
    bad_image = rpc.request({"type": "prompt", "message": "x", "images": [{"type": "image"}]})
    assert bad_image["success"] is False and "image" in bad_image["error"].lower()

    compact = rpc.request({"type": "compact"})  # an empty session: either done or a clear error
    assert compact["success"] or compact["error"]

    rpc.send_raw(b'{"type": "get_state", "id": "crlf"}\r\n')  # CRLF input is accepted
    state = rpc.next()
    assert state["id"] == "crlf" and state["success"]
    assert not server.requests
    rpc.prompt("still alive")
    assert rpc.close() == 0


def test_eof_during_a_stream_aborts_and_saves(rpc: RpcClient, server: ModelServer, agent_dir: Path) -> None:
    server.queue(Scripted(text="word " * 60, event_delay=0.2))
    assert rpc.request({"type": "prompt", "message": "long answer"})["success"]
    rpc.wait_text_delta()
    started = time.monotonic()
    assert rpc.close(timeout=5) == 0
    assert time.monotonic() - started < 4
    rpc.wait_event("agent_end", timeout=1)
    sessions = list((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1
    entries = [json.loads(line) for line in sessions[0].read_text().split("\n") if line]
    assistant = [e["message"] for e in entries if e.get("message", {}).get("role") == "assistant"]
    assert assistant and assistant[-1]["stopReason"] == "aborted"


def test_compact_summarises_and_keeps_going(agent_dir: Path, server: ModelServer, project: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    client = RpcClient(project)
    try:
        client.prompt("first task")
        client.prompt("second task")
        before = len(server.requests)
        server.queue(Scripted(text="## Goal\nThe summary of it all."))
        response = client.request({"type": "compact", "customInstructions": "Mention the tasks"}, timeout=15)
        assert response["success"], response
        data = response["data"]
        assert "The summary of it all." in data["summary"]
        assert isinstance(data["firstKeptEntryId"], str) and data["tokensBefore"] > 0
        # A split turn makes two summary requests at once; the instructions go with the history.
        assert any("Mention the tasks" in json.dumps(r.body) for r in server.requests[before:])
        assert {"compaction_start", "compaction_end"} <= set(types(client.seen))
        client.prompt("third task")
        assert "The summary of it all." in json.dumps(server.last_request.body)
        assert client.close() == 0
    finally:
        client.kill()


def test_user_message_events_follow_turn_start_like_pi(rpc: RpcClient) -> None:
    records = rpc.prompt("order")
    assert [t for t in types(records) if t != "message_update"] == PI_ORDER


def test_get_messages_of_a_session_holding_half_an_emoji(server: ModelServer, project: Path) -> None:
    """A text read from a file may hold a lone surrogate; the reply must still go out (as Node
    writes it: the \\ud83d escape), not be dropped for want of an encoding."""
    odd = Path(__file__).resolve().parents[1] / "data" / "odd-sessions" / "14-lone-surrogate.jsonl"
    lines = odd.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    path = project / "s.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]) + b"\n")
    client = RpcClient(project, "--session", str(path))
    try:
        messages = client.request({"type": "get_messages"})["data"]["messages"]
        assert any("\\ud83d" in json.dumps(m) for m in messages)  # the half emoji, as Node escapes it
        assert client.close() == 0
    finally:
        client.kill()


def test_queue_modes_apply_and_are_saved_in_pis_keys(rpc: RpcClient, agent_dir: Path) -> None:
    steering = rpc.request({"type": "set_steering_mode", "mode": "all"})
    follow = rpc.request({"type": "set_follow_up_mode", "mode": "all"})
    assert steering["success"] and follow["success"] and "data" not in steering
    bad = rpc.request({"type": "set_steering_mode", "mode": "some"})
    assert bad["success"] is False and '"mode" must be' in bad["error"]
    state = rpc.request({"type": "get_state"})["data"]
    assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
    saved = json.loads((agent_dir / "settings.json").read_text())
    assert saved["steeringMode"] == "all" and saved["followUpMode"] == "all"
