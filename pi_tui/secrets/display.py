"""How placeholders look on screen: the model's text keeps them, the chat marks them."""

from __future__ import annotations

import re

_CODE_OR_PLACEHOLDER = re.compile(
    r"(```[\s\S]*?(?:```|\Z)|~~~[\s\S]*?(?:~~~|\Z)|`[^`\n]*`)|(<<secret:[0-9a-f]{10}>>)"
)


def mark_placeholders(markdown: str) -> str:
    """Placeholders outside code become inline code, so they stand out as tokens (and markdown
    cannot read ``<<secret:...>>`` as an autolink); code blocks and spans are left as written."""
    if "<<secret:" not in markdown:
        return markdown
    return _CODE_OR_PLACEHOLDER.sub(lambda m: m.group(1) or f"`{m.group(2)}`", markdown)
