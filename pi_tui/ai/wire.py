"""Helpers shared by the request builders: content encoding and headers.

What each model is sent of the conversation is decided in :mod:`pi_tui.ai.transform`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pi_tui.ai.types import Model, StreamOptions
from pi_tui.session.messages import ImageContent, TextContent


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
