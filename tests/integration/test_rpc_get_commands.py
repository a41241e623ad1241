"""``get_commands`` in rpc mode: over the real CLI, and in process after registering commands.

The subprocess test drives ``pi-tui --mode rpc`` exactly like the other rpc tests do. Commands
can only be registered from inside the process (by extensions or prompt templates), so the second
test runs an :class:`RpcServer` in process, feeds it protocol lines and reads what it writes.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES
from pi_tui.commands import SlashCommand
from pi_tui.modes.rpc_mode import RpcServer
from pi_tui.modes.rpc_protocol import Output
from pi_tui.startup import StartOptions, start
from tests.integration.test_rpc_mode import MODELS
from tests.support.model_server import ModelServer
from tests.support.rpc_client import RpcClient


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as model_server:
        (agent_dir / "models.json").write_text(json.dumps(model_server.models_json(models=MODELS)))
        yield model_server


def test_get_commands_over_the_cli_is_empty_by_default(server: ModelServer, project: Path) -> None:
    client = RpcClient(project)
    try:
        response = client.request({"type": "get_commands"})
        assert response == {
            "type": "response",
            "command": "get_commands",
            "success": True,
            "id": "req-1",
            "data": {"commands": []},
        }
        assert client.close() == 0
    finally:
        client.kill()


async def ask(server: RpcServer, stream: io.BytesIO, command: dict[str, Any]) -> dict[str, Any]:
    """Send one command line to the server and return the last record it wrote."""
    await server.handle_line(json.dumps(command).encode())
    return json.loads(stream.getvalue().splitlines()[-1])


def test_get_commands_lists_registered_commands(
    server: ModelServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in KEY_ENV_VAR_NAMES:
        monkeypatch.delenv(variable, raising=False)
    started = start(StartOptions(cwd=str(project), provider="test", model="m", no_session=True))
    stream = io.BytesIO()
    rpc = RpcServer(started, Output(stream))

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        try:
            before = await ask(rpc, stream, {"type": "get_commands", "id": "a"})
            rpc.commands.register(
                SlashCommand(
                    "session-name",
                    "Set or clear session name",
                    source="extension",
                    path=str(project / "session.ts"),
                )
            )
            after = await ask(rpc, stream, {"type": "get_commands", "id": "b"})
            return before, after
        finally:
            await rpc.shutdown()

    before, after = asyncio.run(scenario())
    assert before == {
        "type": "response",
        "command": "get_commands",
        "success": True,
        "id": "a",
        "data": {"commands": []},
    }
    assert after["success"] is True and after["id"] == "b"
    assert after["data"] == {
        "commands": [
            {
                "name": "session-name",
                "description": "Set or clear session name",
                "source": "extension",
                "path": os.path.join(str(project), "session.ts"),
            }
        ]
    }
    # Built-in TUI commands are never offered to rpc clients, even though the registry has them.
    assert rpc.commands.get("/settings") is not None
