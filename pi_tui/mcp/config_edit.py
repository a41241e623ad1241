"""Changing ``mcp.json`` files: ``/mcp``'s enable, disable and exposure, ``pi-tui mcp add|remove``.

The files are the user's (and pi's): a change touches one server's entry and nothing else.
Other keys, other servers and key order stay, the file keeps its indentation (two spaces for a
new file, or one written compactly, with no indentation to keep), its byte-order mark and its
mode, and it is replaced through a temporary file in the same folder, so no
reader ever sees half a file. A file whose JSON is broken is never rewritten: the user's text is
worth more than our change, so :class:`~pi_tui.mcp.config.McpConfigError` says what is wrong.

As in pi, a change is saved to the file that defines the server; a project *override* (an entry
with only ``enabled`` / ``exposure`` / ``toolExposure``) is where later changes go once it exists,
and "in this project" for a user-level server writes such an override to ``.agent/mcp.json``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_tui.config.private_files import replace_private_file
from pi_tui.mcp.config import CONFIG_FILE, McpConfigError, is_override, read_document
from pi_tui.mcp.model import PI_EXPOSURES, ServerConfig

EDITABLE: tuple[str, ...] = ("enabled", "exposure")
NEW_FILE_MODE = 0o600
"""A new mcp.json may hold header values and OAuth client secrets: only its owner reads it."""
DEFAULT_INDENT = "  "
BOM = "\ufeff"


def project_config_path(cwd: Path) -> Path:
    """pi-tui's project file, where ``-l`` and "in this project" write."""
    return cwd / ".agent" / CONFIG_FILE


def set_server_fields(
    server: ServerConfig, changes: dict[str, Any], *, in_project: bool = False, cwd: Path | None = None
) -> Path:
    """Save ``enabled`` and/or ``exposure`` of ``server``; returns the file written.

    The file: the project override when the server has one; with ``in_project`` for a
    user-level server, ``<cwd>/.agent/mcp.json`` (an override entry is added there when
    missing); otherwise the file that defines the server. In a full entry, ``enabled: true`` is
    saved by removing the key (the default), as pi does; an override keeps explicit values,
    since they replace the user server's.
    """
    unknown = [key for key in changes if key not in EDITABLE]
    if unknown:
        raise ValueError(f"only {', '.join(EDITABLE)} can be changed here, not {', '.join(unknown)}")
    if "enabled" in changes and not isinstance(changes["enabled"], bool):
        raise ValueError("enabled must be true or false")
    if "exposure" in changes and changes["exposure"] not in PI_EXPOSURES:
        raise ValueError(f"exposure must be one of {', '.join(PI_EXPOSURES)}")
    add_override = False
    if server.override_source is not None and server.override_source.path is not None:
        path = server.override_source.path
    elif in_project and server.source.scope in ("user", "pi-user"):
        if cwd is None:
            raise ValueError("a change in this project needs the project's folder (cwd)")
        path = project_config_path(cwd)
        add_override = True
    elif server.source.path is not None:
        path = server.source.path
    else:
        raise McpConfigError(f'MCP server "{server.name}" comes from {server.source.label()}: it has no file')

    def change(servers: dict[str, Any]) -> bool:
        entry = servers.get(server.name)
        if entry is None and add_override:
            entry = servers[server.name] = {}
        if not isinstance(entry, dict):
            raise McpConfigError(f'{path} does not define MCP server "{server.name}"')
        explicit = is_override(entry)
        if "enabled" in changes:
            if changes["enabled"] and not explicit:
                entry.pop("enabled", None)
            else:
                entry["enabled"] = changes["enabled"]
        if "exposure" in changes:
            entry["exposure"] = changes["exposure"]
        return True

    _edit(path, change)
    return path


def add_server(path: Path, name: str, entry: dict[str, Any]) -> bool:
    """Add ``name`` to ``path``'s ``mcpServers`` (the file is created when missing), or replace
    the entry of that name in place. Returns True when an entry was replaced."""
    replaced = False

    def change(servers: dict[str, Any]) -> bool:
        nonlocal replaced
        replaced = name in servers
        servers[name] = entry
        return True

    _edit(path, change)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    """Remove ``name`` from ``path``; False (and the file untouched) when it does not define it."""
    removed = False

    def change(servers: dict[str, Any]) -> bool:
        nonlocal removed
        removed = name in servers
        servers.pop(name, None)
        return removed

    if not path.exists():
        return False
    _edit(path, change)
    return removed


def defines(path: Path, name: str) -> bool:
    """Whether ``path`` has an entry ``name`` (False for a missing or broken file)."""
    try:
        document = read_document(path)
    except McpConfigError:
        return False
    servers = (document or {}).get("mcpServers") or {}
    return name in servers


def _edit(path: Path, change: Callable[[dict[str, Any]], bool]) -> None:
    """Read ``path`` (nothing when missing), let ``change`` alter its ``mcpServers`` and write it
    back when it returns True. Raises McpConfigError for a broken file, OSError for a failed write."""
    document = read_document(path)
    existed = document is not None
    if document is None:
        document = {}
    if not isinstance(document.get("mcpServers"), dict):
        document["mcpServers"] = {}
    if not change(document["mcpServers"]):
        return
    bom, indent = _layout(path) if existed else ("", DEFAULT_INDENT)
    _replace(path, bom + json.dumps(document, indent=indent, ensure_ascii=False) + "\n")


def _layout(path: Path) -> tuple[str, str]:
    """The file's byte-order mark ("" when it has none) and its indentation unit
    (:func:`indent_unit`); a file that cannot be read again has neither."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "", DEFAULT_INDENT
    bom = BOM if text.startswith(BOM) else ""
    return bom, indent_unit(text.removeprefix(BOM))


def indent_unit(text: str) -> str:
    """The indentation one nesting level of ``text`` (JSON) uses, when the file clearly has one;
    two spaces otherwise.

    Each line that starts inside an object or array votes for the unit its leading whitespace is
    a whole number of (a line at depth 2 indented by four spaces votes for two). The unit counts
    when more than half of those lines vote for it and they sit at two depths or more: a file
    written compactly, with a stray line indented by hand (``{"mcpServers": {\n "x": {...}}}``),
    has no indentation to keep, and guessing one space from that line would spread it over every
    line the change writes."""
    votes: Counter[str] = Counter()
    depths: dict[str, set[int]] = {}
    lines = 0
    for whitespace, depth in _line_starts(text):
        if depth < 1:
            continue
        lines += 1
        unit = whitespace[: len(whitespace) // depth]
        if unit and unit * depth == whitespace and len(set(unit)) == 1:
            votes[unit] += 1
            depths.setdefault(unit, set()).add(depth)
    if not votes:
        return DEFAULT_INDENT
    unit, count = votes.most_common(1)[0]
    if count * 2 > lines and len(depths[unit]) >= 2:
        return unit
    return DEFAULT_INDENT


_JSON_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
"""A JSON string (escapes included), as models_file.py's comment stripping finds them."""


def _line_starts(text: str) -> list[tuple[str, int]]:
    """For each line after the first that holds something: its leading whitespace and the
    nesting depth of its first character (a closing bracket counts at its own, outer depth).
    Strings are blanked first (a JSON string holds no raw newline), so brackets in them do not
    count and the lines stay where they are."""
    blanked = _JSON_STRING.sub(lambda match: '"' + " " * (len(match[0]) - 2) + '"', text)
    starts: list[tuple[str, int]] = []
    depth = 0
    for number, line in enumerate(blanked.split("\n")):
        body = line.lstrip(" \t")
        if number and body.strip("\r"):
            starts.append((line[: len(line) - len(body)], depth - 1 if body[0] in "}]" else depth))
        depth += sum(line.count(open_) for open_ in "{[") - sum(line.count(close) for close in "}]")
    return starts


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in its folder renamed over it; the old
    file's mode is kept (0600 for a new file), and a symlink (dotfiles kept elsewhere) stays a
    symlink: its target is replaced. The temporary file never outlives a failure."""
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    replace_private_file(path, text, mode)
