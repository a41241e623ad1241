"""The data TTSR works with: rules as parsed from files, scopes, and where a delta came from.

Plain data only: parsing and discovery (:mod:`pi_tui.ttsr.rules`) produce :class:`Rule`, the
matcher (:mod:`pi_tui.ttsr.manager`) consumes it, the agent wiring (:mod:`pi_tui.ttsr.coordinator`)
connects the matcher to the stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Source = Literal["text", "thinking", "tool"]
InterruptMode = Literal["never", "prose-only", "tool-only", "always"]
Bucket = Literal["ttsr", "always-apply", "rulebook", "dropped"]


@dataclass(frozen=True, slots=True)
class ScopeToken:
    """One ``scope`` entry: a stream, optionally one tool (lower-case) and a path glob."""

    source: Source
    tool: str | None = None
    """Tool name for ``source == "tool"``; None means any tool."""
    glob: str | None = None
    """Path glob the tool call's file arguments must match (case kept)."""


DEFAULT_SCOPE: tuple[ScopeToken, ...] = (ScopeToken("text"), ScopeToken("tool"))
"""No ``scope``: the answer text and every tool call, not thinking."""


@dataclass(slots=True)
class Rule:
    name: str
    """File name without extension; the identity for de-duplication and repeat state."""
    content: str
    """The body after the front matter: what the model is told."""
    path: Path | None
    """The file it came from (built-in rules: their file inside the package)."""
    source: str
    """Where it was found, e.g. ``.agent/rules`` or ``builtin``."""
    priority: int
    conditions: list[str] = field(default_factory=list)
    """Regex sources (file-glob-looking tokens already turned into scopes)."""
    scopes: tuple[ScopeToken, ...] | None = None
    """None: :data:`DEFAULT_SCOPE`."""
    globs: list[str] = field(default_factory=list)
    interrupt_mode: InterruptMode | None = None
    always_apply: bool = False
    description: str | None = None
    front_matter: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Problems found while parsing (bad scope tokens ...); shown by --list-rules."""
    builtin: bool = False

    @property
    def effective_scopes(self) -> tuple[ScopeToken, ...]:
        return self.scopes if self.scopes is not None else DEFAULT_SCOPE


@dataclass(slots=True)
class MatchContext:
    """Where a streamed delta belongs."""

    source: Source
    tool_name: str | None = None
    tool_call_id: str | None = None
    arguments: dict[str, Any] | None = None
    """The tool call's arguments parsed so far (for file paths)."""

    @property
    def buffer_key(self) -> str:
        return f"toolcall:{self.tool_call_id}" if self.source == "tool" else self.source


@dataclass(slots=True)
class BucketedRule:
    """A discovered rule and what became of it (for --list-rules and /rules)."""

    rule: Rule
    bucket: Bucket
    reason: str = ""
    """Why it was dropped, or what the manager said when it refused it."""
