"""What an API kind provides: a request builder and a wire parser.

Both are pure (no I/O), so they are tested directly on recordings, and the one runner in
:mod:`pi_tui.ai.stream` does HTTP, retries and abort for all of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.sse import Sink, SSEDecoder, SSEEvent
from pi_tui.ai.types import Context, Model, StreamOptions

RequestSigner = Callable[[str, dict[str, str], bytes], Awaitable[dict[str, str]]]
"""``(url, headers, payload) -> headers to add``: called by the runner for every attempt with
the exact bytes it is about to send (after extensions and the payload transform), so a
signature (AWS SigV4) covers what goes out, with a fresh time on each retry."""


@dataclass(slots=True)
class HttpRequest:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    signer: RequestSigner | None = None
    """Set by a client whose requests must be signed over their bytes (Bedrock with AWS keys)."""


class FrameDecoder(Protocol):
    """Response bytes -> ``sink(name, data)`` per message: the SSE decoder's interface."""

    def feed_into(self, chunk: bytes, sink: Sink) -> None: ...

    def close_into(self, sink: Sink) -> None: ...


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
    """A client may also define ``frame_decoder() -> FrameDecoder`` when its responses are not
    SSE (Bedrock's AWS event stream; :func:`frame_decoder` falls back to SSE), and
    ``http_error(error, body) -> ProviderError`` to reword an HTTP error answer or decide
    whether it is retried (:func:`refine_http_error`; the Codex backend's usage limit)."""

    api: str

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest: ...

    def parser(self, builder: MessageBuilder) -> WireParser: ...


def frame_decoder(client: ApiClient) -> FrameDecoder:
    """The client's own response decoder, else SSE (every client but Bedrock)."""
    make: Callable[[], FrameDecoder] | None = getattr(client, "frame_decoder", None)
    return make() if make is not None else SSEDecoder()


def refine_http_error(client: ApiClient, error: ProviderError, body: str) -> ProviderError:
    """The client's own reading of an HTTP error answer (its wording, whether to retry), else
    the runner's generic one: a backend may say in its body what a status code cannot."""
    refine: Callable[[ProviderError, str], ProviderError] | None = getattr(client, "http_error", None)
    return refine(error, body) if refine is not None else error
