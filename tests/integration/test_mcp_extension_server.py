"""MCP servers and extensions, through the installed ``pi-tui -p`` and real stdio servers: a server
an extension registers with ``pi.register_mcp_server`` (checked by mcp.json's rules, connected
like a configured one, a file's server of the same name winning), MCP calls going through the
extension ``tool_call`` / ``tool_result`` pipeline (a gate blocks one, a result handler sees the
other's result), and ``pi.get_tool_info`` giving source, exposure and the server's annotations.

The servers: the FastMCP fault server (tests/support/mcp_fault_server.py) and a small FastMCP
server written below whose tool declares annotations, both run by the SDK over stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import SCRIPT, configure
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec

REPO = Path(__file__).resolve().parents[2]
BASE = ("--provider", "test", "--model", "m", "--no-session")

NOTES_SERVER = """
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("notes")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False), structured_output=False)
def lookup(topic: str) -> str:
    \"\"\"Look a topic up in the notes.\"\"\"
    return "notes on " + topic


server.run("stdio")
"""

EXTENSION = """
import json
import sys

LOG = {log!r}


def record(*item):
    with open(LOG, "a") as out:
        out.write(json.dumps(item, default=str) + "\\n")


def activate(pi):
    pi.register_mcp_server(
        "fault",
        {{"command": sys.executable, "args": ["-m", "tests.support.mcp_fault_server"], "cwd": {repo!r},
          "exposure": "direct"}},
    )
    pi.register_mcp_server("notes", {{"command": sys.executable, "args": [{notes!r}], "exposure": "direct"}})
    wrong = (("old", {{"type": "sse", "url": "http://127.0.0.1:9/sse"}}), ("bad name", {{"command": "x"}}))
    for name, config in wrong:
        try:
            pi.register_mcp_server(name, config)
        except Exception as error:
            record("refused", name, type(error).__name__, str(error))

    def gate(event, ctx):
        record("call", event.tool_name, dict(event.input), pi.get_tool_info(event.tool_name))
        if event.input.get("message") == "forbidden":
            return {{"block": True, "reason": "the gate said no"}}

    def seen(event, ctx):
        texts = [getattr(block, "text", None) for block in event.content]
        record("result", event.tool_name, texts, event.is_error)

    def listed(event, ctx):
        infos = {{info["name"]: info for info in pi.get_all_tool_info()}}
        record("all", sorted(infos), infos.get("list_mcp_resources"), pi.get_mcp_servers())

    pi.on("tool_call", gate)
    pi.on("tool_result", seen)
    pi.on("turn_end", listed)
"""


@pytest.fixture
def setup(agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The agent folder with the extension; returns (project folder, the extension's log)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_TUI_PI_AGENT_DIR", "")
    monkeypatch.setenv("PI_TUI_LOG_DIR", str(tmp_path / "logs"))
    notes = tmp_path / "notes_server.py"
    notes.write_text(NOTES_SERVER)
    log = tmp_path / "extension-log.jsonl"
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "gate.py").write_text(
        textwrap.dedent(EXTENSION).format(log=str(log), repo=str(REPO), notes=str(notes))
    )
    project = tmp_path / "project"
    project.mkdir()
    return project, log


def run(project: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *BASE, *words],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def records(log: Path, kind: str) -> list[list[Any]]:
    return [item for line in log.read_text().splitlines() if (item := json.loads(line))[0] == kind]


def declared(body: Any) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def test_an_extension_server_is_called_through_the_tool_call_and_tool_result_handlers(
    agent_dir: Path, setup: tuple[Path, Path]
) -> None:
    project, log = setup
    with ModelServer() as model:
        configure(agent_dir, model)
        model.queue(
            Scripted(tool_calls=[ToolCallSpec("mcp__fault__echo", {"message": "forbidden"})]),
            Scripted(tool_calls=[ToolCallSpec("mcp__fault__echo", {"message": "hello"})]),
            Scripted(tool_calls=[ToolCallSpec("mcp__notes__lookup", {"topic": "mcp"})]),
            Scripted(text="all done"),
        )
        done = run(project, "-p", "go")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "all done\n"
        # The last request, not the first: the first prompt waits at most 10 s (pi's rule) for
        # servers with direct tools, and on a loaded CI machine (-n 3 on 2 cores, pi's node
        # processes beside) a Python server once took longer to start than that; by the last
        # request both servers have answered a call, so their tools must be declared.
        last = model.requests[-1]
        assert {"mcp__fault__echo", "mcp__notes__lookup"} <= set(declared(last.body))
        second, third = (request.raw_body.decode() for request in model.requests[1:3])
        assert "the gate said no" in second and "fault echo: forbidden" not in second
        assert "fault echo: hello" in third

    refused = {item[1]: item for item in records(log, "refused")}
    assert refused["old"][2] == "ExtensionError" and "SSE transport is not supported" in refused["old"][3]
    assert refused["bad name"][2] == "ExtensionError" and "invalid server name" in refused["bad name"][3]

    calls = records(log, "call")
    assert [(call[1], call[2]) for call in calls] == [
        ("mcp__fault__echo", {"message": "forbidden"}),
        ("mcp__fault__echo", {"message": "hello"}),
        ("mcp__notes__lookup", {"topic": "mcp"}),
    ]
    echo = calls[0][3]
    assert echo["source"] == "mcp" and echo["server"] == "fault" and echo["tool"] == "echo"
    assert echo["exposure"] == "direct" and "message" in echo["parameters"]["properties"]
    lookup = calls[2][3]
    assert lookup["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert lookup["description"] == "Look a topic up in the notes."

    results = records(log, "result")  # the blocked call's result too: the handler sees every end
    assert [result[1] for result in results] == ["mcp__fault__echo", "mcp__fault__echo", "mcp__notes__lookup"]
    assert results[0][3] is True and "the gate said no" in results[0][2][0]
    assert results[1][2] == ["fault echo: hello"] and results[1][3] is False
    assert results[2][2] == ["notes on mcp"]

    names, resources, servers = records(log, "all")[-1][1:]
    assert {"read", "bash", "mcp__fault__echo", "mcp__notes__lookup", "read_mcp_resource"} <= set(names)
    assert resources["source"] == "mcp" and resources["annotations"]["readOnlyHint"] is True
    assert {(server["name"], server["extension"]) for server in servers} == {
        ("fault", "gate"),
        ("notes", "gate"),
    }


def test_a_file_configured_server_of_the_same_name_wins(agent_dir: Path, setup: tuple[Path, Path]) -> None:
    project, _log = setup
    (agent_dir / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {
                        "command": sys.executable,
                        "args": ["-m", "tests.support.mcp_fault_server"],
                        "cwd": str(REPO),
                        "toolExposure": {"echo": "direct"},
                    }
                }
            }
        )
    )
    with ModelServer() as model:
        configure(agent_dir, model)
        model.queue(Scripted(text="ok"))
        done = run(project, "-p", "hi")
        assert done.returncode == 0, done.stderr
        tools = declared(model.requests[0].body)
    assert "mcp__notes__echo" in tools and "mcp__notes__lookup" not in tools  # the file's server
    assert "mcp__fault__echo" in tools  # the extension's other server is there too
