"""Plain data about MCP servers: what a configuration says, where it came from, what went wrong.

Values in ``env``, ``headers`` and ``oauth`` are kept as written (``${VAR}``, ``!command``):
they are resolved only when a server connects (:func:`pi_tui.mcp.config.resolved`), so a
disabled or untrusted entry never runs a command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Exposure = Literal["direct", "deferred", "hidden"]
"""How a server's tools reach the model: declared, found through ``tool_search``, or not at all.
pi's ``codemode`` (and ``codemode-deferred``) read as ``deferred``: pi-tui has no codemode."""

EXPOSURES: tuple[str, ...] = ("direct", "deferred", "hidden")
PI_EXPOSURES: tuple[str, ...] = ("codemode", "codemode-deferred", "deferred", "direct", "hidden")
"""What pi 1.x accepts in ``exposure`` / ``toolExposure`` (pi-tui accepts the same words)."""

Transport = Literal["stdio", "http"]

Scope = Literal["user", "pi-user", "project", "pi-project", "claude-project", "extension", "client"]
"""Which file (or extension) defined a server: pi-tui's agent folder, pi's, the project's
``.agent/mcp.json``, its ``.pi/mcp.json``, Claude Code's ``.mcp.json``, an extension's
``register_mcp_server``, or the editor that started ``pi-tui acp`` (``session/new``)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds one request may go without an answer or a progress notification (pi's default)."""


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """Where a server entry was written."""

    scope: Scope
    path: Path | None = None
    """The mcp.json file; None for an extension's registration."""
    extension: str | None = None
    """The extension that registered it (scope ``extension``)."""

    def label(self) -> str:
        """Short words for /mcp and ``pi-tui mcp list`` ("user", "project .pi/mcp.json"...)."""
        if self.scope == "extension":
            return f"extension {self.extension or '?'}"
        if self.scope == "client":
            return "the editor (ACP)"
        return f"{self.scope} {self.path}" if self.path is not None else self.scope


@dataclass(slots=True)
class ServerConfig:
    """One enabled-or-not server after merging every file (project over user)."""

    name: str
    transport: Transport
    source: ConfigSource
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    """As written; relative to the session's folder, ``~/`` for home (see config.resolved)."""
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    oauth: dict[str, Any] | None = None
    timeout: float = DEFAULT_TIMEOUT
    enabled: bool = True
    exposure: Exposure = "deferred"
    written_exposure: str | None = None
    """``exposure`` as the file says it (``codemode`` included), None when absent."""
    tool_exposure: dict[str, str] = field(default_factory=dict)
    """Tool name or ``*`` pattern -> exposure word, in file order (exact names win, then the
    first matching pattern)."""
    description: str | None = None
    override_source: ConfigSource | None = None
    """A project entry that overrides only enabled/exposure/toolExposure of this user server."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The entry as written (after overrides), for ``mcp list --json`` and saving."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """An entry or file that could not be used; reported once and skipped."""

    path: Path | None
    server: str | None
    message: str

    def line(self) -> str:
        where = str(self.path) if self.path is not None else "extension"
        who = f" server {self.server!r}" if self.server else ""
        return f"MCP config {where}{who}: {self.message}"


@dataclass(slots=True)
class McpConfig:
    """Every server of the session by name, and what was wrong with the files."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One-time remarks that are not errors (pi's codemode read as deferred...)."""


@dataclass(frozen=True, slots=True)
class McpToolRules:
    """What ``--tools`` / ``-xt`` / ``--no-tools`` leave of the MCP tools (pi 1.x's rules).

    ``present``: the tool exists for this run at all (declared, or loadable by ``tool_search``).
    ``direct``: it may be declared up front; under a ``--tools`` allow-list only what an entry
    names or matches is, so the rest can only be loaded through ``tool_search`` (when listed)."""

    present: Callable[[str], bool]
    direct: Callable[[str], bool]
    allow_list: bool = False
    names_mcp: bool = False
    """An entry starts with ``mcp__``: the tools it does not match are gone, not unreachable."""
