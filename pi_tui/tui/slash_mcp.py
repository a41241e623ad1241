"""``/mcp``: the session's MCP servers in the interactive app, and the startup report about them.

``/mcp`` opens the manager screen (:mod:`pi_tui.tui.screens.mcp_screen`); ``/mcp reconnect``,
``/mcp login`` and ``/mcp logout`` with a server name do that one thing from the editor. With no
server configured (or under ``--no-mcp``) it says where mcp.json goes instead.

:func:`report_start_problems` says the start notice and then, once per server, when a server's
first connection attempt ends failed or wanting sign-in: servers connect in the background, so
what startup knew (config problems, in the notice) is not all there is to report, and a chat
line pointing at ``/mcp`` is how the user learns of the rest without opening anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.tui.slash_base import CommandSet, started_parts

if TYPE_CHECKING:
    from pi_tui.mcp.manager import McpManager
    from pi_tui.startup import Started
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""

USAGE = "Usage: /mcp, /mcp reconnect <server>, /mcp login <server>, /mcp logout <server>"
SUBCOMMANDS = ("reconnect", "login", "logout")


def _trusted(app: CommandHost) -> bool:
    trust = started_parts(app).trust
    return bool(trust is not None and trust.trusted)


def _no_servers(app: CommandHost) -> str:
    from pi_tui.view.mcp_rows import no_servers_text

    options = started_parts(app).options
    return no_servers_text(app.agent_dir, no_mcp=bool(options is not None and options.no_mcp))


@COMMANDS.command("mcp")
async def mcp(app: CommandHost, args: str) -> None:
    from pi_tui.tui import mcp_actions
    from pi_tui.view.mcp_rows import unknown_server_text

    manager: McpManager | None = app.agent.mcp
    words = args.split()
    if words and (words[0] not in SUBCOMMANDS or len(words) != 2):
        app.say(USAGE, "warning")
        return
    if manager is None:
        app.say(_no_servers(app))
        return
    if not words:
        from pi_tui.tui.screens.mcp_screen import McpPlace, McpScreen

        await app.push_screen_wait(McpScreen(manager, McpPlace(Path(app.cwd), _trusted(app))))
        return
    action, name = words
    if mcp_actions.find(manager, name) is None:
        app.say(unknown_server_text(name, (status.name for status in manager.statuses())), "error")
        return
    if action == "reconnect":
        app.set_activity(f"Reconnecting to {name}...")
        try:
            outcome = await mcp_actions.reconnect(manager, name)
        finally:
            app.set_activity(None)
    elif action == "logout":
        outcome = await mcp_actions.sign_out(manager, name)
    else:
        await _login(app, manager, name)
        return
    app.say(outcome.text, outcome.level)


async def _login(app: CommandHost, manager: McpManager, name: str) -> None:
    """``/mcp login <server>``: the manager screen's sign-in view for that server."""
    from pi_tui.tui import mcp_actions
    from pi_tui.tui.screens.mcp_screen import McpPlace, McpScreen

    status = mcp_actions.find(manager, name)
    if status is not None and not mcp_actions.uses_oauth(status.config):
        app.say(
            f'MCP server "{name}" does not use OAuth: only HTTP servers without an Authorization header do.',
            "error",
        )
        return
    screen = McpScreen(manager, McpPlace(Path(app.cwd), _trusted(app)), server=name)
    app.push_screen(screen)
    screen.call_after_refresh(screen.act, "sign-in")


def report_start_problems(app: CommandHost, started: Started) -> None:
    """The start notice's lines, then one line per MCP server whose first connection attempt
    ends failed or needing sign-in (each server once per session, pointing at /mcp)."""
    for line in started.notice.splitlines() if started.notice else []:
        app.say(line, "warning")
    manager = getattr(started.agent, "mcp", None)
    if manager is not None:
        StartupReport(app, manager).watch()


class StartupReport:
    """Watches the servers' first connection attempts; says each problem once."""

    def __init__(self, app: CommandHost, manager: McpManager) -> None:
        self.app = app
        self.manager = manager
        self.settled: set[str] = set()
        """Servers whose first attempt has ended (reported or not): never looked at again."""

    def watch(self) -> None:
        self.manager.listeners.append(self._changed)
        self.check()  # a server may have failed before the app was ready

    def _changed(self) -> None:
        """(MCP thread) hand the check to the app; ``call_later`` posts a message, which is
        thread-safe and does not wait for the app (the MCP loop must never block on the UI)."""
        app: Any = self.app
        app.call_later(self.check)

    def check(self) -> None:
        from pi_tui.view.mcp_rows import REPORTED, report_line

        for status in self.manager.statuses():
            if status.name in self.settled or status.state == "connecting":
                continue
            self.settled.add(status.name)
            if status.state in REPORTED:
                self.app.say(report_line(status), "warning")
