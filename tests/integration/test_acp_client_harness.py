"""The ACP test client itself (tests/support/acp_client.py and .mjs), checked against a tiny agent.

Every test of ``pi-tui acp`` trusts the harness to carry messages both ways, to answer the
agent's file, terminal and permission requests as an editor would, and to report what the
agent got wrong. If it did not (a report lost, a schema check that never fires, a terminal that
never runs), a pi-tui test could pass for the wrong reason. These tests drive the harness
against ``tests/support/acp_echo_agent.py``, written on the Python ACP SDK, so a failure here
points at the harness, not at pi-tui.

Starting the pair costs about a second (most of it the Python SDK's import), so the tests that
leave the client clean share one (:func:`shared`, each in a session of its own) and the module
runs on one xdist worker; those that provoke errors or end the agent start their own.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp_client import AcpClient, AcpError, Pending, PermissionChoice
from tests.support.acp_echo_agent import BAD_RESULT_CWD
from tests.support.waiting import poll_until

REPO = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, "-m", "tests.support.acp_echo_agent"]
pytestmark = pytest.mark.xdist_group("acp")
EVERYTHING = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


def start(capabilities: dict[str, Any] | None = None) -> tuple[AcpClient, str]:
    """A client with the echo agent initialized (offering ``capabilities``) and a session's id."""
    client = AcpClient.start(AGENT, cwd=REPO)
    try:
        answer = client.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": EVERYTHING if capabilities is None else capabilities,
            },
        )
        assert answer["protocolVersion"] == 1
        session = client.request("session/new", {"cwd": str(REPO), "mcpServers": []})
    except BaseException:
        client.close()
        raise
    return client, session["sessionId"]


@pytest.fixture(scope="module")
def shared() -> Iterator[AcpClient]:
    """One client and echo agent for the tests that leave no error behind."""
    client, _session_id = start()
    with client:
        yield client


@pytest.fixture
def acp(shared: AcpClient) -> tuple[AcpClient, str]:
    """The shared client and a new session of the echo agent, the permission policy reset."""
    shared.set_permission("cancelled")
    return shared, shared.request("session/new", {"cwd": str(REPO), "mcpServers": []})["sessionId"]


def requests_of(client: AcpClient, session_id: str, method: str) -> list[dict[str, Any]]:
    """The params of the agent's ``method`` requests in one session."""
    return [params for params in client.requests(method) if params.get("sessionId") == session_id]


def run_steps(client: AcpClient, session_id: str, *steps: dict[str, Any]) -> dict[str, Any]:
    """Prompt the echo agent with ``steps``; the prompt's result."""
    result: dict[str, Any] = client.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": json.dumps(list(steps))}]},
    )
    return result


def text_of(client: AcpClient, session_id: str) -> str:
    """Everything the agent said in the session, its message chunks joined (an invalid chunk
    without content is reported as an update too: it is skipped)."""
    return "".join(
        update["update"]["content"]["text"]
        for update in client.updates(session_id)
        if update["update"]["sessionUpdate"] == "agent_message_chunk" and "content" in update["update"]
    )


def facts(client: AcpClient, session_id: str) -> list[dict[str, Any]]:
    """The JSON lines the echo agent said (what its steps learnt)."""
    return [json.loads(line) for line in text_of(client, session_id).splitlines() if line.startswith("{")]


def test_messages_round_trip(acp: tuple[AcpClient, str]) -> None:
    client, session_id = acp
    turn = client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    )
    assert turn == {"stopReason": "end_turn"}
    chunks = [update["update"] for update in client.updates(session_id)]
    assert [chunk["content"]["text"] for chunk in chunks] == ["echo", ": hi"]  # streamed, in order
    listed = client.request("session/list", {})["sessions"]
    assert {"sessionId": session_id, "cwd": str(REPO)} in listed
    assert client.request("session/set_mode", {"sessionId": session_id, "modeId": "ask"}) == {}
    assert client.request("session/load", {"sessionId": session_id, "cwd": str(REPO), "mcpServers": []}) == {}
    replayed = client.updates(session_id)[len(chunks) :]
    assert [update["update"] for update in replayed] == [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}
    ]
    echoed = client.request("_echo/hello", {"x": 1})
    assert echoed["method"] == "echo/hello" and echoed["params"] == {"x": 1}
    with pytest.raises(AcpError) as refused:
        client.request("session/unknown", {})
    assert refused.value.code == -32601
    client.assert_clean()


def test_invalid_messages_are_reported() -> None:
    """A session/update without its content, a result without a required field and a bare line on
    stdout: each is reported, and the session goes on."""
    client, session_id = start()
    with client:
        turn = run_steps(
            client,
            session_id,
            {"do": "bad_update"},
            {"do": "garbage", "text": "not json"},
            {"do": "say", "text": "ok"},
        )
        assert turn == {"stopReason": "end_turn"}
        assert client.garbage == ["not json"]
        [bad_update] = client.schema_errors
        assert "SessionNotification" in bad_update["message"] and "content" in bad_update["message"]
        assert bad_update["payload"]["params"]["update"] == {"sessionUpdate": "agent_message_chunk"}
        assert text_of(client, session_id) == "ok"

        client.request("session/list", {"cwd": BAD_RESULT_CWD})
        [_, bad_result] = client.schema_errors
        assert "the result of session/list is not a valid ListSessionsResponse" in bad_result["message"]
        assert "cwd" in bad_result["message"] and "/sessions/0/sessionId" in bad_result["message"]
        assert client.protocol_errors == []


def test_files_are_read_and_written_for_real(acp: tuple[AcpClient, str], tmp_path: Path) -> None:
    client, session_id = acp
    notes = tmp_path / "notes.txt"
    notes.write_text("one\ntwo\nthree\n")
    written = tmp_path / "new" / "out.txt"
    run_steps(
        client,
        session_id,
        {"do": "read", "path": str(notes)},
        {"do": "read", "path": str(notes), "line": 2, "limit": 1},
        {"do": "read", "path": str(tmp_path / "missing.txt")},
        {"do": "write", "path": str(written), "content": "written by the agent\n"},
    )
    client.set_buffer(notes, "unsaved\nbuffer\n")
    run_steps(client, session_id, {"do": "read", "path": str(notes), "line": 2})
    assert facts(client, session_id) == [
        {"read": "one\ntwo\nthree\n"},
        {"read": "two\n"},
        {"read_error": -32002},
        {"wrote": str(written)},
        {"read": "buffer\n"},
    ]
    assert written.read_text() == "written by the agent\n"
    assert requests_of(client, session_id, "fs/write_text_file") == [
        {"sessionId": session_id, "path": str(written), "content": "written by the agent\n"}
    ]
    assert [request["path"] for request in requests_of(client, session_id, "fs/read_text_file")] == [
        str(notes),
        str(notes),
        str(tmp_path / "missing.txt"),
        str(notes),
    ]
    client.set_buffer(notes, None)
    client.assert_clean()


def test_methods_the_client_did_not_offer_are_refused_and_reported(tmp_path: Path) -> None:
    client, session_id = start({})
    with client:
        run_steps(client, session_id, {"do": "read", "path": str(tmp_path / "any.txt")})
        assert facts(client, session_id) == [{"read_error": -32601}]
        [misuse] = client.protocol_errors
        assert "fs/read_text_file" in misuse["message"] and "did not offer" in misuse["message"]
        assert client.schema_errors == [] and client.garbage == []


def test_terminals_run_for_real(acp: tuple[AcpClient, str], tmp_path: Path) -> None:
    client, session_id = acp
    script = 'printf "%s in %s\\n" "$GREETING" "$PWD"; echo oops >&2; exit 3'
    run_steps(
        client,
        session_id,
        {
            "do": "run",
            "command": "sh",
            "args": ["-c", script],
            "env": {"GREETING": "hello"},
            "cwd": str(tmp_path),
        },
        # 40 two-byte characters and a newline, kept to the last 9 bytes: 4 whole characters
        {
            "do": "run",
            "command": "sh",
            "args": ["-c", "printf 'é%.0s' $(seq 40); echo"],
            "outputByteLimit": 10,
        },
        {"do": "run", "command": "sleep", "args": ["30"], "kill": True},
    )
    plain, limited, killed = facts(client, session_id)
    assert plain == {
        "output": f"hello in {tmp_path}\noops\n",
        "truncated": False,
        "exit": {"exitCode": 3, "signal": None},
    }
    assert limited == {"output": "éééé\n", "truncated": True, "exit": {"exitCode": 0, "signal": None}}
    assert killed["exit"] == {"exitCode": None, "signal": "SIGKILL"}
    assert len(requests_of(client, session_id, "terminal/create")) == 3
    assert len(requests_of(client, session_id, "terminal/release")) == 3
    assert len(requests_of(client, session_id, "terminal/kill")) == 1
    client.assert_clean()


def test_permission_policy(acp: tuple[AcpClient, str]) -> None:
    client, session_id = acp
    choices: list[PermissionChoice] = [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
        "cancelled",
    ]
    for choice in choices:
        client.set_permission(choice)
        run_steps(client, session_id, {"do": "tool"}, {"do": "permission"})
    assert facts(client, session_id) == [
        {"permission": "opt-allow_once"},
        {"permission": "opt-allow_always"},
        {"permission": "opt-reject_once"},
        {"permission": "opt-reject_always"},
        {"permission": "cancelled"},
    ]
    asked = requests_of(client, session_id, "session/request_permission")
    assert len(asked) == 5
    assert [option["kind"] for option in asked[0]["options"]] == choices[:4]
    kinds = [update["update"]["sessionUpdate"] for update in client.updates(session_id)]
    assert kinds[:3] == ["tool_call", "tool_call_update", "agent_message_chunk"]
    client.assert_clean()


def waiting_turn(client: AcpClient, session_id: str) -> Pending:
    """A prompt turn the echo agent keeps running until it is cancelled, once it runs."""
    steps = [{"do": "say", "text": "waiting"}, {"do": "wait_cancel"}]
    turn = client.request_async(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": json.dumps(steps)}]}
    )
    client.wait_for(lambda: text_of(client, session_id) == "waiting", what="the agent to start waiting")
    assert not turn.done()
    return turn


def test_cancel_reaches_the_agent(acp: tuple[AcpClient, str]) -> None:
    client, session_id = acp
    turn = waiting_turn(client, session_id)
    client.notify("session/cancel", {"sessionId": session_id})
    assert turn.result() == {"stopReason": "cancelled"}
    client.assert_clean()


def test_a_request_is_cancelled_with_cancel_request(acp: tuple[AcpClient, str]) -> None:
    """Pending.cancel aborts the SDK's request, which sends ``$/cancel_request`` for its id."""
    client, session_id = acp
    turn = waiting_turn(client, session_id)
    turn.cancel()
    assert turn.result() == {"stopReason": "cancelled"}
    client.assert_clean()


def test_closing_ends_the_agent() -> None:
    client, _session_id = start()
    with client:
        pid = client.request("_echo/pid", {})["pid"]
        assert Path(f"/proc/{pid}").exists()
    assert client.process.returncode == 0
    assert client.exit is not None and client.exit["code"] == 0  # it ended when its stdin closed
    poll_until(lambda: not _alive(pid), f"the echo agent {pid} to be gone")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
