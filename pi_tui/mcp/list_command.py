"""``pi-tui mcp list [--json] [-a]``: connect every enabled server once and say how it went.

pi 1.x's ``pi mcp list``: the command an agent (or a user) runs through a shell to check an
``mcp.json`` it wrote, without starting a session. So it loads no extension (pi's shell commands
do not), reads the project's files only when the folder's saved decision trusts it or ``-a`` is
given (it never asks: nobody may be there to answer), connects each enabled server with the same
manager a session uses, waits at most as long as a connection may take, and stops every server
before it returns. Exit 1 when an entry is invalid or an enabled server is not connected, so a
script can tell; 0 otherwise.

Nothing printed carries a secret: ``env`` and ``headers`` values are never shown (they may hold
resolved tokens), and the command line, URL, errors and a failed server's stderr go through
:func:`pi_tui.redact.redact_secrets`. Server text (tool names, errors, stderr) is data: control
characters are shown as visible symbols, never passed to the terminal.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pi_tui.argparsing import ArgumentsError, OneLineParser

if TYPE_CHECKING:
    from collections.abc import Callable

    from pi_tui.mcp.connection import ServerStatus
    from pi_tui.mcp.model import McpConfig, ServerConfig

WAIT_MARGIN = 5.0
"""Seconds beyond a server's own connect limit before ``list`` stops waiting for it."""
STOP_WAIT = 8.0
"""Seconds the servers get to stop before the command returns anyway."""
_SECRET_QUERY = re.compile(r"key|token|secret|pass|auth|sig|code|credential", re.IGNORECASE)


def list_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui mcp list",
        description="Connect every enabled MCP server and print its state, tools and errors "
        "(exit 1 when an entry is invalid or an enabled server is not connected).",
    )
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    add_approve_flag(parser)
    return parser


def add_approve_flag(parser: OneLineParser) -> None:
    """``-a/--approve`` of the ``mcp`` commands that read project servers: what ``-a`` is to a
    session, for this one command (the folder's mcp.json files are read; nothing is saved)."""
    parser.add_argument(
        "-a",
        "--approve",
        action="store_true",
        help="read this folder's mcp.json files for this run even though it is not trusted "
        "(nothing is saved)",
    )


def project_trusted(cwd: Path, approve: bool = False) -> bool:
    """``-a``, else the folder's saved trust decision (never asking: nobody may be there to
    answer): what a session started here would decide, so ``list`` shows the servers that
    session would connect."""
    from pi_tui.config.project_trust import saved_trust_allows

    return approve or saved_trust_allows(cwd)


def untrusted_note(cwd: Path, trusted: bool, command: str = "pi-tui mcp list") -> str | None:
    """The line saying the project's mcp.json files were skipped, when there are any, and the
    two things that read them: trusting the folder for good, or ``command -a`` for one run."""
    if trusted:
        return None
    from pi_tui.mcp.config import project_files

    skipped = [str(path) for _scope, path in project_files(cwd) if path.exists()]
    if not skipped:
        return None
    return (
        f"{', '.join(skipped)} ignored: this folder is not trusted "
        f"(start pi-tui here and answer its trust question, or run `{command} -a` to read them once)"
    )


def safe_url(url: str) -> str:
    """``url`` without a password and without the values of query parameters that look secret
    (each part redacted on its own: a credential shape must not swallow the parameters after it)."""
    from pi_tui.redact import redact_secrets

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url
    netloc = parts.netloc
    if parts.password is not None or parts.username is not None:
        user = parts.username or ""
        netloc = f"{user}:***@{host}" if parts.password is not None else f"{user}@{host}"
        netloc += f":{port}" if port is not None else ""
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        hidden = [
            (key, "***" if _SECRET_QUERY.search(key) else redact_secrets(value)) for key, value in pairs
        ]
        query = urlencode(hidden, safe="*[]")
    path = redact_secrets(parts.path)
    return urlunsplit((parts.scheme, redact_secrets(netloc), path, query, parts.fragment))


def describe_transport(server: ServerConfig) -> str:
    """The command line or URL as written (``${VAR}`` stays a reference), secrets hidden."""
    from pi_tui.redact import redact_secrets

    if server.transport == "http":
        return safe_url(server.url or "")
    # quoted as a shell needs it (``>&2``, ``;``, ``$`` too), so the line can be pasted and run
    words = [server.command, *server.args] if server.command else server.args
    return redact_secrets(shlex.join(words))


def server_report(server: ServerConfig, status: ServerStatus | None) -> dict[str, Any]:
    """One server as ``--json`` gives it (and as the text lines are made from)."""
    from pi_tui.mcp.config import tool_exposure_for
    from pi_tui.redact import redact_secrets

    report: dict[str, Any] = {
        "name": server.name,
        "scope": server.source.scope,
        "source": str(server.source.path) if server.source.path else server.source.label(),
        "enabled": server.enabled,
        "exposure": server.exposure,
        "type": server.transport,
        "transport": describe_transport(server),
        "state": "disabled" if not server.enabled else (status.state if status else "connecting"),
        "tools": [],
    }
    if server.written_exposure and server.written_exposure != server.exposure:
        report["writtenExposure"] = server.written_exposure
    if server.override_source is not None and server.override_source.path is not None:
        report["override"] = str(server.override_source.path)
    if server.description:
        report["description"] = server.description
    if status is None or not server.enabled:
        return report
    report["tools"] = [tool.name for tool in status.tools]
    differing = {
        tool.name: exposure
        for tool in status.tools
        if (exposure := tool_exposure_for(server, tool.name)) != server.exposure
    }
    if differing:
        report["toolExposure"] = differing
    if status.has_resources:
        report["resources"] = True
    if status.connected_seconds is not None and status.state == "connected":
        report["connectSeconds"] = round(status.connected_seconds, 3)
    if status.state != "connected":
        if status.error:
            report["error"] = redact_secrets(status.error)
        if server.transport == "stdio" and status.stderr_tail.strip():
            report["stderr"] = redact_secrets(status.stderr_tail)
    return report


def text_lines(
    reports: list[dict[str, Any]], problems: list[str], notes: list[str], *, sign_in: str = "pi-tui mcp login"
) -> list[str]:
    """The human list: configuration problems first, then each server, then the notes.
    ``sign_in`` is the command a server that needs sign-in names (``/mcp login`` in a session)."""
    from pi_tui.config.paths import agent_dir
    from pi_tui.text_safety import for_terminal

    lines = [f"config error: {problem}" for problem in problems]
    if not reports and not problems:
        lines.append(
            f"No MCP servers configured. Add them to {agent_dir() / 'mcp.json'} or .agent/mcp.json "
            "(pi-tui mcp add)."
        )
    for report in reports:
        state = report["state"]
        count = len(report["tools"])
        said = {
            "connected": f"connected, {count} tool{'' if count == 1 else 's'}",
            "needs-sign-in": "needs sign-in",
            "connecting": "still connecting (gave up waiting)",
            "disconnected": "disconnected, reconnects on next use",
        }.get(state, state)
        lines.append(f"{report['name']}: {said} ({report['exposure']}, {report['scope']} {report['source']})")
        lines.append(f"  {report['type']}: {report['transport']}")
        if "override" in report:
            lines.append(f"  project override: {report['override']}")
        if state == "needs-sign-in":
            lines.append(f"  sign in with: {sign_in} {report['name']}")
        if report["tools"]:
            marked = [
                f"{tool} [{report['toolExposure'][tool]}]" if tool in report.get("toolExposure", {}) else tool
                for tool in report["tools"]
            ]
            lines.append(f"  tools: {', '.join(marked)}")
        if report.get("resources"):
            lines.append("  offers resources")
        if "error" in report:
            lines.extend(f"  {line}" for line in str(report["error"]).splitlines())
        if "stderr" in report:
            lines.append("  stderr (last lines):")
            lines.extend(f"    {line}" for line in str(report["stderr"]).rstrip("\n").splitlines()[-20:])
    lines.extend(notes)
    return [for_terminal(line) for line in lines]


def connect_all(config: McpConfig, cwd: Path) -> dict[str, ServerStatus]:
    """Connect every enabled server of ``config`` once, wait as long as a connection may take,
    and stop them all; the status of each by name."""
    from pi_tui.mcp.connection import CONNECT_TIMEOUT_FLOOR
    from pi_tui.mcp.manager import McpManager

    enabled = [server for server in config.servers.values() if server.enabled]
    if not enabled:
        return {}
    limit = max(max(CONNECT_TIMEOUT_FLOOR, server.timeout) for server in enabled) + WAIT_MARGIN
    manager = McpManager(config, session_cwd=cwd)
    manager.start()
    try:
        manager.run_sync(manager.wait_all(limit), timeout=limit + WAIT_MARGIN)
        return {status.name: status for status in manager.statuses()}
    finally:
        manager.close(STOP_WAIT)


def run_list(words: list[str], fail: Callable[..., int]) -> int:
    """``pi-tui mcp list [--json] [-a]``: 0 when every entry is valid and every enabled server
    connected, 1 otherwise, 2 for a mistake in the words."""
    from pi_tui.mcp.attach import load_config

    try:
        args = list_parser().parse_args(words)
    except ArgumentsError as error:
        return fail(f"mcp list: {error}")
    cwd = Path(os.getcwd())
    trusted = project_trusted(cwd, args.approve)
    config = load_config(cwd, trusted=trusted)
    statuses = connect_all(config, cwd)
    reports = [server_report(server, statuses.get(name)) for name, server in config.servers.items()]
    problems = [problem.line() for problem in config.problems]
    notes = list(config.notes)
    note = untrusted_note(cwd, trusted)
    if note:
        notes.append(note)
    failed = bool(problems) or any(r["enabled"] and r["state"] != "connected" for r in reports)
    if args.json:
        document: dict[str, Any] = {"servers": reports, "errors": problems, "notes": notes}
        print(json.dumps(document, indent=2))
    else:
        for line in text_lines(reports, problems, notes):
            print(line)
    return 1 if failed else 0
