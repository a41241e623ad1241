"""MCP in the modes without a TUI, through the installed script: ``/mcp`` in print, json and rpc
modes (status, reconnect, login and logout acting directly), and every session's servers stopped
when the session ends (``-p``, rpc, and a served session that is deleted while the server runs).

Servers are real: the FastMCP fault server over stdio (found in /proc by a marker on its command
line) and the OAuth-protected loopback server with a "browser" that follows the authorization URL.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import configure, pi_tui
from tests.e2e.test_mcp_list_command import browser, fault_server, home, processes_with, project, write_config
from tests.support.model_server import ModelServer
from tests.support.oauth_server import OAuthMcpServer, running_oauth_server
from tests.support.rpc_client import RpcClient
from tests.support.serve import SCRIPT, ServeProcess, configure_agent
from tests.support.waiting import poll_until

__all__ = ["browser", "home", "project"]  # fixtures shared with the list command's tests

BASE = ("--provider", "test", "--model", "m", "--no-session")
GONE_WITHIN = 20.0
"""Seconds a stopped server may take to be gone (stdin, then SIGTERM, then SIGKILL)."""


@pytest.fixture
def model(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as server:
        configure(agent_dir, server)
        yield server


def test_print_mode_mcp_prints_status_and_acts_directly(
    agent_dir: Path, home: Path, project: Path, model: ModelServer
) -> None:
    write_config(
        agent_dir / "mcp.json",
        {
            "fault": fault_server(toolExposure={"echo": "direct"}),
            "broken": fault_server(None, "--mode", "exit-at-start"),
        },
    )
    done = pi_tui(*BASE, "-p", "/mcp", "/mcp reconnect fault", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("fault: connected, 11 tools (deferred, user ")
    assert "  tools: echo [direct], crash, huge," in done.stdout
    assert any(line.startswith("broken: failed") for line in lines)
    assert "fault server: refusing to start" in done.stdout  # the failed server's stderr tail
    assert lines[-1] == 'Reconnected to MCP server "fault" (connected, 11 tools).'
    assert model.requests == []  # /mcp is no turn: the model was never asked

    wrong = pi_tui(*BASE, "-p", "/mcp reconnect nope", cwd=project)
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert 'pi-tui: No MCP server named "nope" (configured: fault, broken).' in wrong.stderr
    usage = pi_tui(*BASE, "-p", "/mcp frobnicate", cwd=project)
    assert usage.returncode == 1 and "Usage: /mcp, /mcp reconnect <server>" in usage.stderr

    as_json = pi_tui(*BASE, "--mode", "json", "/mcp", cwd=project)
    assert as_json.returncode == 0, as_json.stderr
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    status = next(record for record in records if record["type"] == "mcp")
    assert status["level"] == "info" and status["text"].startswith("fault: connected, 11 tools")
    states = {server["name"]: server["state"] for server in status["servers"]}
    assert states == {"fault": "connected", "broken": "failed"}
    assert not any(record["type"] == "agent_start" for record in records)


def test_print_mode_mcp_login_waits_for_the_browser_and_logout_signs_out(
    agent_dir: Path, home: Path, project: Path, model: ModelServer, browser: Path
) -> None:
    with running_oauth_server() as oauth:
        write_config(agent_dir / "mcp.json", {"demo": {"url": oauth.mcp_url}})
        before = pi_tui(*BASE, "-p", "/mcp", cwd=project)
        assert "demo: needs sign-in" in before.stdout and "sign in with: /mcp login demo" in before.stdout

        login = pi_tui(*BASE, "-p", "/mcp login demo", cwd=project)
        assert login.returncode == 0, login.stdout + login.stderr
        opened = browser.read_text().split()
        assert len(opened) == 1 and opened[0].startswith(_issuer(oauth)) and opened[0] in login.stdout
        assert login.stdout.splitlines()[-1] == 'Signed in to MCP server "demo" (connected, 1 tool).'
        assert "demo: connected, 1 tool " in pi_tui(*BASE, "-p", "/mcp", cwd=project).stdout

        logout = pi_tui(*BASE, "-p", "/mcp logout demo", cwd=project)
        assert logout.returncode == 0
        assert (
            logout.stdout.strip() == 'Signed out of MCP server "demo" (its stored credentials were deleted).'
        )
        again = pi_tui(*BASE, "-p", "/mcp logout", cwd=project)  # the only OAuth server is picked
        assert again.stdout.strip() == 'No stored credentials for MCP server "demo"; nothing was deleted.'


def _issuer(oauth: OAuthMcpServer) -> str:
    return oauth.issuer


class ScriptRpcClient(RpcClient):
    LAUNCHER = (SCRIPT,)


def test_rpc_mcp_prompt_answers_with_notify_and_the_servers_stop_at_the_end(
    agent_dir: Path, home: Path, project: Path, model: ModelServer
) -> None:
    marker = uuid.uuid4().hex
    write_config(agent_dir / "mcp.json", {"fault": fault_server(marker)})
    client = ScriptRpcClient(project, "--no-session")
    try:
        commands = client.request({"type": "get_commands"})["data"]["commands"]
        assert {"name": "mcp", "source": "extension", "path": "builtin:mcp"}.items() <= commands[0].items()
        response = client.request({"type": "prompt", "message": "/mcp"})
        assert response["success"] and response["data"] == {"disposition": "handled"}
        notify = client.wait_for(lambda record: record.get("method") == "notify")
        assert notify["type"] == "extension_ui_request" and notify["notifyType"] == "info"
        assert notify["message"].startswith("fault: connected, 11 tools")
        assert processes_with(marker)
        assert client.close() == 0
    finally:
        client.kill()
    assert not any(record.get("type") == "agent_start" for record in client.seen)
    poll_until(lambda: not processes_with(marker), "the MCP server to stop with rpc mode", GONE_WITHIN)


def test_a_print_run_leaves_no_mcp_server_behind(
    agent_dir: Path, home: Path, project: Path, model: ModelServer
) -> None:
    marker = uuid.uuid4().hex
    write_config(agent_dir / "mcp.json", {"fault": fault_server(marker, exposure="direct")})
    done = pi_tui(*BASE, "-p", "hi", cwd=project)
    assert done.returncode == 0 and done.stdout == "echo: hi\n", done.stderr
    tools = [tool["name"] for tool in _declared_tools(model.requests[0].body)]
    assert "mcp__fault__echo" in tools  # the server was up for the turn
    poll_until(lambda: not processes_with(marker), "the MCP server to be gone after -p", GONE_WITHIN)


def _declared_tools(body: Any) -> list[dict[str, Any]]:
    tools = body.get("tools") or []
    return [tool.get("function", tool) for tool in tools]


def test_deleting_a_served_session_stops_its_mcp_servers(
    agent_dir: Path, home: Path, project: Path, model: ModelServer
) -> None:
    marker = uuid.uuid4().hex
    configure_agent(agent_dir, model)
    write_config(agent_dir / "mcp.json", {"fault": fault_server(marker)})
    with ServeProcess(project) as served, served.client() as client:
        sid = client.post("/sessions", json={}).json()["id"]
        poll_until(lambda: processes_with(marker), "the session's MCP server to start", GONE_WITHIN)
        answer = client.post(f"/sessions/{sid}/commands", json={"type": "prompt", "message": "/mcp"})
        assert answer.json()["data"] == {"disposition": "handled"}
        assert client.delete(f"/sessions/{sid}").json()["deleted"] is True
        poll_until(lambda: not processes_with(marker), "the MCP server to stop with its session", GONE_WITHIN)
        assert served.process is not None and served.process.poll() is None  # the server itself runs on


def test_no_mcp_turns_the_mcp_command_off(
    agent_dir: Path, home: Path, project: Path, model: ModelServer
) -> None:
    marker = uuid.uuid4().hex
    write_config(agent_dir / "mcp.json", {"fault": fault_server(marker)})
    done = subprocess.run(
        [SCRIPT, *BASE, "--no-mcp", "--mode", "rpc"],
        input=json.dumps({"type": "prompt", "message": "/mcp", "id": "1"}) + "\n",
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["data"] == {"disposition": "started"}  # a plain prompt: /mcp is no command here
    printed = pi_tui(*BASE, "--no-mcp", "-p", "/mcp", cwd=project)
    assert printed.returncode == 0 and printed.stdout == "echo: /mcp\n"  # a plain prompt here too
    assert not processes_with(marker)  # --no-mcp: the server never started
