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

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.protocol import HttpRequest, ParserBase
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.ai.wire import data_url, images_of, prepare_messages, stream_headers, text_of
from pi_tui.session.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

TOOL_IMAGES_NOTE = "Attached image(s) from tool result:"
IMAGE_ONLY_RESULT = "(see attached image)"
EFFORT = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
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
    if options.session_id:
        body["prompt_cache_key"] = options.session_id
    max_tokens = options.max_tokens or model.max_tokens
    if max_tokens:
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
    if model.reasoning and options.thinking != "off":
        body["reasoning"] = {"effort": EFFORT[options.thinking], "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    return body


def convert_input(model: Model, context: Context) -> list[dict[str, Any]]:
    """Context -> the Responses ``input`` list (pi's exact item shapes)."""
    items: list[dict[str, Any]] = []
    if context.system_prompt:
        role = "developer" if model.reasoning else "system"
        items.append({"role": role, "content": context.system_prompt})
    supports_images = "image" in model.input
    for position, message in enumerate(prepare_messages(context.messages)):
        if isinstance(message, UserMessage):
            converted = _user_item(message, supports_images)
            if converted is not None:
                items.append(converted)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(model, message, position))
        elif isinstance(message, ToolResultMessage):
            items.extend(_tool_result_items(message, supports_images))
    return items


def _user_item(message: UserMessage, supports_images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": message.content}]}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageContent) and supports_images:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None  # the API rejects empty content


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": data_url(image)}


def _same_model(model: Model, message: AssistantMessage) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _assistant_items(model: Model, message: AssistantMessage, position: int) -> list[dict[str, Any]]:
    """One assistant message -> its output items, in block order.

    Reasoning items and item ids only mean something to the model that produced them; from any
    other model, thinking is resent as plain text and function calls lose their ``fc_`` item id
    (OpenAI checks that a call's id was paired with a reasoning item it knows).
    """
    same_model = _same_model(model, message)
    items: list[dict[str, Any]] = []
    skipped_reasoning = False
    for block in message.content:
        if isinstance(block, ThinkingContent):
            reasoning = _reasoning_item(block) if same_model else None
            if reasoning is not None:
                items.append(reasoning)
            elif not same_model and block.thinking.strip():
                items.append(_text_item(block.thinking, None, position))
            else:
                skipped_reasoning = True
        elif isinstance(block, TextContent):
            signature = block.text_signature if same_model else None
            items.append(_text_item(block.text, signature, position))
        elif isinstance(block, ToolCall):
            items.append(_function_call_item(block, keep_item_id=same_model and not skipped_reasoning))
    return items


def _reasoning_item(block: ThinkingContent) -> dict[str, Any] | None:
    """The reasoning item pi stored as the signature, or None if the signature is not one."""
    if not block.thinking_signature:
        return None
    try:
        item = orjson.loads(block.thinking_signature)
    except orjson.JSONDecodeError:
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


def _text_item(text: str, signature: str | None, position: int) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
        "status": "completed",
        "id": _message_id(signature, position),
    }


def _message_id(signature: str | None, position: int) -> str:
    """The output message's item id from the text signature (pi's plain id or ``{"v":1,"id"}``).

    A message item needs an id; without a stored one pi uses ``msg_<position>``. Ids longer than
    the API's 64 characters are hashed down.
    """
    item_id = _signature_id(signature) if signature else None
    if not item_id:
        return f"msg_{position}"
    if len(item_id) > MAX_ID_LENGTH:
        return "msg_" + hashlib.sha256(item_id.encode()).hexdigest()[:24]
    return item_id


def _signature_id(signature: str) -> str | None:
    if signature.startswith("{"):
        try:
            parsed = orjson.loads(signature)
        except orjson.JSONDecodeError:
            return signature
        if isinstance(parsed, dict) and isinstance(parsed.get("id"), str):
            return str(parsed["id"])
    return signature


def _function_call_item(call: ToolCall, *, keep_item_id: bool) -> dict[str, Any]:
    call_id, _, item_id = call.id.partition("|")
    item: dict[str, Any] = {"type": "function_call"}
    if item_id and (keep_item_id or not item_id.startswith("fc_")):
        item["id"] = item_id
    item["call_id"] = call_id
    item["name"] = call.name
    item["arguments"] = orjson.dumps(call.arguments).decode()
    return item


def _tool_result_items(message: ToolResultMessage, supports_images: bool) -> list[dict[str, Any]]:
    """A result is text only; its images follow in a user message (the API has no image output)."""
    text = text_of(message.content)
    images = images_of(message.content)
    call_id = message.tool_call_id.partition("|")[0]
    output = text if text or not images else IMAGE_ONLY_RESULT
    items: list[dict[str, Any]] = [{"type": "function_call_output", "call_id": call_id, "output": output}]
    if images and supports_images:
        parts: list[dict[str, Any]] = [{"type": "input_text", "text": TOOL_IMAGES_NOTE}]
        parts.extend(_image_part(image) for image in images)
        items.append({"role": "user", "content": parts})
    return items


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
        payload = _load(data)
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
        raise ProviderError(f"Malformed JSON in the stream: {data[:200]}") from None
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
