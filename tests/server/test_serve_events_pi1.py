"""``pi-tui serve`` streams pi 1.x's event shapes, as ``--mode json`` and ``--mode rpc`` do: a
delta-only ``message_update`` with ``usage``, ``toolcall_start`` naming its call,
``tool_execution_end.durationMs``, ``agent_end.willRetry``, ``agent_settled``,
``session_info_changed``, ``thinking_level_changed``, and the prompt's ``disposition``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec, model_server  # noqa: F401
from tests.support.requires import requires
from tests.support.serve import EventReader, ServeProcess, configure_agent

pytestmark = requires("pi-tui")


@pytest.fixture
def server(tmp_path: Path, agent_dir: Path, model_server: ModelServer) -> Iterator[ServeProcess]:  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the notes\n")
    configure_agent(agent_dir, model_server)
    with ServeProcess(project) as running:
        yield running


def test_a_turn_streams_pi1_shapes(server: ServeProcess, model_server: ModelServer) -> None:  # noqa: F811
    model_server.queue(
        Scripted(text="Reading.", tool_calls=[ToolCallSpec("read", {"path": "notes.txt"}, id="call_7")]),
        Scripted(text="Done."),
    )
    with server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        url = f"/sessions/{sid}/commands"
        reader = EventReader(server, sid)
        try:
            reader.wait_named("snapshot")
            answer = client.post(url, json={"type": "prompt", "message": "read the notes"})
            assert answer.status_code == 200 and answer.json()["data"] == {"disposition": "started"}
            events = reader.wait_for(lambda seen: any(e.name == "agent_settled" for e in seen))
            names = [e.name for e in events]
            assert names.index("agent_end") < names.index("agent_settled")
            (end,) = [e.data for e in events if e.name == "agent_end"]
            (settled,) = [e.data for e in events if e.name == "agent_settled"]
            assert end["willRetry"] is False and settled["aborted"] is False
            updates = [e.data for e in events if e.name == "message_update"]
            assert updates and all(set(u) == {"type", "usage", "assistantMessageEvent"} for u in updates)
            inner = [u["assistantMessageEvent"] for u in updates]
            assert all("partial" not in i for i in inner)
            (start,) = [i for i in inner if i["type"] == "toolcall_start"]
            assert (start["id"], start["toolName"]) == ("call_7", "read")
            (tool_end,) = [e.data for e in events if e.name == "tool_execution_end"]
            assert isinstance(tool_end["durationMs"], int)

            assert client.post(url, json={"type": "set_session_name", "name": "served"}).status_code == 200
            named = reader.wait_for(lambda seen: any(e.name == "session_info_changed" for e in seen))
            assert [e.data for e in named if e.name == "session_info_changed"][-1]["name"] == "served"

            entries = client.post(url, json={"type": "get_entries"}).json()["data"]
            assert entries["leafId"] == entries["entries"][-1]["id"]
            clone = client.post(url, json={"type": "clone"})  # a session id names one file here
            assert clone.status_code == 400 and "POST /sessions/{id}/clone" in clone.json()["error"]
        finally:
            reader.close()
