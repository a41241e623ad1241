"""Google Generative AI (``POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse``).

Request: ``contents`` with roles ``user`` / ``model``; thinking sent back as ``thought`` parts and
every ``thoughtSignature`` returned on the part it came with (Gemini 3 rejects function calls
without one); tool results as ``functionResponse`` parts, consecutive ones in one content;
tool schemas cut down to the OpenAPI subset Gemini accepts. Stream: each SSE ``data`` is a whole
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
from pi_tui.ai.thinking import provider_value, request_level
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

BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
    "max": 32768,
}
FLASH_MAX_BUDGET = 24576
PRO_MAX_BUDGET = 32768
MIN_BUDGET = 1024

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


def request_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"contents": convert_messages(model, context)}
    if context.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": context.system_prompt}]}
    if context.tools:
        body["tools"] = [{"functionDeclarations": [function_declaration(tool) for tool in context.tools]}]
    body["generationConfig"] = generation_config(model, options)
    return body


def generation_config(model: Model, options: StreamOptions) -> dict[str, Any]:
    config: dict[str, Any] = {}
    max_tokens = options.max_tokens or model.max_tokens
    if max_tokens:
        config["maxOutputTokens"] = max_tokens
    if options.temperature is not None:
        config["temperature"] = options.temperature
    level = request_level(model, options.thinking)  # xhigh / max only where the model has them
    if level is not None:
        # A budget model keeps pi 0.73's budget per requested level (xhigh, max: the largest)
        budget_level = options.thinking if options.thinking in BUDGETS else level
        config["thinkingConfig"] = thinking_config(
            model.id, google_level(model, level), max_tokens, options.thinking_budgets, budget_level
        )
    return config


def google_level(model: Model, level: ThinkingLevel) -> ThinkingLevel:
    """A (clamped) level as Gemini knows it: the model's map may name one of Gemini's four."""
    mapped = provider_value(model, level).lower()
    return mapped if mapped in ("minimal", "low", "medium", "high") else level  # type: ignore[return-value]


def thinking_config(
    model_id: str,
    level: ThinkingLevel,
    max_tokens: int | None,
    budgets: Mapping[str, int] | None = None,
    budget_level: ThinkingLevel | None = None,
) -> dict[str, Any]:
    """Thought summaries on, with a level (Gemini 3+) or a token budget (2.5 and older) for
    ``budget_level`` (default: ``level``).

    Gemini 3 answers 400 to a request with both, and treats a budget only as a compatibility
    fallback, so it gets ``thinkingLevel``; 3 Pro knows only LOW and HIGH.
    """
    config: dict[str, Any] = {"includeThoughts": True}
    lowered = model_id.lower()
    if _gemini_generation(lowered) >= 3:
        config["thinkingLevel"] = _thinking_level(lowered, level)
    else:
        config["thinkingBudget"] = thinking_budget(lowered, budget_level or level, max_tokens, budgets)
    return config


def thinking_budget(
    model_id: str, level: ThinkingLevel, max_tokens: int | None, budgets: Mapping[str, int] | None = None
) -> int:
    """The level's budget within what the model allows, leaving half the output for the answer.

    Gemini counts thoughts against ``maxOutputTokens``; a budget as large as the whole allowance
    ends replies with MAX_TOKENS before any answer text.
    """
    base = (budgets or {}).get(level, BUDGETS.get(level, BUDGETS["medium"]))
    budget = min(base, FLASH_MAX_BUDGET if "flash" in model_id else PRO_MAX_BUDGET)
    if max_tokens:
        budget = min(budget, max(max_tokens // 2, MIN_BUDGET))
    return budget


def _gemini_generation(model_id: str) -> int:
    match = re.search(r"gemini-(\d+)", model_id)
    return int(match.group(1)) if match else 0


def _thinking_level(model_id: str, level: ThinkingLevel) -> str:
    if "pro" in model_id:
        return "LOW" if level in ("minimal", "low") else "HIGH"
    return {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM"}.get(level, "HIGH")


# --- tools ----------------------------------------------------------------------------------


def function_declaration(tool: Tool) -> dict[str, Any]:
    """One ``functionDeclarations`` entry; ``parameters`` left out when the tool takes none.

    Gemini rejects ``{"type": "object", "properties": {}}`` ("should be non-empty for OBJECT type").
    """
    declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
    parameters = clean_schema(tool.parameters)
    if parameters.get("properties"):
        parameters["type"] = "object"
        declaration["parameters"] = parameters
    return declaration


SCHEMA_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "anyOf",
        "default",
        "example",
        "propertyOrdering",
    }
)
"""The fields of Gemini's ``Schema``; anything else (``$schema``, ``additionalProperties``...) is a 400."""
FORMATS = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
MAX_REF_DEPTH = 8
OWN_STEPS = frozenset({"type", "enum", "format", "required", "anyOf"})
"""Keys that :func:`_clean` rewrites itself rather than copies."""


def clean_schema(schema: Any) -> dict[str, Any]:
    """A JSON schema rewritten into the OpenAPI subset Gemini's ``parameters`` accepts.

    Local ``$ref``s are inlined, ``oneOf`` becomes ``anyOf``, ``allOf`` is merged, ``const`` and
    type lists become ``enum`` / ``nullable``, and unknown keys are dropped at every level.
    """
    if not isinstance(schema, dict):
        return {}
    definitions = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _clean(schema, definitions, 0)


def _clean(schema: Any, definitions: dict[str, Any], depth: int) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    schema = _resolve(schema, definitions, depth)
    if "allOf" in schema:
        schema = _merge_all_of(schema)
    out: dict[str, Any] = {}
    _clean_type(schema, out)
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            properties = {name: _clean(sub, definitions, depth + 1) for name, sub in value.items()}
            if properties:
                out["properties"] = properties
        elif key == "items":
            out["items"] = _clean(
                value[0] if isinstance(value, list) and value else value, definitions, depth + 1
            )
        elif key in SCHEMA_KEYS and key not in out and key not in OWN_STEPS:
            out[key] = value
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            _clean_variants(schema[key], definitions, depth, out)
    _clean_enum(schema, out)
    _clean_format(schema, out)
    required = [name for name in schema.get("required") or () if name in out.get("properties", {})]
    if required:
        out["required"] = required
    return out


def _resolve(schema: dict[str, Any], definitions: dict[str, Any], depth: int) -> dict[str, Any]:
    """Inline a local ``#/$defs/X`` reference (bounded, so recursive schemas still end)."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    target = definitions.get(ref.rsplit("/", 1)[-1]) if depth < MAX_REF_DEPTH else None
    rest = {key: value for key, value in schema.items() if key != "$ref"}
    if not isinstance(target, dict):
        return rest or {"type": "object"}
    return {**target, **rest}


def _merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    merged = {key: value for key, value in schema.items() if key != "allOf"}
    for part in schema.get("allOf") or ():
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                merged["properties"] = {**(merged.get("properties") or {}), **value}
            elif key == "required" and isinstance(value, list):
                merged["required"] = [*(merged.get("required") or []), *value]
            else:
                merged.setdefault(key, value)
    return merged


def _clean_variants(
    variants: list[Any], definitions: dict[str, Any], depth: int, out: dict[str, Any]
) -> None:
    """``anyOf`` / ``oneOf``: a ``null`` branch becomes ``nullable``; a single branch is inlined.

    ``Optional[X]`` schemas (``anyOf: [X, {"type": "null"}]``) are the common case.
    """
    kept = [v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")]
    if len(kept) < len(variants):
        out["nullable"] = True
    cleaned = [_clean(sub, definitions, depth + 1) for sub in kept]
    if len(cleaned) == 1:
        for key, value in cleaned[0].items():
            out.setdefault(key, value)
    elif cleaned:
        out["anyOf"] = cleaned


def _clean_type(schema: dict[str, Any], out: dict[str, Any]) -> None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) < len(kind):
            out["nullable"] = True
        if len(kinds) == 1:
            out["type"] = kinds[0]
        elif kinds:
            out["anyOf"] = [{"type": k} for k in kinds]
    elif kind == "null":
        out["nullable"] = True
    elif isinstance(kind, str):
        out["type"] = kind
    elif "properties" in schema:
        out["type"] = "object"


def _clean_enum(schema: dict[str, Any], out: dict[str, Any]) -> None:
    """Gemini takes only string enums; other allowed values move into the description."""
    values = schema.get("enum")
    if "const" in schema:
        values = [schema["const"]]
    if not isinstance(values, list):
        return
    if None in values:
        out["nullable"] = True
        values = [value for value in values if value is not None]
    if values and all(isinstance(value, str) for value in values):
        out["enum"] = values
        out["type"] = "string"
    elif values:
        allowed = "Allowed values: " + ", ".join(orjson.dumps(value).decode() for value in values)
        out["description"] = f"{out['description']}\n{allowed}" if out.get("description") else allowed


def _clean_format(schema: dict[str, Any], out: dict[str, Any]) -> None:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS.get(out.get("type", ""), ()):
        out["format"] = fmt


# --- messages -------------------------------------------------------------------------------


def requires_tool_call_id(model_id: str) -> bool:
    """Claude and gpt-oss behind Google's API need call ids in calls and responses (as in pi)."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def _normalize_id(call_id: str, model: Model, _source: AssistantMessage) -> str:
    return sanitize_id(call_id, 64) if requires_tool_call_id(model.id) else call_id


def _multimodal_results(model_id: str) -> bool:
    """Gemini 3+ (and non-Gemini models) take images inside ``functionResponse.parts``."""
    match = re.match(r"gemini(?:-live)?-(\d+)", model_id.lower())
    return match is None or int(match.group(1)) >= 3


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Context -> Gemini ``contents`` (pi's shapes, after transform_messages)."""
    contents: list[dict[str, Any]] = []
    echoed_ids: set[str] = set()
    for message in transform_messages(context.messages, model, _normalize_id):
        if isinstance(message, ToolResultMessage):
            _add_tool_result(contents, model, message, message.tool_call_id in echoed_ids)
            continue
        if isinstance(message, UserMessage):
            parts = _user_parts(message)
        else:
            parts = _model_parts(model, message, echoed_ids)
        if parts:
            contents.append({"role": "user" if isinstance(message, UserMessage) else "model", "parts": parts})
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


def _model_parts(model: Model, message: AssistantMessage, echoed_ids: set[str]) -> list[dict[str, Any]]:
    """An assistant message as ``model`` parts.

    transform_messages already made another model's thinking plain text and dropped its
    signatures; thinking kept here is the same model's, sent back as ``thought`` parts. Gemini 3
    rejects a turn whose function calls carry no signature, so such a turn gets Google's
    documented stand-in (pi-tui's addition: pi 0.73.1 sends none).
    """
    own = message.provider == model.provider and message.model == model.id
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent) and block.text.strip():
            parts.append(_signed({"text": block.text}, block.text_signature if own else None))
        elif isinstance(block, ThinkingContent) and block.thinking.strip():
            if own:
                parts.append(_signed({"thought": True, "text": block.thinking}, block.thinking_signature))
            else:
                parts.append({"text": block.thinking})
        elif isinstance(block, ToolCall):
            parts.append(_function_call(model, block, own, echoed_ids))
    calls = [part for part in parts if "functionCall" in part]
    if (
        calls
        and _gemini_generation(model.id.lower()) >= 3
        and not any("thoughtSignature" in c for c in calls)
    ):
        calls[0]["thoughtSignature"] = SKIP_SIGNATURE
    return parts


def _function_call(model: Model, call: ToolCall, own: bool, echoed_ids: set[str]) -> dict[str, Any]:
    """A ``functionCall`` part; the id goes when the model needs ids, or Gemini itself gave it."""
    function: dict[str, Any] = {"name": call.name, "args": call.arguments}
    if requires_tool_call_id(model.id) or (own and call.id and not is_generated_id(call)):
        function["id"] = call.id
        echoed_ids.add(call.id)
    return _signed({"functionCall": function}, call.thought_signature if own else None)


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    signature = valid_signature(signature)
    if signature:
        part["thoughtSignature"] = signature
    return part


def _add_tool_result(
    contents: list[dict[str, Any]], model: Model, message: ToolResultMessage, echo_id: bool
) -> None:
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
    if echo_id or requires_tool_call_id(model.id):
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


def is_generated_id(call: ToolCall) -> bool:
    prefix = f"{call.name}_"
    return call.id.startswith(prefix) and re.fullmatch(r"\d+_\d+", call.id[len(prefix) :]) is not None


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
