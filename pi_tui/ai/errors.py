"""Errors of the model layer. Messages are written for the user."""

from __future__ import annotations

from typing import Any

from pi_tui import jsonio


class ProviderError(Exception):
    """A request or stream failed.

    ``retryable`` says whether trying again may help (rate limits, overload, server errors,
    dropped connections); ``retry_after`` is the server's own wait hint in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        context_overflow: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.context_overflow = context_overflow


class ConfigError(Exception):
    """models.json or a model/provider choice cannot be used; names the file and problem."""


OVERFLOW_MARKERS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "exceeds the maximum number of tokens",
    "input is too long",
    "request too large",
)


def is_context_overflow(message: str | None) -> bool:
    """Whether a provider's error text says the request did not fit the model's context."""
    text = (message or "").lower()
    return any(marker in text for marker in OVERFLOW_MARKERS)


def lenient_json(data: str) -> Any:
    """An SSE event's JSON that orjson refused: parsed again as Node would, else a clear error.

    Some servers cut strings by UTF-16 code units, so an event may end its text with a lone
    surrogate escape (``"\\ud83d"``, the first half of an emoji whose second half starts the next
    event). That is valid JSON which orjson refuses; :func:`pi_tui.jsonio.loads` keeps the half
    and the message builder joins it with its pair. Only this rare path pays for the fallback.
    """
    try:
        return jsonio.loads(data)
    except jsonio.JSONDecodeError:
        raise ProviderError(f"Malformed JSON in the stream: {data[:200]}") from None
