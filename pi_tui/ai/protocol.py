"""What an API kind provides: a request builder and a wire parser.

Both are pure (no I/O), so they are tested directly on recordings, and the one runner in
:mod:`pi_tui.ai.stream` does HTTP, retries and abort for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.sse import SSEEvent
from pi_tui.ai.types import Context, Model, StreamOptions


@dataclass(slots=True)
class HttpRequest:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)


class WireParser(Protocol):
    def on_event(self, event: str, data: str) -> None:
        """Apply one SSE event (name, data) to the builder. Raises ProviderError for errors."""

    def handle(self, event: SSEEvent) -> None:
        """The same for an :class:`SSEEvent` object."""

    def end(self) -> None:
        """The byte stream ended; finish (or fail) the message if the wire did not."""


class ParserBase:
    """Gives every parser ``handle(SSEEvent)`` on top of its ``on_event(name, data)``."""

    def on_event(self, event: str, data: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def handle(self, event: SSEEvent) -> None:
        self.on_event(event.event, event.data)


class ApiClient(Protocol):
    api: str

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest: ...

    def parser(self, builder: MessageBuilder) -> WireParser: ...
