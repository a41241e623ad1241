"""Extensions in ``--mode rpc``: their commands in get_commands and prompts, their dialogs as
pi's extension_ui_request / extension_ui_response, their failures as extension_error."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer, Scripted
from tests.support.rpc_client import RpcClient

EXTENSION = """
def activate(pi):
    async def deploy(args, ctx):
        if await ctx.ui.confirm("Deploy?", "to " + args):
            where = await ctx.ui.select("Region", ["eu", "us"])
            ctx.ui.set_status("deploy", "deployed to " + str(where))
            note = {"custom_type": "deploy", "content": f"deployed {args} in {where}"}
            pi.send_message(note, trigger_turn=True)
        else:
            ctx.ui.notify("cancelled", "warning")
    pi.register_command("deploy", handler=deploy, description="Deploy the app")
    pi.on("turn_end", lambda event: 1 / 0)
"""


@pytest.fixture
def rpc(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[RpcClient, ModelServer]]:
    monkeypatch.setenv("PI_TUI_LOG_DIR", str(tmp_path / "logs"))
    extension = tmp_path / "deploy.py"
    extension.write_text(textwrap.dedent(EXTENSION))
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(Scripted(text="Deployed, noted.")) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        client = RpcClient(project, "-e", str(extension), "--no-session")
        try:
            yield client, server
        finally:
            client.kill()


def test_commands_dialogs_and_errors_travel_the_protocol(rpc: tuple[RpcClient, ModelServer]) -> None:
    client, server = rpc
    commands = client.request({"type": "get_commands"})["data"]["commands"]
    assert [(c["name"], c["source"], c["description"]) for c in commands] == [
        ("deploy", "extension", "Deploy the app")
    ]
    assert commands[0]["path"].endswith("deploy.py")

    # pi 1.x answers a prompt that runs an extension command once the command has run
    # (disposition "handled"), so its dialogs come first.
    client.send({"type": "prompt", "message": "/deploy web", "id": "deploy-web"})
    confirm = client.wait_event("extension_ui_request")
    assert (confirm["method"], confirm["title"], confirm["message"]) == ("confirm", "Deploy?", "to web")
    client.send({"type": "extension_ui_response", "id": confirm["id"], "confirmed": True})
    select = client.wait_event("extension_ui_request")
    assert (select["method"], select["options"]) == ("select", ["eu", "us"])
    client.send({"type": "extension_ui_response", "id": select["id"], "value": "eu"})
    status = client.wait_event("extension_ui_request")
    assert status["method"] == "setStatus" and status["statusText"] == "deployed to eu"
    client.wait_event("agent_end")
    assert server.requests[-1].body["messages"][-1]["content"][0]["text"] == "deployed web in eu"
    error = client.wait_event("extension_error")
    assert error["event"] == "turn_end" and "ZeroDivisionError" in error["error"]
    assert error["extensionPath"].endswith("deploy.py")
    answered = [r for r in client.seen if r.get("id") == "deploy-web"] or [
        client.wait_for(lambda r: r.get("id") == "deploy-web")
    ]
    assert answered[0]["success"] and answered[0]["data"] == {"disposition": "handled"}

    client.send({"type": "prompt", "message": "/deploy db", "id": "deploy-db"})
    confirm = client.wait_event("extension_ui_request")
    client.send({"type": "extension_ui_response", "id": confirm["id"], "cancelled": True})
    notice = client.wait_event("extension_ui_request")
    assert (notice["method"], notice["message"], notice["notifyType"]) == (
        "notify",
        "deploy: cancelled",
        "warning",
    )
    assert client.close() == 0
    assert len(server.requests) == 1
