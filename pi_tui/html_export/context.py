"""What the page shows above the conversation besides the figures: the system prompt and tools
the agent runs with, and the session file itself, to download as ``.jsonl``.

Where the prompt comes from is pi 1.x's rule. A session holding pi 1.x system messages shows its
own prompt and tools where they occur in the conversation, so the header shows none. Otherwise
``/export`` (and the rpc ``export_html``) hands over the live agent's current prompt and tools,
the ones the session goes on with; ``--export FILE`` has no agent (a stored file does not say
which prompt it ran with) and, as in pi, shows none. Secrets are hidden in both like everywhere
else on the page.

The download is the file's own bytes (plus entries not yet written to it), gzip-compressed and
base64-encoded in a ``<script type="text/plain">`` block: base64 holds no ``<``, so the session
cannot end the block, and the bytes come back exactly, which no re-encoding of parsed entries
promises; compressed, the copy adds a fraction of the file's size to the page, not all of it.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from pi_tui.html_export.payload import carries_system_state
from pi_tui.jsonio import dumps

if TYPE_CHECKING:
    from pi_tui.agent.session import AgentSession
    from pi_tui.secrets.obfuscator import Obfuscator
    from pi_tui.session.manager import SessionManager

READ_SIZE = 1024 * 1024
"""Bytes read from the session file at a time."""
PACK_LEVEL = 1
"""zlib's fastest: 70 MB of JSONL pack in under a second to a quarter of their size (the
default, 6, takes five times as long for a fifth less)."""
GZIP_WBITS = 16 + zlib.MAX_WBITS
"""A gzip stream (what the browser's ``DecompressionStream("gzip")`` reads)."""


class ToolLike(Protocol):
    """What the page lists of a tool (an ``AgentTool`` or an extension's)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class PromptContext:
    """The system prompt and tools shown in the page's header (see the module's rule)."""

    system_prompt: str = ""
    tools: Sequence[ToolLike] = field(default_factory=list)


def agent_context(agent: AgentSession) -> PromptContext:
    """The prompt this session's next request would carry and the tools offered with it."""
    return PromptContext(agent.current_system_prompt, agent.active_tools())


def context_block(
    context: PromptContext | None, raws: Iterable[dict[str, Any]], hide: Obfuscator | None
) -> dict[str, Any] | None:
    """The header's ``systemPrompt`` and ``tools`` as plain data, or None when there is nothing
    to show or the session's own system messages show them (pi 1.x)."""
    if context is None or (not context.system_prompt and not context.tools):
        return None
    if any(carries_system_state(raw) for raw in raws):
        return None
    block: dict[str, Any] = {
        "systemPrompt": context.system_prompt,
        "tools": [
            {
                "name": str(tool.name),
                "description": str(tool.description or ""),
                "parameters": tool.parameters if isinstance(tool.parameters, dict) else {},
            }
            for tool in context.tools
        ],
    }
    if hide is not None and not hide.empty:
        hidden: dict[str, Any] = hide.hide(block)
        return hidden
    return block


def jsonl_pieces(manager: SessionManager, hide: Obfuscator | None) -> Iterator[bytes]:
    """The session as its file holds it, then any entries not written to it yet; a session with
    no file yet (nothing answered, ``--no-session``) as the file it would be. Lines holding a
    secret are written again with the secret hidden (every other line stays byte for byte)."""
    path = manager.session_file
    entries = list(manager.iter_raw_entries())
    if path is not None and manager.is_persisted:
        pending = entries[len(entries) - manager.unsaved_count :] if manager.unsaved_count else []
        ends_with_newline = True
        with open(path, "rb") as stream:
            if hide is None or hide.empty:
                while chunk := stream.read(READ_SIZE):
                    ends_with_newline = chunk.endswith(b"\n")
                    yield chunk
            else:
                for line in stream:
                    ends_with_newline = line.endswith(b"\n")
                    yield _hidden_line(line, hide)
        if pending and not ends_with_newline:
            yield b"\n"
    else:
        header = manager.get_header().model_dump(by_alias=True, exclude_none=True)
        pending = [header, *entries]
    for raw in pending:
        line = dumps(raw)
        yield (_hidden_line(line, hide) if hide is not None and not hide.empty else line) + b"\n"


def _hidden_line(line: bytes, hide: Obfuscator) -> bytes:
    """One file line with its secrets hidden: as JSON when it is JSON (so an escaped form of a
    secret is found too), as text otherwise; the very same bytes when nothing is hidden."""
    if not hide.might_hide(line):
        return line
    body = line.rstrip(b"\r\n")
    ending = line[len(body) :]
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode("utf-8", errors="surrogateescape")
        hidden_text = hide.hide_text(text)
        if hidden_text == text:
            return line
        return hidden_text.encode("utf-8", errors="surrogateescape") + ending
    hidden = hide.hide(value)
    return line if hidden is value else dumps(hidden) + ending


def packed_chunks(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """``pieces`` gzip-compressed, then base64-encoded, in pieces: JSONL shrinks several times,
    so the file rides in the page at a fraction of its size (the page's DecompressionStream
    gives the bytes back exactly), and never sits in memory whole."""
    packer = zlib.compressobj(PACK_LEVEL, zlib.DEFLATED, GZIP_WBITS)

    def packed() -> Iterator[bytes]:
        for piece in pieces:
            out = packer.compress(piece)
            if out:
                yield out
        yield packer.flush()

    return base64_chunks(packed())


def base64_chunks(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """``pieces`` joined and base64-encoded, in pieces (never the whole file in memory twice)."""
    carry = b""
    for piece in pieces:
        data = carry + piece
        whole = len(data) - len(data) % 3
        carry = data[whole:]
        if whole:
            yield base64.b64encode(data[:whole])
    if carry:
        yield base64.b64encode(carry)
