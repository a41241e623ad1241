"""``pi-tui serve [--host 127.0.0.1] [--port N] [--token T]``: run the HTTP server.

Loopback by default. Every request needs the bearer token: a random one is made and printed
unless ``--token`` (or ``PI_TUI_SERVE_TOKEN``) gives one; listening on any other address
without a chosen token is refused, because a printed token on a shared machine is no secret.
The socket is bound here, before uvicorn starts, so ``--port 0`` (any free port) prints the
port actually taken and a port in use is one clear line.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable, Sequence

from pi_tui.argparsing import ArgumentsError, OneLineParser

DEFAULT_PORT = 4217
TOKEN_ENV = "PI_TUI_SERVE_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except BaseException:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def run_serve(argv: Sequence[str], say_error: Callable[[str, int], int]) -> int:
    parser = OneLineParser(
        prog="pi-tui serve", description="Serve the agent and its sessions over HTTP and SSE."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)"
    )
    parser.add_argument(
        "--token", help=f"the bearer token clients send (default: ${TOKEN_ENV}, else a random one)"
    )
    try:
        args = parser.parse_args(list(argv))
    except ArgumentsError as problem:
        return say_error(f"serve: {problem} (see pi-tui serve --help)", 2)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if not is_loopback(args.host) and token is None:
        return say_error(
            f"serve: listening on {args.host} needs a token you chose (--token or ${TOKEN_ENV}): "
            "anyone who can reach the port could run commands here",
            2,
        )
    if token is not None and len(token) < 8:
        return say_error("serve: a token needs at least 8 characters", 2)
    if not 0 <= args.port <= 65535:
        return say_error(f"serve: no such port {args.port}", 2)
    try:
        sock = bind(args.host, args.port)
    except OSError as problem:
        return say_error(f"serve: cannot listen on {args.host}:{args.port}: {problem.strerror or problem}", 2)
    return serve_on(sock, token or secrets.token_urlsafe(24), printed_token=token is None)


def serve_on(sock: socket.socket, token: str, *, printed_token: bool = True) -> int:
    import uvicorn

    from pi_tui.server.app import IDLE_CLOSE_SECONDS, build_app
    from pi_tui.server.event_log import HEARTBEAT_SECONDS, RING_SIZE
    from pi_tui.server.hub import SessionHub
    from pi_tui.start_options import StartOptions
    from pi_tui.tools.bash import kill_running_commands

    host, port = sock.getsockname()[:2]
    shown_host = f"[{host}]" if ":" in host else host
    base = f"http://{shown_host}:{port}"
    # Tuning knobs for tests and benchmarks: seconds between heartbeats, events kept for replay,
    # seconds before an unused session is closed.
    heartbeat = float(os.environ.get("PI_TUI_SERVE_HEARTBEAT") or HEARTBEAT_SECONDS)
    ring = int(os.environ.get("PI_TUI_SERVE_RING") or RING_SIZE)
    hub = SessionHub(os.getcwd(), StartOptions(cwd=os.getcwd()), ring_size=ring)
    idle_close = float(os.environ.get("PI_TUI_SERVE_IDLE_CLOSE") or IDLE_CLOSE_SECONDS)
    app = build_app(hub, token, heartbeat=heartbeat, idle_close=idle_close)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Sessions first: their event streams end, so the connections can close at once.
            await hub.close_all()
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        ws="none",
    )
    server = Server(config)
    print(f"pi-tui serve: listening on {base}", flush=True)
    if printed_token:
        print(f"token: {token}", flush=True)
    print(f"web page: {base}/?token={token if printed_token else '<your token>'}", flush=True)
    received: list[int] = []
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        received.append(signal.SIGINT)
    finally:
        kill_running_commands()
        sock.close()
    print("pi-tui serve: stopped", file=sys.stderr, flush=True)
    return 128 + received[0] if received else 0
