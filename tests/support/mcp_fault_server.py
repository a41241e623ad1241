"""An MCP server that misbehaves on request, for the tests of pi-tui's MCP client.

The reference servers (:mod:`tests.support.mcp_servers`) behave well; a client also has to live
with servers that crash, start slowly, flood, lie about their schemas or talk a lot. This one is
built on the official SDK's FastMCP, so everything it does wrong it does over a real protocol::

    python -m tests.support.mcp_fault_server                        # stdio, every tool below
    python -m tests.support.mcp_fault_server --http 8123            # streamable HTTP, /mcp
    python -m tests.support.mcp_fault_server --start-delay 30       # serves after 30 s
    python -m tests.support.mcp_fault_server --mode exit-at-start   # a server that never comes up

``--mode`` is what the whole process does:

- ``tools`` (default): serve the tools below;
- ``exit-at-start``: print :data:`START_FAILURE` on stderr and exit 3 before speaking MCP (the
  stderr tail a client shows for a failed stdio server);
- ``silent``: never answer (stdio: read and drop everything; HTTP: accept connections and send
  nothing), so ``initialize`` only ends with the client's timeout.

The tools (``tools`` mode):

- ``crash`` (``after`` s, default 0.2): the process exits (code :data:`CRASH_EXIT`) while the call
  is in flight, after printing :data:`CRASH_LINE` on stderr; no result ever comes;
- ``huge`` (``size`` characters, default 200,000): one text block starting with :data:`HEAD` and
  ending with :data:`TAIL`, filled with numbered lines in between;
- ``not_an_object_schema`` and ``malformed_schema``: tools whose ``inputSchema`` is
  ``{"type": "array", ...}`` and an object schema whose ``properties`` and ``required`` are not
  of the right JSON types (FastMCP derives schemas from signatures, so :class:`FaultServer`
  rewrites them in ``tools/list``; calling either answers ``"called"``);
- ``progress`` (``seconds``, ``interval``): a progress notification every ``interval`` seconds
  for ``seconds`` seconds (only when the call carries a progress token), then
  ``"progress done after N notifications"``: with a per-request timeout shorter than
  ``seconds`` but longer than ``interval``, a client that resets its timeout on progress gets
  the result;
- ``sleep`` (``seconds``): answers ``"slept N s"`` after that long without any notification (the
  timeout that is not reset);
- ``add_tool`` (``name``): registers a tool ``name`` (answering ``"<name> says hi"``) and sends
  ``notifications/tools/list_changed``;
- ``log`` (``message``): sends the message as logging notifications at ``info`` and ``warning``
  (logger :data:`LOGGER`), then answers ``"logged"``;
- ``fail`` (``message``): a result with ``isError: true`` and the message as its text;
- ``image``: a text block and a 2x2 PNG image block (:data:`PNG`);
- ``echo`` (``message``): ``"fault echo: <message>"``, the control that works.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import struct
import sys
import time
import zlib
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import CallToolResult, ImageContent, TextContent
from mcp.types import Tool as MCPTool

NAME = "fault"
HEAD = "<<HEAD-OF-HUGE-RESULT>>"
TAIL = "<<TAIL-OF-HUGE-RESULT>>"
CRASH_LINE = "fault server: crashing on purpose"
CRASH_EXIT = 17
START_FAILURE = "fault server: refusing to start (mode exit-at-start)"
LOGGER = "fault-logger"
BAD_SCHEMAS: dict[str, dict[str, Any]] = {
    "not_an_object_schema": {"type": "array", "items": {"type": "string"}},
    "malformed_schema": {"type": "object", "properties": "not-a-map", "required": 5},
}


def _png(width: int = 2, height: int = 2) -> bytes:
    """A valid RGB PNG of red pixels, made here so the file stays one small file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png()


class FaultServer(FastMCP):
    """FastMCP whose ``tools/list`` carries the broken schemas of :data:`BAD_SCHEMAS`."""

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [
            tool.model_copy(update={"inputSchema": BAD_SCHEMAS[tool.name]})
            if tool.name in BAD_SCHEMAS
            else tool
            for tool in tools
        ]


def build(host: str = "127.0.0.1", port: int = 8000) -> FaultServer:
    """The server with every tool of the module docstring."""
    server = FaultServer(
        NAME, instructions="A server that fails on request.", host=host, port=port, log_level="WARNING"
    )

    @server.tool(structured_output=False)
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"fault echo: {message}"

    @server.tool(structured_output=False)
    def crash(after: float = 0.2) -> str:
        """Exit the server process while this call is in flight."""
        time.sleep(after)
        print(CRASH_LINE, file=sys.stderr, flush=True)
        os._exit(CRASH_EXIT)

    @server.tool(structured_output=False)
    def huge(size: int = 200_000) -> str:
        """Return one text of `size` characters with distinct head and tail markers."""
        filler = "".join(f"line {n:08d}\n" for n in range(size // 14 + 1))
        middle = filler[: max(0, size - len(HEAD) - len(TAIL))]
        return HEAD + middle + TAIL

    for name in BAD_SCHEMAS:
        server.add_tool(
            lambda: "called",
            structured_output=False,
            name=name,
            description=f"A tool whose inputSchema is broken ({name}).",
        )

    @server.tool(structured_output=False)
    async def progress(ctx: Context[Any, Any, Any], seconds: float = 3.0, interval: float = 0.5) -> str:
        """Send a progress notification every `interval` seconds for `seconds` seconds."""
        sent = 0
        steps = max(1, round(seconds / interval))
        for step in range(1, steps + 1):
            await _asleep(interval)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
            sent += 1
        return f"progress done after {sent} notifications"

    @server.tool(structured_output=False)
    async def sleep(seconds: float = 5.0) -> str:
        """Answer after `seconds` seconds, without any notification meanwhile."""
        await _asleep(seconds)
        return f"slept {seconds:g} s"

    @server.tool(structured_output=False)
    async def add_tool(name: str, ctx: Context[Any, Any, Any]) -> str:
        """Register a new tool and announce the changed tool list."""
        server.add_tool(
            lambda: f"{name} says hi",
            name=name,
            structured_output=False,
            description=f"Added at run time as {name}.",
        )
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    @server.tool(structured_output=False)
    async def log(message: str, ctx: Context[Any, Any, Any]) -> str:
        """Send the message as logging notifications at info and warning."""
        await ctx.log("info", message, logger_name=LOGGER)
        await ctx.log("warning", message, logger_name=LOGGER)
        return "logged"

    @server.tool(structured_output=False)
    def fail(message: str = "it failed on purpose") -> CallToolResult:
        """Return a result flagged isError."""
        return CallToolResult(content=[TextContent(type="text", text=message)], isError=True)

    @server.tool(structured_output=False)
    def image() -> CallToolResult:
        """Return a text block and a small PNG image."""
        data = base64.b64encode(PNG).decode()
        return CallToolResult(
            content=[
                TextContent(type="text", text="a 2x2 red square:"),
                ImageContent(type="image", data=data, mimeType="image/png"),
            ]
        )

    return server


async def _asleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


def _silent(http_port: int | None) -> None:
    """Never answer: drop stdin, or accept TCP connections and send nothing."""
    if http_port is None:
        while os.read(0, 65536):
            pass
        return
    with socket.create_server(("127.0.0.1", http_port)) as listener:
        held = []
        while True:
            conn, _ = listener.accept()
            held.append(conn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.mcp_fault_server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--mode", choices=("tools", "exit-at-start", "silent"), default="tools")
    parser.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp"
    )
    parser.add_argument(
        "--start-delay", type=float, default=0.0, metavar="SECONDS", help="wait before serving"
    )
    args = parser.parse_args(argv)
    if args.start_delay > 0:
        time.sleep(args.start_delay)
    if args.mode == "exit-at-start":
        print(START_FAILURE, file=sys.stderr, flush=True)
        return 3
    if args.mode == "silent":
        _silent(args.http)
        return 0
    if args.http is None:
        build().run("stdio")
    else:
        build(port=args.http).run("streamable-http")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
