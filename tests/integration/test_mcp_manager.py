"""McpManager with a real stdio server (tests/support/mcp_fault_server.py): a server that dies is
shown disconnected at once and connected again on the next call; closing stops the process."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.types import TextContent

from pi_tui.mcp.manager import McpManager
from pi_tui.mcp.model import ConfigSource, McpConfig, ServerConfig

REPO = Path(__file__).resolve().parents[2]


def server_in(folder: Path) -> ServerConfig:
    """The fault server, run in ``folder`` (its processes are found by their working folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    return ServerConfig(
        name="fault",
        transport="stdio",
        source=ConfigSource("user"),
        command=sys.executable,
        args=["-m", "tests.support.mcp_fault_server"],
        env={"PYTHONPATH": str(REPO)},
        cwd=str(folder),
        exposure="direct",
    )


def processes_in(folder: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder.resolve():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def state(manager: McpManager) -> str:
    statuses = manager.statuses()
    return statuses[0].state if statuses else "not yet listed"


def test_a_server_that_dies_is_disconnected_at_once_and_back_on_the_next_call(tmp_path: Path) -> None:
    folder = tmp_path / "server"
    manager = McpManager(McpConfig(servers={"fault": server_in(folder)}), session_cwd=tmp_path)
    manager.start()
    try:
        # the tool snapshot is rebuilt right after the state changes, on the MCP thread
        wait_for(lambda: any(tool.name == "mcp__fault__echo" for tool in manager.agent_tools()), "its tools")
        assert state(manager) == "connected"
        (pid,) = processes_in(folder)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: state(manager) == "disconnected", "the death to be noticed without a call")
        assert "exited" in (manager.statuses()[0].error or "")
        assert any(tool.name == "mcp__fault__echo" for tool in manager.agent_tools())  # still offered
        result = asyncio.run(manager.call_tool("fault", "echo", {"message": "again"}))
        assert isinstance(result.content[0], TextContent)
        assert result.content[0].text == "fault echo: again"
        assert state(manager) == "connected"
        assert processes_in(folder) != [pid]
    finally:
        manager.close()
    wait_for(lambda: not processes_in(folder), "the server to be stopped by close()", timeout=10)


def test_the_prompt_section_stays_put_while_servers_connect(tmp_path: Path) -> None:
    """The servers to search are listed in the system prompt; the list is made once for a set of
    servers, so instructions arriving later do not change the prompt (and the provider's cache)."""
    fast, slow = server_in(tmp_path / "fast"), server_in(tmp_path / "slow")
    fast.exposure = slow.exposure = "deferred"
    slow.name, slow.args = "slow", [*slow.args, "--start-delay", "2"]
    manager = McpManager(McpConfig(servers={"fault": fast, "slow": slow}), session_cwd=tmp_path)
    manager.start()
    try:
        wait_for(lambda: len(manager.statuses()) == 2, "both servers listed")
        first = manager.prompt_section()
        assert "- fault" in first and "- slow" in first
        wait_for(lambda: {s.state for s in manager.statuses()} == {"connected"}, "both connected")
        assert manager.statuses()[0].instructions == "A server that fails on request."
        assert manager.prompt_section() == first  # the same text: nothing moved under the cache
        asyncio.run(manager.set_enabled("slow", False))
        assert "- slow" not in manager.prompt_section()  # another set of servers: made again
        assert "- fault: A server that fails on request." in manager.prompt_section()
    finally:
        manager.close()


def test_an_http_server_answering_503_is_tried_again(tmp_path: Path) -> None:
    """A passing status (503 twice) is retried twice, as pi does; a third 503 would fail it."""
    import threading

    import uvicorn
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("busy", log_level="WARNING")

    @mcp.tool()
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"busy echo: {message}"

    inner = mcp.streamable_http_app()
    refused = {"left": 2, "seen": 0}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and refused["left"] > 0:
            refused["left"] -= 1
            refused["seen"] += 1
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b"busy"})
            return
        await inner(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, "the test server to start")
    port = server.servers[0].sockets[0].getsockname()[1]
    config = ServerConfig(
        name="busy", transport="http", source=ConfigSource("user"), url=f"http://127.0.0.1:{port}/mcp"
    )
    manager = McpManager(McpConfig(servers={"busy": config}), session_cwd=tmp_path)
    try:
        manager.start()
        wait_for(lambda: state(manager) in ("connected", "failed"), "the connection to settle")
        assert state(manager) == "connected", manager.statuses()[0].error
        assert refused["seen"] == 2
        result = asyncio.run(manager.call_tool("busy", "echo", {"message": "after 503s"}))
        assert (
            isinstance(result.content[0], TextContent) and result.content[0].text == "busy echo: after 503s"
        )
    finally:
        manager.close()
        server.should_exit = True
        thread.join(timeout=10)


def test_a_files_server_wins_over_a_registered_one_whose_name_differs_in_dashes(tmp_path: Path) -> None:
    """``dev-notes`` in a file and ``dev_notes`` from an extension are one server (pi's rule): the
    file's is kept, the registration left out; other registrations stay."""
    from_file = server_in(tmp_path / "file")
    from_file.name = "dev-notes"
    registered = server_in(tmp_path / "ext")
    registered.name = "dev_notes"
    other = server_in(tmp_path / "other")
    other.name = "other"
    manager = McpManager(McpConfig(servers={"dev-notes": from_file}), session_cwd=tmp_path)
    manager.registered.update({"dev_notes": registered, "other": other})
    assert list(manager._all_configs()) == ["dev-notes", "other"]


class AppServer:
    """An ASGI app served by uvicorn on a thread, on a free loopback port."""

    def __init__(self, app: Any) -> None:
        import threading

        import uvicorn

        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started, "the test server to start")
        self.port = self.server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def http_server(name: str, url: str) -> ServerConfig:
    return ServerConfig(name=name, transport="http", source=ConfigSource("user"), url=url, exposure="direct")


def test_an_http_server_that_forgot_the_session_fails_the_call_at_once(tmp_path: Path) -> None:
    """A restarted server answers 400 to the old session: the call fails now (not after its 60 s
    timeout), the server shows disconnected, and the next call connects again."""
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("forgetful", log_level="WARNING")

    @mcp.tool()
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"forgetful echo: {message}"

    inner = mcp.streamable_http_app()
    forget = {"on": False}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and forget["on"] and b"mcp-session-id" in headers:
            forget["on"] = False  # once, as a restarted server would
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"Bad Request: No valid session ID provided"})
            return
        await inner(scope, receive, send)

    served = AppServer(app)
    manager = McpManager(
        McpConfig(servers={"f": http_server("f", f"http://127.0.0.1:{served.port}/mcp")}),
        session_cwd=tmp_path,
    )
    try:
        manager.start()
        wait_for(lambda: state(manager) == "connected", "the connection")
        forget["on"] = True
        began = time.monotonic()
        try:
            asyncio.run(manager.call_tool("f", "echo", {"message": "lost"}))
        except Exception as error:
            failure = str(error)
        else:
            failure = ""
        assert failure and time.monotonic() - began < 10, failure
        wait_for(lambda: state(manager) == "disconnected", "the lost session to show")
        assert "HTTP 400" in (manager.statuses()[0].error or "")
        result = asyncio.run(manager.call_tool("f", "echo", {"message": "again"}))
        answer = result.content[0]
        assert isinstance(answer, TextContent) and answer.text == "forgetful echo: again"
    finally:
        manager.close()
        served.stop()


def test_connection_errors_say_what_happened(tmp_path: Path) -> None:
    from tests.support.mcp_fault_server import START_FAILURE

    async def not_found(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"no such page"})

    served = AppServer(not_found)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    dying = server_in(tmp_path / "dying")
    dying.name, dying.args = "dying", [*dying.args, "--mode", "exit-at-start"]
    servers = {
        "wrong": http_server("wrong", f"http://127.0.0.1:{served.port}/sse"),
        "nobody": http_server("nobody", f"http://127.0.0.1:{closed_port}/mcp"),
        "dying": dying,
    }
    manager = McpManager(McpConfig(servers=servers), session_cwd=tmp_path)
    try:
        manager.start()
        wait_for(lambda: {s.state for s in manager.statuses()} == {"failed"}, "all three to fail", timeout=30)
        errors = {s.name: s.error or "" for s in manager.statuses()}
        assert errors["wrong"].startswith(f"HTTP 404 from http://127.0.0.1:{served.port}/sse")
        assert "usually answer at /mcp" in errors["wrong"]
        assert errors["nobody"].startswith(f"cannot connect to http://127.0.0.1:{closed_port}/mcp")
        assert errors["dying"] == f"the server exited before it was ready: {START_FAILURE}"
        assert not any("MCP server" in error for error in errors.values())  # the name is said by who shows it
    finally:
        manager.close()
        served.stop()


def test_a_configuration_note_is_said_once_a_session(tmp_path: Path, agent_dir: Path) -> None:
    """pi's codemode read as deferred is noted at the first read of mcp.json, not at every /reload."""
    import json
    from types import SimpleNamespace

    from pi_tui.mcp.attach import reload_mcp

    entry = {"command": sys.executable, "args": ["-m", "tests.support.mcp_fault_server"], "cwd": str(REPO)}
    servers = {"fault": {**entry, "exposure": "codemode"}}
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    agent = SimpleNamespace(mcp=None, mcp_loaded_names=set)
    try:
        first = reload_mcp(agent, tmp_path, trusted=False)
        assert any("codemode" in line for line in first)
        assert agent.mcp is not None
        assert not any("codemode" in line for line in reload_mcp(agent, tmp_path, trusted=False))
    finally:
        if agent.mcp is not None:
            agent.mcp.close()
