"""``/mcp`` outside the TUI: print, json and rpc modes (and the server's sessions, through rpc).

pi 1.x: "Outside the interactive TUI, ``/mcp`` prints server status; ``/mcp login <server>``,
``/mcp logout <server>``, and ``/mcp reconnect <server>`` perform those actions directly." The
modes call :func:`mcp_words` on each prompt; for an ``/mcp`` prompt they run
:func:`run_mcp_command` instead of a turn and show each :class:`McpReply` their own way (print:
stdout, errors on stderr; json: one ``{"type": "mcp", ...}`` record; rpc: pi's ``notify``
extension UI request, as pi's built-in MCP extension's command does).

The status waits (at most :data:`STATUS_WAIT`) for servers still connecting, as pi's waits for its
pending connections, so ``pi-tui -p /mcp`` says how each server ended up, not "connecting". A
sign-in here has no terminal to paste into: it says the URL, tries a browser and waits for the
loopback callback (up to :data:`pi_tui.mcp.login_command.DEFAULT_LOGIN_TIMEOUT`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pi_tui.mcp.connection import ServerStatus
    from pi_tui.mcp.manager import McpManager

MCP_USAGE = "Usage: /mcp, /mcp reconnect <server>, /mcp login <server>, /mcp logout <server>"
STATUS_WAIT = 30.0
"""Seconds ``/mcp`` waits for servers still connecting before it reports them as such."""
CLOSE_WAIT = 8.0
MCP_PATH = "builtin:mcp"
"""Where rpc's ``get_commands`` says ``/mcp`` comes from (pi's built-in MCP extension)."""

Level = Literal["info", "warning", "error"]


@dataclass(slots=True)
class McpReply:
    """One thing ``/mcp`` has to say."""

    text: str
    level: Level = "info"
    servers: list[dict[str, Any]] | None = field(default=None)
    """The status as ``pi-tui mcp list --json`` gives each server (the plain status only)."""

    def record(self) -> dict[str, Any]:
        """The json mode's record."""
        record: dict[str, Any] = {"type": "mcp", "level": self.level, "text": self.text}
        if self.servers is not None:
            record["servers"] = self.servers
        return record


Say = Callable[[McpReply], None]


def mcp_words(text: str) -> list[str] | None:
    """The words after ``/mcp`` when ``text`` is the ``/mcp`` command, else None."""
    words = text.strip().split()
    if not words or words[0].lower() != "/mcp":
        return None
    return words[1:]


def status_reply(manager: McpManager | None) -> McpReply:
    """Every server with its state, tools and error; configuration problems first."""
    from pi_tui.mcp.list_command import server_report, text_lines

    if manager is None:
        lines = text_lines([], [], [])
        return McpReply("\n".join(lines), servers=[])
    statuses = manager.statuses()
    reports = [server_report(status.config, status) for status in statuses]
    shown = {status.name for status in statuses}
    reports += [  # a server not started yet (registered a moment ago)
        server_report(server, None) for name, server in manager.config.servers.items() if name not in shown
    ]
    problems = [problem.line() for problem in manager.config.problems]
    lines = text_lines(reports, problems, list(manager.config.notes), sign_in="/mcp login")
    return McpReply("\n".join(lines), servers=reports)


def _pick(
    manager: McpManager, name: str | None, eligible: Callable[[ServerStatus], bool], unfit: str
) -> ServerStatus | str:
    """The server ``name`` (or the only eligible one when no name is given), or what is wrong
    (``unfit`` says why a named server does not fit, ``{name}`` standing for its name)."""
    statuses = manager.statuses()
    if name is None:
        candidates = [status for status in statuses if eligible(status)]
        if len(candidates) == 1:
            return candidates[0]
        listed = ", ".join(status.name for status in candidates) or "none"
        return f"Name the server: {MCP_USAGE} (servers that fit: {listed})"
    status = next((status for status in statuses if status.name == name), None)
    if status is None:
        configured = ", ".join(status.name for status in statuses) or "none"
        return f'No MCP server named "{name}" (configured: {configured}).'
    if not eligible(status):
        return unfit.format(name=name)
    return status


NOT_OAUTH = (
    'MCP server "{name}" does not sign in with OAuth: only HTTP servers without an Authorization header do.'
)
DISABLED = 'MCP server "{name}" is disabled; enable it in its mcp.json (or in /mcp in the TUI) first.'


def _uses_oauth(status: ServerStatus) -> bool:
    from pi_tui.mcp.oauth import needs_oauth

    return needs_oauth(status.config)


def _state_words(status: ServerStatus) -> str:
    if status.state == "connected":
        count = len(status.tools)
        return f"connected, {count} tool{'' if count == 1 else 's'}"
    return status.state + (f": {status.error}" if status.error else "")


async def run_mcp_command(manager: McpManager | None, words: list[str], say: Say) -> bool:
    """Do what ``/mcp <words>`` asks; every result goes to ``say``. True when it went well."""
    from pi_tui.text_safety import for_terminal

    def error(text: str) -> bool:
        say(McpReply(for_terminal(text), "error"))
        return False

    if manager is not None:
        await manager.wait_all(STATUS_WAIT)
    if not words:
        say(status_reply(manager))
        return True
    action, rest = words[0].lower(), words[1:]
    if action not in ("reconnect", "login", "logout") or len(rest) > 1:
        return error(MCP_USAGE)
    if manager is None:
        return error("No MCP servers are configured (or MCP is off for this run).")
    name = rest[0] if rest else None
    if action == "reconnect":
        picked = _pick(manager, name, lambda status: status.state != "disabled", DISABLED)
        if isinstance(picked, str):
            return error(picked)
        status = await manager.reconnect(picked.name)
        if status.state != "connected":
            return error(f'MCP server "{status.name}" did not reconnect: {_state_words(status)}')
        say(McpReply(for_terminal(f'Reconnected to MCP server "{status.name}" ({_state_words(status)}).')))
        return True
    picked = _pick(manager, name, _uses_oauth, NOT_OAUTH)
    if isinstance(picked, str):
        return error(picked)
    if action == "logout":
        return _logout(manager, picked, say)
    return await _login(manager, picked, say)


def _logout(manager: McpManager, status: ServerStatus, say: Say) -> bool:
    from pi_tui.mcp.oauth import OAuthError, sign_out

    try:
        removed = sign_out(status.config, store_path=manager.auth_store)
    except OAuthError as problem:
        say(McpReply(str(problem), "error"))
        return False
    said = (
        f'Signed out of MCP server "{status.name}" (its stored credentials were deleted).'
        if removed
        else f'No stored credentials for MCP server "{status.name}"; nothing was deleted.'
    )
    say(McpReply(said))
    return True


async def _login(manager: McpManager, status: ServerStatus, say: Say) -> bool:
    from pi_tui.mcp.config import McpConfigError
    from pi_tui.mcp.login_command import sign_in_server
    from pi_tui.mcp.oauth import OAuthError
    from pi_tui.text_safety import for_terminal

    try:
        await sign_in_server(
            status.config,
            Path(manager.session_cwd),
            lambda text: say(McpReply(text)),
            store=manager.auth_store,
        )
    except (OAuthError, McpConfigError) as problem:
        say(McpReply(for_terminal(str(problem)), "error"))
        return False
    after = await manager.reconnect(status.name)
    if after.state != "connected":
        say(McpReply(for_terminal(f"Signed in, but {_state_words(after)}"), "error"))
        return False
    say(McpReply(f'Signed in to MCP server "{after.name}" ({_state_words(after)}).'))
    return True


async def close_mcp(manager: McpManager | None) -> None:
    """Stop the session's servers (stdin closed, SIGTERM, SIGKILL to the group) without holding
    up the caller's loop: the manager blocks while its own loop stops them."""
    if manager is None:
        return
    import asyncio

    with contextlib.suppress(Exception):  # closing never fails the mode's own shutdown
        await asyncio.to_thread(manager.close, CLOSE_WAIT)


def rpc_say(send: Callable[[dict[str, Any]], None]) -> Say:
    """rpc's way for ``/mcp`` to answer: pi's ``notify`` extension UI request (not answered)."""
    import uuid

    def say(reply: McpReply) -> None:
        send(
            {
                "type": "extension_ui_request",
                "id": str(uuid.uuid4()),
                "method": "notify",
                "message": reply.text,
                "notifyType": reply.level,
            }
        )

    return say


def rpc_command() -> Any:
    """``/mcp`` as rpc's ``get_commands`` lists it: a command of pi's built-in MCP extension
    (a prompt of ``/mcp ...`` runs it)."""
    from pi_tui.commands import BUILTIN_COMMANDS, SlashCommand

    builtin = next((command for command in BUILTIN_COMMANDS if command.name == "mcp"), None)
    description = builtin.description if builtin is not None else "MCP servers: state and actions"
    return SlashCommand(
        "mcp", description, usage="[reconnect|login|logout <server>]", source="extension", path=MCP_PATH
    )
