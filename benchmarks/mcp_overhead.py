"""What pi-tui's MCP layer costs over the bare SDK, against npm's server-everything.

Prints, over stdio and over streamable HTTP (server-everything's HTTP mode on 127.0.0.1):

1. connect time, median of ``--connects`` connections: the bare SDK (``ClientSession``:
   spawn or open, ``initialize``, ``tools/list``) and pi-tui's :class:`McpManager` (``start``
   until the server has settled and its tools are in ``agent_tools()``);
2. the time of one ``echo`` call, median of ``--calls`` calls after ``--warmup`` unmeasured ones:
   the bare ``ClientSession.call_tool``; pi-tui's ``McpManager.call_tool`` from another event
   loop (the hop every front end makes onto the MCP thread and back); and the agent tool's
   ``execute`` (that hop plus turning the result into the model's tool result);
3. the per-call overhead: pi-tui's medians minus the bare one.

The issue's closing note quotes these figures. Run::

    python benchmarks/mcp_overhead.py [--calls 200] [--connects 10]

The servers are installed into the test cache on first use (npm), as the tests do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.support.mcp_servers import everything_command, everything_http_server, mcp_json_entry  # noqa: E402

MESSAGE = {"message": "benchmark"}


async def bare_session(stack: AsyncExitStack, transport: str, target: list[str] | str) -> ClientSession:
    """An initialized SDK session whose tools were listed once (what a client does to connect)."""
    if transport == "stdio":
        assert isinstance(target, list)
        params = StdioServerParameters(command=target[0], args=target[1:])
        errlog = stack.enter_context(open("/dev/null", "w"))  # noqa: SIM115 (closed by the stack)
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    else:
        assert isinstance(target, str)
        read, write, _ = await stack.enter_async_context(streamable_http_client(target))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    return session


async def bare_connect(transport: str, target: list[str] | str) -> float:
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        await bare_session(stack, transport, target)
        return time.perf_counter() - started


async def time_calls(call: Callable[[], Awaitable[Any]], calls: int, warmup: int) -> float:
    """Median seconds of ``call()`` over ``calls`` calls, after ``warmup`` unmeasured ones."""
    for _ in range(warmup):
        await call()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def bare_calls(transport: str, target: list[str] | str, calls: int, warmup: int) -> float:
    async with AsyncExitStack() as stack:
        session = await bare_session(stack, transport, target)

        async def echo() -> None:
            result = await session.call_tool("echo", MESSAGE)
            assert not result.isError

        return await time_calls(echo, calls, warmup)


def manager_for(entry: dict[str, Any], folder: Path) -> Any:
    """pi-tui's manager for one server ``everything`` read from a real mcp.json in ``folder``."""
    from pi_tui.mcp.config import load_mcp_config
    from pi_tui.mcp.manager import McpManager

    (folder / "mcp.json").write_text(
        json.dumps({"mcpServers": {"everything": {**entry, "exposure": "direct"}}})
    )
    config = load_mcp_config(folder, project_trusted=False, agent_folder=folder, pi_folder=None)
    assert "everything" in config.servers, config.problems
    return McpManager(
        config, session_cwd=folder, log_path=folder / "mcp.log", auth_store=folder / "auth.json"
    )


async def ours_connect(entry: dict[str, Any]) -> float:
    with tempfile.TemporaryDirectory() as folder:
        manager = manager_for(entry, Path(folder))
        started = time.perf_counter()
        manager.start()
        await manager.wait_all(timeout=60)
        elapsed = time.perf_counter() - started
        try:
            (status,) = manager.statuses()
            assert status.state == "connected", (status.state, status.error, status.stderr_tail)
            assert any(tool.name == "mcp__everything__echo" for tool in manager.agent_tools())
        finally:
            manager.close()
        return elapsed


async def ours_calls(entry: dict[str, Any], calls: int, warmup: int) -> tuple[float, float]:
    """Medians of ``McpManager.call_tool`` and of the agent tool's ``execute``."""
    from pi_tui.tools.base import ToolContext

    with tempfile.TemporaryDirectory() as folder:
        manager = manager_for(entry, Path(folder))
        manager.start()
        try:
            await manager.wait_all(timeout=60)
            tool = next(tool for tool in manager.agent_tools() if tool.name == "mcp__everything__echo")
            context = ToolContext(cwd=Path(folder))

            async def call() -> None:
                result = await manager.call_tool("everything", "echo", MESSAGE)
                assert not result.isError

            async def execute() -> None:
                await tool.execute("call-1", MESSAGE, context)

            return await time_calls(call, calls, warmup), await time_calls(execute, calls, warmup)
        finally:
            manager.close()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f} ms"


async def measure(
    transport: str, target: list[str] | str, entry: dict[str, Any], args: argparse.Namespace
) -> None:
    await bare_connect(transport, target)  # one unmeasured start: node's files into the page cache
    bare_connects: list[float] = []
    our_connects: list[float] = []
    for _ in range(args.connects):  # taken in turns, so a change of machine load hits both
        bare_connects.append(await bare_connect(transport, target))
        if not args.bare_only:
            our_connects.append(await ours_connect(entry))
    bare = await bare_calls(transport, target, args.calls, args.warmup)
    print(f"\n{transport} (server-everything echo; medians)")
    print(f"  connect, bare SDK           {ms(statistics.median(bare_connects))}")
    print(f"  call, bare SDK              {ms(bare)}")
    if args.bare_only:
        return
    hop, execute = await ours_calls(entry, args.calls, args.warmup)
    print(f"  connect, pi-tui manager     {ms(statistics.median(our_connects))}")
    print(f"  call, McpManager.call_tool  {ms(hop)}   overhead {ms(hop - bare)}")
    print(f"  call, agent tool execute    {ms(execute)}   overhead {ms(execute - bare)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--connects", type=int, default=10)
    parser.add_argument("--bare-only", action="store_true", help="only the bare SDK's figures")
    args = parser.parse_args(argv)
    print(f"{args.calls} calls after {args.warmup} warm-up calls; {args.connects} connections each")
    command = everything_command()
    asyncio.run(measure("stdio", command, mcp_json_entry(command), args))
    with everything_http_server() as server:
        asyncio.run(measure("http", server.url, {"url": server.url}, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
