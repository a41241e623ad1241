"""PURE: the names MCP tools and servers get, and the shape of their argument schemas.

pi 1.x and pi-tui read the same ``mcp.json``, and a session written by one is resumed by the
other, so a server tool must get the very name pi gives it (the transcript's tool calls and the
``tool_search`` loads on a branch name tools by it). Models accept tool names of at most 64
characters of ``[A-Za-z0-9_-]``; MCP allows far more, hence the sanitising and the hash suffix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name the model providers take."""

_HASH_CHARS = 8
_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")


def _underscores(match: re.Match[str]) -> str:
    # pi counts in UTF-16 units: a character beyond U+FFFF is two of them, so two ``_``.
    return "__" if ord(match.group()) > 0xFFFF else "_"


def _never_taken(_name: str) -> bool:
    return False


def tool_name(server: str, tool: str, taken: Callable[[str], bool] = _never_taken) -> str:
    """``mcp__<server>__<tool>`` with every character outside ``[A-Za-z0-9_]`` as ``_``.

    Sanitising can give two tools one name (``a-b`` and ``a_b``), and a long name must be cut:
    then the name is shortened to leave room for ``_`` and 8 hex digits of the SHA-256 of
    ``server NUL tool``, which tells the tools apart and stays the same from run to run.
    ``taken(name)`` says the plain name is already used by a different MCP tool. An emoji
    (beyond U+FFFF) becomes ``__``, as in pi, which counts UTF-16 units.
    """
    name = _NOT_NAME_CHAR.sub(_underscores, f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME_LENGTH and not taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_CHARS]
    return f"{name[: MAX_TOOL_NAME_LENGTH - _HASH_CHARS - 1]}_{digest}"


def server_tool_names(
    server: str, tools: Sequence[str], taken_elsewhere: Callable[[str], bool] = _never_taken
) -> dict[str, str]:
    """The names of all of one server's tools, as pi assigns them: server tool -> name.

    Every tool whose plain name another tool of the list shares gets the hash suffix, not just
    the second one, so which tool keeps the plain name never depends on the server's order.
    ``taken_elsewhere(name)``: the name belongs to a tool of another server (or a tool this
    server no longer lists), which also makes this tool take the suffix.
    """
    unique = list(dict.fromkeys(tools))
    plain_counts: dict[str, int] = {}
    for tool in unique:
        plain = tool_name(server, tool)
        plain_counts[plain] = plain_counts.get(plain, 0) + 1
    assigned: dict[str, str] = {}
    used: set[str] = set()

    def taken(candidate: str) -> bool:
        return taken_elsewhere(candidate) or candidate in used or plain_counts.get(candidate, 0) > 1

    for tool in unique:
        name = tool_name(server, tool, taken)
        used.add(name)
        assigned[tool] = name
    return assigned


def namespace(server: str) -> str:
    """``mcp__<server>`` with ``-`` as ``_``: the prefix all of a server's tools share.

    ``--tools 'mcp__dev_radius__*'`` and tool search's namespace field use it; server names are
    letters, digits, ``_`` and ``-`` only, so ``-`` is the one character to map.
    """
    return "mcp__" + server.replace("-", "_")


def same_server_name(a: str, b: str) -> bool:
    """Whether two server names differ only in ``-`` versus ``_``.

    Such servers would share a namespace and could give their tools the same names, so a
    configuration may hold only one of them (pi rejects the second).
    """
    return a.replace("-", "_") == b.replace("-", "_")


def normalize_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as the object schema model APIs require.

    Tool arguments are always an object, but MCP servers may leave out ``type``, and some
    providers refuse an object schema without ``properties``. Every other keyword is kept as
    the server wrote it, and a ``type`` the server did give is not changed.
    """
    normalized = dict(schema)
    if normalized.get("type") is None:
        normalized["type"] = "object"
    if "properties" not in normalized:
        normalized["properties"] = {}
    return normalized
