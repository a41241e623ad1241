"""pi 1.x's additions to ``--mode rpc`` and ``--mode json``, through the installed ``pi-tui``
script against the loopback model server.

Events: ``agent_settled`` after ``agent_end`` (which carries ``willRetry``), ``toolcall_start``
naming its call, ``tool_execution_end.durationMs``, ``session_info_changed``, delta-only
``message_update``. Commands: the prompt's ``disposition``, ``get_entries`` (``since``),
``get_tree``, ``clear_queue``, ``get_available_thinking_levels``, ``set_auto_retry``,
``abort_retry``, ``clone``, ``export_html``, bash ``excludeFromContext`` with
``bash_execution_update``; the ``retry.maxAgentDelayMs`` setting.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_rpc_mode import MODELS, types
from tests.support.model_server import HttpError, ModelServer, Scripted, ToolCallSpec
from tests.support.rpc_client import RpcClient

SCRIPT = "pi-tui"


class PiTuiRpc(RpcClient):
    """:class:`RpcClient` on the installed ``pi-tui`` script (the rpc tests' client runs the
    module; these check what a user's editor starts)."""

    LAUNCHER = (SCRIPT,)

    def settle(self, text: str, **fields: Any) -> list[dict[str, Any]]:
        """Prompt and return every record up to and including ``agent_settled``."""
        start = len(self.seen)
        response = self.request({"type": "prompt", "message": text, **fields})
        assert response["success"] and response["data"] == {"disposition": "started"}, response
        self.wait_event("agent_settled")
        return self.seen[start:]


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as model_server:
        config = model_server.models_json(models=MODELS)
        (agent_dir / "models.json").write_text(json.dumps(config))
        # Retries wait 50 ms (not 2 s) so the retry tests stay quick.
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 50}}))
        yield model_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("the notes\n")
    return folder


@pytest.fixture
def rpc(server: ModelServer, project: Path) -> Iterator[PiTuiRpc]:
    client = PiTuiRpc(project)
    try:
        yield client
    finally:
        client.kill()


def read_then_answer() -> list[Scripted]:
    return [
        Scripted(text="Reading.", tool_calls=[ToolCallSpec("read", {"path": "notes.txt"}, id="call_1")]),
        Scripted(text="Read it."),
    ]


def test_a_turn_with_a_tool_call_has_pi1s_events(rpc: PiTuiRpc, server: ModelServer) -> None:
    server.queue(*read_then_answer())
    records = rpc.settle("read the notes")
    kinds = types(records)
    # the answer (disposition) comes before the run's first event
    assert kinds[0] == "response" and kinds[1] == "agent_start"
    # agent_end says no retry run follows; agent_settled is the last word of the run
    assert kinds[-2:] == ["agent_end", "agent_settled"]
    end, settled = records[-2], records[-1]
    assert end["willRetry"] is False and settled == {"type": "agent_settled", "aborted": False}
    updates = [r for r in records if r["type"] == "message_update"]
    assert all(set(r) == {"type", "usage", "assistantMessageEvent"} for r in updates)
    (start,) = [
        r["assistantMessageEvent"] for r in updates if r["assistantMessageEvent"]["type"] == "toolcall_start"
    ]
    assert start["id"] == "call_1" and start["toolName"] == "read" and "partial" not in start
    (tool_end,) = [r for r in records if r["type"] == "tool_execution_end"]
    assert isinstance(tool_end["durationMs"], int) and 0 <= tool_end["durationMs"] < 10_000
    assert tool_end["isError"] is False


def test_an_aborted_run_settles_as_aborted(rpc: PiTuiRpc, server: ModelServer) -> None:
    server.queue(Scripted(text="word " * 80, event_delay=0.1))
    assert rpc.request({"type": "prompt", "message": "talk"})["data"] == {"disposition": "started"}
    rpc.wait_text_delta()
    assert rpc.request({"type": "abort"})["success"]
    # abort answers once the run is over: the run has settled by then
    (settled,) = [r for r in rpc.seen if r["type"] == "agent_settled"]
    assert settled["aborted"] is True


def test_queued_prompts_say_queued_and_clear_queue_gives_them_back(
    rpc: PiTuiRpc, server: ModelServer
) -> None:
    server.queue(Scripted(text="word " * 80, event_delay=0.1))
    assert rpc.request({"type": "prompt", "message": "talk"})["success"]
    rpc.wait_text_delta()
    queued = rpc.request({"type": "prompt", "message": "then this", "streamingBehavior": "followUp"})
    assert queued["data"] == {"disposition": "queued"}
    assert rpc.request({"type": "steer", "message": "steer me"})["data"] == {"disposition": "queued"}
    assert rpc.request({"type": "follow_up", "message": "and that"})["data"] == {"disposition": "queued"}
    cleared = rpc.request({"type": "clear_queue"})
    assert cleared["data"] == {"steering": ["steer me"], "followUp": ["then this", "and that"]}
    update = [r for r in rpc.seen if r["type"] == "queue_update"][-1]
    assert update["steering"] == [] and update["followUp"] == []
    assert rpc.request({"type": "get_state"})["data"]["pendingMessageCount"] == 0
    assert rpc.request({"type": "abort"})["success"]
    assert [r["type"] for r in rpc.seen].count("agent_settled") == 1
    assert len(server.requests) == 1  # nothing queued was sent


def test_get_entries_with_a_cursor_and_get_tree(rpc: PiTuiRpc, server: ModelServer) -> None:
    rpc.settle("one")
    first = rpc.request({"type": "get_entries"})["data"]
    entries = first["entries"]
    assert [e["type"] for e in entries][-2:] == ["message", "message"]
    assert first["leafId"] == entries[-1]["id"] and all("id" in e for e in entries)
    cursor = entries[-1]["id"]
    rpc.settle("two")
    later = rpc.request({"type": "get_entries", "since": cursor})["data"]
    assert [e["message"]["role"] for e in later["entries"]] == ["user", "assistant"]
    assert later["entries"][0]["parentId"] == cursor
    unknown = rpc.request({"type": "get_entries", "since": "nope"})
    assert unknown["success"] is False and unknown["error"] == "Entry not found: nope"

    tree = rpc.request({"type": "get_tree"})["data"]
    assert tree["leafId"] == later["leafId"]
    (root,) = tree["tree"]
    chain = []
    node = root
    while True:
        assert set(node) <= {"entry", "children", "label", "labelTimestamp"}
        chain.append(node["entry"]["id"])
        if not node["children"]:
            break
        (node,) = node["children"]
    assert chain == [e["id"] for e in entries + later["entries"]]


def test_thinking_levels_follow_the_model(rpc: PiTuiRpc) -> None:
    assert rpc.request({"type": "get_available_thinking_levels"})["data"] == {"levels": ["off"]}
    assert rpc.request({"type": "set_model", "provider": "test", "modelId": "m2"})["success"]
    levels = rpc.request({"type": "get_available_thinking_levels"})["data"]["levels"]
    assert levels[0] == "off" and "high" in levels and "minimal" in levels


def test_set_auto_retry_switches_retries(rpc: PiTuiRpc, server: ModelServer, agent_dir: Path) -> None:
    assert rpc.request({"type": "set_auto_retry", "enabled": False})["success"]
    server.queue(HttpError(503))
    rpc.request({"type": "prompt", "message": "fail at once"})
    records = rpc.collect_until("agent_settled")
    assert "auto_retry_start" not in types(records)
    assert [r for r in records if r["type"] == "message_end"][-1]["message"]["stopReason"] == "error"
    assert len(server.requests) == 1
    assert json.loads((agent_dir / "settings.json").read_text())["retry"] == {
        "baseDelayMs": 50,
        "enabled": False,
    }

    assert rpc.request({"type": "set_auto_retry", "enabled": True})["success"]
    server.queue(HttpError(503), Scripted(text="second time lucky"))
    records = rpc.settle("retry this")
    assert "auto_retry_start" in types(records)
    assert [r for r in records if r["type"] == "auto_retry_end"][-1]["success"] is True
    bad = rpc.request({"type": "set_auto_retry", "enabled": "yes"})
    assert bad["success"] is False and "enabled" in bad["error"]


def test_abort_retry_ends_the_wait_with_the_error(rpc: PiTuiRpc, server: ModelServer) -> None:
    server.queue(HttpError(503, headers={"Retry-After": "30"}), Scripted(text="never asked for"))
    rpc.request({"type": "prompt", "message": "overloaded"})
    waiting = rpc.wait_event("auto_retry_start")
    assert waiting["delayMs"] == 30_000
    started = time.monotonic()
    assert rpc.request({"type": "abort_retry"})["success"]
    records = rpc.collect_until("agent_settled")
    assert time.monotonic() - started < 5  # not the 30 s wait
    (retry_end,) = [r for r in records if r["type"] == "auto_retry_end"]
    assert retry_end["success"] is False and "retry cancelled" in retry_end["finalError"]
    final = [r for r in records if r["type"] == "message_end"][-1]["message"]
    assert final["stopReason"] == "error" and "503" in final["errorMessage"]
    assert len(server.requests) == 1
    assert rpc.request({"type": "abort_retry"})["success"]  # nothing waiting: still fine


def test_a_retry_wait_beyond_max_agent_delay_fails_at_once(
    server: ModelServer, project: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"maxAgentDelayMs": 1000}}))
    server.queue(HttpError(429, headers={"Retry-After": "30"}), Scripted(text="never asked for"))
    started = time.monotonic()
    done = subprocess.run(
        [SCRIPT, "--provider", "test", "--model", "m", "--mode", "json", "-p", "hi"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 20
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert "auto_retry_start" not in types(events)
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert "longer than the 1 s retry delay limit" in final["errorMessage"]
    assert len(server.requests) == 1


def test_clone_continues_in_a_copy(rpc: PiTuiRpc, server: ModelServer) -> None:
    rpc.settle("keep me")
    before = rpc.request({"type": "get_state"})["data"]["sessionFile"]
    messages = rpc.request({"type": "get_messages"})["data"]["messages"]
    assert rpc.request({"type": "clone"})["data"] == {"cancelled": False}
    after = rpc.request({"type": "get_state"})["data"]["sessionFile"]
    assert after != before and Path(after).is_file()
    assert rpc.request({"type": "get_messages"})["data"]["messages"] == messages
    header = json.loads(Path(after).read_text().splitlines()[0])
    assert header["parentSession"] == before


def test_export_html_writes_the_page(rpc: PiTuiRpc, project: Path) -> None:
    rpc.settle("a page please")
    given = rpc.request({"type": "export_html", "outputPath": "out/page.html"})
    assert given["data"] == {"path": str((project / "out" / "page.html").resolve())}
    page = Path(given["data"]["path"]).read_text()
    assert page.lstrip().lower().startswith("<!doctype html") and "a page please" in page
    default = rpc.request({"type": "export_html"})["data"]["path"]
    assert Path(default).parent == project.resolve() and Path(default).name.endswith(".html")


def test_bash_streams_and_excludes_from_context(rpc: PiTuiRpc, server: ModelServer) -> None:
    start = len(rpc.seen)
    response = rpc.request(
        {"type": "bash", "command": "echo secret-out; echo more", "excludeFromContext": True}
    )
    assert response["data"] == {
        "output": "secret-out\nmore\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
    }
    updates = [r for r in rpc.seen[start:] if r["type"] == "bash_execution_update"]
    assert updates and all(r["id"] == response["id"] for r in updates)
    assert "".join(r["delta"] for r in updates) == "secret-out\nmore\n"
    rpc.request({"type": "bash", "command": "echo shared-out"})
    rpc.settle("what ran?")
    sent = json.dumps(server.last_request.body)
    assert "shared-out" in sent and "secret-out" not in sent
    entries = rpc.request({"type": "get_entries"})["data"]["entries"]
    bash = [e["message"] for e in entries if e.get("message", {}).get("role") == "bashExecution"]
    assert [b.get("excludeFromContext") for b in bash] == [True, False]
    bad = rpc.request({"type": "bash", "command": "true", "excludeFromContext": "yes"})
    assert bad["success"] is False


def test_set_session_name_is_announced(rpc: PiTuiRpc) -> None:
    start = len(rpc.seen)
    assert rpc.request({"type": "set_session_name", "name": "my work"})["success"]
    (changed,) = [r for r in rpc.seen[start:] if r["type"] == "session_info_changed"]
    assert changed == {"type": "session_info_changed", "name": "my work"}


def test_json_mode_ends_with_agent_settled(server: ModelServer, project: Path) -> None:
    server.queue(*read_then_answer())
    done = subprocess.run(
        [SCRIPT, "--provider", "test", "--model", "m", "--mode", "json", "-p", "read the notes"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert types(events)[0] == "session" and types(events)[-2:] == ["agent_end", "agent_settled"]
    assert events[-2]["willRetry"] is False and events[-1]["aborted"] is False
    (tool_end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert isinstance(tool_end["durationMs"], int)


REMEMBER = """
def activate(pi):
    async def remember(args, ctx):
        pi.append_entry("memo", {"text": args})
    pi.register_command("remember", handler=remember, description="Keep a memo")
"""


def test_an_extension_entry_is_announced_and_its_command_is_handled(
    server: ModelServer, project: Path, tmp_path: Path
) -> None:
    extension = tmp_path / "remember.py"
    extension.write_text(REMEMBER)
    client = PiTuiRpc(project, "-e", str(extension))
    try:
        start = len(client.seen)
        answer = client.request({"type": "prompt", "message": "/remember the milk"})
        assert answer["success"] and answer["data"] == {"disposition": "handled"}
        (appended,) = [r for r in client.seen[start:] if r["type"] == "entry_appended"]
        entry = appended["entry"]
        assert entry["type"] == "custom" and entry["customType"] == "memo"
        assert entry["data"] == {"text": "the milk"} and isinstance(entry["id"], str)
        entries = client.request({"type": "get_entries"})["data"]["entries"]
        assert entries[-1] == entry
        assert "agent_start" not in types(client.seen) and not server.requests  # no run for it
    finally:
        client.kill()


def test_compact_reports_pi1s_result_fields(server: ModelServer, project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    client = PiTuiRpc(project)
    try:
        client.settle("first task")
        client.settle("second task")
        server.queue(Scripted(text="## Goal\nThe summary."), Scripted(text="## Goal\nThe summary."))
        start = len(client.seen)
        response = client.request({"type": "compact"}, timeout=15)
        data = response["data"]
        assert set(data) == {
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "estimatedTokensAfter",
            "usage",
            "details",
        }
        assert data["estimatedTokensAfter"] > 0 and data["usage"]["output"] > 0
        (end,) = [r for r in client.seen[start:] if r["type"] == "compaction_end"]
        assert end["result"] == data and end["aborted"] is False and end["willRetry"] is False
    finally:
        client.kill()
