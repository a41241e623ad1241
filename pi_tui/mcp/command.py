"""``pi-tui mcp add|remove ...``: pi 1.x's ``pi mcp`` shell commands, without starting a session.

They change pi-tui's own files: ``<agent dir>/mcp.json``, or ``<cwd>/.agent/mcp.json`` with
``-l/--local``; pi's files are pi's (``pi mcp add`` writes those). What they write is pi's
``mcpServers`` shape, so pi 1.x reads it too when pointed at the same file. ``add`` does not
connect; ``pi-tui mcp list`` does.

Each subcommand is one function in :data:`SUBCOMMANDS` (words after the subcommand, the one-line
``fail``) -> exit code; the other ``pi mcp`` commands are entries of the same table. A
mistake is one line on stderr and exit 2, like every other subcommand of pi-tui.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_tui.argparsing import ArgumentsError, OneLineParser
from pi_tui.mcp.config import REGISTRATIONS, McpConfigError, check_entry, project_files
from pi_tui.mcp.config_edit import add_server, defines, project_config_path, remove_server
from pi_tui.mcp.model import PI_EXPOSURES

Fail = Callable[..., int]
Subcommand = Callable[[list[str], Fail], int]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STDIO_ONLY = ("env", "cwd")
_HTTP_ONLY = (
    "header",
    "bearer_token_env_var",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_callback_port",
    "oauth_client_name",
    "oauth_client_registration",
)


def _print(text: str) -> None:
    """One line for the user; folder names are data, so a terminal gets no escape sequences."""
    if sys.stdout.isatty():
        from pi_tui.text_safety import for_terminal

        text = for_terminal(text)
    print(text)


def user_config_path() -> Path:
    """pi-tui's own user file (never pi's: ``pi mcp add`` writes that one)."""
    from pi_tui.config.paths import agent_dir

    return agent_dir() / "mcp.json"


def add_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui mcp add",
        usage="pi-tui mcp add <server> [options] (-- <command> [args...] | --url URL)",
        description="Add or replace a server in mcp.json (it is not started: pi-tui mcp list checks it).",
    )
    parser.add_argument("server")
    parser.add_argument("command", nargs="*", help="the stdio server's command and arguments, after --")
    parser.add_argument("-l", "--local", action="store_true", help="write .agent/mcp.json of this folder")
    parser.add_argument("--url", help="a streamable HTTP server's URL (instead of a command)")
    parser.add_argument("--env", action="append", metavar="KEY=VALUE", help="stdio: a variable (repeatable)")
    parser.add_argument("--cwd", metavar="DIR", help="stdio: the working folder")
    parser.add_argument("--header", action="append", metavar="KEY=VALUE", help="HTTP: a header (repeatable)")
    parser.add_argument(
        "--bearer-token-env-var", metavar="NAME", help='HTTP: send "Authorization: Bearer ${NAME}"'
    )
    parser.add_argument("--oauth-client-id", metavar="ID", help="HTTP: a pre-registered OAuth client")
    parser.add_argument(
        "--oauth-client-secret", metavar="SECRET", help="HTTP: its secret (${NAME} or !command)"
    )
    parser.add_argument("--oauth-callback-port", metavar="PORT", help="HTTP: a fixed OAuth callback port")
    parser.add_argument("--oauth-client-name", metavar="NAME", help="HTTP: the name sent when registering")
    parser.add_argument(
        "--oauth-client-registration", choices=REGISTRATIONS, help="HTTP: auto (default), cimd or dcr"
    )
    parser.add_argument(
        "--exposure",
        choices=PI_EXPOSURES,
        help="how the tools reach the model (default: codemode = deferred)",
    )
    parser.add_argument("--description", metavar="TEXT", help="what the server offers, in a sentence")
    return parser


def remove_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui mcp remove",
        description="Remove a server from mcp.json (stored OAuth credentials are kept).",
    )
    parser.add_argument("server")
    parser.add_argument(
        "-l", "--local", action="store_true", help="remove it from .agent/mcp.json of this folder"
    )
    return parser


def _pairs(option: str, pairs: list[str] | None) -> dict[str, str]:
    """``KEY=VALUE`` words as a dict; ValueError naming the word that has no key."""
    found: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f'--{option} expects KEY=VALUE, got "{pair}"')
        found[key] = value
    return found


def build_entry(args: argparse.Namespace) -> dict[str, Any]:
    """The ``mcpServers`` entry the options describe, keys in pi's order; ValueError for a
    mistake (an option of the other transport, a malformed pair or port)."""
    http = args.url is not None
    if http == bool(args.command):
        raise ValueError("give either a command after -- (stdio) or --url URL (streamable HTTP)")
    wrong = next((name for name in (_STDIO_ONLY if http else _HTTP_ONLY) if getattr(args, name)), None)
    if wrong is not None:
        kind = "stdio servers (a command after --)" if http else "HTTP servers (--url)"
        raise ValueError(f"--{wrong.replace('_', '-')} only applies to {kind}")
    entry: dict[str, Any]
    if http:
        headers = _pairs("header", args.header)
        if args.bearer_token_env_var is not None:
            if not _ENV_NAME.fullmatch(args.bearer_token_env_var):
                raise ValueError(
                    f'--bearer-token-env-var needs a variable name, got "{args.bearer_token_env_var}"'
                )
            headers["Authorization"] = f"Bearer ${{{args.bearer_token_env_var}}}"
        oauth: dict[str, Any] = {}
        if args.oauth_client_id is not None:
            oauth["clientId"] = args.oauth_client_id
        if args.oauth_client_secret is not None:
            oauth["clientSecret"] = args.oauth_client_secret
        if args.oauth_callback_port is not None:
            port = args.oauth_callback_port
            if not port.isdigit() or not 1 <= int(port) <= 65535:
                raise ValueError(f'--oauth-callback-port needs a port number, got "{port}"')
            oauth["callbackPort"] = int(port)
        if args.oauth_client_name is not None:
            oauth["clientName"] = args.oauth_client_name
        if args.oauth_client_registration is not None:
            oauth["clientRegistration"] = args.oauth_client_registration
        entry = {"url": args.url}
        if headers:
            entry["headers"] = headers
        if oauth:
            entry["oauth"] = oauth
    else:
        executable, *command_args = args.command
        entry = {"command": executable}
        if command_args:
            entry["args"] = command_args
        env = _pairs("env", args.env)
        if env:
            entry["env"] = env
        if args.cwd is not None:
            entry["cwd"] = args.cwd
    if args.exposure is not None:
        entry["exposure"] = args.exposure
    if args.description is not None:
        entry["description"] = args.description
    return entry


def _split_command(words: list[str]) -> tuple[list[str], list[str]]:
    """The words before ``--`` (options, the server name) and the command after it."""
    if "--" in words:
        at = words.index("--")
        return words[:at], words[at + 1 :]
    return words, []


def run_add(words: list[str], fail: Fail) -> int:
    head, command = _split_command(words)
    try:
        args = add_parser().parse_args(head)
    except ArgumentsError as error:
        return fail(f"mcp add: {error} (a stdio server's command goes after --)")
    args.command = [*args.command, *command]
    try:
        entry = build_entry(args)
    except ValueError as error:
        return fail(f"mcp add: {error}")
    problem = check_entry(args.server, entry)
    if problem is not None:
        return fail(f'mcp add: server "{args.server}": {problem}')
    cwd = Path(os.getcwd())
    path = project_config_path(cwd) if args.local else user_config_path()
    try:
        replaced = add_server(path, args.server, entry)
    except McpConfigError as error:
        return fail(f"mcp add: {error}; fix the file first, it was not changed")
    except OSError as error:
        return fail(f"mcp add: cannot write {path}: {error.strerror or error}", 1)
    scope = "project" if args.local else "user"
    done = "Replaced" if replaced else "Added"
    note = ""
    if args.local and not _trusted(cwd):
        note = " (read once this folder is trusted)"
    _print(f'{done} {scope} MCP server "{args.server}" in {path}{note}; check it with: pi-tui mcp list')
    return 0


def _trusted(cwd: Path) -> bool:
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.trust_store import TrustStore

    return TrustStore(agent_dir()).is_trusted(cwd)


def run_remove(words: list[str], fail: Fail) -> int:
    try:
        args = remove_parser().parse_args(words)
    except ArgumentsError as error:
        return fail(f"mcp remove: {error}")
    cwd = Path(os.getcwd())
    path = project_config_path(cwd) if args.local else user_config_path()
    scope = "project" if args.local else "user"
    try:
        removed = remove_server(path, args.server)
    except McpConfigError as error:
        return fail(f"mcp remove: {error}; fix the file first, it was not changed")
    except OSError as error:
        return fail(f"mcp remove: cannot write {path}: {error.strerror or error}", 1)
    if removed:
        _print(f'Removed {scope} MCP server "{args.server}" from {path} (stored OAuth credentials are kept)')
        return 0
    return fail(
        f'mcp remove: no {scope} MCP server "{args.server}" in {path}{_elsewhere(args.server, cwd, path)}'
    )


def _elsewhere(name: str, cwd: Path, searched: Path) -> str:
    """Where else ``name`` is defined, as the end of the "no such server" line."""
    from pi_tui.config.pi_folder import pi_agent_dir

    ours = [(user_config_path(), "; it is in the user file (omit -l)")]
    ours.append((project_config_path(cwd), "; it is in this project's file (add -l)"))
    for path, hint in ours:
        if path != searched and defines(path, name):
            return hint + f": {path}"
    theirs = [path for scope, path in project_files(cwd) if scope != "project"]
    pi_folder = pi_agent_dir()
    if pi_folder is not None:
        theirs.insert(0, pi_folder / "mcp.json")
    for path in theirs:
        if defines(path, name):
            return f"; it is defined in {path}, which pi-tui reads but does not change"
    return ""


def _run_list(words: list[str], fail: Fail) -> int:
    from pi_tui.mcp.list_command import run_list

    return run_list(words, fail)


def _run_login(words: list[str], fail: Fail) -> int:
    from pi_tui.mcp.login_command import run_login

    return run_login(words, fail)


def _run_logout(words: list[str], fail: Fail) -> int:
    from pi_tui.mcp.login_command import run_logout

    return run_logout(words, fail)


SUBCOMMANDS: dict[str, Subcommand] = {
    "add": run_add,
    "remove": run_remove,
    "list": _run_list,
    "login": _run_login,
    "logout": _run_logout,
}
"""``pi-tui mcp <name>`` -> its function; ``list``, ``login`` and ``logout`` are added to this
table beside add and remove, each a function of the same shape."""


def usage() -> str:
    return f"pi-tui mcp {'|'.join(SUBCOMMANDS)} ... (see pi-tui mcp <command> --help)"


def run_mcp(words: list[str], fail: Fail) -> int:
    """``pi-tui mcp <subcommand> ...``: the subcommand's exit code."""
    if not words or words[0] in ("-h", "--help", "help"):
        _print(f"usage: {usage()}\n\nConfigure MCP servers in mcp.json without starting a session.")
        return 0

    def one_line_fail(message: str, code: int = 2) -> int:
        """``fail`` with what the user typed or a folder's name shown as data, on one line."""
        from pi_tui.text_safety import for_terminal

        return fail(for_terminal(message.replace("\n", "\u240a").replace("\r", "\u240d")), code)

    run = SUBCOMMANDS.get(words[0])
    if run is None:
        return one_line_fail(f'mcp: unknown command "{words[0]}"; usage: {usage()}')
    return run(words[1:], one_line_fail)
