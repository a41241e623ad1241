"""Mistral (pi's ``mistral-conversations`` API kind): Mistral's own chat completions stream.

The name is pi's; what pi 1.5.2 sends under it is ``POST {baseUrl}/v1/chat/completions`` on
``https://api.mistral.ai`` (the base URL carries no ``/v1``), with Mistral's wire shapes rather
than OpenAI's, which is why this is not :mod:`pi_tui.ai.openai_completions` with a compat flag:

- user images are ``{"type": "image_url", "image_url": "data:..."}`` (a string, not an object);
- an assistant message is ``{"role": "assistant", "prefix": false, "content": [parts]}`` where
  its own thinking goes back as a ``thinking`` part (Mistral rejects thinking it cannot pair),
  blank text and thinking are left out, and every tool call carries ``"index": 0``;
- a tool result is one ``tool`` message with its tool's ``name`` and a list of parts: the text
  (``[tool error] `` before an error's; a placeholder when there is none), then its images;
- tool call ids are 9 letters and digits: another model's ids are renamed (pi's hash, unique
  within the request), and the results follow;
- thinking: a model with a ``thinkingLevelMap`` gets ``reasoning_effort`` (the map's value; its
  ``off`` value when thinking is off), any other reasoning model ``prompt_mode: "reasoning"``;
- the session id is ``prompt_cache_key`` and the ``x-affinity`` header (so a conversation lands
  where its prompt is cached) unless a configured header already sets one.

Stream: ``data:`` chunks of ``choices[0].delta`` whose ``content`` is a string or a list of
``text`` / ``thinking`` parts, ``tool_calls`` (whole or in pieces, keyed by ``index``; an id of
``"null"`` gets one made up as pi makes it), ``finish_reason`` (``stop``, ``length`` /
``model_length``, ``tool_calls``, ``error``), usage on the last chunk, ``[DONE]``. A stream that
ends without a finish reason failed.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from pi_tui import jsonio
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError, lenient_json
from pi_tui.ai.openai_responses import short_hash
from pi_tui.ai.protocol import HttpRequest, ParserBase
from pi_tui.ai.thinking import request_level
from pi_tui.ai.transform import transform_messages
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.ai.wire import data_url, stream_headers
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

API = "mistral-conversations"
TOOL_CALL_ID_LENGTH = 9
NO_IMAGES_NOTE = "(image omitted: model does not support images)"
TOOL_IMAGE_NOTE = "[tool image omitted: model does not support images]"
ERROR_PREFIX = "[tool error] "
FINISH_REASONS = {"stop": "stop", "length": "length", "model_length": "length", "tool_calls": "toolUse"}
_NOT_ALPHANUMERIC = re.compile(r"[^a-zA-Z0-9]")


class MistralClient:
    api = API

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        return HttpRequest(
            url=endpoint(model.base_url),
            headers=request_headers(model, options),
            body=request_body(model, context, options),
        )

    def parser(self, builder: MessageBuilder) -> MistralParser:
        return MistralParser(builder)


# --- request ----------------------------------------------------------------------------------


def endpoint(base_url: str) -> str:
    """``{baseUrl}/v1/chat/completions``: pi resolves ``v1/chat/completions`` against the base."""
    return base_url.rstrip("/") + "/v1/chat/completions"


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    headers = stream_headers(model, options)
    configured = {name.lower() for name in (*model.headers, *options.headers)}
    if options.session_id and "x-affinity" not in configured:
        headers["x-affinity"] = options.session_id
    return headers


def request_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model.id, "stream": True, "messages": convert_messages(model, context)}
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": False,
                },
            }
            for tool in context.tools
        ]
    if options.temperature is not None:
        body["temperature"] = options.temperature
    body["max_tokens"] = options.max_tokens or model.max_tokens
    body.update(thinking_fields(model, options.thinking))
    if options.session_id:
        body["prompt_cache_key"] = options.session_id
    return body


def thinking_fields(model: Model, thinking: str) -> dict[str, Any]:
    """``reasoning_effort`` for a model whose map names its efforts, ``prompt_mode`` for other
    reasoning models (pi 1.5.2's rule); nothing for a model that does not think."""
    if not model.reasoning:
        return {}
    level = request_level(model, thinking)
    table = model.thinking_level_map
    if table is None:
        return {"prompt_mode": "reasoning"} if level is not None else {}
    effort = (table.get(level) or "high") if level is not None else table.get("off")
    return {"reasoning_effort": effort} if effort else {}


class ToolCallIds:
    """Another model's tool call ids as Mistral takes them: 9 letters and digits, each id always
    mapped to the same one and no two ids to one (pi's scheme, so both send the same ids)."""

    def __init__(self) -> None:
        self.forward: dict[str, str] = {}
        self.owner: dict[str, str] = {}

    def __call__(self, call_id: str, _model: Model | None = None, _source: Any = None) -> str:
        known = self.forward.get(call_id)
        if known is not None:
            return known
        attempt = 0
        while True:
            candidate = derive_tool_call_id(call_id, attempt)
            owner = self.owner.get(candidate)
            if owner is None or owner == call_id:
                self.forward[call_id] = candidate
                self.owner[candidate] = call_id
                return candidate
            attempt += 1


def derive_tool_call_id(call_id: str, attempt: int = 0) -> str:
    """The id itself when it already is 9 letters and digits, else a hash of it (and the attempt)."""
    plain = _NOT_ALPHANUMERIC.sub("", call_id)
    if attempt == 0 and len(plain) == TOOL_CALL_ID_LENGTH:
        return plain
    seed = plain or call_id
    if attempt:
        seed = f"{seed}:{attempt}"
    return _NOT_ALPHANUMERIC.sub("", short_hash(seed))[:TOOL_CALL_ID_LENGTH]


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """The system prompt, then every message in Mistral's shapes (after transform_messages)."""
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        out.append({"role": "system", "content": context.system_prompt})
    supports_images = "image" in model.input
    for message in transform_messages(context.messages, model, ToolCallIds()):
        if isinstance(message, UserMessage):
            converted = _user(message, supports_images)
        elif isinstance(message, AssistantMessage):
            converted = _assistant(message)
        else:
            converted = _tool_result(message, supports_images)
        if converted is not None:
            out.append(converted)
    return out


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": data_url(image)}


def _user(message: UserMessage, supports_images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": message.content}
    parts: list[dict[str, Any]] = []
    had_images = False
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            had_images = True
            if supports_images:
                parts.append(_image_part(block))
    if parts:
        return {"role": "user", "content": parts}
    return {"role": "user", "content": NO_IMAGES_NOTE} if had_images else None


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                parts.append({"type": "thinking", "thinking": [{"type": "text", "text": block.thinking}]})
        elif isinstance(block, ToolCall):
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": jsonio.dumps(block.arguments).decode()},
                    "index": 0,
                }
            )
    if not parts and not calls:
        return None
    converted: dict[str, Any] = {"role": "assistant", "prefix": False}
    if parts:
        converted["content"] = parts
    if calls:
        converted["tool_calls"] = calls
    return converted


def _tool_result(message: ToolResultMessage, supports_images: bool) -> dict[str, Any]:
    text = "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    images = [block for block in message.content if isinstance(block, ImageContent)]
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": tool_result_text(text, bool(images), supports_images, message.is_error)}
    ]
    if supports_images:
        parts.extend(_image_part(image) for image in images)
    return {"role": "tool", "name": message.tool_name, "content": parts, "tool_call_id": message.tool_call_id}


def tool_result_text(text: str, has_images: bool, supports_images: bool, is_error: bool) -> str:
    """A result's text as pi words it: never empty (Mistral rejects that), errors marked."""
    prefix = ERROR_PREFIX if is_error else ""
    trimmed = text.strip()
    if trimmed:
        note = "\n" + TOOL_IMAGE_NOTE if has_images and not supports_images else ""
        return f"{prefix}{trimmed}{note}"
    if has_images:
        return prefix + ("(see attached image)" if supports_images else NO_IMAGES_NOTE)
    return prefix + "(no tool output)"


# --- stream -----------------------------------------------------------------------------------


class MistralParser(ParserBase):
    """Mistral chunks -> builder calls (choice 0 only)."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.prose: int | None = None  # the open text or thinking block
        self.calls: dict[Any, int] = {}  # the wire's tool call index (or id) -> block
        self.finish: str | None = None

    def on_event(self, event: str, data: str) -> None:
        if data == "[DONE]":
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            chunk = lenient_json(data)
        if not isinstance(chunk, dict):
            raise ProviderError(f"Unexpected data in the Mistral stream: {data[:200]}")
        if not isinstance(chunk.get("choices"), list):
            raise ProviderError(_error_text(chunk))
        builder = self.builder
        builder.start()
        if builder.response_id is None and isinstance(chunk.get("id"), str) and chunk["id"]:
            builder.response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        choices = chunk["choices"]
        choice = choices[0] if choices and isinstance(choices[0], dict) else None
        if choice is None:
            return
        if choice.get("finish_reason"):
            self.finish = str(choice["finish_reason"])
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if isinstance(content, str):
            self._prose("text", content)
        elif isinstance(content, list):
            for part in content:
                self._part(part)
        for call in delta.get("tool_calls") or ():
            if isinstance(call, dict):
                self._tool_call(call)

    def end(self) -> None:
        if self.finish is None:
            raise ProviderError(
                "Mistral stream ended without a finish reason", retryable=not self.builder.has_output
            )
        reason = FINISH_REASONS.get(self.finish)
        if reason is None:
            detail = "error (server error)" if self.finish == "error" else self.finish
            self.builder.fail(f"Provider stopped with: {detail}")
            return
        self.builder.finish(reason)

    def _part(self, part: Any) -> None:
        if isinstance(part, str):
            self._prose("text", part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind == "text":
                self._prose("text", part.get("text") or "")
            elif kind == "thinking":
                pieces = part.get("thinking") or ()
                texts = [p.get("text") or "" for p in pieces if isinstance(p, dict)]
                self._prose("thinking", "".join(texts))

    def _prose(self, kind: str, text: str) -> None:
        """Text or thinking; empty pieces open nothing (GLM on Mistral sends them around
        thinking and calls, and a split thinking block is rejected when sent back)."""
        if text:
            self.prose = self.builder.append_prose(kind, text)

    def _tool_call(self, call: dict[str, Any]) -> None:
        builder = self.builder
        if self.prose is not None:
            builder.end(self.prose)
            self.prose = None
        wire_index = call.get("index")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id == "null":
            call_id = derive_tool_call_id(f"toolcall:{wire_index if isinstance(wire_index, int) else 0}")
        key = wire_index if wire_index is not None else call_id
        function = call.get("function") or {}
        block = self.calls.get(key)
        if block is None:
            block = builder.toolcall_start(call_id, str(function.get("name") or ""))
            self.calls[key] = block
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = jsonio.dumps(arguments or {}).decode()
        builder.toolcall_delta(block, arguments)

    def _usage(self, usage: dict[str, Any]) -> None:
        prompt = _count(usage.get("prompt_tokens"))
        cached = min(prompt, _cached_tokens(usage))
        self.builder.set_usage(
            input=prompt - cached, output=_count(usage.get("completion_tokens")), cache_read=cached
        )


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and value > 0 else 0


def _cached_tokens(usage: dict[str, Any]) -> int:
    """Cached prompt tokens under any of the names Mistral's API and SDK use."""
    for outer, inner in (
        ("promptTokensDetails", "cachedTokens"),
        ("prompt_tokens_details", "cached_tokens"),
        ("promptTokenDetails", "cachedTokens"),
        ("prompt_token_details", "cached_tokens"),
    ):
        details = usage.get(outer)
        if isinstance(details, dict) and details.get(inner) is not None:
            return _count(details[inner])
    for name in ("numCachedTokens", "num_cached_tokens"):
        if usage.get(name) is not None:
            return _count(usage[name])
    return 0


def _error_text(chunk: dict[str, Any]) -> str:
    """An event that is no completion chunk: Mistral's error object, or the event itself."""
    error = chunk.get("error", chunk)
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail")
        if isinstance(message, str) and message:
            code = error.get("code") or error.get("type")
            return f"Mistral API error: {message}" + (f" ({code})" if code else "")
    return f"Invalid Mistral streaming event: {orjson.dumps(chunk).decode()[:200]}"


CLIENT = MistralClient()
