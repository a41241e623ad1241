"""Provider-neutral types: models, the context sent to a model, options of one request.

Messages and content blocks are the session's own models (:mod:`pi_tui.messages`), so
what streams in is exactly what gets saved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from pi_tui.messages import (
    AssistantMessage,
    Cost,
    ImageContent,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "API_KINDS",
    "AssistantMessage",
    "Context",
    "Cost",
    "ImageContent",
    "Model",
    "ModelCost",
    "StreamOptions",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "Tool",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
]

Api = Literal["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]
API_KINDS: tuple[str, ...] = (
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
)


class _Config(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class ModelCost(_Config):
    """Dollars per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


class Model(_Config):
    """One model of one provider, as in pi's models.json (plus the provider's connection)."""

    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[str] = Field(default_factory=lambda: ["text"])
    context_window: int = 128_000
    max_tokens: int = 16_384
    cost: ModelCost = Field(default_factory=ModelCost)
    headers: dict[str, str] = Field(default_factory=dict, exclude=True)
    """Configured header values (often credentials): used for requests, never serialised into
    rpc, json-mode or /session output (pi leaves them out too)."""
    compat: dict[str, Any] = Field(default_factory=dict)
    auth_header: bool | str | None = None
    thinking_level_map: dict[str, str | None] | None = None
    """pi 1.x's ``thinkingLevelMap``: the provider's value per thinking level, null for a level
    the model lacks (:mod:`pi_tui.ai.thinking` reads it)."""

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.id}"


class Tool(BaseModel):
    """A tool the model may call: name, description and a JSON schema for its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Context(BaseModel):
    """Everything one request sends: system prompt, provider-facing messages, tools."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    system_prompt: str = ""
    messages: list[UserMessage | AssistantMessage | ToolResultMessage] = Field(default_factory=list)
    tools: list[Tool] = Field(default_factory=list)


PayloadTransform = Callable[[Any, bytes, Sequence[str]], bytes]
"""``(body, its encoded bytes, the credentials the request carries) -> the bytes to send``."""


class StreamOptions(BaseModel):
    """Per-request options."""

    api_key: str | None = None
    thinking: ThinkingLevel = "off"
    max_tokens: int | None = None
    temperature: float | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    max_retries: int = 3
    base_delay: float = 2.0
    """Seconds before the first retry; doubled each time (2, 4, 8)."""
    max_delay: float = 60.0
    timeout: float = 600.0
    session_id: str | None = None
    base_url: str | None = None
    """Where this request goes instead of the model's ``baseUrl``: a login that names its own
    API host (GitHub Copilot's token does, pi_tui/ai/oauth/refresh.py)."""
    provider_env: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)
    """auth.json's ``env`` for the model's provider (pi 1.x): values that win over the process
    environment where a client reads one (Azure's endpoint variables)."""
    thinking_budgets: dict[str, int] = Field(default_factory=dict)
    """Token budgets per level from ``thinkingBudgets`` in settings.json, replacing the built-in
    ones for models that take a budget."""
    transform_payload: PayloadTransform | None = Field(default=None, exclude=True, repr=False)
    """Called on every request's bytes just before they are sent (after extensions changed the
    body; retries resend its answer). The agent hands its secret hiding in here
    (:func:`pi_tui.secrets.active.hiding_secrets`): the provider layer knows nothing of secrets.
    None sends the bytes as built."""


def compute_cost(usage: Usage, cost: ModelCost) -> Cost:
    """Dollar cost of ``usage`` at ``cost`` (prices per million tokens)."""
    result = Cost(
        input=usage.input * cost.input / 1e6,
        output=usage.output * cost.output / 1e6,
        cache_read=usage.cache_read * cost.cache_read / 1e6,
        cache_write=usage.cache_write * cost.cache_write / 1e6,
    )
    result.total = result.input + result.output + result.cache_read + result.cache_write
    return result
