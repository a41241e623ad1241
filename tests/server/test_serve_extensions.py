"""Extensions' dialogs through the server: the session is ``paused`` on a confirmation and
``waiting_user_input`` on a choice, a client that connects then sees the open dialog in its
snapshot, and the answer is an ``extension_ui_response`` command, as in rpc mode."""

from __future__ import annotations

import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.support.model_server import ModelServer, Scripted, model_server  # noqa: F401
from tests.support.requires import requires
from tests.support.serve import EventReader, ServeProcess, configure_agent

pytestmark = requires("pi-tui")

EXTENSION = """
def activate(pi):
    async def deploy(args, ctx):
        if await ctx.ui.confirm("Deploy?", "to " + args):
            where = await ctx.ui.select("Region", ["eu", "us"])
            note = {"custom_type": "deploy", "content": f"deployed {args} in {where}"}
            pi.send_message(note, trigger_turn=True)
    pi.register_command("deploy", handler=deploy, description="Deploy the app")
"""


def runtimes(events: list) -> list[str]:
    return [event.data["runtime"] for event in events if event.name == "runtime_update"]


def test_dialogs_pause_the_session_and_are_answered_by_command(
    tmp_path: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    configure_agent(agent_dir, model_server)
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "deploy.py").write_text(textwrap.dedent(EXTENSION))
    model_server.queue(Scripted(text="Deployed, noted."))
    project = tmp_path / "project"
    project.mkdir()
    with ServeProcess(project) as server, server.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        url = f"/sessions/{sid}/commands"
        commands = client.post(url, json={"type": "get_commands"}).json()["data"]["commands"]
        assert [(c["name"], c["source"]) for c in commands] == [("deploy", "extension")]
        reader = EventReader(server, sid)
        try:
            reader.wait_named("snapshot")
            # pi 1.x answers a prompt that runs an extension command once the command has run
            # (disposition "handled"): posted from another thread, as its dialogs come first.
            with ThreadPoolExecutor(1) as pool, server.client() as other:
                posted = pool.submit(other.post, url, json={"type": "prompt", "message": "/deploy web"})
                confirm = reader.wait_last("extension_ui_request").data
                self_check_dialogs(client, server, reader, sid, url, confirm)
                answered = posted.result(30)
            assert answered.status_code == 200 and answered.json()["data"] == {"disposition": "handled"}
            events = reader.wait_for(
                lambda events: runtimes(events)[-1:] == ["idle"] and "agent_end" in [e.name for e in events]
            )
            order = runtimes(events)
            assert order.index("paused") < order.index("waiting_user_input") < len(order) - 1
            assert model_server.requests[-1].body["messages"][-1]["content"] in (
                "deployed web in eu",
                [{"type": "text", "text": "deployed web in eu"}],
            )
        finally:
            reader.close()


def self_check_dialogs(
    client: Any, server: ServeProcess, reader: EventReader, sid: str, url: str, confirm: dict
) -> None:
    """The confirmation pauses the session, a late client sees it, the choice waits for input;
    both are answered by command."""
    assert (confirm["method"], confirm["title"]) == ("confirm", "Deploy?")
    reader.wait_for(lambda events: "paused" in runtimes(events))
    late = EventReader(server, sid)  # a client arriving now is told what waits
    snapshot = late.wait_named("snapshot")[0].data
    late.close()
    assert snapshot["runtime"] == "paused"
    assert snapshot["dialogs"] == [{"id": confirm["id"], "method": "confirm"}]
    answer = {"type": "extension_ui_response", "id": confirm["id"], "confirmed": True}
    assert client.post(url, json=answer).status_code == 200
    select = reader.wait_last("extension_ui_request", 2).data
    assert (select["method"], select["options"]) == ("select", ["eu", "us"])
    reader.wait_for(lambda events: "waiting_user_input" in runtimes(events))
    again = client.post(url, json={"type": "extension_ui_response", "id": "no-such-dialog", "value": "x"})
    assert again.status_code == 404
    client.post(url, json={"type": "extension_ui_response", "id": select["id"], "value": "eu"})
