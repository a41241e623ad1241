"""Helpers shared by the request builders: content encoding, headers, models.json's sampling
parameters.

What each model is sent of the conversation is decided in :mod:`pi_tui.ai.transform`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pi_tui.ai.thinking import clamp_level
from pi_tui.ai.types import Model, StreamOptions
from pi_tui.messages import ImageContent, TextContent


def text_of(blocks: Iterable[object]) -> str:
    return "\n".join(block.text for block in blocks if isinstance(block, TextContent))


def images_of(blocks: Iterable[object]) -> list[ImageContent]:
    return [block for block in blocks if isinstance(block, ImageContent)]


def data_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def stream_headers(
    model: Model,
    options: StreamOptions,
    key_header: str = "authorization",
    *,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """JSON in, SSE out, the API key in ``key_header``; models.json headers, then the request's
    own headers, override. ``authorization`` gets the ``Bearer`` scheme."""
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if extra:
        headers.update(extra)
    if options.api_key:
        scheme = "Bearer " if key_header == "authorization" else ""
        headers[key_header] = scheme + options.api_key
    headers.update(model.headers)
    headers.update(options.headers)
    return headers


def sampling_params(model: Model, level: str) -> dict[str, Any]:
    """models.json's ``samplingParams`` with ``samplingParamsByThinkingLevel`` for the level the
    request runs at over them (pi 1.x: merged into OpenAI-style request bodies, last)."""
    extra = model.model_extra or {}
    merged: dict[str, Any] = {}
    base = extra.get("samplingParams")
    if isinstance(base, dict):
        merged.update(base)
    by_level = extra.get("samplingParamsByThinkingLevel")
    if isinstance(by_level, dict):
        chosen = by_level.get(clamp_level(model, level))
        if isinstance(chosen, dict):
            merged.update(chosen)
    return merged
