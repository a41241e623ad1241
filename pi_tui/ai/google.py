"""Google Generative AI (``POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse``).

Request, as pi 1.5.2 builds it for Gemini (Google's Gemini API here, Vertex AI in
:mod:`pi_tui.ai.google_vertex`, which shares this body): ``contents`` with roles ``user`` /
``model``; thinking sent back as ``thought`` parts and every ``thoughtSignature`` returned on the
part it came with (Gemini 3 rejects function calls without one); tool results as
``functionResponse`` parts, consecutive ones in one content; call ids only for the models that
need them (Gemini 3+, Claude, gpt-oss); tools as their whole JSON schema
(``parametersJsonSchema``); thinking as a Google level or a token budget by pi's rules, and a
thinking model asked not to think told so. Stream: each SSE ``data`` is a whole
``GenerateContentResponse``; parts of candidate 0 are text, thought text or complete function
calls; the usage of the last chunk is the usage of the reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError, lenient_json
from pi_tui.ai.protocol import HttpRequest, ParserBase
from pi_tui.ai.thinking import clamp_level, provider_value, request_level
from pi_tui.ai.transform import sanitize_id, transform_messages
from pi_tui.ai.types import Context, Model, StreamOptions, ThinkingLevel, Tool
from pi_tui.ai.wire import images_of, stream_headers, text_of
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    now_ms,
)

TOOL_IMAGES_NOTE = "Tool result image:"
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a function call that has no signature of this model."""

Budgets = Mapping[str, Mapping[str, int]]
"""Token budgets per Google level, by a piece of the model id (the first that matches wins)."""
PI_BUDGETS: Budgets = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}
"""pi 1.5.2's Gemini API budgets; a budget model not named here gets ``-1`` (dynamic)."""
DYNAMIC_BUDGET = -1

STOP_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}
FINISH_MESSAGES = {
    "SAFETY": "Gemini stopped the reply for safety reasons",
    "RECITATION": "Gemini stopped the reply because it was reciting training data",
    "PROHIBITED_CONTENT": "Gemini stopped the reply: prohibited content",
    "BLOCKLIST": "Gemini stopped the reply: blocked terms",
    "SPII": "Gemini stopped the reply: sensitive personal information",
    "MALFORMED_FUNCTION_CALL": "Gemini produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "Gemini called a tool that was not offered",
    "LANGUAGE": "Gemini stopped the reply: unsupported language",
}
RETRYABLE_STATUSES = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"})
RETRYABLE_CODES = frozenset({429, 500, 502, 503, 504})


class GoogleClient:
    api = "google-generative-ai"

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        return HttpRequest(
            url=f"{model.base_url.rstrip('/')}/models/{model.id}:streamGenerateContent?alt=sse",
            headers=request_headers(model, options),
            body=request_body(model, context, options),
        )

    def parser(self, builder: MessageBuilder) -> GoogleParser:
        return GoogleParser(builder)


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    return stream_headers(model, options, "x-goog-api-key")


def request_body(
    model: Model, context: Context, options: StreamOptions, budgets: Budgets = PI_BUDGETS
) -> dict[str, Any]:
    """The ``GenerateContentRequest`` pi 1.5.2 sends (checked against the real pi in
    tests/interop/test_google_vs_pi.py); ``budgets`` is the API's budget table (Vertex has its
    own)."""
    body: dict[str, Any] = {"contents": convert_messages(model, context)}
    if context.system_prompt:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": context.system_prompt}]}
    if context.tools:
        body["tools"] = [{"functionDeclarations": [function_declaration(tool) for tool in context.tools]}]
    body["generationConfig"] = generation_config(model, options, budgets)
    return body


def generation_config(model: Model, options: StreamOptions, budgets: Budgets = PI_BUDGETS) -> dict[str, Any]:
    config: dict[str, Any] = {}
    max_tokens = options.max_tokens or model.max_tokens
    if max_tokens:
        config["maxOutputTokens"] = max_tokens
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if model.reasoning:
        config["thinkingConfig"] = thinking_config(model, options, budgets)
    return config


def google_level(model: Model, level: ThinkingLevel) -> ThinkingLevel:
    """A (clamped) level as Gemini knows it: the model's map may name one of Gemini's four."""
    mapped = provider_value(model, level).lower()
    return mapped if mapped in ("minimal", "low", "medium", "high") else level  # type: ignore[return-value]


def thinking_config(model: Model, options: StreamOptions, budgets: Budgets = PI_BUDGETS) -> dict[str, Any]:
    """A thinking model's ``thinkingConfig`` as pi sends it: thought summaries on, with its
    Google level (``thinkingLevelMap``'s value, else the level) as ``thinkingLevel`` for the
    models that take one (Gemini 3 answers 400 to a budget with a level), else a token budget
    for that level (the user's ``thinkingBudgets`` first, then ``budgets``, then ``-1``:
    dynamic); at ``off``, :func:`disabled_thinking`."""
    level = request_level(model, options.thinking)  # xhigh / max only where the model has them
    if level is None:
        return disabled_thinking(model)
    google = google_level(model, level)
    if uses_thinking_level(model.id):
        return {"includeThoughts": True, "thinkingLevel": google.upper()}
    return {"includeThoughts": True, "thinkingBudget": thinking_budget(model.id, google, options, budgets)}


def thinking_budget(model_id: str, level: ThinkingLevel, options: StreamOptions, budgets: Budgets) -> int:
    custom = options.thinking_budgets.get(level)
    if custom is not None:
        return custom
    table = next((table for name, table in budgets.items() if name in model_id), None)
    return table.get(level, DYNAMIC_BUDGET) if table else DYNAMIC_BUDGET


_LEVEL_MODELS = re.compile(r"gemini-3(?:\.\d+)?-(?:pro|flash)|gemini-(?:[4-9]|[1-9]\d)|gemma-?4")


def uses_thinking_level(model_id: str) -> bool:
    """Gemini 3 Pro/Flash, Gemini 4 on, Gemma 4 and the ``-latest`` Flash aliases take a
    ``thinkingLevel`` instead of a token budget (pi's rule)."""
    lowered = model_id.lower()
    return bool(_LEVEL_MODELS.search(lowered)) or lowered in (
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    )


def disabled_thinking(model: Model) -> dict[str, Any]:
    """What pi sends a thinking model at ``off``: a zero budget, or, for a level model that
    cannot stop thinking, its weakest level (left out, such a model would think at its
    default)."""
    if not uses_thinking_level(model.id):
        return {"thinkingBudget": 0}
    weakest = clamp_level(model, "off")
    if weakest == "off":
        return {"thinkingBudget": 0}
    return {"thinkingLevel": google_level(model, weakest).upper()}


def _gemini_generation(model_id: str) -> int:
    """The major version of a ``gemini-N...`` (or ``gemini-live-N``) id; 0 for other models."""
    match = re.match(r"gemini(?:-live)?-(\d+)", model_id.lower())
    return int(match.group(1)) if match else 0


# --- tools ----------------------------------------------------------------------------------


def function_declaration(tool: Tool) -> dict[str, Any]:
    """One ``functionDeclarations`` entry with the tool's whole JSON schema as
    ``parametersJsonSchema`` (Gemini takes full JSON Schema there: ``anyOf``, ``$ref``...), as pi
    sends it; ``const`` becomes a one-value ``enum`` (:func:`const_as_enum`)."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parametersJsonSchema": const_as_enum(tool.parameters),
    }


_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
"""Keywords whose keys are names (of properties, definitions...), each naming a subschema."""
_SUBSCHEMAS = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
"""Keywords holding a subschema or a list of them (anything else is data, left as it is)."""


def const_as_enum(schema: Any, names: bool = False) -> Any:
    """String and number ``const`` values as one-value ``enum``s, at every schema level (Gemini
    ignores ``const`` in a JSON schema but honours ``enum``); property names are left alone."""
    if isinstance(schema, list):
        return [const_as_enum(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if names or key in _SUBSCHEMAS:
            result[key] = const_as_enum(value)
        elif key in _NAME_MAPS:
            result[key] = const_as_enum(value, names=True)
        else:
            result[key] = value
    if not names and "const" in result and "enum" not in result:
        value = result["const"]
        if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)):
            del result["const"]
            result["enum"] = [value]
    return result


# --- messages -------------------------------------------------------------------------------


def requires_tool_call_id(model_id: str) -> bool:
    """Gemini 3+, and Claude and gpt-oss behind Google's APIs, get call ids in calls and
    responses; pi sends older Gemini none (an id Gemini 2.5 gave is not sent back either)."""
    return model_id.startswith(("claude-", "gpt-oss-")) or _gemini_generation(model_id) >= 3


def _normalize_id(call_id: str, model: Model, _source: AssistantMessage) -> str:
    return sanitize_id(call_id, 64) if requires_tool_call_id(model.id) else call_id


def _multimodal_results(model_id: str) -> bool:
    """Gemini 3+ (and non-Gemini models) take images inside ``functionResponse.parts``."""
    generation = _gemini_generation(model_id)
    return generation == 0 or generation >= 3


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Context -> Gemini ``contents`` (pi's shapes, after transform_messages)."""
    contents: list[dict[str, Any]] = []
    for message in transform_messages(context.messages, model, _normalize_id):
        if isinstance(message, ToolResultMessage):
            _add_tool_result(contents, model, message)
            continue
        is_user = isinstance(message, UserMessage)
        parts = _user_parts(message) if isinstance(message, UserMessage) else _model_parts(model, message)
        if parts:
            contents.append({"role": "user" if is_user else "model", "parts": parts})
    return contents


def _inline(image: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    """Text and inline images (a text-only model's images are placeholder text by now).

    Empty text parts are left out (Gemini answers 400 to them; pi 0.73.1 would send them).
    """
    if isinstance(message.content, str):
        return [{"text": message.content}] if message.content else []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent) and block.text:
            parts.append({"text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(_inline(block))
    return parts


_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def valid_signature(signature: str | None) -> str | None:
    """Google's signatures are bytes in base64; anything else is left out, as pi does."""
    if signature and len(signature) % 4 == 0 and _BASE64.fullmatch(signature):
        return signature
    return None


def _model_parts(model: Model, message: AssistantMessage) -> list[dict[str, Any]]:
    """An assistant message as ``model`` parts.

    transform_messages already left another model's thinking out and dropped its
    signatures; thinking kept here is the same model's, sent back as ``thought`` parts. A blank
    text or thought part is left out unless it carries this model's signature (Gemini may sign
    an empty part and needs it back, as pi sends it). Gemini 3 rejects a turn whose function
    calls carry no signature, so such a turn (another model's) gets Google's documented
    stand-in (pi-tui's addition: pi 1.5.2 sends none, and Gemini answers 400).
    """
    own = message.provider == model.provider and message.model == model.id
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            signature = valid_signature(block.text_signature) if own else None
            if block.text.strip() or signature:
                parts.append(_signed({"text": block.text}, signature))
        elif isinstance(block, ThinkingContent):
            if own:
                signature = valid_signature(block.thinking_signature)
                if block.thinking.strip() or signature:
                    parts.append(_signed({"thought": True, "text": block.thinking}, signature))
            elif block.thinking.strip():
                parts.append({"text": block.thinking})
        elif isinstance(block, ToolCall):
            parts.append(_function_call(model, block, own))
    calls = [part for part in parts if "functionCall" in part]
    if calls and _gemini_generation(model.id) >= 3 and not any("thoughtSignature" in c for c in calls):
        calls[0]["thoughtSignature"] = SKIP_SIGNATURE
    return parts


def _function_call(model: Model, call: ToolCall, own: bool) -> dict[str, Any]:
    """A ``functionCall`` part, with the call's id for the models that take ids."""
    function: dict[str, Any] = {"name": call.name, "args": call.arguments}
    if requires_tool_call_id(model.id):
        function["id"] = call.id
    return _signed({"functionCall": function}, call.thought_signature if own else None)


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    signature = valid_signature(signature)
    if signature:
        part["thoughtSignature"] = signature
    return part


def _add_tool_result(contents: list[dict[str, Any]], model: Model, message: ToolResultMessage) -> None:
    """A ``functionResponse`` part, joined to the previous one's content if that held results.

    Images go inside the response for models that take them there; older Gemini gets them in a
    user content of their own right after.
    """
    text = text_of(message.content)
    images = images_of(message.content) if "image" in model.input else []
    output = text or ("(see attached image)" if images else "")
    response: dict[str, Any] = {
        "name": message.tool_name,
        "response": {"error": output} if message.is_error else {"output": output},
    }
    inline = [_inline(image) for image in images]
    multimodal = _multimodal_results(model.id)
    if inline and multimodal:
        response["parts"] = inline
    if requires_tool_call_id(model.id):
        response["id"] = message.tool_call_id
    part = {"functionResponse": response}
    last = contents[-1] if contents else None
    if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    if inline and not multimodal:
        contents.append({"role": "user", "parts": [{"text": TOOL_IMAGES_NOTE}, *inline]})


def generated_id(name: str, number: int) -> str:
    """An id for a call Gemini sent without one; unique across the session, like pi's."""
    return f"{name}_{now_ms()}_{number}"


# --- stream ---------------------------------------------------------------------------------


class GoogleParser(ParserBase):
    """``GenerateContentResponse`` chunks -> builder calls (candidate 0 only).

    Consecutive parts of one kind (text, or ``thought`` text) extend the open block; a part of
    the other kind, or a function call, closes it. Function calls arrive whole, one per part.
    """

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.current: int | None = None
        self.current_kind = ""
        self.call_ids: set[str] = set()
        self.finish_reason: str | None = None
        self.finish_message = ""
        self.chunks = 0

    def on_event(self, event: str, data: str) -> None:
        chunk = _load(data)
        if "error" in chunk:
            raise _stream_error(chunk["error"])
        self.chunks += 1
        builder = self.builder
        builder.start()
        if builder.response_id is None and isinstance(chunk.get("responseId"), str):
            builder.response_id = chunk["responseId"]
        blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            self.finish_reason, self.finish_message = (
                "PROMPT_BLOCKED",
                f"Gemini refused the prompt ({blocked})",
            )
        candidates = chunk.get("candidates") or ()
        if candidates and isinstance(candidates[0], dict):
            self._candidate(candidates[0])
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage(usage)

    def end(self) -> None:
        if self.chunks == 0:
            raise ProviderError("Gemini ended the stream without a response", retryable=True)
        reason = self.finish_reason or "STOP"
        stop = STOP_REASONS.get(reason)
        if stop is None:
            self.builder.fail(self._finish_error(reason))
        else:
            self.builder.finish(stop)

    def _finish_error(self, reason: str) -> str:
        if reason == "PROMPT_BLOCKED":
            return self.finish_message
        text = f"{FINISH_MESSAGES.get(reason, 'Gemini stopped the reply')} ({reason})"
        return f"{text}: {self.finish_message}" if self.finish_message else text

    def _candidate(self, candidate: dict[str, Any]) -> None:
        for part in (candidate.get("content") or {}).get("parts") or ():
            if isinstance(part, dict):
                self._part(part)
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
            self.finish_message = str(candidate.get("finishMessage") or "")

    def _part(self, part: dict[str, Any]) -> None:
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._function_call(call, signature)
            return
        text = part.get("text")
        if isinstance(text, str):
            self._text("thinking" if part.get("thought") is True else "text", text, signature)
        elif signature and self.current is not None and self.current_kind != "toolCall":
            self.builder.set_signature(self.current, signature)

    def _text(self, kind: str, text: str, signature: str | None) -> None:
        """Extend or open the block of ``kind``; an empty part only carries its signature."""
        builder = self.builder
        if not text:
            if signature and self.current is not None and self.current_kind == kind:
                builder.set_signature(self.current, signature)
            return
        self.current = builder.append_prose(kind, text)
        self.current_kind = kind
        if signature:
            builder.set_signature(self.current, signature)

    def _function_call(self, call: dict[str, Any], signature: str | None) -> None:
        self._close_current()
        builder = self.builder
        name = str(call.get("name") or "")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in self.call_ids:
            call_id = generated_id(name, len(self.call_ids) + 1)
        self.call_ids.add(call_id)
        index = builder.toolcall_start(call_id, name)
        args = call.get("args")
        builder.toolcall_set_arguments(index, args if isinstance(args, dict) else {})
        if signature:
            builder.set_signature(index, signature)
        builder.end(index)

    def _close_current(self) -> None:
        if self.current is not None:
            self.builder.end(self.current)
        self.current = None
        self.current_kind = ""

    def _usage(self, usage: dict[str, Any]) -> None:
        """Counts are running totals, so each chunk's replace the last; thoughts are output."""
        cached = int(usage.get("cachedContentTokenCount") or 0)
        prompt = int(usage.get("promptTokenCount") or 0)
        output = int(usage.get("candidatesTokenCount") or 0) + int(usage.get("thoughtsTokenCount") or 0)
        self.builder.set_usage(input=max(prompt - cached, 0), output=output, cache_read=cached)


def _load(data: str) -> dict[str, Any]:
    try:
        chunk = orjson.loads(data)
    except orjson.JSONDecodeError:
        chunk = lenient_json(data)
    if isinstance(chunk, list) and len(chunk) == 1:
        chunk = chunk[0]  # tolerate the JSON-array framing used without alt=sse
    if not isinstance(chunk, dict):
        raise ProviderError(f"Unexpected data in the stream: {data[:200]}")
    return chunk


def _stream_error(error: Any) -> ProviderError:
    """An ``error`` object (``{code, message, status}``) sent inside the stream."""
    if not isinstance(error, dict):
        return ProviderError(f"Gemini error: {error}")
    message = str(error.get("message") or orjson.dumps(error).decode())
    status = str(error.get("status") or "")
    code = error.get("code") if isinstance(error.get("code"), int) else None
    label = " ".join(str(x) for x in (code, status) if x)
    return ProviderError(
        f"{message} ({label})" if label else message,
        status=code,
        retryable=status in RETRYABLE_STATUSES or code in RETRYABLE_CODES,
        context_overflow="exceeds the maximum number of tokens" in message,
    )


CLIENT = GoogleClient()
