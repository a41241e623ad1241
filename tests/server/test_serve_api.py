"""``pi-tui serve`` end to end: the real server on a free loopback port, a real HTTP client for
every resource and command, real model replies streamed from the loopback model server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec, model_server  # noqa: F401
from tests.support.requires import requires
from tests.support.serve import (
    SCRIPT,
    EventReader,
    ServeProcess,
    assert_consecutive,
    configure_agent,
    wait_idle,
)
from tests.support.waiting import poll_until

pytestmark = requires("pi-tui")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Demo\n")
    return root


@pytest.fixture
def server(project: Path, agent_dir: Path, model_server: ModelServer) -> Iterator[ServeProcess]:  # noqa: F811
    configure_agent(agent_dir, model_server)
    with ServeProcess(project) as running:
        yield running


def session_lines(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def prompt_and_wait(client: httpx.Client, server: ServeProcess, session_id: str, text: str) -> list:
    reader = EventReader(server, session_id)
    try:
        reader.wait_named("snapshot")
        answer = client.post(f"/sessions/{session_id}/commands", json={"type": "prompt", "message": text})
        assert answer.status_code == 200, answer.text
        return reader.wait_for(
            lambda events: any(e.name == "runtime_update" and e.data["runtime"] == "idle" for e in events)
        )
    finally:
        reader.close()


# --- the token ---------------------------------------------------------------------------------


def test_every_request_needs_the_token(server: ServeProcess) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as anonymous:
        for method, path in (("GET", "/sessions"), ("POST", "/sessions"), ("GET", "/nope")):
            answer = anonymous.request(method, path)
            assert answer.status_code == 401, (method, path)
            assert answer.headers["www-authenticate"] == "Bearer"
            assert "token" in answer.json()["error"].lower()
        # The page alone opens without it, and holds no token then (the tab keeps its own).
        bare = anonymous.get("/")
        assert bare.status_code == 200 and server.token not in bare.text
        assert "set-cookie" not in bare.headers
    with server.client(token="wrong-token-000000") as wrong:
        assert wrong.get("/sessions").json() == {"error": "Wrong token"}
    with server.client() as client:
        assert client.get("/sessions").status_code == 200
        assert client.get("/").headers["content-type"].startswith("text/html")
    with httpx.Client(base_url=server.url, timeout=10) as browser:
        assert browser.get(f"/sessions?token={server.token}").status_code == 401  # the page's address only
        page = browser.get(f"/?token={server.token}")
        assert page.status_code == 200 and server.token in page.text
        assert "set-cookie" not in page.headers  # no cookie: every port of the host would get it
        assert browser.get("/sessions").status_code == 401
        assert browser.get("/?token=wrong-token-000000").status_code == 401


def test_a_random_token_is_printed_and_other_hosts_need_one(project: Path) -> None:
    with ServeProcess(project, token=None) as running:
        printed = "\n".join(running.printed)
        token = next(line.split(": ", 1)[1] for line in running.printed if line.startswith("token: "))
        assert len(token) >= 24 and f"?token={token}" in printed
        with running.client(token=token) as client:
            assert client.get("/sessions").status_code == 200
    refused = subprocess.run(
        [SCRIPT, "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2
    assert "needs a token you chose" in refused.stderr and "Traceback" not in refused.stderr
    bad = subprocess.run(
        [SCRIPT, "serve", "--port", "x"], cwd=project, capture_output=True, text=True, timeout=30
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


# --- sessions and commands ---------------------------------------------------------------------


def test_prompt_streams_events_and_saves_where_the_cli_does(
    server: ServeProcess,
    agent_dir: Path,
    project: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    model_server.queue(Scripted(text="Hello from the model, in several words."))
    with server.client() as client:
        created = client.post("/sessions", json={})
        assert created.status_code == 201
        session = created.json()
        assert session["cwd"] == str(project.resolve()) and session["readOnly"] is False
        events = prompt_and_wait(client, server, session["id"], "say hello")
        assert_consecutive(events)
        snapshot = events[0].data
        assert (
            snapshot["runtime"] == "idle" and snapshot["messages"] == [] and snapshot["seq"] == events[0].id
        )
        names = [event.name for event in events]
        for name in ("response", "agent_start", "message_update", "message_end", "agent_end"):
            assert name in names, name
        runtimes = [e.data["runtime"] for e in events if e.name == "runtime_update"]
        assert runtimes[0] == "generating" and runtimes[-1] == "idle"
        messages = client.get(f"/sessions/{session['id']}/messages").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert messages[1]["content"][0]["text"] == "Hello from the model, in several words."
        path = Path(client.get(f"/sessions/{session['id']}").json()["path"])
        assert path.parent.parent == agent_dir / "sessions"  # <agent dir>/sessions/--cwd--/
        assert path.parent.name.startswith("--") and path.parent.name.endswith("--")
        lines = session_lines(str(path))
        assert lines[0]["type"] == "session" and lines[0]["id"] == session["id"]
        assert model_server.requests[-1].body["model"] == "m"  # the model settings.json names
        listed = client.get("/sessions").json()["sessions"]
        assert [row["id"] for row in listed] == [session["id"]] and listed[0]["live"] is True
        assert client.get("/sessions", params={"q": "say hello"}).json()["sessions"][0]["id"] == session["id"]
        assert client.get("/sessions", params={"q": "nothing like this"}).json()["sessions"] == []
        models = client.get(f"/sessions/{session['id']}/models").json()
        assert models["current"]["id"] == "m" and [m["id"] for m in models["models"]] == ["m"]


def test_tree_labels_navigation_with_summary_fork_clone_and_delete(
    server: ServeProcess,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        prompt_and_wait(client, server, sid, "first question")
        prompt_and_wait(client, server, sid, "second question")
        base = f"/sessions/{sid}"
        tree = client.get(f"{base}/tree").json()
        texts = tree["tree"]["texts"]
        first_user = tree["tree"]["ids"][texts.index("user: first question")]
        first_reply = tree["tree"]["ids"][texts.index("assistant: echo: first question")]
        answer = client.post(
            f"{base}/commands", json={"type": "set_label", "entryId": first_reply, "label": "keep"}
        )
        assert answer.status_code == 200 and answer.json() == {
            "type": "response",
            "command": "set_label",
            "success": True,
        }
        assert client.get(f"{base}/tree").json()["tree"]["labels"] == {first_reply: "keep"}

        model_server.queue(Scripted(text="## Goal\nA summary of the branch left behind."))
        moved = client.post(
            f"{base}/commands",
            json={
                "type": "navigate_tree",
                "targetId": first_reply,
                "summarize": True,
                "customInstructions": "be brief",
            },
        )
        assert moved.status_code == 200, moved.text
        data = moved.json()["data"]
        assert data["cancelled"] is False and data["summaryEntryId"]
        assert "be brief" in json.dumps(model_server.requests[-1].body)
        after = client.get(f"{base}/tree").json()
        assert after["leafId"] == data["summaryEntryId"]
        summary_entry = next(
            e for e in session_lines(client.get(base).json()["path"]) if e["id"] == data["summaryEntryId"]
        )
        assert summary_entry["type"] == "branch_summary" and summary_entry["parentId"] == first_reply
        assert [m["role"] for m in client.get(f"{base}/messages").json()["messages"]] == [
            "user",
            "assistant",
            "branchSummary",
        ]

        whole = client.get(f"{base}/tree", params={"entries": "all"}).json()
        branch = client.get(f"{base}/tree", params={"entries": "path"}).json()
        lines, path_lines = whole["entries"].split("\n"), branch["entries"].split("\n")
        assert len(lines) == len(path_lines) == len(whole["tree"]["ids"])
        assert [json.loads(line)["id"] for line in lines] == whole["tree"]["ids"]
        on_path = set(branch["tree"]["path"])
        assert [i for i, line in enumerate(path_lines) if line] == sorted(on_path)
        assert all(path_lines[i] == lines[i] for i in on_path)
        assert "second question" not in branch["entries"]  # the branch left is not sent
        assert client.get(f"{base}/tree", params={"entries": "some"}).status_code == 400

        back = client.post(f"{base}/commands", json={"type": "navigate_tree", "targetId": first_user})
        assert back.json()["data"]["editorText"] == "first question"  # a prompt goes back to the editor

        forked = client.post(f"{base}/fork", json={"entryId": first_user})
        assert forked.status_code == 201 and forked.json()["text"] == "first question"
        assert client.get(f"/sessions/{forked.json()['id']}/messages").json()["messages"] == []
        cloned = client.post(f"{base}/clone")
        assert cloned.status_code == 201
        clone_tree = client.get(f"/sessions/{cloned.json()['id']}/tree").json()
        assert clone_tree["tree"]["labels"] == {}  # the clone holds the branch up to the leaf only
        assert client.post(f"{base}/fork", json={"entryId": first_reply}).status_code == 400  # not a prompt

        path = Path(client.get(base).json()["path"])
        assert client.delete(base).json()["deleted"] is True
        assert not path.exists()
        assert client.get(f"{base}/messages").status_code == 404


def test_commands_share_rpc_semantics_and_busy_sessions_refuse(
    server: ServeProcess,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        url = f"/sessions/{sid}/commands"
        reader = EventReader(server, sid)
        try:
            reader.wait_named("snapshot")
            model_server.queue(Scripted(text=" ".join(f"w{i}" for i in range(60)), event_delay=0.05))
            assert (
                client.post(url, json={"type": "prompt", "message": "slow one", "id": "p1"}).json()["id"]
                == "p1"
            )
            reader.wait_named("message_update")
            busy = client.post(url, json={"type": "prompt", "message": "again"})
            assert busy.status_code == 409 and "already running" in busy.json()["error"]
            assert client.post(url, json={"type": "steer", "message": "hurry"}).status_code == 200
            assert client.post(url, json={"type": "follow_up", "message": "then this"}).status_code == 200
            late = EventReader(server, sid)  # a client arriving mid-stream gets the draft so far
            snapshot = late.wait_named("snapshot")[0].data
            late.close()
            assert snapshot["runtime"] == "generating"
            assert snapshot["draft"]["message"]["role"] == "assistant"
            assert snapshot["draft"]["message"]["content"][0]["text"].startswith("w0")
            assert snapshot["queue"]["steering"] == ["hurry"] and snapshot["queue"]["followUp"] == [
                "then this"
            ]
            assert [m["role"] for m in snapshot["messages"]] == ["user"]
            assert client.post(url, json={"type": "bash", "command": "echo hi"}).status_code == 409
            state = client.post(url, json={"type": "get_state"}).json()["data"]
            assert state["isStreaming"] is True and state["pendingMessageCount"] == 2
            aborted = client.post(url, json={"type": "abort"})
            assert aborted.status_code == 200
            reader.wait_for(
                lambda events: any(e.name == "runtime_update" and e.data["runtime"] == "idle" for e in events)
            )
        finally:
            reader.close()
        assert client.post(url, json={"type": "set_thinking_level", "level": "high"}).status_code == 200
        assert client.post(url, json={"type": "set_thinking_level", "level": "huge"}).status_code == 400
        assert (
            client.post(url, json={"type": "set_model", "provider": "test", "modelId": "m"}).json()["data"][
                "id"
            ]
            == "m"
        )
        assert client.post(url, json={"type": "name", "name": "Served"}).status_code == 200
        assert client.get(f"/sessions/{sid}").json()["name"] == "Served"
        shell = client.post(url, json={"type": "bash", "command": "echo from-the-shell"})
        assert shell.status_code == 200 and "from-the-shell" in shell.json()["data"]["output"]
        compact = client.post(url, json={"type": "compact"})
        assert compact.status_code == 400  # rpc mode's answer for a session this small
        assert compact.json()["error"] == "Nothing to compact (the session is too small)"
        assert (
            client.post(url, json={"type": "new_session"})
            .json()["error"]
            .startswith("new_session is a resource")
        )
        unknown = client.post(url, json={"type": "fly"})
        assert unknown.status_code == 400 and unknown.json()["error"] == "Unknown command: fly"
        assert client.post(url, content=b"{not json").status_code == 400
        assert client.post(url, json=["prompt"]).status_code == 400
        assert client.post("/sessions/00000000-none/commands", json={"type": "get_state"}).status_code == 404
        assert client.put(f"/sessions/{sid}").status_code == 405
        assert client.post("/sessions", json={"path": "/no/such/file.jsonl"}).status_code == 404
        assert client.post("/sessions", json={"cwd": "/no/such/folder"}).status_code == 400
        for answer in (unknown, client.get("/nowhere")):
            assert "Traceback" not in answer.text and set(answer.json()) == {"error"} | (
                {"type", "command", "success"} if answer is unknown else set()
            )


# --- the event stream --------------------------------------------------------------------------


def test_replay_after_a_drop_and_a_new_snapshot_after_an_old_gap(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    words = " ".join(f"w{i}" for i in range(40))
    knobs = {"PI_TUI_SERVE_RING": "64", "PI_TUI_SERVE_HEARTBEAT": "0.3"}
    with ServeProcess(project, env=knobs) as server, server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        model_server.queue(Scripted(text=words, event_delay=0.03))
        first = EventReader(server, sid)
        steady = EventReader(server, sid)
        first.wait_named("snapshot")
        steady.wait_named("snapshot")
        client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "count"})
        seen = first.wait_named("message_update", 5)
        first.close()  # this client drops mid-stream...
        last = seen[-1].id
        resumed = EventReader(server, sid, last_id=last)  # ...and comes back with Last-Event-ID
        done = resumed.wait_named("agent_end")
        assert done[0].id == last + 1 and all(e.name != "snapshot" for e in done)
        whole = steady.wait_named("agent_end")
        # What the dropped client got, before and after, is what the steady one got: no gap,
        # no duplicate, the same events in the same order.
        pieced = [(e.id, e.name, e.data) for e in seen + done]
        assert pieced == [(e.id, e.name, e.data) for e in whole[: len(pieced)]]
        assert_consecutive(whole)
        resumed.close()

        since = EventReader(server, sid, since=whole[-1].id - 3)
        replayed = since.wait_for(lambda events: len(events) >= 3)
        assert [e.id for e in replayed[:3]] == [whole[-1].id - 2, whole[-1].id - 1, whole[-1].id]
        since.close()

        model_server.queue(Scripted(text=words, event_delay=0.01))
        client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "again"})
        steady.wait_named("agent_end", 2)
        assert steady.events[-1].id - whole[1].id > 64  # the first turn has left the ring
        stale = EventReader(server, sid, last_id=whole[1].id)
        resynced = stale.wait_named("snapshot")
        assert resynced[0].name == "snapshot" and resynced[0].data["seq"] == resynced[0].id
        assert resynced[0].id >= steady.events[-1].id - 2  # a snapshot of now, not old events
        assert [m["role"] for m in resynced[0].data["messages"]] == ["user", "assistant"] * 2
        stale.close()

        restarted = EventReader(server, sid, last_id=12)  # a number from before this server ran
        assert restarted.wait_named("snapshot")[0].name == "snapshot"
        poll_until(lambda: restarted.comments, "a heartbeat comment", timeout=5)
        assert restarted.comments[:1] == [": heartbeat"]  # every PI_TUI_SERVE_HEARTBEAT seconds
        restarted.close()
        steady.close()


def test_abort_reaches_a_compaction_that_runs_beside_the_queue(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    import threading

    configure_agent(agent_dir, model_server, settings={"compaction": {"keepRecentTokens": 1}})
    with ServeProcess(project) as server, server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        url = f"/sessions/{sid}/commands"
        for text in ("one", "two"):
            client.post(url, json={"type": "prompt", "message": text})
            wait_idle(client, sid)
        # A compaction may send two summary requests at once (the history and a split turn's
        # start): every request gets the same reply, slow while the abort is tried, then quick.
        summary = {"reply": Scripted(text="A summary.", first_byte_delay=30)}
        model_server.default = lambda request: summary["reply"]
        answers: dict[str, httpx.Response] = {}

        def compact() -> None:
            with server.client(timeout=60) as other:
                answers["compact"] = other.post(url, json={"type": "compact", "id": "k"})

        worker = threading.Thread(target=compact)
        worker.start()
        model_server.wait_for_requests(3, timeout=10)  # the summary request is on its way
        assert client.get(f"/sessions/{sid}").json()["runtime"] == "generating"
        aborted = client.post(url, json={"type": "abort"})
        worker.join(10)
        assert aborted.status_code == 200
        assert answers["compact"].status_code == 409
        assert answers["compact"].json() == {
            "type": "response",
            "command": "compact",
            "success": False,
            "id": "k",
            "error": "compact was cancelled",
        }
        wait_idle(client, sid)
        assert [m["role"] for m in client.get(f"/sessions/{sid}/messages").json()["messages"]] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        summary["reply"] = Scripted(text="## Goal\nThe user said one and two.")
        done = client.post(url, json={"type": "compact"})
        assert done.status_code == 200, done.text
        assert done.json()["data"]["summary"].startswith("## Goal")
        roles = [m["role"] for m in client.get(f"/sessions/{sid}/messages").json()["messages"]]
        assert roles[0] == "compactionSummary"


def test_runtime_goes_through_tools_and_reports_a_model_error_until_the_next_run(
    server: ServeProcess,
    model_server: ModelServer,  # noqa: F811
) -> None:
    from tests.support.model_server import HttpError

    with server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        url = f"/sessions/{sid}/commands"
        reader = EventReader(server, sid)
        try:
            reader.wait_named("snapshot")
            model_server.queue(
                Scripted(tool_calls=[ToolCallSpec("bash", {"command": "sleep 0.3; echo done"})]),
                Scripted(text="It printed done."),
            )
            client.post(url, json={"type": "prompt", "message": "run it"})
            reader.wait_for(lambda events: runtimes(events)[-1:] == ["idle"] and "agent_end" in names(events))
            assert runtimes(reader.events) == ["generating", "executing_tools", "generating", "idle"]

            model_server.queue(HttpError(400, message="the model refused"))
            client.post(url, json={"type": "prompt", "message": "fail now"})
            reader.wait_for(lambda events: runtimes(events)[-1:] == ["error"])
            update = [e for e in reader.events if e.name == "runtime_update"][-1]
            assert "the model refused" in update.data["error"]
            late = EventReader(server, sid)
            snapshot = late.wait_named("snapshot")[0].data
            late.close()
            assert snapshot["runtime"] == "error" and "the model refused" in snapshot["error"]
            assert client.get(f"/sessions/{sid}").json()["runtime"] == "error"

            client.post(url, json={"type": "prompt", "message": "try again"})
            reader.wait_for(lambda events: runtimes(events)[-2:] == ["generating", "idle"])
        finally:
            reader.close()


def runtimes(events: list) -> list[str]:
    return [event.data["runtime"] for event in events if event.name == "runtime_update"]


def names(events: list) -> list[str]:
    return [event.name for event in events]


def test_new_sessions_go_to_the_folder_pi_1x_users_chose(
    project: Path,
    agent_dir: Path,
    tmp_path: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    """PI_CODING_AGENT_SESSION_DIR (as pi 1.x reads it) decides where the server's new sessions
    go, as it does for the CLI: straight into that folder."""
    configure_agent(agent_dir, model_server)
    chosen = tmp_path / "chosen-sessions"
    with (
        ServeProcess(project, env={"PI_CODING_AGENT_SESSION_DIR": str(chosen)}) as running,
        running.client() as client,
    ):
        created = client.post("/sessions", json={})
        assert created.status_code == 201, created.text
        session = created.json()
        prompt_and_wait(client, running, session["id"], "where am I kept?")
        path = Path(client.get(f"/sessions/{session['id']}").json()["path"])
        assert path.parent == chosen
        assert session_lines(str(path))[0]["id"] == session["id"]
