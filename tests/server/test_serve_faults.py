"""``pi-tui serve`` under faults: a client that vanishes, a server killed mid-turn, a session
file another process writes, many clients on one session."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from tests.support.model_server import ModelServer, Scripted, model_server  # noqa: F401
from tests.support.requires import requires
from tests.support.serve import (
    SCRIPT,
    EventReader,
    ServeProcess,
    assert_consecutive,
    configure_agent,
    one_turn,
    raw_stream,
    wait_idle,
)
from tests.support.waiting import poll_until

pytestmark = requires("pi-tui")

SLOW = " ".join(f"word{i}" for i in range(80))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_a_client_that_goes_away_never_stops_the_agent(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    model_server.queue(Scripted(text=SLOW, event_delay=0.01))
    with ServeProcess(project) as server, server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        raw, received = raw_stream(server, sid)
        client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "go"})
        while received.count(b"event: message_update") < 3:
            received += raw.recv(65536)
        raw.close()  # gone mid-stream
        wait_idle(client, sid)
        reply = client.get(f"/sessions/{sid}/messages").json()["messages"][-1]
        assert reply["stopReason"] == "stop" and reply["content"][0]["text"] == SLOW


def test_killed_mid_turn_the_session_reopens_from_disk_with_every_completed_entry(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    server = ServeProcess(project).start()
    with server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "first turn"})
        wait_idle(client, sid)
        model_server.queue(Scripted(text=SLOW, event_delay=0.05))
        watcher = EventReader(server, sid)
        watcher.wait_named("snapshot")
        client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "second turn"})
        watcher.wait_named("message_update", 5)
        path = Path(client.get(f"/sessions/{sid}").json()["path"])
        watcher.close()
    server.kill()  # SIGKILL: no handler runs, the lock goes with the process
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["id"] == sid
    restarted = ServeProcess(project).start()
    try:
        with restarted.client() as client:
            listed = client.get("/sessions").json()["sessions"]
            assert [row["id"] for row in listed] == [sid] and listed[0]["live"] is False
            reopened = client.post("/sessions", json={"id": sid})
            assert reopened.status_code == 200 and reopened.json()["readOnly"] is False
            messages = client.get(f"/sessions/{sid}/messages").json()["messages"]
            texts = [m["content"][0]["text"] for m in messages]
            assert texts[:3] == ["first turn", "echo: first turn", "second turn"]  # all that was complete
            client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "third turn"})
            wait_idle(client, sid)
            after = client.get(f"/sessions/{sid}/messages").json()["messages"]
            assert [m["content"][0]["text"] for m in after][-2:] == ["third turn", "echo: third turn"]
    finally:
        restarted.stop()
    reread = SessionManager.open(path)  # the file both servers wrote reads back whole
    try:
        assert len(reread.build_session_context().messages) >= 5
    finally:
        reread.close()


def test_read_only_when_the_tui_holds_the_file(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    with ServeProcess(project) as server, server.client() as client:
        sid, path = one_turn(client)
    holder = SessionManager.open(path)  # the writer lock, as the TUI or print mode takes it
    try:
        with ServeProcess(project) as server, server.client() as client:
            opened = client.post("/sessions", json={"path": path})
            assert opened.status_code == 200
            session = opened.json()
            assert session["readOnly"] is True and "is writing it" in session["readOnlyReason"]
            url = f"/sessions/{sid}/commands"
            refused = client.post(url, json={"type": "prompt", "message": "write?"})
            assert refused.status_code == 409 and "read-only" in refused.json()["error"]
            label = client.post(url, json={"type": "set_label", "entryId": "x", "label": "y"})
            assert label.status_code == 409
            assert client.post(url, json={"type": "get_state"}).status_code == 200
            assert len(client.get(f"/sessions/{sid}/messages").json()["messages"]) == 2
            assert client.delete(f"/sessions/{sid}").status_code == 409
            reader = EventReader(server, sid)
            snapshot = reader.wait_named("snapshot")[0].data
            assert snapshot["session"]["readOnly"] is True
            reader.close()
    finally:
        holder.close()
    assert Path(path).exists()


def test_many_clients_see_every_event_once_in_the_same_order(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    model_server.queue(Scripted(text=SLOW, event_delay=0.002))
    with ServeProcess(project) as server, server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        readers = [EventReader(server, sid) for _ in range(12)]
        try:
            for reader in readers:
                reader.wait_named("snapshot")
            client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "many"})
            views = [reader.wait_named("agent_end") for reader in readers]
            wait_idle(client, sid)
            views = [
                reader.wait_for(lambda events: events[-1].name == "runtime_update") for reader in readers
            ]
            start = max(view[0].id for view in views)
            heads = [[(e.id, e.name) for e in view if e.id > start] for view in views]
            assert all(head == heads[0] for head in heads) and len(heads[0]) > 80
            for view in views:
                assert_consecutive(view)
        finally:
            for reader in readers:
                reader.close()


def test_print_mode_is_refused_a_file_the_server_writes(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    import subprocess

    configure_agent(agent_dir, model_server)
    with ServeProcess(project) as server, server.client() as client:
        sid, path = one_turn(client)
        assert server.process is not None
        other = subprocess.run(
            [SCRIPT, "--session", path, "-p", "me too"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert other.returncode == 2
        assert f"is being written by process {server.process.pid}" in other.stderr
        assert len(client.get(f"/sessions/{sid}/messages").json()["messages"]) == 2


def test_sigterm_aborts_the_running_turn_records_it_and_releases_the_file(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    import signal

    configure_agent(agent_dir, model_server)
    model_server.queue(Scripted(text=SLOW, event_delay=0.05))
    server = ServeProcess(project).start()
    with server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        watcher = EventReader(server, sid)
        watcher.wait_named("snapshot")
        client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "long"})
        watcher.wait_named("message_update", 3)
        path = Path(client.get(f"/sessions/{sid}").json()["path"])
        started = time.monotonic()
        code = server.stop(signal.SIGTERM)
        assert time.monotonic() - started < 10  # open event streams do not hold the exit
        watcher.wait_for(lambda events: True)
        watcher.close()
    assert code in (-signal.SIGTERM, 128 + signal.SIGTERM)
    assert "Traceback" not in server.stderr()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    reply = [line["message"] for line in lines if line.get("message", {}).get("role") == "assistant"][-1]
    assert reply["stopReason"] == "aborted" and reply["content"][0]["text"].startswith("word0")
    assert not path.with_name(path.name + ".lock").exists()


def test_unused_sessions_close_and_reopen_on_the_next_request(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    with ServeProcess(project, env={"PI_TUI_SERVE_IDLE_CLOSE": "0.5"}) as server, server.client() as client:
        sid, found = one_turn(client)
        path = Path(found)
        lock = path.with_name(path.name + ".lock")
        raw, _ = raw_stream(server, sid)
        time.sleep(1.5)  # time is what is tested: longer than the 0.5 s idle close
        assert lock.exists()  # followed: kept open however quiet
        raw.close()
        poll_until(lambda: not lock.exists(), "the idle session file to be closed")  # the TUI may open it now
        assert client.get("/sessions").json()["sessions"][0]["live"] is False
        tui = SessionManager.open(path)
        tui.close()
        again, received = raw_stream(server, sid)  # any request opens it again (followed: kept)
        try:
            assert b'"readOnly":false' in received and lock.exists()
            assert client.get("/sessions").json()["sessions"][0]["live"] is True
            assert len(client.get(f"/sessions/{sid}/messages").json()["messages"]) == 2
        finally:
            again.close()
