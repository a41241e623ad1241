"""``pi-tui mcp login <server>`` and ``pi-tui mcp logout <server>``: OAuth from a shell.

pi 1.x's ``pi mcp login|logout``. Login connects once first (a server that already accepts the
stored token needs nothing), then runs :func:`pi_tui.mcp.oauth.sign_in`: the authorization URL
is printed (a browser may be on another machine, over SSH) and a browser is opened when one can
be (``webbrowser``; never fatal), the answer comes to the loopback callback, or, on a terminal,
as the redirected URL pasted on stdin. Then it connects again to say how many tools the server
now offers. Logout deletes what ``mcp-auth.json`` holds for the server and says whether there was
anything.

:func:`sign_in_server` is shared with the non-interactive ``/mcp login`` (print, json and rpc
modes), which has no terminal to paste into and so waits for the browser callback only.

Mistakes (no such server, not an OAuth server, ``-l`` for a server the project does not define, a
bad ``--timeout``) are one line and exit 2; a sign-in that fails is one line and exit 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.argparsing import ArgumentsError, OneLineParser

if TYPE_CHECKING:
    from pi_tui.mcp.model import McpConfig, ServerConfig

DEFAULT_LOGIN_TIMEOUT = 300.0
"""Seconds the whole sign-in may take (pi's default)."""

Say = Callable[[str], None]
LOCAL_HELP = "the server must be defined in this folder's .agent/mcp.json"


class LoginProblem(Exception):
    """A mistake in what was asked (one line; the shell command exits 2)."""


def login_parser() -> OneLineParser:
    from pi_tui.mcp.list_command import add_approve_flag

    parser = OneLineParser(
        prog="pi-tui mcp login",
        description="Sign in to an MCP server over OAuth: open the authorization page and wait for "
        "the browser (a terminal also takes the pasted redirect URL).",
    )
    parser.add_argument("server")
    parser.add_argument("-l", "--local", action="store_true", help=LOCAL_HELP)
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_LOGIN_TIMEOUT,
        metavar="S",
        help=f"seconds the whole sign-in may take (default {DEFAULT_LOGIN_TIMEOUT:g})",
    )
    add_approve_flag(parser)
    return parser


def logout_parser() -> OneLineParser:
    from pi_tui.mcp.list_command import add_approve_flag

    parser = OneLineParser(
        prog="pi-tui mcp logout", description="Delete the stored OAuth credentials of an MCP server."
    )
    parser.add_argument("server")
    parser.add_argument("-l", "--local", action="store_true", help=LOCAL_HELP)
    add_approve_flag(parser)
    return parser


def oauth_server(config: McpConfig, name: str, *, local: bool, note: str | None = None) -> ServerConfig:
    """The configured server ``name`` that signs in with OAuth; :class:`LoginProblem` otherwise."""
    from pi_tui.mcp.oauth import needs_oauth

    server = config.servers.get(name)
    if server is None:
        names = ", ".join(config.servers) or "none"
        extra = f" ({note})" if note else ""
        raise LoginProblem(f'no MCP server named "{name}"{extra}; configured: {names}')
    if local and server.source.scope != "project":
        raise LoginProblem(
            f'MCP server "{name}" is defined in {server.source.label()}, not in this folder\'s '
            ".agent/mcp.json; omit -l"
        )
    if not needs_oauth(server):
        raise LoginProblem(
            f'MCP server "{name}" does not sign in with OAuth: only HTTP servers without an '
            "Authorization header do"
        )
    return server


def _open_browser(url: str) -> None:
    """Try a browser on a thread of its own (a console browser or a slow one never holds the
    sign-in up); any failure only means the user opens the printed URL."""

    def run() -> None:
        import webbrowser

        with contextlib.suppress(Exception):
            webbrowser.open(url)

    threading.Thread(target=run, name="pi-tui-browser", daemon=True).start()


def terminal_paste(say: Say) -> Callable[[], Awaitable[str]] | None:
    """On a terminal: the redirected URL typed or pasted on stdin (an empty line or end of input
    cancels). None without a terminal: only the browser callback can finish then."""
    if sys.stdin is None or not sys.stdin.isatty():
        return None

    async def pasted() -> str:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()

        def give(line: str) -> None:
            if not answer.done():
                answer.set_result(line)

        def read() -> None:  # a daemon thread: a sign-in finished by the callback never waits on it
            try:
                line = sys.stdin.readline()
            except (OSError, ValueError):
                line = ""
            with contextlib.suppress(RuntimeError):  # the loop is gone: the sign-in ended
                loop.call_soon_threadsafe(give, line)

        say("If the browser cannot reach this machine, paste the URL it was redirected to:")
        threading.Thread(target=read, name="pi-tui-paste", daemon=True).start()
        return await answer

    return pasted


async def sign_in_server(
    server: ServerConfig,
    cwd: Path,
    say: Say,
    *,
    pasted_redirect: Callable[[], Awaitable[str]] | None = None,
    timeout: float = DEFAULT_LOGIN_TIMEOUT,
    store: Path | None = None,
) -> None:
    """Sign ``server`` in: say the authorization URL, try a browser, wait for the callback (or
    the paste). Raises :class:`pi_tui.mcp.oauth.OAuthError` (one line) when it fails and
    :class:`pi_tui.mcp.config.McpConfigError` when an ``oauth`` value cannot be resolved."""
    from pi_tui.mcp.config import resolved
    from pi_tui.mcp.oauth import sign_in, store_path
    from pi_tui.text_safety import for_terminal

    values = resolved(server, cwd)

    def open_url(url: str) -> None:
        say(f'Sign in to MCP server "{server.name}" in your browser:\n{for_terminal(url)}')
        _open_browser(url)

    await sign_in(
        server,
        values.oauth,
        store_path=store or store_path(),
        open_url=open_url,
        pasted_redirect=pasted_redirect,
        timeout=timeout,
    )


def _say(text: str) -> None:
    print(text, flush=True)


def _config(cwd: Path, command: str, approve: bool) -> tuple[McpConfig, str | None]:
    """The servers as ``pi-tui mcp list`` reads them (project files when the folder is trusted or
    ``-a`` was given), and the note naming the skipped project files and ``command -a``."""
    from pi_tui.mcp.attach import load_config
    from pi_tui.mcp.list_command import project_trusted, untrusted_note

    trusted = project_trusted(cwd, approve)
    return load_config(cwd, trusted=trusted), untrusted_note(cwd, trusted, command)


def _connected(server: ServerConfig, cwd: Path) -> tuple[str, int, str | None]:
    """Connect ``server`` once: its state, tool count and error."""
    from pi_tui.mcp.list_command import connect_all
    from pi_tui.mcp.model import McpConfig

    status = connect_all(McpConfig(servers={server.name: server}), cwd).get(server.name)
    if status is None:
        return "disabled", 0, None
    return status.state, len(status.tools), status.error


def run_login(words: list[str], fail: Callable[..., int]) -> int:
    """``pi-tui mcp login <server> [-l] [--timeout S] [-a]``."""
    from pi_tui.mcp.config import McpConfigError
    from pi_tui.mcp.oauth import OAuthError
    from pi_tui.text_safety import for_terminal

    try:
        args = login_parser().parse_args(words)
    except ArgumentsError as error:
        return fail(f"mcp login: {error}")
    if not args.timeout > 0 or args.timeout == float("inf"):
        return fail("mcp login: --timeout must be a positive number of seconds")
    cwd = Path(os.getcwd())
    config, note = _config(cwd, "pi-tui mcp login", args.approve)
    try:
        server = oauth_server(config, args.server, local=args.local, note=note)
    except LoginProblem as problem:
        return fail(f"mcp login: {problem}")
    if server.enabled:  # a server that accepts what is stored needs no sign-in
        state, count, trouble = _connected(server, cwd)
        if state == "connected":
            _say(f'Already signed in to MCP server "{server.name}" ({count} tools).')
            return 0
        if state != "needs-sign-in":
            reason = for_terminal(trouble or state)
            return fail(f'mcp login: MCP server "{server.name}" failed to connect: {reason}', 1)
    try:
        asyncio.run(
            sign_in_server(server, cwd, _say, pasted_redirect=terminal_paste(_say), timeout=args.timeout)
        )
    except (OAuthError, McpConfigError) as error:
        return fail(f"mcp login: {for_terminal(str(error))}", 1)
    if not server.enabled:
        _say(f'Signed in to MCP server "{server.name}" (it is disabled, so it was not connected).')
        return 0
    state, count, trouble = _connected(server, cwd)
    if state != "connected":
        reason = for_terminal(trouble or state)
        return fail(f"mcp login: signed in, but the server did not connect: {reason}", 1)
    _say(f'Signed in to MCP server "{server.name}" ({count} tools).')
    return 0


def run_logout(words: list[str], fail: Callable[..., int]) -> int:
    """``pi-tui mcp logout <server> [-l] [-a]``."""
    from pi_tui.mcp.oauth import OAuthError, sign_out, store_path

    try:
        args = logout_parser().parse_args(words)
    except ArgumentsError as error:
        return fail(f"mcp logout: {error}")
    cwd = Path(os.getcwd())
    config, note = _config(cwd, "pi-tui mcp logout", args.approve)
    try:
        server = oauth_server(config, args.server, local=args.local, note=note)
    except LoginProblem as problem:
        return fail(f"mcp logout: {problem}")
    try:
        removed = sign_out(server, store_path=store_path())
    except OAuthError as error:
        return fail(f"mcp logout: {error}", 1)
    if removed:
        _say(f'Signed out of MCP server "{server.name}" (its stored credentials were deleted).')
    else:
        _say(f'No stored credentials for MCP server "{server.name}"; nothing was deleted.')
    return 0
