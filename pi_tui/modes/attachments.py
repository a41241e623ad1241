"""``@path`` arguments: files attached to the first prompt, as pi does it.

Text files are inlined as ``<file name="ABS">...</file>``; images become image blocks preceded by
an empty ``<file name="ABS"></file>`` marker, so the model knows which file each image is.

Words come from ``sys.argv``, where bytes that are not UTF-8 arrive as lone surrogates: prompt
words and file contents are decoded as text (invalid bytes become U+FFFD, as pi does), file
names are shown escaped so the model can use them with its tools (:mod:`pi_tui.text_safety`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.text_safety import clean_text, decode_text, show_name

if TYPE_CHECKING:
    from pi_tui.messages import ImageContent

IMAGE_TYPES = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif"}


class AttachmentError(Exception):
    pass


@dataclass(slots=True)
class Prompt:
    text: str
    images: list[ImageContent] = field(default_factory=list)


def image_type(data: bytes) -> str | None:
    for magic, mime in IMAGE_TYPES.items():
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def build_prompts(arguments: list[str], cwd: Path) -> list[Prompt]:
    """Split CLI words into prompts: ``@file`` words attach to the next message."""
    from pi_tui.messages import ImageContent

    prompts: list[Prompt] = []
    prefix = ""
    images: list[ImageContent] = []
    for word in arguments:
        if word.startswith("@") and len(word) > 1:
            path = (cwd / word[1:]).expanduser().resolve()
            try:
                data = path.read_bytes()
            except OSError as error:
                raise AttachmentError(f"Cannot attach {show_name(word[1:])}: {error.strerror}") from None
            mime = image_type(data)
            if mime is not None:
                images.append(ImageContent(data=base64.b64encode(data).decode(), mime_type=mime))
                prefix += f'<file name="{show_name(path)}"></file>\n'
            else:
                prefix += f'<file name="{show_name(path)}">\n{decode_text(data)}\n</file>\n'
            continue
        prompts.append(Prompt(prefix + clean_text(word), images))
        prefix, images = "", []
    if prefix:
        prompts.append(Prompt(prefix.rstrip("\n"), images))
    return prompts
