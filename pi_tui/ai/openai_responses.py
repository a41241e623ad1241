"""OpenAI Responses API (``POST {baseUrl}/responses``): output items, reasoning, function calls.

Request: pi's shapes. The conversation is a flat list of input items: the system prompt
(``developer`` role for reasoning models), user messages as ``input_text`` / ``input_image``
parts, assistant text as completed ``message`` items, reasoning items sent back verbatim (pi
keeps the whole item, encrypted content included, as the thinking signature, because with
``store: false`` the server remembers nothing between turns), ``function_call`` items and
``function_call_output`` results. pi stores a call's id as ``"<call_id>|<item id>"``: the
Responses API needs both halves to pair a call with its result and its reasoning item.

Stream: every event's JSON carries its own ``type`` (OpenRouter sends no ``event:`` lines and
ends with ``[DONE]``), so we dispatch on that. Each output item becomes one block; deltas find
their block by ``output_index`` (then ``item_id``), because items may interleave. The final
``output_item.done`` is authoritative: it settles the block's text, arguments and signature.
``response.completed`` / ``response.incomplete`` carry usage and the stop reason; ``error`` and
``response.failed`` raise :class:`ProviderError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from pi_tui import jsonio
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError, lenient_json
from pi_tui.ai.protocol import HttpRequest, ParserBase
from pi_tui.ai.thinking import provider_value, request_level
from pi_tui.ai.transform import sanitize_id, transform_messages
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.ai.wire import data_url, images_of, sampling_params, stream_headers, text_of
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

IMAGE_ONLY_RESULT = "(see attached image)"
PART_SEPARATOR = "\n\n"
MAX_ID_LENGTH = 64
RETRYABLE_CODES = frozenset({"rate_limit_exceeded", "server_error", "overloaded", "server_is_overloaded"})
OVERFLOW_CODES = frozenset({"context_length_exceeded"})
TERMINAL_EVENTS = ("response.completed", "response.incomplete")


class OpenAIResponsesClient:
    api = "openai-responses"

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        return HttpRequest(
            url=model.base_url.rstrip("/") + "/responses",
            headers=request_headers(model, options),
            body=request_body(model, context, options),
        )

    def parser(self, builder: MessageBuilder) -> ResponsesParser:
        return ResponsesParser(builder)


# --- request ----------------------------------------------------------------------------------


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    return stream_headers(model, options)


def request_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model.id, "input": convert_input(model, context)}
    body["stream"] = True
    body["store"] = False  # nothing is kept server-side; reasoning travels back in the input
    # pi 1.x's compat: promptCacheKeyMode "disabled" and supportsMaxOutputTokens false are for
    # proxies that reject those fields.
    if options.session_id and model.compat.get("promptCacheKeyMode") != "disabled":
        body["prompt_cache_key"] = options.session_id
    max_tokens = options.max_tokens or model.max_tokens
    if max_tokens and model.compat.get("supportsMaxOutputTokens") is not False:
        body["max_output_tokens"] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": False,
            }
            for tool in context.tools
        ]
    level = request_level(model, options.thinking)  # xhigh / max only where the model has them
    if level is not None:
        body["reasoning"] = {"effort": provider_value(model, level), "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    body.update(sampling_params(model, options.thinking))  # models.json's samplingParams, last
    return body


OPENAI_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
"""Providers whose ``call|item`` ids pi keeps in two halves when they come from another model."""


def short_hash(value: str) -> str:
    """pi's short deterministic hash (two 32-bit multiply-xor lanes over UTF-16 code units,
    base 36), so a shortened id is the one pi would send for the same session."""

    def imul(a: int, b: int) -> int:
        return (a * b) & 0xFFFFFFFF

    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = value.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        unit = units[i] | units[i + 1] << 8
        h1 = imul(h1 ^ unit, 2654435761)
        h2 = imul(h2 ^ unit, 1597334677)
    h1 = imul(h1 ^ (h1 >> 16), 2246822507) ^ imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = imul(h2 ^ (h2 >> 16), 2246822507) ^ imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2) + _base36(h1)


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def _id_part(part: str) -> str:
    return sanitize_id(part, MAX_ID_LENGTH).rstrip("_")


def normalize_tool_call_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    """Another model's call id as the Responses API takes it (pi's rule).

    On OpenAI's own providers a ``call|item`` id keeps both halves: the item half of another
    provider's or API's call becomes ``fc_<hash>`` (the API wants ``fc`` item ids it can pair),
    a same-provider one is only sanitised. Everywhere else the id is sanitised whole.
    """
    if model.provider not in OPENAI_TOOL_CALL_PROVIDERS or "|" not in call_id:
        return _id_part(call_id)
    pieces = call_id.split("|")
    call_part, item_part = pieces[0], pieces[1]
    if source.provider != model.provider or source.api != model.api:
        item = ("fc_" + short_hash(item_part))[:MAX_ID_LENGTH]
    else:
        item = _id_part(item_part)
    if not item.startswith("fc_"):
        item = _id_part("fc_" + item)
    return f"{_id_part(call_part)}|{item}"


def convert_input(model: Model, context: Context) -> list[dict[str, Any]]:
    """Context -> the Responses ``input`` list (pi's exact item shapes, after transform_messages).

    A text item with no id of its own is named after its message's position, counted as pi counts
    it: messages that produce nothing do not count.
    """
    items: list[dict[str, Any]] = []
    if context.system_prompt:
        role = (
            "developer"
            if model.reasoning and model.compat.get("supportsDeveloperRole") is not False
            else "system"
        )
        items.append({"role": role, "content": context.system_prompt})
    supports_images = "image" in model.input
    position = 0
    for message in transform_messages(context.messages, model, normalize_tool_call_id):
        if isinstance(message, UserMessage):
            converted = _user_item(message)
            if converted is None:
                continue
            items.append(converted)
        elif isinstance(message, AssistantMessage):
            output = _assistant_items(model, message, position)
            if not output:
                continue
            items.extend(output)
        elif isinstance(message, ToolResultMessage):
            items.append(_tool_result_item(message, supports_images))
        position += 1
    return items


def _user_item(message: UserMessage) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": message.content}]}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None  # the API rejects empty content


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": data_url(image)}


def _assistant_items(model: Model, message: AssistantMessage, position: int) -> list[dict[str, Any]]:
    """One assistant message -> its output items, in block order.

    Thinking left here is this model's own (transform_messages left other models' thinking
    out): its stored reasoning item goes back verbatim. A call of another model on the same
    provider and API loses its ``fc_`` item id: OpenAI checks that the id was paired with a
    reasoning item it knows.
    """
    other_model = (
        message.model != model.id and message.provider == model.provider and message.api == model.api
    )
    items: list[dict[str, Any]] = []
    texts = 0
    for block in message.content:
        if isinstance(block, ThinkingContent):
            reasoning = _reasoning_item(block)
            if reasoning is not None:
                items.append(reasoning)
        elif isinstance(block, TextContent):
            fallback = f"msg_pi_{position}" if texts == 0 else f"msg_pi_{position}_{texts}"
            items.append(_text_item(block.text, block.text_signature, fallback))
            texts += 1
        elif isinstance(block, ToolCall):
            items.append(_function_call_item(block, drop_fc_id=other_model))
    return items


def _reasoning_item(block: ThinkingContent) -> dict[str, Any] | None:
    """The reasoning item pi stored as the signature, or None if there is none (or it is no JSON)."""
    if not block.thinking_signature:
        return None
    try:
        item = orjson.loads(block.thinking_signature)
    except orjson.JSONDecodeError:
        return None
    return item if isinstance(item, dict) else None


def _text_item(text: str, signature: str | None, fallback: str) -> dict[str, Any]:
    """``fallback`` names a text with no item id of its own (pi 1.x's ``msg_pi_<n>[_<k>]``)."""
    item_id, phase = _parse_text_signature(signature)
    if not item_id:
        item_id = fallback
    elif len(item_id) > MAX_ID_LENGTH:
        item_id = "msg_" + short_hash(item_id)
    item: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
        "status": "completed",
        "id": item_id,
    }
    if phase:
        item["phase"] = phase
    return item


def _parse_text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """(item id, phase) from a text signature: pi's ``{"v":1,"id":...,"phase":...}`` or a plain id."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = orjson.loads(signature)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _function_call_item(call: ToolCall, *, drop_fc_id: bool) -> dict[str, Any]:
    pieces = call.id.split("|")
    item: dict[str, Any] = {"type": "function_call"}
    item_id = pieces[1] if len(pieces) > 1 else None
    if item_id is not None and item_id.startswith("fc_") and not drop_fc_id:
        item["id"] = item_id  # pi 1.x sends no other: a function_call's item id must be fc_*
    item["call_id"] = pieces[0]
    item["name"] = call.name
    item["arguments"] = jsonio.dumps(call.arguments).decode()
    return item


def _tool_result_item(message: ToolResultMessage, supports_images: bool) -> dict[str, Any]:
    """A result's text; with images (to a model that sees them) a list of input parts instead."""
    text = text_of(message.content)
    images = images_of(message.content)
    output: str | list[dict[str, Any]]
    if images and supports_images:
        output = [{"type": "input_text", "text": text}] if text else []
        output.extend(_image_part(image) for image in images)
    else:
        output = text or IMAGE_ONLY_RESULT
    return {"type": "function_call_output", "call_id": message.tool_call_id.split("|")[0], "output": output}


# --- stream -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    """What the parser remembers about one output item's block."""

    block: int
    kind: str  # "text" | "thinking" | "toolCall"
    source: str = ""  # thinking: "summary" or "content", whichever streamed first
    part: int | None = None  # index of the summary/content part being streamed


class ResponsesParser(ParserBase):
    """Responses stream events -> builder calls."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.by_output: dict[int, _Item] = {}
        self.by_item_id: dict[str, _Item] = {}
        self.stop: str | None = None

    def on_event(self, event: str, data: str) -> None:
        if data == "[DONE]":
            return
        self.on_payload(event, _load(data))

    def on_payload(self, event: str, payload: dict[str, Any]) -> None:
        """One event's parsed JSON (a subclass for a server's own events hooks in here)."""
        kind = payload.get("type") or event
        if kind == "error" or (kind == "message" and payload.get("error")):  # bare {"error": ...}
            raise _stream_error(payload.get("error") or payload)
        if kind == "response.failed":
            raise _failed_error(payload.get("response") or {})
        handler = self._HANDLERS.get(kind)
        if handler is not None:
            self.builder.start()
            handler(self, payload)

    def end(self) -> None:
        """Finish with the stop reason of the terminal event; without one the reply is cut off."""
        if self.stop is None:
            raise ProviderError(
                "The stream ended before the response was complete",
                retryable=not self.builder.has_output,
            )
        self.builder.finish(self.stop)

    # --- response lifecycle -------------------------------------------------------------------

    def _created(self, payload: dict[str, Any]) -> None:
        response_id = (payload.get("response") or {}).get("id")
        if isinstance(response_id, str):
            self.builder.response_id = response_id

    def _completed(self, payload: dict[str, Any]) -> None:
        response = payload.get("response") or {}
        self._created(payload)
        usage = response.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        status = response.get("status")
        if status == "incomplete" or payload.get("type") == "response.incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason")
            if reason == "content_filter":
                raise ProviderError("The provider stopped the reply (content_filter)")
            self.stop = "length"
        else:
            self.stop = "stop"  # the builder turns it into toolUse when calls were made

    def _usage(self, usage: dict[str, Any]) -> None:
        """OpenAI counts cached tokens inside ``input_tokens``; pi keeps them apart."""
        details = usage.get("input_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        self.builder.set_usage(
            input=max(int(usage.get("input_tokens") or 0) - cached, 0),
            output=int(usage.get("output_tokens") or 0),
            cache_read=cached,
        )

    # --- output items ---------------------------------------------------------------------------

    def _item_added(self, payload: dict[str, Any]) -> None:
        item = payload.get("item") or {}
        kind = item.get("type")
        builder = self.builder
        if kind == "message":
            self._remember(payload, item, _Item(builder.text_start(), "text"))
        elif kind == "reasoning":
            self._remember(payload, item, _Item(builder.thinking_start(), "thinking"))
        elif kind == "function_call":
            block = builder.toolcall_start(_call_id(item), item.get("name") or "")
            self._remember(payload, item, _Item(block, "toolCall"))
            arguments = item.get("arguments")
            if isinstance(arguments, str) and arguments:
                builder.toolcall_delta(block, arguments)

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = payload.get("item") or {}
        kind = item.get("type")
        if kind == "message":
            found = self._find(payload, "text")
            self._settle_text(found.block, _message_text(item))
            if isinstance(item.get("id"), str):
                self.builder.set_signature(found.block, item["id"])
        elif kind == "reasoning":
            found = self._find(payload, "thinking")
            self._settle_text(found.block, _reasoning_text(item, found.source))
            self.builder.set_signature(found.block, orjson.dumps(item).decode())
        elif kind == "function_call":
            found = self._find(payload, "toolCall")
            self._settle_call(found.block, item)
        else:
            return
        self.builder.end(found.block)

    def _remember(self, payload: dict[str, Any], item: dict[str, Any], found: _Item) -> _Item:
        output_index = payload.get("output_index")
        if isinstance(output_index, int):
            self.by_output[output_index] = found
        if isinstance(item.get("id"), str):
            self.by_item_id[item["id"]] = found
        return found

    def _find(self, payload: dict[str, Any], kind: str) -> _Item:
        """The open item an event belongs to; opened here if its ``added`` event never came."""
        output_index = payload.get("output_index")
        found = self.by_output.get(output_index) if isinstance(output_index, int) else None
        if found is None or found.kind != kind:
            item_id = payload.get("item_id") or (payload.get("item") or {}).get("id")
            found = self.by_item_id.get(item_id) if isinstance(item_id, str) else None
        if found is not None and found.kind == kind:
            return found
        builder = self.builder
        if kind == "text":
            block = builder.text_start()
        elif kind == "thinking":
            block = builder.thinking_start()
        else:
            item = payload.get("item") or {}
            block = builder.toolcall_start(_call_id(item), item.get("name") or "")
        item = payload.get("item") or {"id": payload.get("item_id")}
        return self._remember(payload, item, _Item(block, kind))

    # --- deltas -----------------------------------------------------------------------------------

    def _text_delta(self, payload: dict[str, Any]) -> None:
        found = self._find(payload, "text")
        self.builder.text_delta(found.block, _str(payload.get("delta")))

    def _summary_delta(self, payload: dict[str, Any]) -> None:
        self._thinking_delta(payload, "summary", payload.get("summary_index"))

    def _reasoning_text_delta(self, payload: dict[str, Any]) -> None:
        self._thinking_delta(payload, "content", payload.get("content_index"))

    def _thinking_delta(self, payload: dict[str, Any], source: str, part: Any) -> None:
        """Summary parts (or raw reasoning parts) join with a blank line, as pi shows them.

        A block streams from one source only: a server sending both summary and raw reasoning
        would otherwise interleave two texts.
        """
        found = self._find(payload, "thinking")
        delta = _str(payload.get("delta"))
        if not delta:
            return
        if found.source and found.source != source:
            return
        found.source = source
        if found.part is not None and part != found.part:
            self.builder.thinking_delta(found.block, PART_SEPARATOR)
        found.part = part
        self.builder.thinking_delta(found.block, delta)

    def _arguments_delta(self, payload: dict[str, Any]) -> None:
        found = self._find(payload, "toolCall")
        self.builder.toolcall_delta(found.block, _str(payload.get("delta")))

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            self._settle_arguments(self._find(payload, "toolCall").block, arguments)

    # --- settling a block to the item's final state -------------------------------------------

    def _settle_text(self, index: int, final: str) -> None:
        """Make the block's text equal the item's final text (streamed text is usually equal)."""
        block = self.builder.blocks[index]
        current = block.text()
        if not final or final == current:
            return
        if final.startswith(current):
            delta = final[len(current) :]
            if block.kind == "text":
                self.builder.text_delta(index, delta)
            else:
                self.builder.thinking_delta(index, delta)
        else:
            block.parts[:] = [final]

    def _settle_call(self, index: int, item: dict[str, Any]) -> None:
        block = self.builder.blocks[index]
        if item.get("call_id"):
            block.call_id = _call_id(item)
        if item.get("name"):
            block.name = item["name"]
        arguments = item.get("arguments")
        if isinstance(arguments, str):
            self._settle_arguments(index, arguments)

    def _settle_arguments(self, index: int, final: str) -> None:
        block = self.builder.blocks[index]
        streamed = block.json.text if block.json is not None else None
        if streamed is None or final == streamed:
            return
        if final.startswith(streamed):
            self.builder.toolcall_delta(index, final[len(streamed) :])
            return
        try:
            parsed = orjson.loads(final) if final.strip() else {}
        except orjson.JSONDecodeError:
            return
        if isinstance(parsed, dict):
            self.builder.toolcall_set_arguments(index, parsed)

    _HANDLERS: dict[str, Callable[[ResponsesParser, dict[str, Any]], None]] = {
        "response.created": _created,
        "response.in_progress": _created,
        "response.output_item.added": _item_added,
        "response.output_item.done": _item_done,
        "response.output_text.delta": _text_delta,
        "response.refusal.delta": _text_delta,
        "response.reasoning_summary_text.delta": _summary_delta,
        "response.reasoning_text.delta": _reasoning_text_delta,
        "response.function_call_arguments.delta": _arguments_delta,
        "response.function_call_arguments.done": _arguments_done,
        **dict.fromkeys(TERMINAL_EVENTS, _completed),
    }


# --- helpers ----------------------------------------------------------------------------------


def _load(data: str) -> dict[str, Any]:
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError:
        payload = lenient_json(data)
    if not isinstance(payload, dict):
        raise ProviderError(f"Unexpected data in the stream: {data[:200]}")
    return payload


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _call_id(item: dict[str, Any]) -> str:
    """pi's tool-call id: the call id and the item id, both needed to send the call back."""
    call_id = _str(item.get("call_id"))
    item_id = _str(item.get("id"))
    return f"{call_id}|{item_id}" if item_id else call_id


def _message_text(item: dict[str, Any]) -> str:
    parts = item.get("content") or []
    return "".join(
        _str(part.get("text") if part.get("type") == "output_text" else part.get("refusal"))
        for part in parts
        if isinstance(part, dict)
    )


def _reasoning_text(item: dict[str, Any], streamed_source: str) -> str:
    """The thinking text of a finished reasoning item: its summary, else its raw reasoning."""
    summary = PART_SEPARATOR.join(_str(part.get("text")) for part in item.get("summary") or ())
    content = PART_SEPARATOR.join(_str(part.get("text")) for part in item.get("content") or ())
    if streamed_source == "content":
        return content or summary
    return summary or content


def _stream_error(error: Any) -> ProviderError:
    """An ``error`` event (``{"error": {...}}`` or the older flat ``{"code", "message"}``)."""
    if not isinstance(error, dict):
        return ProviderError(str(error))
    code = error.get("code") or error.get("type")
    message = error.get("message") or orjson.dumps(error).decode()
    text = f"{message} ({code})" if code else str(message)
    return ProviderError(text, retryable=code in RETRYABLE_CODES, context_overflow=code in OVERFLOW_CODES)


def _failed_error(response: dict[str, Any]) -> ProviderError:
    error = response.get("error")
    if isinstance(error, dict):
        return _stream_error(error)
    reason = (response.get("incomplete_details") or {}).get("reason")
    return ProviderError(f"The response failed ({reason})" if reason else "The response failed")


CLIENT = OpenAIResponsesClient()
