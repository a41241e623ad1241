"""The HTTP side of a sign-in's loopback callback, shared by provider logins
(:mod:`pi_tui.ai.oauth.callback`) and MCP server logins (:mod:`pi_tui.mcp.oauth_callback`).

Both listen on a loopback port in a thread of their own while the event loop waits for the
browser, answer every request with a small page, never write to stderr (it is under the TUI),
and hand the result to an asyncio future from that thread. What each accepts as a response
(state, code, extra parameters) is theirs; how they serve is here.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

POLL_SECONDS = 0.05
"""How often the serving thread looks for ``shutdown``: closing a sign-in frees its port fast."""

_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>pi-tui</title></head>"
    "<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{text}</p></body></html>"
)

T = TypeVar("T")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # the port of the last sign-in may still be in TIME_WAIT

    def handle_error(self, request: object, client_address: object) -> None:
        """Silent: a broken browser connection is no news, and stderr is under the TUI."""


class _Server6(_Server):
    address_family = socket.AF_INET6


class PageHandler(BaseHTTPRequestHandler):
    """A request handler that answers with a page and logs nothing."""

    def reply(self, status: int, title: str, text: str) -> None:
        """Answer with a small HTML page; ``title`` and ``text`` are escaped (they may quote
        what the authorization server sent)."""
        body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: a line on stderr would land on the terminal under the TUI."""


class CallbackHttp:
    """A listening server on ``host:port`` (0: any free port), served by a daemon thread."""

    def __init__(self, host: str, port: int, handler: type[BaseHTTPRequestHandler], thread_name: str) -> None:
        server_class = _Server6 if ":" in host else _Server
        self._server = server_class((host, port), handler)  # OSError when the port is taken
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_SECONDS,), name=thread_name, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop listening (the port is free again when this returns)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def settle_from_thread(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[T], result: T | BaseException
) -> None:
    """Resolve ``future`` on its loop from the serving thread (first answer wins); nothing when
    the loop is gone because the sign-in already ended."""

    def settle() -> None:
        if future.done():
            return
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)

    call: Callable[[], None] = settle
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(call)
