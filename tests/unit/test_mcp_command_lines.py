"""How /mcp and ``pi-tui mcp list`` write a stdio server's command: as a shell needs it.

The command is shown so a user can read what runs (and paste it into a shell to try it): a word
with ``>&2``, ``;``, ``$`` or a quote is quoted (:func:`shlex.join`), so what is shown is what
runs, not a different shell line.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pi_tui.mcp.connection import ServerStatus
from pi_tui.mcp.list_command import describe_transport
from pi_tui.mcp.model import ConfigSource, ServerConfig
from pi_tui.view import mcp_rows

USER = ConfigSource("user", Path("/home/u/.agent/mcp.json"))
WORDS = ["sh", "-c", "printf 'boom …' >&2; exit 1", "a>b", "x;y", "$HOME", "*.py"]


def server(command: str, args: list[str]) -> ServerConfig:
    return ServerConfig(name="s", transport="stdio", source=USER, command=command, args=args)


def test_the_server_view_quotes_the_command_as_a_shell_needs_it() -> None:
    status = ServerStatus(name="s", state="failed", config=server(WORDS[0], WORDS[1:]))
    lines = mcp_rows.transport_lines(status)
    assert lines[0] == "Command: sh -c 'printf '\"'\"'boom …'\"'\"' >&2; exit 1' 'a>b' 'x;y' '$HOME' '*.py'"
    assert shlex.split(lines[0].removeprefix("Command: ")) == WORDS  # a shell reads back the same words
    plain = ServerStatus(name="s", state="failed", config=server("srv", ["--flag", "path/to.txt"]))
    assert mcp_rows.transport_lines(plain)[0] == "Command: srv --flag path/to.txt"  # nothing to quote


def test_mcp_list_quotes_the_command_as_a_shell_needs_it() -> None:
    line = describe_transport(server(WORDS[0], WORDS[1:]))
    assert shlex.split(line) == WORDS
    assert "'a>b' 'x;y' '$HOME' '*.py'" in line
    assert describe_transport(server("npx", ["-y", "@modelcontextprotocol/server-everything"])) == (
        "npx -y @modelcontextprotocol/server-everything"
    )
