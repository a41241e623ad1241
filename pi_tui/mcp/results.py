"""PURE-ish: an MCP server's answer as the text and images a model reads.

A ``tools/call`` result and a ``resources/read`` result become a :class:`ToolResult` the way pi
1.5.2 makes them, so a session moved between pi and pi-tui reads the same: text and images pass
through, a resource link names the tool that reads it, binary data the model cannot read is saved
to a file and named, and text over 20 KB keeps its start and end around a ``…N chars truncated…``
marker with the whole text saved beside it. The only side effect is writing those files (0600,
in the system's temp folder unless the caller names one).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mcp.types as mt

from pi_tui.messages import ImageContent, TextContent
from pi_tui.tools.base import ToolResult

MAX_TEXT_BYTES = 20 * 1024
"""Model-facing text of one result beyond this many UTF-8 bytes is cut in the middle."""

READ_RESOURCE_TOOL = "read_mcp_resource"
FILE_PREFIX = "pi-tui-mcp-"

Block = TextContent | ImageContent
ResourceContents = mt.TextResourceContents | mt.BlobResourceContents

_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_MCP_APP_MIME = re.compile(r';\s*profile\s*=\s*"?mcp-app"?', re.IGNORECASE)


def _size(count: int) -> str:
    """Bytes in the short form tool output uses (``512B``, ``1.5KB``, ``2.0MB``)."""
    if count < 1024:
        return f"{count}B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f}KB"
    return f"{count / (1024 * 1024):.1f}MB"


def is_text_mime_type(mime_type: str | None) -> bool:
    """Whether bytes of this type read as text (``text/*``, JSON, ``+json``, ``+xml``)."""
    if not mime_type:
        return False
    kind = mime_type.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind == "application/json" or kind.endswith(("+json", "+xml"))


def is_mcp_app(uri: str, mime_type: str | None) -> bool:
    """Whether a resource is an MCP App's user interface, which only hosts that draw it can use.

    pi leaves these out of listings and reads (``ui://`` URIs, ``text/html;profile=mcp-app``);
    pi-tui does too.
    """
    return uri.startswith("ui://") or bool(_MCP_APP_MIME.search(mime_type or ""))


def _extension(uri: str) -> str:
    """The saved file's extension: the one the URI's path ends in, else ``.bin``."""
    try:
        path = urlsplit(uri).path or uri
    except ValueError:
        path = uri
    found = _EXTENSION.search(path)
    return found.group() if found else ".bin"


def save_output(data: bytes, extension: str, output_dir: Path | None = None) -> Path:
    """Write ``data`` to a new file only the user can read, and return its path.

    Results may hold private data, hence 0600; ``mkstemp`` creates the file exclusively, so a
    link someone planted at the name is never followed.
    """
    folder = output_dir if output_dir is not None else Path(tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=FILE_PREFIX, suffix=extension, dir=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return Path(name)


def _blob_content(uri: str, mime_type: str | None, blob: str, output_dir: Path | None) -> Block:
    """A binary resource: an image as an image, text-like bytes as text, other bytes as a file."""
    if mime_type and mime_type.startswith("image/"):
        return ImageContent(data=blob, mime_type=mime_type)
    try:
        data = base64.b64decode(blob)
    except (binascii.Error, ValueError) as error:
        return TextContent(text=f"[Binary resource {uri} could not be decoded: {error}]")
    if is_text_mime_type(mime_type):
        return TextContent(text=data.decode("utf-8", errors="replace"))
    kind = f"{mime_type or 'type not given'}, {_size(len(data))}"
    try:
        path = save_output(data, _extension(uri), output_dir)
    except OSError as error:
        return TextContent(text=f"[Binary resource {uri} ({kind}) was not saved: {error.strerror or error}]")
    return TextContent(text=f"[Binary resource {uri} ({kind}) is in the file {path}]")


def _resource_link(server: str, link: mt.ResourceLink, readable_resources: bool) -> TextContent:
    facts = [fact for fact in (link.mimeType, None if link.size is None else _size(link.size)) if fact]
    text = f'[Resource link {link.uri} "{link.title or link.name}"'
    if facts:
        text += f" ({', '.join(facts)})"
    if link.description:
        text += f": {link.description}"
    if readable_resources:
        text += f'; {READ_RESOURCE_TOOL} with server "{server}" reads it'
    return TextContent(text=text + "]")


def _block_content(server: str, block: Any, readable_resources: bool, output_dir: Path | None) -> list[Block]:
    if isinstance(block, mt.TextContent):
        return [TextContent(text=block.text)]
    if isinstance(block, mt.ImageContent):
        return [ImageContent(data=block.data, mime_type=block.mimeType)]
    if isinstance(block, mt.AudioContent):
        return [TextContent(text=f"[An audio clip ({block.mimeType}) was left out: it cannot be shown]")]
    if isinstance(block, mt.ResourceLink):
        return [_resource_link(server, block, readable_resources)]
    if isinstance(block, mt.EmbeddedResource):
        return [_resource_content(block.resource, output_dir)]
    kind = getattr(block, "type", type(block).__name__)
    return [TextContent(text=f"[A content block of type {kind} was left out: pi-tui does not know it]")]


def _resource_content(resource: ResourceContents, output_dir: Path | None) -> Block:
    if isinstance(resource, mt.TextResourceContents):
        return TextContent(text=resource.text)
    return _blob_content(str(resource.uri), resource.mimeType, resource.blob, output_dir)


def _text_of(content: Sequence[Block]) -> str:
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


def _cut_middle(text: str) -> tuple[str, int, int] | None:
    """``text``'s first and last 10 KB around the marker, its size in bytes and its lines.

    None when it fits. Cuts fall on UTF-8 character starts: the head ends at or before half
    the limit, the tail starts at or after the same distance from the end.
    """
    raw = text.encode("utf-8")
    if len(raw) <= MAX_TEXT_BYTES:
        return None

    def starts_character(index: int) -> bool:
        return index >= len(raw) or (raw[index] & 0xC0) != 0x80

    head_end = MAX_TEXT_BYTES // 2
    while head_end > 0 and not starts_character(head_end):
        head_end -= 1
    tail_start = len(raw) - (MAX_TEXT_BYTES - MAX_TEXT_BYTES // 2)
    while tail_start < len(raw) and not starts_character(tail_start):
        tail_start += 1
    removed = len(raw[head_end:tail_start].decode("utf-8"))
    # A final newline ends the last line rather than starting one more.
    lines = text.count("\n") + 1 - (1 if text.endswith("\n") else 0)
    kept = f"{raw[:head_end].decode('utf-8')}…{removed} chars truncated…{raw[tail_start:].decode('utf-8')}"
    return kept, len(raw), lines


def limit_content(content: list[Block], output_dir: Path | None = None) -> tuple[list[Block], Path | None]:
    """Keep the model-facing text of one result within 20 KB.

    Longer text (every text block, joined by newlines) becomes one block: a warning line with
    the size the whole would have had, the kept ends, and the file holding the whole text;
    the result's images follow it. Returns the content and that file (None when nothing was cut
    or the file could not be written).
    """
    whole = _text_of(content)
    cut = _cut_middle(whole)
    if cut is None:
        return content, None
    kept, total_bytes, lines = cut
    tokens = math.ceil(total_bytes / 4)
    saved: Path | None = None
    try:
        saved = save_output(whole.encode("utf-8"), ".txt", output_dir)
        where = f"[The whole text is in {saved}: read it in parts with offset and limit]"
    except OSError as error:
        where = f"[The whole text could not be saved: {error.strerror or error}]"
    text = (
        f"[Output cut to its first and last 10 KB: the whole was about {tokens} tokens"
        f" in {lines} lines]\n\n{kept}\n\n{where}"
    )
    images = [block for block in content if isinstance(block, ImageContent)]
    return [TextContent(text=text), *images], saved


def _details(server: str, tool: str, saved: Path | None) -> dict[str, Any]:
    details: dict[str, Any] = {"server": server, "tool": tool}
    if saved is not None:
        details["fullOutputPath"] = str(saved)
    return details


def convert_result(
    server: str,
    tool: str,
    result: mt.CallToolResult,
    *,
    readable_resources: bool,
    output_dir: Path | None = None,
) -> ToolResult:
    """A ``tools/call`` result of ``server``'s ``tool`` as the model reads it.

    ``readable_resources``: ``read_mcp_resource`` can reach this server, so resource links say
    so. Without content blocks the structured content is shown as JSON (servers should mirror
    it as text but do not always). ``isError`` makes an error result, with a line saying so
    when the server gave no text.
    """
    content: list[Block] = []
    for block in result.content:
        content.extend(_block_content(server, block, readable_resources, output_dir))
    if not result.content and result.structuredContent is not None:
        content.append(TextContent(text=json.dumps(result.structuredContent, indent=2, ensure_ascii=False)))
    if result.isError and _text_of(content) == "":
        content.append(TextContent(text=f"The MCP tool {server}/{tool} failed without saying why"))
    limited, saved = limit_content(content, output_dir)
    return ToolResult(limited, _details(server, tool, saved), is_error=bool(result.isError))


def convert_resource_contents(
    server: str,
    uri: str,
    contents: Sequence[ResourceContents],
    *,
    output_dir: Path | None = None,
) -> ToolResult:
    """What ``read_mcp_resource`` returns: a ``resources/read`` result as text and images.

    Several contents (a folder's files, say) are each introduced by their URI. MCP App user
    interfaces are left out: pi-tui does not draw them.
    """
    shown = [item for item in contents if not is_mcp_app(str(item.uri), item.mimeType)]
    content: list[Block] = []
    for item in shown:
        if len(shown) > 1:
            content.append(TextContent(text=f"{item.uri}:"))
        content.append(_resource_content(item, output_dir))
    if not content:
        if not contents:
            content.append(TextContent(text=f"The resource {uri} has no content."))
        else:
            content.append(
                TextContent(text=f"The resource {uri} is an MCP App interface, which pi-tui does not show.")
            )
    limited, saved = limit_content(content, output_dir)
    return ToolResult(limited, _details(server, READ_RESOURCE_TOOL, saved))
