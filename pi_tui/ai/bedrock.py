"""Amazon Bedrock's Converse Stream API (pi's ``amazon-bedrock`` provider,
``bedrock-converse-stream``): ``POST {endpoint}/model/{modelId}/converse-stream``.

What pi 1.5.2 sends (through the AWS SDK) and reads, rebuilt without it:

- Endpoint and region: a model id that is an inference-profile ARN names its region; else
  ``AWS_REGION`` / ``AWS_DEFAULT_REGION``; the model's ``baseUrl`` is used as the endpoint when it
  is not a standard ``bedrock-runtime.<region>.amazonaws.com`` host (a proxy, a VPC endpoint, a
  models.json override), or when nothing else names a region; else the region's standard host.
  Without any region: us-east-1 (an ambient ``AWS_PROFILE``'s own ``region`` first).
- Credentials (:mod:`pi_tui.ai.aws_credentials`): a bearer token as ``Authorization: Bearer``,
  else AWS keys that sign each attempt's exact bytes with SigV4 (service ``bedrock``).
- Body: ``system`` blocks, ``messages`` (text, image bytes as base64, ``toolUse``,
  ``toolResult``, ``reasoningContent`` sent back with its signature to Claude), ``toolConfig``,
  ``inferenceConfig`` (``maxTokens``, ``temperature``), ``additionalModelRequestFields`` for
  thinking (Claude's ``thinking`` budget or adaptive effort, GPT's reasoning effort) and
  ``cachePoint`` blocks after the system prompt and the last user message for Claude models that
  cache.
- Stream (AWS event stream, :mod:`pi_tui.ai.aws_eventstream`): ``messageStart``,
  ``contentBlockStart/Delta/Stop`` (text, ``reasoningContent`` text/signature/redactedContent,
  ``toolUse`` input), ``messageStop``, ``metadata`` (usage with cache tokens) and the modeled
  exceptions (``throttlingException`` and the like: retried while nothing streamed, as the
  service asks).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import orjson

from pi_tui.ai.anthropic import thinking_budget
from pi_tui.ai.aws_credentials import (
    AwsAuth,
    BearerAuth,
    ContainerAuth,
    RoleAuth,
    SsoAuth,
    StaticAuth,
    lookup,
    profile_region,
    resolve_auth,
)
from pi_tui.ai.aws_eventstream import EventStreamDecoder
from pi_tui.ai.aws_sigv4 import sign
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ConfigError, ProviderError, lenient_json
from pi_tui.ai.protocol import HttpRequest, ParserBase
from pi_tui.ai.thinking import level_map, request_level
from pi_tui.ai.transform import images_as_placeholder, sanitize_id, transform_messages
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

API = "bedrock-converse-stream"
SERVICE = "bedrock"
EMPTY_TEXT = "<empty>"
REDACTED_THINKING_TEXT = "[Reasoning redacted]"
ERROR_IMAGE_PLACEHOLDER = "(image attached after the tool results)"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
BLOCK_BINDING_BETA = "thinking-binding-controls-2026-08-01"
BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384, "max": 16384}
GPT_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
GPT_OSS_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}
EXCEPTIONS = {
    # wire name: (pi's prefix, worth retrying)
    "internalServerException": ("Internal server error", True),
    "modelStreamErrorException": ("Model stream error", True),
    "validationException": ("Validation error", False),
    "throttlingException": ("Throttling error", True),
    "serviceUnavailableException": ("Service unavailable", True),
}
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_STANDARD_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_RESERVED_HEADERS = frozenset({"authorization", "host"})


# --- which model is it ----------------------------------------------------------------------------


def _candidates(model: Model) -> list[str]:
    """The id and the name, lower-cased, also with separators as dashes (pi's matching: an
    application inference profile's ARN says nothing of the model, its name may)."""
    values = [model.id, model.name] if model.name else [model.id]
    out: list[str] = []
    for value in values:
        lower = value.lower()
        out += [lower, re.sub(r"[\s_.:]+", "-", lower)]
    return out


def _any(model: Model, *parts: str) -> bool:
    return any(part in candidate for candidate in _candidates(model) for part in parts)


def is_claude(model: Model) -> bool:
    model_id, name = model.id.lower(), model.name.lower()
    return "anthropic.claude" in model_id or "anthropic/claude" in model_id or "claude" in name


_CLAUDE_5 = ("opus-5", "sonnet-5", "haiku-5", "fable-5")


def is_adaptive(model: Model) -> bool:
    return _any(model, "opus-4-6", "opus-4-7", "opus-4-8", "sonnet-4-6", *_CLAUDE_5)


def _native_xhigh(model: Model) -> bool:
    return _any(model, "opus-4-7", "opus-4-8", *_CLAUDE_5)


def caches_prompts(model: Model, env: Mapping[str, str] | None) -> bool:
    """Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5 take ``cachePoint`` blocks (Nova caches by
    itself); ``AWS_BEDROCK_FORCE_CACHE=1`` for an inference profile whose name says nothing."""
    if not _any(model, "claude"):
        return lookup("AWS_BEDROCK_FORCE_CACHE", env) == "1"
    return _any(model, *_CLAUDE_5, "-4-", "claude-3-7-sonnet", "claude-3-5-haiku")


# --- endpoint and region --------------------------------------------------------------------------


def _standard_region(base_url: str) -> str | None:
    try:
        host = (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return None
    match = _STANDARD_HOST.match(host)
    return match.group(1) if match else None


def endpoint(model: Model, env: Mapping[str, str] | None) -> tuple[str, str]:
    """(the endpoint URL without a trailing slash, the signing region), as pi decides them."""
    configured = lookup("AWS_REGION", env) or lookup("AWS_DEFAULT_REGION", env)
    ambient_profile = bool(lookup("AWS_PROFILE", None))
    standard = _standard_region(model.base_url) if model.base_url else None
    explicit = bool(model.base_url) and (standard is None or (not configured and not ambient_profile))
    arn = _ARN_REGION.match(model.id)
    if arn:
        region = arn.group(1)
    elif configured:
        region = configured
    elif explicit and standard:
        region = standard
    elif not ambient_profile:
        region = "us-east-1"
    else:
        region = profile_region(env) or "us-east-1"
    if explicit:
        url = model.base_url.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f'Invalid base URL for provider "{model.provider}": {model.base_url}')
        return url, region
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return f"https://bedrock-runtime.{region}{suffix}", region


# --- request --------------------------------------------------------------------------------------


@dataclass(slots=True)
class SigV4Signer:
    """Signs each attempt (the runner's ``request.signer``) with the request's AWS credentials."""

    auth: StaticAuth | ContainerAuth | RoleAuth | SsoAuth
    region: str

    async def __call__(self, url: str, headers: dict[str, str], payload: bytes) -> dict[str, str]:
        auth = self.auth
        credentials = (
            auth.credentials if isinstance(auth, StaticAuth) else await auth.credentials(self.region)
        )
        return sign("POST", url, headers.items(), payload, credentials, self.region, SERVICE)


def check(model: Model, options: StreamOptions) -> None:
    """Before a run: one-line :class:`ConfigError` when no credentials or no usable endpoint
    can be found (the request would fail the same way, later and as a failed reply)."""
    resolve_auth(options.api_key, options.provider_env)
    endpoint(model, options.provider_env)


class BedrockClient:
    api = API

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        env = options.provider_env
        auth: AwsAuth = resolve_auth(options.api_key, env)
        base, region = endpoint(model, env)
        url = f"{base}/model/{quote(model.id, safe='')}/converse-stream"
        headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}
        for name, value in {**model.headers, **options.headers}.items():
            # The signature and the credentials are ours to set (pi skips these too).
            lower = name.lower()
            if lower not in _RESERVED_HEADERS and not lower.startswith("x-amz-"):
                headers[lower] = value
        request = HttpRequest(url=url, headers=headers, body=request_body(model, context, options, region))
        if isinstance(auth, BearerAuth):
            request.headers["authorization"] = f"Bearer {auth.token}"
        else:
            request.signer = SigV4Signer(auth, region)
        return request

    def parser(self, builder: MessageBuilder) -> ConverseStreamParser:
        return ConverseStreamParser(builder)

    def frame_decoder(self) -> EventStreamDecoder:
        return EventStreamDecoder()


def request_body(model: Model, context: Context, options: StreamOptions, region: str = "") -> dict[str, Any]:
    """The Converse request, keys in the order the SDK writes them."""
    env = options.provider_env
    long_cache = lookup("PI_CACHE_RETENTION", env) == "long"
    cache = caches_prompts(model, env)
    level = request_level(model, options.thinking)
    max_tokens = options.max_tokens or model.max_tokens
    fields: dict[str, Any] | None = None
    if level is not None:
        fields, max_tokens = _reasoning_fields(model, level, max_tokens, options, region)
    inference: dict[str, Any] = {"maxTokens": max_tokens}
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body: dict[str, Any] = {"messages": convert_messages(model, context, cache, long_cache)}
    if context.system_prompt:
        system: list[dict[str, Any]] = [{"text": context.system_prompt}]
        if cache:
            system.append(_cache_point(long_cache))
        body["system"] = system
    body["inferenceConfig"] = inference
    if context.tools:
        body["toolConfig"] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": t.name,
                        "description": t.description,
                        "inputSchema": {"json": t.parameters},
                    }
                }
                for t in context.tools
            ]
        }
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    return body


def _cache_point(long: bool) -> dict[str, Any]:
    return {"cachePoint": {"type": "default", "ttl": "1h"} if long else {"type": "default"}}


def _reasoning_fields(
    model: Model, level: str, max_tokens: int, options: StreamOptions, region: str
) -> tuple[dict[str, Any] | None, int]:
    """(``additionalModelRequestFields`` for thinking at ``level``, the maxTokens to send)."""
    if is_claude(model):
        gov_cloud = region.startswith("us-gov-") or model.id.lower().startswith(
            ("us-gov.", "arn:aws-us-gov:")
        )
        display = {} if gov_cloud else {"display": "summarized"}
        if is_adaptive(model):
            binding = not gov_cloud and _native_xhigh(model)
            thinking: dict[str, Any] = {"type": "adaptive", **display}
            if binding:
                thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
            fields: dict[str, Any] = {
                "thinking": thinking,
                "output_config": {"effort": _effort(model, level)},
            }
            if binding:
                fields["anthropic_beta"] = [BLOCK_BINDING_BETA]
            return fields, max_tokens
        key = "high" if level in ("xhigh", "max") else level
        max_tokens, budget = thinking_budget(key, max_tokens, model.max_tokens, options.thinking_budgets)
        budget = min(budget, max(0, max_tokens - 1024))
        fields = {"thinking": {"type": "enabled", "budget_tokens": budget, **display}}
        fields["anthropic_beta"] = [INTERLEAVED_THINKING_BETA]
        return fields, max_tokens
    if _any(model, "gpt-oss"):
        return {"reasoning_effort": GPT_OSS_EFFORT[level]}, max_tokens
    if _any(model, "gpt-"):
        mapped = level_map(model).get(level)
        return {"reasoning": {"effort": mapped if isinstance(mapped, str) else GPT_EFFORT[level]}}, max_tokens
    return None, max_tokens


def _effort(model: Model, level: str) -> str:
    if level == "xhigh" and _native_xhigh(model):
        return "xhigh"
    mapped = level_map(model).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def _normalize_id(call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return sanitize_id(call_id, 64)


def _text_block(text: str) -> dict[str, Any] | None:
    return {"text": text} if text.strip() else None


def _image(image: ImageContent) -> dict[str, Any]:
    image_format = IMAGE_FORMATS.get(image.mime_type)
    if image_format is None:
        raise ConfigError(f"Amazon Bedrock cannot take images of type {image.mime_type}")
    return {"image": {"format": image_format, "source": {"bytes": image.data}}}


def convert_messages(
    model: Model, context: Context, cache: bool = False, long_cache: bool = False
) -> list[dict[str, Any]]:
    """Context -> Converse ``messages`` (pi's shapes, after :func:`transform_messages`)."""
    out: list[dict[str, Any]] = []
    messages = transform_messages(context.messages, model, _normalize_id)
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message)})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_content(model, message)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        else:
            results: list[ToolResultMessage] = [message]
            while index < len(messages) and isinstance(messages[index], ToolResultMessage):
                results.append(messages[index])  # type: ignore[arg-type]
                index += 1
            out.append({"role": "user", "content": _tool_results(model, results)})
    if cache and out and out[-1]["role"] == "user":
        out[-1]["content"].append(_cache_point(long_cache))
    return out


def _user_content(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [_text_block(message.content) or {"text": EMPTY_TEXT}]
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            text = _text_block(block.text)
            if text is not None:
                blocks.append(text)
        elif isinstance(block, ImageContent):
            blocks.append(_image(block))
    return blocks or [{"text": EMPTY_TEXT}]


def _assistant_content(model: Model, message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            text = _text_block(block.text)
            if text is not None:
                blocks.append(text)
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": block.id,
                        "name": block.name,
                        "input": _without_empty_keys(block.arguments),
                    }
                }
            )
        elif isinstance(block, ThinkingContent):
            converted = _thinking(model, block)
            if converted is not None:
                blocks.append(converted)
    return blocks


def _thinking(model: Model, block: ThinkingContent) -> dict[str, Any] | None:
    if block.redacted:
        # Encrypted reasoning goes back as the bytes it came as (base64 in JSON).
        data = block.thinking_signature or ""
        try:
            valid = bool(data) and bool(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            valid = False
        return {"reasoningContent": {"redactedContent": data}} if valid else None
    if not block.thinking.strip():
        return None
    if not is_claude(model):
        return {"reasoningContent": {"reasoningText": {"text": block.thinking}}}
    if not (block.thinking_signature or "").strip():
        return {"text": block.thinking}  # unsigned (a cut stream): Bedrock would refuse it as reasoning
    return {
        "reasoningContent": {"reasoningText": {"text": block.thinking, "signature": block.thinking_signature}}
    }


def _without_empty_keys(value: Any) -> Any:
    """Bedrock's document type refuses empty keys (pi's sanitizeBedrockDocument)."""
    if isinstance(value, list):
        return [_without_empty_keys(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_empty_keys(item) for key, item in value.items() if key}
    return value


def _tool_results(model: Model, results: list[ToolResultMessage]) -> list[dict[str, Any]]:
    """All consecutive results in one user message. Claude refuses images in an error result:
    there they follow every result of the turn, after a caption (pi #10794)."""
    blocks: list[dict[str, Any]] = []
    trailing: list[dict[str, Any]] = []
    claude = is_claude(model)
    for result in results:
        content = [block for block in result.content if isinstance(block, TextContent | ImageContent)]
        images = [block for block in content if isinstance(block, ImageContent)]
        if claude and result.is_error and images:
            content = images_as_placeholder(content, ERROR_IMAGE_PLACEHOLDER)
            caption = f"Images from the error result of tool call {result.tool_call_id} ({result.tool_name}):"
            trailing.append({"text": caption})
            trailing.extend(_image(image) for image in images)
        converted: list[dict[str, Any]] = []
        for block in content:
            if isinstance(block, ImageContent):
                converted.append(_image(block))
            else:
                text = _text_block(block.text)
                if text is not None:
                    converted.append(text)
        blocks.append(
            {
                "toolResult": {
                    "toolUseId": result.tool_call_id,
                    "content": converted or [{"text": EMPTY_TEXT}],
                    "status": "error" if result.is_error else "success",
                }
            }
        )
    return blocks + trailing


# --- stream ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Open:
    index: int
    kind: str
    redacted: list[bytes] = field(default_factory=list)


class ConverseStreamParser(ParserBase):
    """Event-stream messages (name = event type) -> builder calls."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.blocks: dict[int, _Open] = {}
        self.stop_reason: str | None = None
        self.error_message: str | None = None

    def on_event(self, event: str, data: str) -> None:
        if event.startswith(("exception:", "error:")):
            self._exception(event, data)
            return
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            payload = lenient_json(data)
        if not isinstance(payload, dict) or self.builder.finished:
            return
        if event == "contentBlockDelta":
            self._delta(payload)
        elif event == "messageStart":
            if payload.get("role", "assistant") != "assistant":
                raise ProviderError("Unexpected message start: the stream began a user message")
            self.builder.start()
        elif event == "contentBlockStart":
            self._start(payload)
        elif event == "contentBlockStop":
            self._stop(payload.get("contentBlockIndex"))
        elif event == "messageStop":
            reason = payload.get("stopReason")
            self.stop_reason = reason if isinstance(reason, str) else ""
        elif event == "metadata":
            self._usage(payload.get("usage"))

    def end(self) -> None:
        builder = self.builder
        if builder.finished:
            return
        for wire in list(self.blocks):
            self._stop(wire)
        if self.stop_reason is None:
            raise ProviderError(
                "Bedrock stream ended without a stop reason", retryable=not builder.has_output
            )
        mapped = STOP_REASONS.get(self.stop_reason)
        if mapped is None:
            reason = self.stop_reason
            builder.fail(f"Provider stopped with: {reason}" if reason else "An unknown error occurred")
            return
        builder.finish(mapped)

    def _exception(self, event: str, data: str) -> None:
        kind, _, name = event.partition(":")
        message = data
        if kind == "exception":
            try:
                parsed = orjson.loads(data)
                if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
                    message = parsed["message"]
            except orjson.JSONDecodeError:
                pass
        prefix, retryable = EXCEPTIONS.get(name, (name, False))
        message = " ".join(message.split())[:500]
        raise ProviderError(f"{prefix}: {message}" if message else prefix, retryable=retryable)

    def _start(self, payload: dict[str, Any]) -> None:
        wire = payload.get("contentBlockIndex")
        tool = (payload.get("start") or {}).get("toolUse")
        if isinstance(wire, int) and isinstance(tool, dict):
            index = self.builder.toolcall_start(str(tool.get("toolUseId") or ""), str(tool.get("name") or ""))
            self.blocks[wire] = _Open(index, "toolCall")

    def _open(self, wire: int, kind: str) -> _Open:
        """The block at ``wire``, opened as ``kind`` on its first delta (Bedrock sends no
        ``contentBlockStart`` for text and reasoning)."""
        found = self.blocks.get(wire)
        if found is not None:
            return found
        builder = self.builder
        index = builder.text_start() if kind == "text" else builder.thinking_start()
        block = self.blocks[wire] = _Open(index, kind)
        return block

    def _delta(self, payload: dict[str, Any]) -> None:
        wire = payload.get("contentBlockIndex")
        delta = payload.get("delta")
        if not isinstance(wire, int) or not isinstance(delta, dict):
            return
        builder = self.builder
        text = delta.get("text")
        if isinstance(text, str):
            block = self._open(wire, "text")
            if block.kind == "text":
                builder.text_delta(block.index, text)
            return
        tool = delta.get("toolUse")
        if isinstance(tool, dict):
            call = self.blocks.get(wire)
            if call is not None and call.kind == "toolCall":
                builder.toolcall_delta(call.index, str(tool.get("input") or ""))
            return
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            block = self._open(wire, "thinking")
            if block.kind != "thinking":
                return
            state = builder.blocks[block.index]
            if isinstance(reasoning.get("text"), str):
                builder.thinking_delta(block.index, reasoning["text"])
            signature = reasoning.get("signature")
            if isinstance(signature, str) and signature and not state.redacted:
                builder.set_signature(block.index, signature, append=True)
            redacted = reasoning.get("redactedContent")
            if isinstance(redacted, str) and redacted:
                if not state.redacted:
                    state.redacted = True
                    state.signature = ""
                    builder.thinking_delta(block.index, REDACTED_THINKING_TEXT)
                try:
                    block.redacted.append(base64.b64decode(redacted))
                except (binascii.Error, ValueError):
                    raise ProviderError("Bedrock sent reasoning that is not base64") from None

    def _stop(self, wire: Any) -> None:
        block = self.blocks.pop(wire, None) if isinstance(wire, int) else None
        if block is None:
            return
        if block.redacted:
            # Kept as one base64 text, the way the session stores opaque reasoning.
            self.builder.set_signature(
                block.index, base64.b64encode(b"".join(block.redacted)).decode("ascii")
            )
        self.builder.end(block.index)

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return

        def count(name: str) -> int:
            value = usage.get(name)
            return value if isinstance(value, int) and value >= 0 else 0

        builder = self.builder
        builder.set_usage(
            input=count("inputTokens"),
            output=count("outputTokens"),
            cache_read=count("cacheReadInputTokens"),
            cache_write=count("cacheWriteInputTokens"),
        )
        # Bedrock's own total (pi keeps it); input + output when it has none.
        builder.usage.total_tokens = count("totalTokens") or builder.usage.input + builder.usage.output


CLIENT = BedrockClient()
