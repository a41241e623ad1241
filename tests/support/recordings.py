"""Recorded SSE streams (tests/data/sse, from ../shared/fixtures/sse) and their expectations."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.registry import get_client
from pi_tui.ai.sse import SSEDecoder
from pi_tui.ai.types import Model
from pi_tui.session.messages import AssistantMessage

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


def assemble(name: str, chunk_size: int = 0) -> AssistantMessage:
    """Run a recording through our SSE decoder and the API's parser, without HTTP.

    ``chunk_size`` > 0 feeds the bytes in pieces of that size (cutting lines, CRLFs and UTF-8
    sequences anywhere), like a network would.
    """
    folder = name.split("/", 1)[0]
    api = API_OF_FOLDER[folder]
    builder = MessageBuilder(recorded_model(api))
    parser = get_client(api).parser(builder)
    decoder = SSEDecoder()
    data = (SSE_DIR / name).read_bytes()
    size = chunk_size or len(data)
    try:
        for start in range(0, len(data), size):
            for event in decoder.feed(data[start : start + size]):
                parser.handle(event)
        for event in decoder.close():
            parser.handle(event)
        parser.end()
    except ProviderError as error:
        builder.fail(str(error))
    if not builder.finished:
        builder.fail("stream ended without a result")
    return builder.snapshot()
