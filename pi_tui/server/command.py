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
from typing import Any

from pi_tui.argparsing import ArgumentsError, OneLineParser, add_approval_flags

DEFAULT_PORT = 4217
HEADER_TIMEOUT_SECONDS = 10.0
"""A request's headers must be complete this long after its connection (or its first byte)."""
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
    add_approval_flags(parser, whose="the project folders of this server's sessions (it cannot ask)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients may use besides IP addresses and localhost (repeatable)",
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
    hosts = [name.strip().lower() for name in args.allow_host if name.strip()]
    chosen = token or secrets.token_urlsafe(24)
    _keep_from_children_and_model(chosen)
    return serve_on(sock, chosen, printed_token=token is None, hosts=hosts, approve=args.approve)


def _keep_from_children_and_model(token: str) -> None:
    """Whoever holds the token drives the server: put it where the secrets code looks for it
    (``PI_TUI_SERVE_TOKEN`` is a known credential, hidden from the model, and left out of
    every command's environment), whether it came from ``--token``, the variable or chance."""
    from pi_tui.secrets.child_env import hold

    os.environ[TOKEN_ENV] = token
    hold(token)


def _env_number(name: str, default: float) -> float:
    """A tuning knob from the environment (tests and benchmarks), the default when unset."""
    value = os.environ.get(name)
    return float(value) if value else default


def protocol_class(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline for request headers and the transport in scope.

    uvicorn times out an idle keep-alive connection but not one that sends its headers a byte at
    a time (or nothing at all): a hundred such connections were held for as long as the client
    liked. Here each request's headers must be complete ``header_timeout`` seconds after the
    connection opened or, on a kept-alive connection, after the request's first byte; else the
    connection is closed. The ASGI scope also gets the connection's transport (under
    :data:`~pi_tui.server.app.TRANSPORT_KEY`) so an event stream can drop a client that stopped
    reading.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from pi_tui.server.app import TRANSPORT_KEY

    class GuardedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            inner = self.app

            async def app(scope: Any, receive: Any, send: Any) -> None:
                scope[TRANSPORT_KEY] = transport
                await inner(scope, receive, send)

            self.app = app
            self._arm()

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.cycle is None or self.cycle.response_complete:  # still no complete request
                self.transport.abort()

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                self._arm()  # a new request starts: its headers have until the deadline
            super().data_received(data)
            if self.cycle is not cycle:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return GuardedH11Protocol


def serve_on(
    sock: socket.socket,
    token: str,
    *,
    printed_token: bool = True,
    hosts: Sequence[str] = (),
    approve: bool | None = None,
) -> int:
    import uvicorn

    from pi_tui.server.app import (
        BODY_TIMEOUT_SECONDS,
        CLIENT_BUDGET_BYTES,
        IDLE_CLOSE_SECONDS,
        MAX_BODY_BYTES,
        build_app,
    )
    from pi_tui.server.event_log import HEARTBEAT_SECONDS, RING_BYTES, RING_SIZE
    from pi_tui.server.hub import SessionHub
    from pi_tui.start_options import StartOptions
    from pi_tui.tools.bash import kill_running_commands

    host, port = sock.getsockname()[:2]
    shown_host = f"[{host}]" if ":" in host else host
    base = f"http://{shown_host}:{port}"
    # Tuning knobs for tests and benchmarks (docs/server.md): seconds between heartbeats,
    # events and bytes kept for replay, seconds before an unused session is closed, the body
    # limit, the header and body deadlines, how far an event-stream client may fall behind.
    heartbeat = _env_number("PI_TUI_SERVE_HEARTBEAT", HEARTBEAT_SECONDS)
    ring = int(_env_number("PI_TUI_SERVE_RING", RING_SIZE))
    ring_bytes = int(_env_number("PI_TUI_SERVE_RING_BYTES", RING_BYTES))
    hub = SessionHub(
        os.getcwd(), StartOptions(cwd=os.getcwd(), approve=approve), ring_size=ring, ring_bytes=ring_bytes
    )
    idle_close = _env_number("PI_TUI_SERVE_IDLE_CLOSE", IDLE_CLOSE_SECONDS)
    header_timeout = _env_number("PI_TUI_SERVE_HEADER_TIMEOUT", HEADER_TIMEOUT_SECONDS)
    app = build_app(
        hub,
        token,
        heartbeat=heartbeat,
        idle_close=idle_close,
        max_body=int(_env_number("PI_TUI_SERVE_MAX_BODY", MAX_BODY_BYTES)),
        body_timeout=_env_number("PI_TUI_SERVE_BODY_TIMEOUT", BODY_TIMEOUT_SECONDS),
        client_budget=int(_env_number("PI_TUI_SERVE_CLIENT_BUDGET", CLIENT_BUDGET_BYTES)),
        hosts=hosts,
    )

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
        http=protocol_class(header_timeout),
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
