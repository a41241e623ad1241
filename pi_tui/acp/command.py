"""``pi-tui acp [flags]``: serve the Agent Client Protocol on stdin/stdout for an editor.

The editor (Zed, a JetBrains IDE, Neovim or Emacs through a plugin, Toad) starts this command
and speaks JSON-RPC lines to it. stdout belongs to the protocol alone: the process's file
descriptor 1 is pointed at stderr once the protocol has its own copy of it, so nothing else —
a stray ``print``, a library's warning, a child process that inherits the descriptor — can ever
write a byte into the stream. Everything meant for a person goes to stderr, which editors keep
in their logs.

The input ending (the editor closed the pipe) or SIGTERM / SIGINT / SIGHUP stops every running
reply and tool, closes the session files and exits (0, or 128 + the signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

from pi_tui.argparsing import ArgumentsError, OneLineParser, add_approval_flags

SIGNAL_GRACE = 3.0
"""Seconds a signal gives running replies and tools to stop before the sessions are closed."""
EOF_GRACE = 10.0
"""Seconds the end of the input gives the requests read before it (rpc mode's abort wait)."""


def _prepare_http() -> None:
    from pi_tui.ai.http import prepare_tls

    prepare_tls()


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui acp",
        description="Serve the Agent Client Protocol on stdin/stdout (Zed, JetBrains, Neovim, Emacs, Toad).",
    )
    parser.add_argument("--provider", metavar="NAME", help="provider of the model sessions start with")
    parser.add_argument(
        "--model", metavar="PATTERN", help="model sessions start with (default: defaultProvider/defaultModel)"
    )
    parser.add_argument("--thinking", metavar="LEVEL", help="thinking level sessions start with")
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help="the API key for the provider (instead of auth.json or the environment)",
    )
    parser.add_argument("--session-dir", metavar="DIR", help="where sessions live")
    parser.add_argument(
        "--start-mode",
        choices=("code", "careful", "ask"),
        default="code",
        help="the mode sessions start in: code (no questions, as pi), careful (ask before changes), "
        "ask (look only)",
    )
    parser.add_argument(
        "-e", "--extension", dest="extensions", action="append", metavar="PATH", help="load an extension"
    )
    parser.add_argument("--no-extensions", action="store_true", help="load no extension")
    parser.add_argument("--no-mcp", action="store_true", help="connect no MCP server (the editor's neither)")
    parser.add_argument(
        "--no-checkpoints", action="store_true", help="do not record the project's files per turn"
    )
    parser.add_argument("--no-context-files", action="store_true", help="read no AGENTS.md / CLAUDE.md")
    add_approval_flags(parser, whose="the project folders the editor opens sessions in (it cannot ask)")
    return parser


class _OneLineLog(logging.Handler):
    """The SDK's log records (it logs a traceback when, say, a client cancels a request) as one
    line on stderr; the traceback goes to ``acp.log`` in pi-tui's log folder."""

    def emit(self, record: logging.LogRecord) -> None:
        from pi_tui.logfiles import append_log

        line = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line += f": {type(error).__name__}: {error}"
            where = append_log("acp.log", self.format(record) + "\n")
            line += f" (details: {where})"
        print(f"pi-tui acp: {line}", file=sys.stderr, flush=True)


def run_acp(argv: Sequence[str], say_error: Callable[[str, int], int]) -> int:
    try:
        args = build_parser().parse_args(list(argv))
    except ArgumentsError as problem:
        return say_error(f"acp: {problem} (see pi-tui acp --help)", 2)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    from pi_tui.start_options import StartOptions

    # httpx and the certificate store load in a thread while the protocol SDK imports
    threading.Thread(target=_prepare_http, name="pi-tui-http", daemon=True).start()
    options = StartOptions(
        cwd=os.getcwd(),
        provider=args.provider,
        model=args.model,
        thinking=args.thinking,
        api_key=args.api_key,
        session_dir=args.session_dir,
        extensions=args.extensions,
        no_extensions=args.no_extensions,
        no_mcp=args.no_mcp,
        no_checkpoints=args.no_checkpoints,
        no_context_files=args.no_context_files,
        approve=args.approve,
        demo_fallback=False,
    )
    if os.isatty(0):  # someone typed it in a terminal: say what it is for
        print(
            "pi-tui acp: waiting for an editor's Agent Client Protocol messages on stdin "
            "(JSON-RPC lines; see docs/acp.md). Ctrl+D ends it.",
            file=sys.stderr,
            flush=True,
        )
    handler = _OneLineLog(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    protocol_out = os.dup(1)  # the protocol's own stdout; fd 1 becomes stderr for everything else
    os.dup2(2, 1)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        return asyncio.run(_serve(options, protocol_out, args.start_mode))
    finally:
        sys.stdout = real_stdout


async def _serve(options: Any, protocol_out: int, start_mode: str) -> int:
    from acp.agent.connection import AgentSideConnection

    from pi_tui.acp.agent import PiAcpAgent
    from pi_tui.acp.streams import open_streams

    loop = asyncio.get_running_loop()
    reader, writer, pump = await open_streams(0, protocol_out)
    agent = PiAcpAgent(options, start_mode=start_mode)
    conn = AgentSideConnection(cast(Any, agent), writer, reader, listening=False)
    received: list[int] = []
    listening = asyncio.ensure_future(conn.listen())
    signalled = asyncio.Event()

    def stop(signum: int) -> None:
        if received:  # a second signal: out now (session files are written as they go)
            os._exit(128 + received[0])
        received.append(signum)
        signalled.set()
        loop.call_later(SIGNAL_GRACE + 3.0, os._exit, 128 + signum)  # a last resort, never a hang

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, stop, signum)
    waiting = asyncio.ensure_future(signalled.wait())
    try:
        await asyncio.wait({listening, waiting}, return_when=asyncio.FIRST_COMPLETED)
        # A signal: replies and tools stop while the client can still answer (a command in its
        # terminal is killed there). The input ended: what was asked before the end is answered.
        await agent.finish(timeout=SIGNAL_GRACE if received else EOF_GRACE)
    finally:
        waiting.cancel()
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(signum)
        pump.cancel()
        await agent.close_all()
        from pi_tui.ai.http import close_shared_client
        from pi_tui.tools.bash import kill_running_commands

        kill_running_commands()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), 2.0)
        await close_shared_client()
    return 128 + received[0] if received else 0
