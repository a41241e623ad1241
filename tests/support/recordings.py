"""Recorded SSE streams and their expectations, read from tests/data/sse (copied into the repository
from the shared fixtures; nothing outside the repository is read)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.registry import get_client
from pi_tui.ai.sse import SSEDecoder
from pi_tui.ai.types import Model
from pi_tui.messages import AssistantMessage

SSE_DIR = Path(__file__).resolve().parents[1] / "data" / "sse"
API_OF_FOLDER = {
    "anthropic": "anthropic-messages",
    "openai": "openai-completions",
    "openai-compat": "openai-completions",
    "openai-responses": "openai-responses",
    "gemini": "google-generative-ai",
}


@cache
def expectations() -> dict[str, Any]:
    return json.loads((SSE_DIR / "EXPECTED.json").read_text())


def recordings(folder: str) -> list[str]:
    """Names like ``openai/chat-text-usage-gpt4o.sse`` of one folder, sorted."""
    return sorted(f"{folder}/{path.name}" for path in (SSE_DIR / folder).glob("*.sse"))


def expected(name: str) -> dict[str, Any]:
    return expectations()[name]["expected"]


def recorded_model(api: str) -> Model:
    return Model(id="recorded", api=api, provider="recorded", base_url="http://127.0.0.1")


@dataclass
class ParseRun:
    builder: MessageBuilder
    events: list[StreamEvent]
    failure: ProviderError | None

    @property
    def message(self) -> AssistantMessage:
        return self.builder.snapshot()


def parse_bytes(api: str, data: bytes, chunk_size: int = 0) -> ParseRun:
    """Run raw SSE bytes through our decoder and the API's parser, without HTTP.

    ``chunk_size`` > 0 feeds the bytes in pieces of that size (cutting lines, CRLFs and UTF-8
    sequences anywhere), like a network would. A wire error fails the message, as the runner
    does.
    """
    builder = MessageBuilder(recorded_model(api))
    parser = get_client(api).parser(builder)
    decoder = SSEDecoder()
    size = chunk_size or len(data) or 1
    failure: ProviderError | None = None
    try:
        for start in range(0, len(data), size):
            for event in decoder.feed(data[start : start + size]):
                parser.handle(event)
        for event in decoder.close():
            parser.handle(event)
        parser.end()
    except ProviderError as error:
        failure = error
        builder.fail(str(error))
    return ParseRun(builder, builder.take_events(), failure)


def assemble(name: str, chunk_size: int = 0) -> AssistantMessage:
    """The final message of a recording (see :func:`parse_bytes`)."""
    api = API_OF_FOLDER[name.split("/", 1)[0]]
    run = parse_bytes(api, (SSE_DIR / name).read_bytes(), chunk_size)
    if not run.builder.finished:
        run.builder.fail("stream ended without a result")
    return run.builder.snapshot()
