"""A loopback model server for tests: real HTTP on 127.0.0.1, scripted replies, recorded requests.

One :class:`ModelServer` speaks all four API kinds at once, told apart by the request path
(any prefix such as ``/v1`` or ``/v1beta`` is accepted):

===========================  ===============================================================
anthropic-messages           ``POST {base_url}/v1/messages``
openai-completions           ``POST {base_url}/chat/completions`` (also ``/v1/chat/completions``)
openai-responses             ``POST {base_url}/responses`` (also ``/v1/responses``)
google-generative-ai         ``POST {base_url}/models/{id}:streamGenerateContent?alt=sse``
===========================  ===============================================================

So ``server.base_url`` (``http://127.0.0.1:PORT``) is the ``baseUrl`` for every API kind.

Each request takes the next reply from a queue; when the queue is empty the ``default`` reply
answers (by default :func:`echo_reply`: the last user text, prefixed ``"echo: "``), so long
end-to-end runs never starve. A reply is one of

- :class:`Scripted`: an assistant message (thinking, text, tool calls, usage, stop reason, an
  optional mid-stream error) rendered into the wire format of the API kind that was called;
- :class:`Recording`: a recorded SSE file served byte for byte;
- :class:`RawStream`: arbitrary bytes as the response body (malformed streams);
- :class:`HttpError`: a status, a body (an API-shaped JSON error by default) and headers such
  as ``Retry-After``;
- :class:`Drop`: the connection closes without any response;
- a callable ``(RecordedRequest) -> reply``, decided when the request arrives.

Streamed replies share the :class:`Delivery` knobs: a delay before the first byte, a delay per
SSE event, writing in chunks of N bytes with a delay between chunks, and cutting the
connection after N events or N bytes (FIN or RST). Bodies use chunked transfer encoding, so a
cut is a protocol error the client notices.

Every request is recorded (:class:`RecordedRequest`: path, headers, parsed JSON body, what was
sent, whether the client hung up) in ``server.requests``.

Usage::

    with ModelServer(Scripted(text="hi"), HttpError(429, headers={"Retry-After": "1"})) as server:
        model = server.model("openai-completions")        # a pi_tui Model pointing here
        ...
        assert server.requests[0].body["model"] == "m"

The server runs in a background thread, so it serves sync tests, async tests (any event loop)
and other processes (``models.json`` from :meth:`ModelServer.models_json`) alike. The
``model_server`` pytest fixture yields a started server. ``python -m tests.support.model_server
--port 0 --script replies.json`` runs one by hand (see :func:`main`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import re
import select
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

if TYPE_CHECKING:
    from pi_tui.ai.types import Model

SSE_DIR = Path(__file__).resolve().parents[1] / "data" / "sse"
API_KINDS = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")
StopReason = Literal["stop", "length", "toolUse"]

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):06d}"


# --- replies -------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Delivery:
    """How a reply goes over the wire (all delays in seconds)."""

    first_byte_delay: float = 0.0
    """Wait before sending anything (status line included)."""
    event_delay: float = 0.0
    """Wait before every SSE event after the first (a slow stream)."""
    chunk_size: int = 0
    """Write each event in pieces of this many bytes (0: one write per event)."""
    chunk_delay: float = 0.0
    """Wait between those pieces."""
    cut_after_events: int | None = None
    """Close the connection after this many SSE events (0: right after the headers)."""
    cut_after_bytes: int | None = None
    """Close the connection after this many body bytes (may cut an event, a line, a character)."""
    cut_mode: Literal["close", "reset"] = "close"
    """``close`` ends the TCP stream normally (FIN); ``reset`` aborts it (RST)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers."""


@dataclass
class Recording(Delivery):
    """A recorded SSE body: ``name`` under tests/data/sse (``"openai/chat-text-usage-gpt4o.sse"``)
    or any path. Served as it is; events are split at blank lines for ``event_delay`` / cuts."""

    name: str | Path

    def body(self) -> bytes:
        path = Path(self.name)
        if not path.is_absolute():
            path = SSE_DIR / path
        return path.read_bytes()


@dataclass
class RawStream(Delivery):
    """Arbitrary response bytes (e.g. a malformed SSE stream), split into events at blank lines."""

    body: bytes | str
    content_type: str = "text/event-stream"


@dataclass
class TextSpec:
    """A text block of a :class:`Scripted` reply."""

    text: str
    signature: str | None = None
    """Gemini ``thoughtSignature`` on the text part (other APIs ignore it)."""


@dataclass
class ThinkingSpec:
    """A thinking block; ``signature`` is Anthropic's signature, Responses' encrypted_content,
    Gemini's thoughtSignature (Chat Completions has none)."""

    thinking: str
    signature: str | None = None


@dataclass
class ToolCallSpec:
    """A tool call; ``id`` is generated when None (Gemini only sends it when given)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    signature: str | None = None
    """Gemini ``thoughtSignature`` on the functionCall part."""


Block = TextSpec | ThinkingSpec | ToolCallSpec


@dataclass
class ScriptUsage:
    """Token counts as pi counts them: ``input`` excludes cache reads and writes."""

    input: int = 10
    output: int = 5
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class Scripted(Delivery):
    """An assistant reply rendered in the wire format of whichever API kind was called.

    Blocks are ``thinking``, then ``text``, then ``tool_calls`` (each when non-empty), unless
    ``blocks`` gives an explicit order. Text is streamed a word per delta (``delta_size`` > 0:
    that many characters), tool-call arguments as JSON in pieces of 16 characters.
    """

    text: str = ""
    thinking: str = ""
    thinking_signature: str | None = None
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    blocks: list[Block] | None = None
    stop_reason: StopReason | None = None
    """Default: ``toolUse`` when there are tool calls, else ``stop``."""
    usage: ScriptUsage = field(default_factory=ScriptUsage)
    error: str | None = None
    """Send an API error event after the blocks instead of finishing."""
    error_type: str = "api_error"
    model: str | None = None
    """Model name reported in the stream (default: the requested one)."""
    reasoning_field: str = "reasoning_content"
    """Chat Completions delta field carrying thinking (``reasoning_content`` or ``reasoning``)."""
    delta_size: int = 0

    def content_blocks(self) -> list[Block]:
        if self.blocks is not None:
            return list(self.blocks)
        blocks: list[Block] = []
        if self.thinking:
            blocks.append(ThinkingSpec(self.thinking, self.thinking_signature))
        if self.text:
            blocks.append(TextSpec(self.text))
        blocks.extend(self.tool_calls)
        return blocks

    def final_stop_reason(self) -> StopReason:
        if self.stop_reason is not None:
            return self.stop_reason
        return "toolUse" if any(isinstance(b, ToolCallSpec) for b in self.content_blocks()) else "stop"


@dataclass
class HttpError(Delivery):
    """An HTTP error answer. ``body`` None: the API kind's JSON error shape with ``message``."""

    status: int
    body: str | bytes | dict[str, Any] | None = None
    message: str = ""


@dataclass
class Drop(Delivery):
    """Close the connection without sending a response (after ``first_byte_delay``)."""


Reply = Scripted | Recording | RawStream | HttpError | Drop
ReplyFactory = Callable[["RecordedRequest"], Reply]
REPLY_TYPES = (Scripted, Recording, RawStream, HttpError, Drop)


def text_reply(text: str, **delivery: Any) -> Scripted:
    """Shorthand for ``Scripted(text=text, ...)``."""
    return Scripted(text=text, **delivery)


# --- recorded requests ---------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as the server saw it, and what it did with it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Header names in lower case."""
    raw_body: bytes
    body: Any
    """The parsed JSON body (None when empty or not JSON)."""
    api: str | None
    """The API kind the path belongs to (None: unknown path, answered 404)."""
    model: str | None
    """``body["model"]``, or the model id in a Gemini path."""
    received_at: float = field(default_factory=time.monotonic)
    reply: Reply | None = None
    status: int | None = None
    events_sent: int = 0
    bytes_sent: int = 0
    completed: bool = False
    """The whole reply went out."""
    cut: bool = False
    """The server cut the connection on purpose (``cut_after_*`` or :class:`Drop`)."""
    client_disconnected: bool = False
    """The client hung up before the reply was complete (an abort)."""
    disconnected_at: float | None = None
    finished: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set when the server is done with this request (completed, cut or client gone).

    ``status``, ``completed`` and ``cut`` are set before the client can see the end of the
    reply, so they are safe to read once the client has its result; ``events_sent`` /
    ``bytes_sent`` / ``client_disconnected`` may lag: :meth:`wait_finished` first."""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def wait_finished(self, timeout: float = 5.0) -> bool:
        return self.finished.wait(timeout)


# --- routing -------------------------------------------------------------------------------------

_GOOGLE_PATH = re.compile(r"/models/([^/]+?):(streamGenerateContent|generateContent)$")


def route(path: str) -> tuple[str | None, str | None]:
    """(API kind, model id from the path) of a request path, any prefix allowed."""
    match = _GOOGLE_PATH.search(path)
    if match:
        return "google-generative-ai", unquote(match.group(1))
    if path.endswith("/messages"):
        return "anthropic-messages", None
    if path.endswith("/chat/completions"):
        return "openai-completions", None
    if path.endswith("/responses"):
        return "openai-responses", None
    return None, None


# --- SSE encoders ----------------------------------------------------------------------------------


def sse_event(data: Any, event: str | None = None, *, eol: str = "\n") -> bytes:
    """One SSE event; ``data`` is JSON-encoded unless it is a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    lines = [f"event: {event}"] if event else []
    lines.extend(f"data: {line}" for line in payload.split("\n"))
    return (eol.join(lines) + eol + eol).encode()


def split_events(body: bytes) -> list[bytes]:
    """Cut an SSE body after each blank line (LF, CRLF or CR endings); joins back to ``body``."""
    pieces: list[bytes] = []
    start = 0
    for match in re.finditer(rb"\r\n\r\n|\n\n|\r\r", body):
        pieces.append(body[start : match.end()])
        start = match.end()
    if start < len(body):
        pieces.append(body[start:])
    return pieces


def _pieces(text: str, size: int) -> list[str]:
    if not text:
        return []
    if size > 0:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return re.findall(r"\S+\s*|\s+", text)


def _arguments_json(call: ToolCallSpec) -> str:
    return json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"))


def _call_id(call: ToolCallSpec, prefix: str) -> str:
    return call.id if call.id is not None else _new_id(prefix)


Encoder = Callable[[Scripted, str, Any], list[bytes]]


def encode_anthropic(reply: Scripted, model: str, request: Any) -> list[bytes]:
    """Anthropic Messages stream: message_start, ping, content_block_*, message_delta/stop."""
    usage = reply.usage
    out = [
        sse_event(
            {
                "type": "message_start",
                "message": {
                    "id": _new_id("msg_srv"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage.input,
                        "cache_creation_input_tokens": usage.cache_write,
                        "cache_read_input_tokens": usage.cache_read,
                        "output_tokens": 1,
                    },
                },
            },
            "message_start",
        ),
        sse_event({"type": "ping"}, "ping"),
    ]

    def delta(index: int, body: dict[str, Any]) -> bytes:
        return sse_event(
            {"type": "content_block_delta", "index": index, "delta": body}, "content_block_delta"
        )

    for index, block in enumerate(reply.content_blocks()):
        if isinstance(block, ThinkingSpec):
            start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block.thinking, reply.delta_size)
            ]
            if block.signature is not None:
                deltas.append({"type": "signature_delta", "signature": block.signature})
        elif isinstance(block, TextSpec):
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block.text, reply.delta_size)]
        else:
            start = {"type": "tool_use", "id": _call_id(block, "toolu_srv"), "name": block.name, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in _pieces(_arguments_json(block), 16)
            ]
        out.append(
            sse_event(
                {"type": "content_block_start", "index": index, "content_block": start}, "content_block_start"
            )
        )
        out.extend(delta(index, body) for body in deltas)
        out.append(sse_event({"type": "content_block_stop", "index": index}, "content_block_stop"))
    if reply.error is not None:
        error = {"type": "error", "error": {"type": reply.error_type, "message": reply.error}}
        out.append(sse_event(error, "error"))
        return out
    stop = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}[reply.final_stop_reason()]
    out.append(
        sse_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage.output},
            },
            "message_delta",
        )
    )
    out.append(sse_event({"type": "message_stop"}, "message_stop"))
    return out


def encode_openai_completions(reply: Scripted, model: str, request: Any) -> list[bytes]:
    """Chat Completions chunks: role, reasoning/content deltas, tool_calls fragments, finish_reason,
    the usage chunk (when the request asked for ``stream_options.include_usage``), ``[DONE]``."""
    base = {
        "id": _new_id("chatcmpl-srv"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse_event({**base, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": ""})]
    call_index = 0
    for block in reply.content_blocks():
        if isinstance(block, ThinkingSpec):
            out.extend(chunk({reply.reasoning_field: p}) for p in _pieces(block.thinking, reply.delta_size))
        elif isinstance(block, TextSpec):
            out.extend(chunk({"content": p}) for p in _pieces(block.text, reply.delta_size))
        else:
            head = {
                "index": call_index,
                "id": _call_id(block, "call_srv"),
                "type": "function",
                "function": {"name": block.name, "arguments": ""},
            }
            out.append(chunk({"tool_calls": [head]}))
            out.extend(
                chunk({"tool_calls": [{"index": call_index, "function": {"arguments": p}}]})
                for p in _pieces(_arguments_json(block), 16)
            )
            call_index += 1
    if reply.error is not None:
        out.append(sse_event({"error": {"message": reply.error, "type": reply.error_type, "code": None}}))
        return out
    finish = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}[reply.final_stop_reason()]
    out.append(chunk({}, finish))
    options = request.get("stream_options") if isinstance(request, dict) else None
    if isinstance(options, dict) and options.get("include_usage"):
        usage = reply.usage
        prompt = usage.input + usage.cache_read
        out.append(
            sse_event(
                {
                    **base,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": usage.output,
                        "total_tokens": prompt + usage.output,
                        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
                    },
                }
            )
        )
    out.append(sse_event("[DONE]"))
    return out


def encode_openai_responses(reply: Scripted, model: str, request: Any) -> list[bytes]:
    """Responses API events: response.created / in_progress, output items (reasoning summaries,
    message output_text, function_call arguments), then response.completed (or incomplete)."""
    sequence = itertools.count()
    response: dict[str, Any] = {
        "id": _new_id("resp_srv"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "model": model,
        "output": [],
        "usage": None,
    }

    def event(kind: str, **fields: Any) -> bytes:
        return sse_event({"type": kind, "sequence_number": next(sequence), **fields}, kind)

    out = [
        event("response.created", response=dict(response)),
        event("response.in_progress", response=dict(response)),
    ]
    items: list[dict[str, Any]] = []
    for index, block in enumerate(reply.content_blocks()):
        if isinstance(block, ThinkingSpec):
            item: dict[str, Any] = {"id": _new_id("rs_srv"), "type": "reasoning", "summary": []}
            if block.signature is not None:
                item["encrypted_content"] = block.signature
            where = {"item_id": item["id"], "output_index": index, "summary_index": 0}
            part = {"type": "summary_text", "text": block.thinking}
            out.append(event("response.output_item.added", output_index=index, item=dict(item)))
            out.append(event("response.reasoning_summary_part.added", **where, part={**part, "text": ""}))
            out.extend(
                event("response.reasoning_summary_text.delta", **where, delta=p)
                for p in _pieces(block.thinking, reply.delta_size)
            )
            out.append(event("response.reasoning_summary_text.done", **where, text=block.thinking))
            out.append(event("response.reasoning_summary_part.done", **where, part=part))
            item["summary"] = [part]
        elif isinstance(block, TextSpec):
            item = {"id": _new_id("msg_srv"), "type": "message", "status": "in_progress", "role": "assistant"}
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            part = {"type": "output_text", "annotations": [], "text": block.text}
            out.append(event("response.output_item.added", output_index=index, item={**item, "content": []}))
            out.append(event("response.content_part.added", **where, part={**part, "text": ""}))
            out.extend(
                event("response.output_text.delta", **where, delta=p)
                for p in _pieces(block.text, reply.delta_size)
            )
            out.append(event("response.output_text.done", **where, text=block.text))
            out.append(event("response.content_part.done", **where, part=part))
            item.update(status="completed", content=[part])
        else:
            arguments = _arguments_json(block)
            item = {
                "id": _new_id("fc_srv"),
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": _call_id(block, "call_srv"),
                "name": block.name,
            }
            where = {"item_id": item["id"], "output_index": index}
            out.append(event("response.output_item.added", output_index=index, item=dict(item)))
            out.extend(
                event("response.function_call_arguments.delta", **where, delta=p)
                for p in _pieces(arguments, 16)
            )
            out.append(event("response.function_call_arguments.done", **where, arguments=arguments))
            item.update(status="completed", arguments=arguments)
        out.append(event("response.output_item.done", output_index=index, item=item))
        items.append(item)
    if reply.error is not None:
        error = {"type": reply.error_type, "code": reply.error_type, "message": reply.error, "param": None}
        out.append(event("error", error=error))
        failed = {**response, "status": "failed", "error": {"code": reply.error_type, "message": reply.error}}
        out.append(event("response.failed", response=failed))
        return out
    usage = reply.usage
    prompt = usage.input + usage.cache_read
    final = {
        **response,
        "output": items,
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + usage.output,
        },
    }
    if reply.final_stop_reason() == "length":
        final.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
        out.append(event("response.incomplete", response=final))
    else:
        final["status"] = "completed"
        out.append(event("response.completed", response=final))
    return out


def encode_google(reply: Scripted, model: str, request: Any) -> list[bytes]:
    """Gemini ``streamGenerateContent?alt=sse`` chunks (CRLF framed like the real API): thought
    parts, text parts, whole functionCall parts; finishReason and usageMetadata on the last."""
    response_id = _new_id("srv")
    parts: list[dict[str, Any]] = []
    for block in reply.content_blocks():
        if isinstance(block, ThinkingSpec):
            thoughts: list[dict[str, Any]] = [
                {"text": p, "thought": True} for p in _pieces(block.thinking, reply.delta_size)
            ]
            if thoughts and block.signature is not None:
                thoughts[-1]["thoughtSignature"] = block.signature
            parts.extend(thoughts)
        elif isinstance(block, TextSpec):
            texts: list[dict[str, Any]] = [{"text": p} for p in _pieces(block.text, reply.delta_size)]
            if texts and block.signature is not None:
                texts[0]["thoughtSignature"] = block.signature
            parts.extend(texts)
        else:
            call: dict[str, Any] = {"name": block.name, "args": block.arguments}
            if block.id is not None:
                call["id"] = block.id
            part: dict[str, Any] = {"functionCall": call}
            if block.signature is not None:
                part["thoughtSignature"] = block.signature
            parts.append(part)

    def chunk(part: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate]}
        if usage is not None:
            body["usageMetadata"] = usage
        body.update(modelVersion=model, responseId=response_id)
        return sse_event(body, eol="\r\n")

    if reply.error is not None:
        out = [chunk(part) for part in parts]
        error = {"error": {"code": 500, "message": reply.error, "status": reply.error_type.upper()}}
        out.append(sse_event(error, eol="\r\n"))
        return out
    usage = reply.usage
    prompt = usage.input + usage.cache_read
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage.output,
        "totalTokenCount": prompt + usage.output,
    }
    if usage.cache_read:
        metadata["cachedContentTokenCount"] = usage.cache_read
    finish = {"stop": "STOP", "length": "MAX_TOKENS", "toolUse": "STOP"}[reply.final_stop_reason()]
    last = parts.pop() if parts else {"text": ""}
    out = [chunk(part) for part in parts]
    out.append(chunk(last, finish, metadata))
    return out


ENCODERS: dict[str, Encoder] = {
    "anthropic-messages": encode_anthropic,
    "openai-completions": encode_openai_completions,
    "openai-responses": encode_openai_responses,
    "google-generative-ai": encode_google,
}


def encode(api: str, reply: Scripted, model: str = "m", request: Any = None) -> list[bytes]:
    """The SSE events (bytes each) of ``reply`` in ``api``'s wire format."""
    return ENCODERS[api](reply, reply.model or model, request if request is not None else {})


_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
}
_DEFAULT_MESSAGES = {
    400: "Invalid request",
    401: "Invalid API key",
    404: "Not found",
    429: "Rate limit exceeded",
    529: "Overloaded",
}


def error_body(api: str | None, status: int, message: str = "") -> dict[str, Any]:
    """The JSON error body ``api`` answers with for ``status``."""
    message = message or _DEFAULT_MESSAGES.get(status, "Internal server error")
    if api == "anthropic-messages":
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if api == "google-generative-ai":
        return {
            "error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "INTERNAL")}
        }
    kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


# --- the default reply -----------------------------------------------------------------------------


def _texts(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for part in content or ():
        if isinstance(part, dict) and part.get("type", "text") in kinds and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return texts


def last_user_text(api: str | None, body: Any) -> str:
    """The text of the last user message (with text) in a request body of ``api``."""
    if not isinstance(body, dict):
        return ""
    if api == "google-generative-ai":
        messages, key = body.get("contents") or [], "parts"
    elif api == "openai-responses":
        raw = body.get("input")
        if isinstance(raw, str):
            return raw
        messages, key = raw or [], "content"
    else:
        messages, key = body.get("messages") or [], "content"
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        texts = _texts(message.get(key), ("text", "input_text"))
        if texts:
            return "\n".join(texts)
    return ""


def echo_reply(request: RecordedRequest) -> Scripted:
    """The default reply: ``"echo: <last user text>"``."""
    return Scripted(text=f"echo: {last_user_text(request.api, request.body)}")


# --- the HTTP server -----------------------------------------------------------------------------


def _parse_body(raw: bytes) -> Any:
    """The request's JSON (None when there is none or it is not JSON). orjson first: a long
    session's request is tens of MB, and the stdlib parser made the server, not the client,
    most of a benchmark turn; the stdlib reads what orjson refuses (lone surrogate escapes)."""
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw)
    except ValueError:
        return None


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.connections.add(self.connection)

    def finish(self) -> None:
        self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def _handle(self) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = _parse_body(raw)
        api, path_model = route(split.path)
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        record = RecordedRequest(
            method=self.command,
            path=split.path,
            query=dict(parse_qsl(split.query)),
            headers=headers,
            raw_body=raw,
            body=body,
            api=api,
            model=path_model or (body.get("model") if isinstance(body, dict) else None),
        )
        owner = self.server.owner
        reply: Reply = (
            HttpError(404, message=f"No model API at {split.path}")
            if api is None
            else owner._take_reply(record)
        )
        record.reply = reply
        owner._record(record)
        owner._log(record)
        try:
            self._reply(record, reply)
        except (_ClientGone, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            record.completed = False
            self.close_connection = True
            if not self.server.stopping.is_set():
                record.client_disconnected = True
                record.disconnected_at = time.monotonic()
        finally:
            record.finished.set()

    # --- sending ---

    def _reply(self, record: RecordedRequest, reply: Reply) -> None:
        if reply.first_byte_delay:
            self._wait(reply.first_byte_delay)
        if isinstance(reply, Drop):
            self._cut(record, reply)
            return
        if isinstance(reply, HttpError):
            self._send_error(record, reply)
            return
        if isinstance(reply, Scripted):
            events = encode(record.api or "openai-completions", reply, record.model or "m", record.body)
            content_type = "text/event-stream; charset=utf-8"
        elif isinstance(reply, Recording):
            events = split_events(reply.body())
            content_type = "text/event-stream; charset=utf-8"
        else:
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            events = split_events(data)
            content_type = reply.content_type
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", _new_id("req_srv"))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        record.status = 200  # set before the client can see it
        self.end_headers()
        self._stream(record, reply, events)

    def _send_error(self, record: RecordedRequest, reply: HttpError) -> None:
        body = reply.body if reply.body is not None else error_body(record.api, reply.status, reply.message)
        if isinstance(body, dict):
            data = json.dumps(body).encode()
            content_type = "application/json"
        else:
            data = body.encode() if isinstance(body, str) else body
            content_type = "application/json" if data[:1] in (b"{", b"[") else "text/plain; charset=utf-8"
        self.send_response(reply.status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        record.status = reply.status  # the flags are set before the client can see the end
        record.bytes_sent = len(data)
        record.completed = True
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, record: RecordedRequest, reply: Delivery, events: list[bytes]) -> None:
        for index, event in enumerate(events):
            if reply.cut_after_events is not None and index >= reply.cut_after_events:
                self._cut(record, reply)
                return
            if index and reply.event_delay:
                self._wait(reply.event_delay)
            if reply.cut_after_bytes is not None and record.bytes_sent + len(event) > reply.cut_after_bytes:
                self._write(record, reply, event[: max(reply.cut_after_bytes - record.bytes_sent, 0)])
                self._cut(record, reply)
                return
            self._write(record, reply, event)
            record.events_sent += 1
        if reply.cut_after_events is not None or reply.cut_after_bytes is not None:
            self._cut(record, reply)  # asked to cut, but the stream was shorter: cut before the end
            return
        record.completed = True  # before the client can see the end (undone if the write fails)
        self.wfile.write(b"0\r\n\r\n")

    def _write(self, record: RecordedRequest, reply: Delivery, data: bytes) -> None:
        size = reply.chunk_size or len(data) or 1
        for start in range(0, len(data), size):
            if start and reply.chunk_delay:
                self._wait(reply.chunk_delay)
            piece = data[start : start + size]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            record.bytes_sent += len(piece)

    def _cut(self, record: RecordedRequest, reply: Delivery) -> None:
        record.cut = True
        self.close_connection = True
        sock = self.connection
        with contextlib.suppress(OSError):
            if reply.cut_mode == "reset":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
            else:
                sock.shutdown(socket.SHUT_RDWR)

    def _wait(self, seconds: float) -> None:
        """Sleep, but notice at once when the client hangs up or the server stops."""
        end = time.monotonic() + seconds
        sock = self.connection
        while True:
            if self.server.stopping.is_set():
                raise _ClientGone
            remaining = end - time.monotonic()
            if remaining <= 0:
                return
            readable, _, _ = select.select([sock], [], [], min(remaining, 0.05))
            if readable:
                try:
                    peeked = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    peeked = b""
                if not peeked:
                    raise _ClientGone
                time.sleep(min(remaining, 0.05))  # the client sent more (pipelining): just wait


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ModelServer) -> None:
        self.owner = owner
        self.stopping = threading.Event()
        self.connections: set[socket.socket] = set()
        super().__init__(address, _Handler)


class ModelServer:
    """A fake model provider on 127.0.0.1 (see the module docstring).

    ``replies`` are served in order, one per request; then ``default`` (a reply, or a callable
    of the :class:`RecordedRequest`; :func:`echo_reply` when None) answers everything.
    """

    def __init__(
        self,
        *replies: Reply | ReplyFactory,
        default: Reply | ReplyFactory | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.host = host
        self._port = port
        self.default: Reply | ReplyFactory = default if default is not None else echo_reply
        self._queue: deque[Reply | ReplyFactory] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._log_line = log

    # --- lifecycle ---

    def start(self) -> ModelServer:
        if self._server is None:
            self._server = _Server((self.host, self._port), self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.01},
                daemon=True,
                name=f"model-server-{self.port}",
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        for sock in list(server.connections):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not running"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the ``baseUrl`` for every API kind."""
        return f"http://{self.host}:{self.port}"

    # --- replies ---

    def queue(self, *replies: Reply | ReplyFactory) -> None:
        """Add replies to the end of the queue."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._queue)

    def _take_reply(self, record: RecordedRequest) -> Reply:
        with self._lock:
            reply = self._queue.popleft() if self._queue else self.default
        if isinstance(reply, REPLY_TYPES):
            return reply
        try:
            made = reply(record)
        except Exception as error:  # show the test's mistake to the client instead of a dropped line
            return HttpError(500, message=f"model server: the reply factory failed: {error!r}")
        if not isinstance(made, REPLY_TYPES):
            return HttpError(500, message=f"model server: the reply factory returned {made!r}")
        return made

    # --- requests ---

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            assert self._requests, "no request yet"
            return self._requests[-1]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)
            self._lock.notify_all()

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``count`` requests arrived; raises TimeoutError otherwise."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"expected {count} requests, got {len(self._requests)}")
            return list(self._requests)

    async def wait_for_requests_async(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """:meth:`wait_for_requests` without blocking the event loop."""
        return await asyncio.to_thread(self.wait_for_requests, count, timeout)

    def _log(self, record: RecordedRequest) -> None:
        if self._log_line is not None:
            kind = type(record.reply).__name__
            self._log_line(f"{record.method} {record.path} [{record.api}] model={record.model} -> {kind}")

    # --- configuration helpers ---

    def model(self, api: str = "openai-completions", id: str = "m", **fields: Any) -> Model:
        """A pi_tui :class:`Model` of provider ``test`` pointing at this server."""
        from pi_tui.ai.types import Model

        values: dict[str, Any] = {"id": id, "api": api, "provider": "test", "base_url": self.base_url}
        values.update(fields)
        return Model(**values)

    def models_json(
        self,
        provider: str = "test",
        api: str = "openai-completions",
        models: list[dict[str, Any]] | None = None,
        api_key: str = "test-key",
    ) -> dict[str, Any]:
        """A pi ``models.json`` document with one provider served here."""
        return {
            "providers": {
                provider: {
                    "baseUrl": self.base_url,
                    "api": api,
                    "apiKey": api_key,
                    "models": models if models is not None else [{"id": "m", "name": "Test model"}],
                }
            }
        }


# --- pytest fixture ------------------------------------------------------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover - the CLI without pytest installed
    pass
else:

    @pytest.fixture
    def model_server() -> Iterator[ModelServer]:
        """A started :class:`ModelServer` (import this name into a test module or conftest)."""
        with ModelServer() as server:
            yield server


# --- replies from JSON (the CLI's script) --------------------------------------------------------

_REPLY_KINDS: dict[str, type[Any]] = {
    "scripted": Scripted,
    "text": Scripted,
    "recording": Recording,
    "raw": RawStream,
    "error": HttpError,
    "http_error": HttpError,
    "drop": Drop,
}


def reply_from_dict(data: dict[str, Any]) -> Reply:
    """A reply from JSON, e.g. ``{"type": "error", "status": 429, "headers": {"Retry-After": "1"}}``,
    ``{"type": "scripted", "text": "hi", "tool_calls": [{"name": "read", "arguments": {...}}]}``,
    ``{"type": "recording", "name": "openai/chat-text-usage-gpt4o.sse", "chunk_size": 20}``."""
    values = dict(data)
    kind = values.pop("type", "scripted")
    cls = _REPLY_KINDS.get(kind)
    if cls is None:
        raise ValueError(f"unknown reply type {kind!r}; known: {', '.join(_REPLY_KINDS)}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"unknown field(s) for a {kind} reply: {', '.join(sorted(unknown))}")
    if "tool_calls" in values:
        values["tool_calls"] = [ToolCallSpec(**call) for call in values["tool_calls"]]
    if "usage" in values:
        values["usage"] = ScriptUsage(**values["usage"])
    if "blocks" in values:
        values["blocks"] = [_block_from_dict(block) for block in values["blocks"]]
    return cls(**values)  # type: ignore[no-any-return]


def _block_from_dict(data: dict[str, Any]) -> Block:
    values = dict(data)
    kind = values.pop("type", "text")
    if kind == "text":
        return TextSpec(**values)
    if kind == "thinking":
        return ThinkingSpec(**values)
    if kind in ("toolCall", "tool_call"):
        return ToolCallSpec(**values)
    raise ValueError(f"unknown block type {kind!r}")


def load_script(path: Path) -> tuple[list[Reply], Reply | None]:
    """A script file: a JSON list of replies, or ``{"replies": [...], "default": {...}}``."""
    data = json.loads(path.read_text())
    if isinstance(data, list):
        data = {"replies": data}
    replies = [reply_from_dict(item) for item in data.get("replies", [])]
    default = reply_from_dict(data["default"]) if data.get("default") else None
    return replies, default


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.support.model_server [--port 0] [--script FILE]``: print the base URL
    on stdout, log each request on stderr, serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.model_server", description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, help="JSON list of replies (see reply_from_dict)")
    parser.add_argument("--quiet", action="store_true", help="do not log requests")
    args = parser.parse_args(argv)
    replies, default = load_script(args.script) if args.script else ([], None)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    server = ModelServer(
        *replies, default=default, host=args.host, port=args.port, log=None if args.quiet else log
    )
    with server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
