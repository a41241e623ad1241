"""The MCP test servers themselves, checked with the official SDK client before pi-tui is.

Every MCP test of pi-tui leans on three servers: npm's server-everything (stdio and streamable
HTTP) and server-filesystem, and our FastMCP fault server. If one of them did not do what the
tests assume (a tool renamed at a new version, the HTTP mode bound elsewhere, a fault that does
not happen), a pi-tui test would fail or, worse, pass for the wrong reason. These few checks talk
to each server with the bare SDK ``ClientSession``, so a failure here points at the test setup,
not at pi-tui.
"""

from __future__ import annotations

import base64
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import ImageContent, ServerNotification, TextContent, ToolListChangedNotification

from tests.support import mcp_fault_server as fault
from tests.support.mcp_servers import (
    everything_command,
    everything_http_server,
    filesystem_command,
    free_port,
    stop_group,
)
from tests.support.waiting import poll_until

REPO = Path(__file__).resolve().parents[2]
EVERYTHING_TOOLS = {
    "echo",
    "get-sum",
    "get-tiny-image",
    "trigger-long-running-operation",
    "toggle-simulated-logging",
}


@asynccontextmanager
async def stdio_session(
    command: list[str], errlog: Path | None = None, **session: Any
) -> AsyncIterator[ClientSession]:
    """An initialized SDK session with a stdio server (its stderr into ``errlog`` when given)."""
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO))
    with open(errlog or "/dev/null", "w") as err:
        try:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write, **session) as client,
            ):
                await client.initialize()
                yield client
        except* anyio.BrokenResourceError:
            # The SDK's teardown race, not the test's subject: a server still sending (progress of
            # a call the client gave up on) while the session closes has its line handed to a
            # stream already closed. Seen once in CI; pi-tui's own connection reads the end apart.
            pass


@asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def fault_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.support.mcp_fault_server", *args]


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def listening_addresses(pid: int, port: int) -> set[str]:
    """The local addresses (``/proc``'s hex) of the sockets listening on ``port``, IPv4 and IPv6."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


# --- server-everything and server-filesystem ------------------------------------------------------


async def test_everything_over_stdio_lists_its_tools_and_echoes() -> None:
    async with stdio_session(everything_command()) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert set(names) >= EVERYTHING_TOOLS, names
        assert names[0] == "echo"
        assert text_of(await client.call_tool("echo", {"message": "hi there"})) == "Echo: hi there"
        assert text_of(await client.call_tool("get-sum", {"a": 2, "b": 3})) == "The sum of 2 and 3 is 5."
        image = await client.call_tool("get-tiny-image", {})
        pngs = [block for block in image.content if isinstance(block, ImageContent)]
        assert [block.mimeType for block in pngs] == ["image/png"]
        assert base64.b64decode(pngs[0].data).startswith(b"\x89PNG")
        resources = await client.list_resources()
        assert "demo://resource/static/document/features.md" in {str(r.uri) for r in resources.resources}


async def test_everything_long_running_operation_sends_progress() -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with stdio_session(everything_command()) as client:
        result = await client.call_tool(
            "trigger-long-running-operation", {"duration": 0.6, "steps": 3}, progress_callback=on_progress
        )
    assert seen == [1, 2, 3]
    assert "completed" in text_of(result)


async def test_everything_over_http_answers_on_loopback_and_stops(tmp_path: Path) -> None:
    with everything_http_server(tmp_path) as server:
        assert server.url == f"http://127.0.0.1:{server.port}/mcp"
        async with http_session(server.url) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names >= EVERYTHING_TOOLS
            assert text_of(await client.call_tool("echo", {"message": "over http"})) == "Echo: over http"
        # listening on 127.0.0.1 only (never on every interface, IPv4 or IPv6)
        assert listening_addresses(server.process.pid, server.port) == {"0100007F"}
    assert server.process.poll() is not None
    assert not accepts(server.port)


async def test_filesystem_lists_the_allowed_folder(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "notes.txt").write_text("hello from the notes\n")
    async with stdio_session(filesystem_command(allowed)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"read_text_file", "list_directory", "list_allowed_directories"} <= names
        assert str(allowed.resolve()) in text_of(await client.call_tool("list_allowed_directories", {}))
        assert "[FILE] notes.txt" in text_of(await client.call_tool("list_directory", {"path": str(allowed)}))
        read = await client.call_tool("read_text_file", {"path": str(allowed / "notes.txt")})
        assert text_of(read) == "hello from the notes\n"
        outside = await client.call_tool("read_text_file", {"path": str(tmp_path / "elsewhere.txt")})
        assert outside.isError


# --- the fault server ---------------------------------------------------------------------------


async def test_fault_server_tools_do_what_they_say() -> None:
    logs: list[tuple[str, str | None, Any]] = []
    changes: list[object] = []

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.logger, params.data))

    async def on_message(message: object) -> None:
        if isinstance(message, ServerNotification) and isinstance(message.root, ToolListChangedNotification):
            changes.append(message)

    async with stdio_session(fault_command(), logging_callback=on_log, message_handler=on_message) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["not_an_object_schema"].inputSchema == fault.BAD_SCHEMAS["not_an_object_schema"]
        assert tools["malformed_schema"].inputSchema == fault.BAD_SCHEMAS["malformed_schema"]
        assert text_of(await client.call_tool("malformed_schema", {})) == "called"

        huge = text_of(await client.call_tool("huge", {}))
        assert len(huge) == 200_000
        assert huge.startswith(fault.HEAD) and huge.endswith(fault.TAIL)
        assert huge.count(fault.HEAD) == huge.count(fault.TAIL) == 1

        failed = await client.call_tool("fail", {"message": "boom"})
        assert failed.isError and text_of(failed) == "boom"

        image = await client.call_tool("image", {})
        assert [block.type for block in image.content] == ["text", "image"]
        assert isinstance(image.content[1], ImageContent)
        assert base64.b64decode(image.content[1].data) == fault.PNG

        assert text_of(await client.call_tool("log", {"message": "note this"})) == "logged"
        assert logs == [("info", fault.LOGGER, "note this"), ("warning", fault.LOGGER, "note this")]

        assert "fresh" not in tools
        assert text_of(await client.call_tool("add_tool", {"name": "fresh"})) == "added fresh"
        assert len(changes) == 1
        assert "fresh" in {tool.name for tool in (await client.list_tools()).tools}
        assert text_of(await client.call_tool("fresh", {})) == "fresh says hi"


async def test_fault_server_progress_arrives_while_the_call_runs() -> None:
    """Notifications come every ``interval`` seconds, so a timeout longer than the interval but
    shorter than the call is what a client resetting on progress survives (the SDK's plain
    ``read_timeout_seconds`` does not reset, shown last)."""
    stamps: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        stamps.append(time.monotonic())

    async with stdio_session(fault_command()) as client:
        start = time.monotonic()
        result = await client.call_tool(
            "progress", {"seconds": 1.2, "interval": 0.3}, progress_callback=on_progress
        )
        assert text_of(result) == "progress done after 4 notifications"
        assert len(stamps) == 4
        gaps = [later - earlier for earlier, later in zip([start, *stamps], stamps, strict=False)]
        assert all(0.2 < gap < 1.0 for gap in gaps), gaps
        with pytest.raises(McpError, match="Timed out"):
            await client.call_tool(
                "progress",
                {"seconds": 1.2, "interval": 0.3},
                read_timeout_seconds=timedelta(seconds=0.6),
                progress_callback=on_progress,
            )


async def test_fault_server_crashes_mid_call(tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    async with stdio_session(fault_command(), errlog=errlog) as client:
        assert text_of(await client.call_tool("echo", {"message": "alive"})) == "fault echo: alive"
        with pytest.raises(McpError, match="Connection closed"):
            await client.call_tool("crash", {"after": 0.1})
    assert fault.CRASH_LINE in errlog.read_text()


async def test_fault_server_slow_start_serves_after_its_delay() -> None:
    start = time.monotonic()
    async with stdio_session(fault_command("--start-delay", "1.5")) as client:
        ready = time.monotonic() - start
        assert text_of(await client.call_tool("echo", {"message": "late"})) == "fault echo: late"
    assert ready >= 1.5


async def test_fault_server_silent_never_initializes() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=fault_command("--mode", "silent")[1:], cwd=str(REPO)
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=timedelta(seconds=0.5)) as client,
    ):
        with pytest.raises(McpError, match="Timed out"):
            await client.initialize()


def test_fault_server_exit_at_start_says_why() -> None:
    done = subprocess.run(
        fault_command("--mode", "exit-at-start"), cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3
    assert done.stderr.strip() == fault.START_FAILURE
    assert done.stdout == ""


async def test_fault_server_over_http(tmp_path: Path) -> None:
    port = free_port()
    with open(tmp_path / "server.log", "wb") as log:
        process = subprocess.Popen(
            fault_command("--http", str(port)),
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        poll_until(lambda: accepts(port) or process.poll() is not None, "the fault server's HTTP port", 30)
        assert process.poll() is None, (tmp_path / "server.log").read_text()
        async with http_session(f"http://127.0.0.1:{port}/mcp") as client:
            assert text_of(await client.call_tool("echo", {"message": "web"})) == "fault echo: web"
            huge = text_of(await client.call_tool("huge", {"size": 50_000}))
            assert len(huge) == 50_000 and huge.endswith(fault.TAIL)
    finally:
        stop_group(process)
