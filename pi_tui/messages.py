"""Agent messages: the ``message`` payload of a session entry, and the roles built for context.

These mirror the JSON that pi writes field for field (camelCase on disk, snake_case in Python).
Every model keeps unknown fields (``extra="allow"``) so a file written by a newer pi or by
oh-my-pi survives a load/save round trip without losing anything.

They sit below both of their users, importing nothing of pi-tui's: the session files store them
(:mod:`pi_tui.session`) and the providers build requests from them (:mod:`pi_tui.ai`), and
neither of those needs the other for them (importing a ``pi_tui.session`` module runs the whole
session core's ``__init__``). The few words both also share live here too: the thinking levels
and the millisecond ``timestamp`` of a message.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag
from pydantic.alias_generators import to_camel

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""pi 1.x's levels, weakest first (``max`` is new in 1.x; 0.73 stops at ``xhigh``)."""


def now_ms() -> int:
    """Unix milliseconds: the ``timestamp`` inside message objects."""
    return time.time_ns() // 1_000_000


_DISCRIMINATORS = frozenset({"type", "role"})
_TAG_FIELDS: dict[type, tuple[str, ...]] = {}


class Wire(BaseModel):
    """Base for every persisted shape: camelCase aliases, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        serialize_by_alias=True,
    )

    def model_post_init(self, _context: Any, /) -> None:
        # Discriminators are part of the data even when they hold their default value, so
        # ``exclude_unset`` dumps must keep them. A ``role``/``type`` that is an optional plain
        # field holding None (oh-my-pi's ``model_change.role``) is no tag: writing it would put
        # a ``"role": null`` in the file. (A hook, not ``__init__``: pydantic calls an overridden
        # ``__init__`` for every nested model it validates, which made reading a long session
        # twice as slow.)
        cls = type(self)
        tags = _TAG_FIELDS.get(cls)
        if tags is None:  # model_fields is a slow class property: look it up once per class
            tags = _TAG_FIELDS[cls] = tuple(_DISCRIMINATORS.intersection(cls.model_fields))
        for name in tags:
            if getattr(self, name) is not None:
                self.__pydantic_fields_set__.add(name)

    def to_json_dict(self) -> dict[str, Any]:
        """The dict written to disk: aliases, and only the fields that were actually set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- content blocks -------------------------------------------------------------------------


class TextContent(Wire):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ImageContent(Wire):
    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ThinkingContent(Wire):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ToolCall(Wire):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None


class UnknownContent(Wire):
    """A content block of a type we do not know; kept verbatim."""

    type: str


def _block_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in _KNOWN_BLOCKS else "unknown"


_KNOWN_BLOCKS = frozenset({"text", "image", "thinking", "toolCall"})

UserBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[ThinkingContent, Tag("thinking")]
    | Annotated[ToolCall, Tag("toolCall")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(_block_tag),
]
"""Any content block; user/tool content in practice holds only text and image blocks."""

AssistantBlock = UserBlock


# --- usage ----------------------------------------------------------------------------------


class _FullShape(Wire):
    """A shape pi reads without guards: every field is always written, zeros included.

    pi's footer and stats read ``usage.cost.total`` and friends directly, so a usage of ``{}``
    (an aborted reply) or one missing ``output`` makes pi crash or show NaN.
    """

    def model_post_init(self, _context: Any, /) -> None:
        # Every field counts as set, so all instances of a class share one set (a usage and its
        # cost are two of the five models of each reply: a set each was 1.4 KB a reply).
        # Setting a field adds a name already in it, so the shared set never changes.
        cls = type(self)
        every = _ALL_FIELDS.get(cls)
        if every is None:  # model_fields is a slow class property: look it up once per class
            every = _ALL_FIELDS[cls] = set(cls.model_fields)
        object.__setattr__(self, "__pydantic_fields_set__", every)


_ALL_FIELDS: dict[type, set[str]] = {}


class Cost(_FullShape):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(_FullShape):
    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0
    total_tokens: int | float = 0
    cost: Cost = Field(default_factory=Cost)


StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]


# --- message roles --------------------------------------------------------------------------


class UserMessage(Wire):
    role: Literal["user"] = "user"
    content: str | list[UserBlock]
    timestamp: int = 0


class AssistantMessage(Wire):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantBlock] = Field(default_factory=list)
    api: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    response_id: str | None = None
    thinking_level: str | None = None
    """pi 1.x: the thinking level requested for this reply."""
    duration_ms: int | float | None = None
    """pi 1.x: how long the reply took, from the request to its last event."""
    timestamp: int = 0


class ToolResultMessage(Wire):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserBlock] = Field(default_factory=list)
    details: Any = None
    is_error: bool = False
    timestamp: int = 0


class BashExecutionMessage(Wire):
    """A ``!cmd`` the user ran; ``!!cmd`` sets ``exclude_from_context``."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: int = 0


class CustomMessage(Wire):
    """An extension/rule message that goes to the model (entry type ``custom_message``)."""

    role: Literal["custom", "hookMessage"] = "custom"
    custom_type: str
    content: str | list[UserBlock]
    display: bool = True
    details: Any = None
    timestamp: int = 0


class BranchSummaryMessage(Wire):
    """Context-only role built from a ``branch_summary`` entry."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    timestamp: int = 0


class CompactionSummaryMessage(Wire):
    """Context-only role built from a ``compaction`` entry."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = 0
    timestamp: int = 0


class SystemMessage(Wire):
    """pi 1.x: a change of the prompt and tool loadout, replayed in order along a branch.

    ``content`` is text the user or an extension added to the prompt; ``sections`` patch pi's
    own prompt parts by name (``None`` removes one); ``tools_added`` holds declarations
    (``name``, ``description``, ``parameters``) and ``tools_removed`` names. Never sent as a
    message of its own: replaying them gives the request's system prompt and tool list.
    """

    role: Literal["system"] = "system"
    content: str | list[UserBlock] = ""
    sections: dict[str, Any] | None = None
    tools_added: list[dict[str, Any]] | None = None
    tools_removed: list[dict[str, Any]] | None = None
    timestamp: int = 0


class UnknownMessage(Wire):
    """A role we do not know (or a ``role`` that is not text); kept, never sent to the model."""

    role: Any


_KNOWN_ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
        "system",
    }
)


def _role_tag(value: Any) -> str:
    role = value.get("role") if isinstance(value, dict) else getattr(value, "role", None)
    if role == "hookMessage":  # v2 name of the custom role, read before migration rewrites it
        return "custom"
    return role if role in _KNOWN_ROLES else "unknown"


AgentMessage = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[BashExecutionMessage, Tag("bashExecution")]
    | Annotated[CustomMessage, Tag("custom")]
    | Annotated[BranchSummaryMessage, Tag("branchSummary")]
    | Annotated[CompactionSummaryMessage, Tag("compactionSummary")]
    | Annotated[SystemMessage, Tag("system")]
    | Annotated[UnknownMessage, Tag("unknown")],
    Discriminator(_role_tag),
]
"""Any message an entry can hold or context building can produce."""

LlmMessage = UserMessage | AssistantMessage | ToolResultMessage
"""The three roles a provider understands."""
