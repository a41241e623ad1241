"""An ACP prompt (content blocks) as the text and images pi-tui's agent takes.

Text blocks are the user's words. An embedded resource (the editor attaching a file, a selection,
a buffer's unsaved text) travels as its text inside ``<context ref="...">`` so the model sees
where it came from; a resource link (an ``@file`` mention the editor did not attach) becomes the
path, which the model can read with its tools. Images become image content; audio is not
offered in ``initialize``, so a client sending it anyway is told so.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import unquote, urlparse

from pi_tui.messages import ImageContent

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


class PromptInputError(ValueError):
    """A block the agent cannot take (an invalid-params answer, one line)."""


def uri_path(uri: str) -> str:
    """A ``file://`` URI as a path; any other URI as it is."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return uri


def _field(block: Any, name: str) -> Any:
    if isinstance(block, dict):
        return block.get(name)
    return getattr(block, name, None)


def prompt_parts(blocks: list[Any]) -> tuple[str, list[ImageContent]]:
    """The prompt's text and images (blocks are SDK models or wire dicts)."""
    texts: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        kind = _field(block, "type")
        if kind == "text":
            texts.append(str(_field(block, "text") or ""))
        elif kind == "image":
            mime = _field(block, "mime_type") or _field(block, "mimeType")
            data = _field(block, "data")
            if mime not in IMAGE_TYPES or not isinstance(data, str):
                raise PromptInputError(f"Images must be PNG, JPEG, GIF or WebP data (got {mime})")
            images.append(ImageContent(data=_base64(data), mime_type=mime))
        elif kind == "resource_link":
            uri = str(_field(block, "uri") or "")
            texts.append(f"@{uri_path(uri)}")
        elif kind == "resource":
            texts.append(_embedded(_field(block, "resource"), images))
        elif kind == "audio":
            raise PromptInputError("pi-tui takes no audio; send text or images")
        else:
            raise PromptInputError(f"Unknown content block type {kind!r}")
    return _join(texts), images


def _embedded(resource: Any, images: list[ImageContent]) -> str:
    uri = str(_field(resource, "uri") or "")
    text = _field(resource, "text")
    where = uri_path(uri)
    if isinstance(text, str):
        return f'\n<context ref="{where}">\n{text}\n</context>\n'
    mime = _field(resource, "mime_type") or _field(resource, "mimeType")
    blob = _field(resource, "blob")
    if mime in IMAGE_TYPES and isinstance(blob, str):
        images.append(ImageContent(data=_base64(blob), mime_type=mime))
        return f"(image attached: {where})"
    return f"@{where}"


def _base64(data: str) -> str:
    """``data`` when it is base64 (a provider would refuse the whole request otherwise)."""
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise PromptInputError("An image's data is not valid base64") from None
    return data


def _join(texts: list[str]) -> str:
    """Blocks joined as an editor lays them out: words and mentions on one line with spaces,
    context blocks on lines of their own."""
    out = ""
    for text in texts:
        if out and not out.endswith(("\n", " ")) and not text.startswith(("\n", " ")):
            out += " "
        out += text
    return out.strip("\n") if out.strip() else out
