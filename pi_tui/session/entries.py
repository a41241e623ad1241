"""Session file lines: the header and every entry type, as pydantic models.

The on-disk names are camelCase (pi's); attribute names are snake_case. Unknown fields are kept
on every model and unknown entry types load as :class:`UnknownEntry`, so nothing a newer writer
put in a file is lost when we copy or re-save it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, TypeAdapter

from pi_tui.messages import AgentMessage, ImageContent, SystemMessage, TextContent, Usage, Wire
from pi_tui.session import lenient

CURRENT_SESSION_VERSION = 3


class SessionHeader(Wire):
    """Line 1 of every session file; metadata only, never part of the tree."""

    type: Literal["session"] = "session"
    version: int | None = None
    id: str = ""
    timestamp: str = ""
    cwd: str = ""
    parent_session: str | None = None
    title: str | None = None


class EntryBase(Wire):
    type: str
    id: str
    parent_id: str | None = None
    timestamp: str = ""


class MessageEntry(EntryBase):
    type: Literal["message"] = "message"
    message: AgentMessage


class ModelChangeEntry(EntryBase):
    """Model switch. pi writes ``provider`` + ``modelId``; oh-my-pi writes ``model: "p/id"``."""

    type: Literal["model_change"] = "model_change"
    provider: str | None = None
    model_id: str | None = None
    model: str | None = None
    role: str | None = None

    def resolved(self) -> tuple[str, str] | None:
        """(provider, model id) whichever form the line used."""
        if self.provider and self.model_id:
            return self.provider, self.model_id
        if self.model and "/" in self.model:
            provider, _, model_id = self.model.partition("/")
            return provider, model_id
        return None


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str | None = None
    """oh-my-pi writes ``null`` for "off"."""


class CompactionEntry(EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int = 0
    details: Any = None
    from_hook: bool | None = None
    from_extension: bool | None = None
    short_summary: str | None = None
    preserve_data: Any = None
    system_message: SystemMessage | None = None
    """pi 1.x: the prompt and tools replayed up to the compaction (a checkpoint)."""
    usage: Usage | None = None
    """pi 1.x: what writing the summary cost; counts in the session's totals."""


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: Any = None
    from_hook: bool | None = None
    usage: Usage | None = None
    """pi 1.x: what writing the summary cost; counts in the session's totals."""


class UsageEntry(EntryBase):
    """pi 1.x: tokens and cost spent outside a reply (``kind`` says what for, e.g. ``cache_warm``).

    Counts in the session's totals; never in the context, hidden from /tree.
    """

    type: Literal["usage"] = "usage"
    kind: str = ""
    provider: str | None = None
    model: str | None = None
    usage: Usage = Field(default_factory=Usage)


class ContextEditEntry(EntryBase):
    """pi 1.x: an edit of what one earlier entry gives the model, on this branch from here on.

    ``replacement`` None leaves the target out of the context; ``{"content": ...}`` replaces its
    content. The target itself stays as it was on disk, in the UI and in the totals.
    """

    type: Literal["context_edit"] = "context_edit"
    target_id: str
    replacement: dict[str, Any] | None = None


class CustomEntry(EntryBase):
    """Extension state; never in the model's context."""

    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None


class CustomMessageEntry(EntryBase):
    """Extension/rule message that is sent to the model (as a user message)."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[TextContent | ImageContent]
    display: bool = True
    details: Any = None


class LabelEntry(EntryBase):
    """Bookmark on ``target_id``; ``label`` None clears it."""

    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class TtsrInjectionEntry(EntryBase):
    type: Literal["ttsr_injection"] = "ttsr_injection"
    injected_rules: list[str] = Field(default_factory=list)


class SessionInitEntry(EntryBase):
    type: Literal["session_init"] = "session_init"
    system_prompt: str = ""
    task: str = ""
    tools: list[str] = Field(default_factory=list)
    output_schema: Any = None


class UnknownEntry(EntryBase):
    """An entry type we do not know: kept on disk and in the tree, left out of the context."""


class UnreadableEntry(EntryBase):
    """The typed view of an entry of a known type whose fields no model can hold (a ``message``
    whose message is a number). Its ``type`` is its own, so code that reads ``entry.message``
    after checking ``entry.type == "message"`` never meets it; the line itself is untouched."""

    type: str = "unreadable"
    original_type: str = ""
    problem: str = ""


ENTRY_TYPES: frozenset[str] = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "ttsr_injection",
        "session_init",
        "usage",
        "context_edit",
    }
)


def _entry_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ENTRY_TYPES else "unknown"


SessionEntry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[TtsrInjectionEntry, Tag("ttsr_injection")]
    | Annotated[SessionInitEntry, Tag("session_init")]
    | Annotated[UsageEntry, Tag("usage")]
    | Annotated[ContextEditEntry, Tag("context_edit")]
    | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_entry_tag),
]
"""Any line after the header."""

ENTRY_ADAPTER: TypeAdapter[Any] = TypeAdapter(SessionEntry)
HEADER_ADAPTER: TypeAdapter[SessionHeader] = TypeAdapter(SessionHeader)


def typed_entry(raw: dict[str, Any]) -> Any:
    """The typed view of an entry read from a file; never fails (see :mod:`lenient`).

    An entry no model can describe (say a ``message`` whose message is a number) is an
    :class:`UnreadableEntry`: in the tree, never in the context.
    """
    try:
        return lenient.validate(ENTRY_ADAPTER, raw)[0]
    except lenient.Unrepairable as error:
        parent, stamp = raw.get("parentId"), raw.get("timestamp")
        return UnreadableEntry(
            id=str(raw.get("id")),
            parent_id=parent if isinstance(parent, str) else None,
            timestamp=stamp if isinstance(stamp, str) else "",
            original_type=str(raw.get("type")),
            problem=error.problem,
        )
