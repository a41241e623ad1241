"""OpenAI Chat Completions (``POST {baseUrl}/chat/completions``) and every server that speaks it.

Request: pi's shapes exactly (user content as parts, assistant text as one string or null,
``tool`` role results, tool-result images re-sent in a user message after the results), with
pi's ``compat`` switches from models.json. Stream: ``delta.content`` (a string, or Mistral's
array of parts), reasoning in ``reasoning_content`` / ``reasoning`` / ``reasoning_text``,
``tool_calls`` fragments keyed by ``index``, ``finish_reason``, the usage chunk, ``[DONE]``,
and error events mid-stream.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import orjson

from pi_tui import jsonio
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError, lenient_json
from pi_tui.ai.openai_responses import short_hash
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

TOOL_IMAGES_NOTE = "Attached image(s) from tool result:"
IMAGE_ONLY_RESULT = "(see attached image)"
NO_OUTPUT_RESULT = "(no tool output)"
BRIDGE_TEXT = "I have processed the tool results."
"""What pi puts between tool results and a user message for servers that need an assistant turn."""
FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "content_filter": "error",
}
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def compat(model: Model, key: str, default: Any) -> Any:
    """``model.compat[key]``, else what pi detects from the provider and base URL, else
    ``default`` (pi's ``getCompat``: explicit values win key by key)."""
    value = model.compat.get(key)
    if value is None:
        value = detected_compat(model.provider, model.base_url, model.id).get(key)
    return default if value is None else value


@functools.lru_cache(maxsize=512)
def detected_compat(provider: str, base_url: str, model_id: str) -> dict[str, Any]:
    """pi 1.5.2's ``detectCompat``: the switches a server is known to need, judged from the
    provider name and the base URL, for models whose ``compat`` does not say.

    "Non-standard" servers (DeepSeek, Z.ai, Moonshot, Together, NVIDIA, Cerebras, xAI, Chutes,
    OpenCode, Cloudflare, Ant Ling) get no ``store`` and no ``developer`` role; some of them
    want ``max_tokens``; the reasoning request takes each one's own form (``thinkingFormat``).
    """
    zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base_url or "open.bigmodel.cn" in base_url
    together = provider == "together" or "api.together.ai" in base_url or "api.together.xyz" in base_url
    moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base_url
    openrouter = provider == "openrouter" or "openrouter.ai" in base_url
    workers_ai = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base_url
    ai_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base_url
    nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base_url
    ant_ling = provider == "ant-ling" or "api.ant-ling.com" in base_url
    cerebras = provider == "cerebras" or "cerebras.ai" in base_url
    deepseek = provider == "deepseek" or "deepseek.com" in base_url.lower()
    grok = provider == "xai" or "api.x.ai" in base_url
    chutes = "chutes.ai" in base_url
    opencode = provider == "opencode" or "opencode.ai" in base_url
    anthropic_model = model_id.startswith("anthropic/")
    non_standard = (
        nvidia or cerebras or grok or together or chutes or deepseek or zai or moonshot or opencode
    ) or (workers_ai or ai_gateway or ant_ling)
    max_tokens = chutes or deepseek or moonshot or ai_gateway or together or nvidia or ant_ling or zai
    if deepseek:
        thinking = "deepseek"
    elif zai:
        thinking = "zai"
    elif together:
        thinking = "together"
    elif ant_ling:
        thinking = "ant-ling"
    elif openrouter:
        thinking = "openrouter"
    else:
        thinking = "openai"
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": (openrouter and model_id.startswith(("anthropic/", "openai/")))
        or (not non_standard and not openrouter),
        "supportsReasoningEffort": not (
            grok or zai or moonshot or together or ai_gateway or nvidia or ant_ling
        ),
        "maxTokensField": "max_tokens" if max_tokens else "max_completion_tokens",
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": thinking,
        "cacheControlFormat": "anthropic" if provider == "openrouter" and anthropic_model else None,
        "sendSessionAffinityHeaders": openrouter,
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "supportsLongCacheRetention": not (together or workers_ai or ai_gateway or nvidia or ant_ling),
    }


class OpenAICompletionsClient:
    api = "openai-completions"

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        body = request_body(model, context, options)
        base = model.base_url.rstrip("/")
        if model.provider == "azure":  # a Foundry model: Azure's endpoint and deployment rules
            from pi_tui.ai import azure

            base = azure.base_url(model, options.provider_env)
            body["model"] = azure.deployment(model, options.provider_env)
        return HttpRequest(url=base + "/chat/completions", headers=request_headers(model, options), body=body)

    def parser(self, builder: MessageBuilder) -> CompletionsParser:
        return CompletionsParser(builder)


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """The usual headers, plus the session as pi's affinity headers where ``compat`` asks for
    them (``sendSessionAffinityHeaders``; detected for OpenRouter), so a conversation's
    requests reach the same backend and its prompt cache. The request's own headers win."""
    headers = stream_headers(model, options)
    session = options.session_id
    if session and compat(model, "sendSessionAffinityHeaders", False):
        given = {name.lower() for name in options.headers}
        for name in affinity_headers(model):
            if name not in given:
                headers[name] = session
    return headers


def affinity_headers(model: Model) -> tuple[str, ...]:
    """``x-session-id`` for OpenRouter's format; the others' three names otherwise."""
    form = compat(model, "sessionAffinityFormat", "openai")
    if form == "openrouter":
        return ("x-session-id",)
    both = ("x-client-request-id", "x-session-affinity")
    return ("session_id", *both) if form == "openai" else both


def long_cache_retention(options: StreamOptions) -> bool:
    """pi's ``PI_CACHE_RETENTION=long`` (auth.json's provider env, then the process's)."""
    value = options.provider_env.get("PI_CACHE_RETENTION") or os.environ.get("PI_CACHE_RETENTION") or ""
    return value.strip() == "long"


PROMPT_CACHE_KEY_MAX = 64
"""Characters of the session id OpenAI takes as ``prompt_cache_key``."""


def _prompt_cache_fields(model: Model, options: StreamOptions, long_cache: bool) -> dict[str, Any]:
    """``prompt_cache_key`` (the session id) where the server keys its cache by it (OpenAI; any
    server with ``promptCacheKeyMode: "enabled"``; a long retention where it is supported) and
    ``prompt_cache_retention: "24h"`` for a long retention (``supportsLongCacheRetention``)."""
    fields: dict[str, Any] = {}
    long_ok = long_cache and compat(model, "supportsLongCacheRetention", True)
    mode = compat(model, "promptCacheKeyMode", "auto")
    keyed = mode == "enabled" or (mode == "auto" and ("api.openai.com" in model.base_url or long_ok))
    if keyed and options.session_id:
        fields["prompt_cache_key"] = options.session_id[:PROMPT_CACHE_KEY_MAX]
    if long_ok:
        fields["prompt_cache_retention"] = "24h"
    return fields


def _cache_control(model: Model, long_cache: bool) -> dict[str, Any] | None:
    """``compat.cacheControlFormat: "anthropic"`` (Claude behind OpenRouter): the breakpoint
    marker, an hour long with a long retention where supported."""
    if compat(model, "cacheControlFormat", None) != "anthropic":
        return None
    if long_cache and compat(model, "supportsLongCacheRetention", True):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def apply_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, control: dict[str, Any]
) -> None:
    """Anthropic's cache breakpoints where pi puts them: the system prompt, the last tool, and the
    last user / assistant / tool message that has text (a string becomes one text part)."""
    for message in messages:
        if message.get("role") in ("system", "developer"):
            _mark_text(message, control)
            break
    if tools:
        tools[-1]["cache_control"] = control
    for message in reversed(messages):
        if message.get("role") in ("user", "assistant", "tool") and _mark_text(message, control):
            return


def _mark_text(message: dict[str, Any], control: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": control}]
        return True
    if isinstance(content, list):
        for part in reversed(content):
            if isinstance(part, dict) and part.get("type") == "text":
                part["cache_control"] = control
                return True
    return False


def request_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model.id, "messages": convert_messages(model, context)}
    body["stream"] = True
    long_cache = long_cache_retention(options)
    body.update(_prompt_cache_fields(model, options, long_cache))
    if compat(model, "supportsUsageInStreaming", True):
        body["stream_options"] = {"include_usage": True}
    if compat(model, "supportsStore", True):
        body["store"] = False
    max_tokens = options.max_tokens or model.max_tokens
    if max_tokens:
        body[compat(model, "maxTokensField", "max_completion_tokens")] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        strict = compat(model, "supportsStrictMode", False)  # pi 1.x: the field only where it is known
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    **({"strict": False} if strict else {}),
                },
            }
            for tool in context.tools
        ]
        if compat(model, "zaiToolStream", False):
            body["tool_stream"] = True
    elif compat(model, "requiresToolsWithToolHistory", False) and _has_tool_history(context):
        body["tools"] = []
    control = _cache_control(model, long_cache)
    if control is not None:
        apply_cache_control(body["messages"], body.get("tools"), control)
    if compat(model, "vllmPriority", None) is not None:
        body["priority"] = model.compat["vllmPriority"]
    level = request_level(model, options.thinking)  # xhigh / max only where the model has them
    if model.reasoning:
        budget = _thinking_budget(model, level, body, options)
        body.update(thinking_fields(model, level, budget))
        field = compat(model, "thinkingTokenBudgetField", None) or (
            "thinking_token_budget" if compat(model, "supportsThinkingTokenBudget", False) else None
        )
        if field and budget > 0:
            body[field] = budget
    routing = model.compat.get("openRouterRouting")
    if routing is not None:
        body["provider"] = routing
    gateway = model.compat.get("vercelGatewayRouting")
    if isinstance(gateway, dict) and (gateway.get("only") or gateway.get("order")):
        chosen = {key: gateway[key] for key in ("only", "order") if gateway.get(key)}
        body["providerOptions"] = {"gateway": chosen}
    body.update(sampling_params(model, options.thinking))  # last: it may override named fields
    return body


def thinking_fields(model: Model, level: str | None, budget: int = 0) -> dict[str, Any]:
    """The request fields that ask a reasoning model for ``level`` (None: no thinking), in the
    form ``compat.thinkingFormat`` names (pi 1.x; default ``openai``: ``reasoning_effort``).
    ``budget`` is the thinking budget a ``chat-template`` / ``baseten`` value may ask for."""
    form = compat(model, "thinkingFormat", "openai")
    effort_ok = compat(model, "supportsReasoningEffort", True)
    table = model.thinking_level_map or {}
    off_allowed = not ("off" in table and table["off"] is None)  # null: "off" cannot be asked for
    off_value = table.get("off")
    effort = provider_value(model, level) if level is not None else None
    fields: dict[str, Any] = {}
    if form == "zai":
        fields["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and effort_ok:
            fields["reasoning_effort"] = effort
    elif form == "qwen":
        fields["enable_thinking"] = effort is not None
        if effort and effort_ok:
            fields["reasoning_effort"] = effort
    elif form == "qwen-chat-template":
        fields["chat_template_kwargs"] = {"enable_thinking": effort is not None, "preserve_thinking": True}
    elif form == "deepseek":
        if effort:
            fields["thinking"] = {"type": "enabled"}
        elif off_allowed:
            fields["thinking"] = {"type": "disabled"}
        if effort and effort_ok:
            fields["reasoning_effort"] = effort
    elif form == "openrouter":
        if effort:
            fields["reasoning"] = {"effort": effort}
        elif off_allowed:
            fields["reasoning"] = {"effort": off_value if isinstance(off_value, str) else "none"}
    elif form == "ant-ling":
        mapped = table.get(level) if level else None
        if isinstance(mapped, str):
            fields["reasoning"] = {"effort": mapped}
    elif form == "together":
        fields["reasoning"] = {"enabled": effort is not None}
        if effort and effort_ok:
            fields["reasoning_effort"] = effort
    elif form == "string-thinking":
        if effort:
            fields["thinking"] = effort
        elif off_allowed:
            fields["thinking"] = off_value if isinstance(off_value, str) else "none"
    elif form == "chat-template":
        values = _template_values(model, level, compat(model, "chatTemplateKwargs", {}), budget)
        if values:
            fields["chat_template_kwargs"] = values
    elif form == "baseten":
        values = _template_values(model, level, compat(model, "chatTemplateArgs", {}), budget)
        if values:
            fields["chat_template_args"] = values
        key = level if level is not None else "off"
        chosen = table.get(key, level)
        if effort_ok and isinstance(chosen, str):
            fields["reasoning_effort"] = chosen
    elif form == "openai":
        if effort and effort_ok:
            fields["reasoning_effort"] = effort
        elif not effort and effort_ok and isinstance(off_value, str):
            fields["reasoning_effort"] = off_value
    return fields


def _template_values(model: Model, level: str | None, values: Any, budget: int) -> dict[str, Any]:
    """``chatTemplateKwargs`` / ``chatTemplateArgs`` with pi's ``{"$var": ...}`` values filled in:
    ``thinking.enabled`` (a boolean), ``thinking.budget`` (the token budget), anything else the
    level's provider value (the map's, else the level); ``omitWhenOff`` drops a value when off."""
    if not isinstance(values, dict):
        return {}
    table = model.thinking_level_map or {}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            out[key] = value
            continue
        if level is None and value.get("omitWhenOff"):
            continue
        var = value.get("$var")
        if var == "thinking.enabled":
            out[key] = level is not None
        elif var == "thinking.budget":
            if budget > 0:
                out[key] = budget
        else:
            slot = level if level is not None else "off"
            chosen = table.get(slot, level)
            if isinstance(chosen, str):
                out[key] = chosen
    return out


def _thinking_budget(model: Model, level: str | None, body: dict[str, Any], options: StreamOptions) -> int:
    """pi's budget for ``level`` (xhigh / max as high; the user's ``thinkingBudgets`` first),
    leaving 1024 tokens of the request's output ceiling for the answer."""
    if level is None:
        return 0
    key = "high" if level in ("xhigh", "max") else level
    budget = options.thinking_budgets.get(key, _BUDGETS.get(key, 0))
    ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or model.max_tokens
    return min(budget, max(0, ceiling - 1024))


_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""pi's default thinking budgets (tokens per level)."""


def _has_tool_history(context: Context) -> bool:
    return any(
        isinstance(message, ToolResultMessage)
        or (isinstance(message, AssistantMessage) and any(isinstance(b, ToolCall) for b in message.content))
        for message in context.messages
    )


MAX_TOOL_CALL_ID_LENGTH = 40
"""OpenAI's limit on a Chat Completions tool call id."""


def normalize_tool_call_id(call_id: str, model: Model, _source: AssistantMessage) -> str:
    """Another model's call id as Chat Completions takes it (pi 1.x's rule).

    A Responses id ``call|item`` becomes ``call_item``, both halves sanitised: one turn's calls
    may share the call half and differ only by item, and Chat Completions needs distinct ids.
    Over OpenAI's 40 characters it is the call half cut short, ``_``, and 8 characters of pi's
    hash of the whole id (so pi and pi-tui send the same id). On OpenAI itself any other longer
    id is cut to 40; anything else is sent as it is.
    """
    if "|" in call_id:
        call_part, _, item_part = call_id.partition("|")
        call_part, item_part = sanitize_id(call_part, len(call_part)), sanitize_id(item_part, len(item_part))
        combined = f"{call_part}_{item_part}" if item_part else call_part
        if len(combined) <= MAX_TOOL_CALL_ID_LENGTH:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{call_part[: max(1, MAX_TOOL_CALL_ID_LENGTH - len(digest) - 1)]}_{digest}"
    if model.provider == "openai":
        return call_id[:MAX_TOOL_CALL_ID_LENGTH]
    return call_id


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Context -> Chat Completions ``messages`` (pi's exact shapes, after transform_messages)."""
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        role = "developer" if model.reasoning and compat(model, "supportsDeveloperRole", False) else "system"
        out.append({"role": role, "content": context.system_prompt})
    supports_images = "image" in model.input
    bridge = compat(model, "requiresAssistantAfterToolResult", False)
    messages = transform_messages(context.messages, model, normalize_tool_call_id)
    last_role: str | None = None
    index = 0
    while index < len(messages):
        message = messages[index]
        if bridge and last_role == "toolResult" and isinstance(message, UserMessage):
            out.append({"role": "assistant", "content": BRIDGE_TEXT})
        if isinstance(message, ToolResultMessage):
            images: list[ImageContent] = []
            while index < len(messages) and isinstance(messages[index], ToolResultMessage):
                result = messages[index]
                assert isinstance(result, ToolResultMessage)
                out.append(_tool_result(model, result))
                if supports_images:
                    images.extend(images_of(result.content))
                index += 1
            if images:
                if bridge:
                    out.append({"role": "assistant", "content": BRIDGE_TEXT})
                parts: list[dict[str, Any]] = [{"type": "text", "text": TOOL_IMAGES_NOTE}]
                parts.extend({"type": "image_url", "image_url": {"url": data_url(i)}} for i in images)
                out.append({"role": "user", "content": parts})
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        if isinstance(message, UserMessage):
            content = _user_content(message)
            if content != []:
                out.append({"role": "user", "content": content})
        else:
            converted = _assistant(model, message)
            if converted is not None:
                out.append(converted)
        last_role = message.role
        index += 1
    return out


def _tool_result(model: Model, message: ToolResultMessage) -> dict[str, Any]:
    text = text_of(message.content)
    if not text.strip():  # pi's placeholders: an image-only result, or no output at all
        text = IMAGE_ONLY_RESULT if images_of(message.content) else NO_OUTPUT_RESULT
    converted: dict[str, Any] = {
        "role": "tool",
        "content": text,
        "tool_call_id": message.tool_call_id,
    }
    if compat(model, "requiresToolResultName", False) and message.tool_name:
        converted["name"] = message.tool_name
    return converted


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    """A string stays a string; blocks become parts (a text-only model's images are text by now)."""
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append({"type": "image_url", "image_url": {"url": data_url(block)}})
    return parts


def _assistant(model: Model, message: AssistantMessage) -> dict[str, Any] | None:
    """Text as one string (or null); the model's own thinking under the field its signature names
    (``reasoning_content`` ...), or as text for servers that want that; tool calls with the
    ``reasoning_details`` their signatures hold."""
    converted: dict[str, Any] = {
        "role": "assistant",
        "content": ""
        if compat(model, "requiresAssistantAfterToolResult", False)
        or compat(model, "requiresNonNullAssistantContent", False)
        else None,
    }
    texts = [b.text for b in message.content if isinstance(b, TextContent) and b.text.strip()]
    text = "".join(texts)
    thoughts = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    if thoughts and compat(model, "requiresThinkingAsText", False):
        joined = "\n\n".join(b.thinking for b in thoughts)
        parts = [{"type": "text", "text": joined}, *({"type": "text", "text": t} for t in texts)]
        converted["content"] = parts
    elif text:
        converted["content"] = text
    calls = [block for block in message.content if isinstance(block, ToolCall)]
    details = [_reasoning_detail(call.thought_signature) for call in calls if call.thought_signature]
    field = thoughts[0].thinking_signature if thoughts else None
    # pi 1.x: reasoning_details, when the calls carry them, stand for the thinking; a raw field
    # is sent only without them, and only under a name Chat Completions servers use.
    if field in REASONING_FIELDS and not any(details) and not compat(model, "requiresThinkingAsText", False):
        converted[field] = "\n".join(b.thinking for b in thoughts)
    if calls:
        converted["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": jsonio.dumps(call.arguments).decode()},
            }
            for call in calls
        ]
        if any(details):
            converted["reasoning_details"] = [detail for detail in details if detail]
    if (
        compat(model, "requiresReasoningContentOnAssistantMessages", False)
        and model.reasoning
        and "reasoning_content" not in converted
    ):
        converted["reasoning_content"] = ""
    if not converted["content"] and "tool_calls" not in converted:
        return None
    return converted


def _reasoning_detail(signature: str) -> Any:
    """A tool call's signature as OpenRouter's ``reasoning_details`` entry (JSON), or None."""
    try:
        return orjson.loads(signature)
    except orjson.JSONDecodeError:
        return None


class CompletionsParser(ParserBase):
    """Chat Completions chunks -> builder calls (choice 0 only)."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.current: int | None = None
        self.current_kind = ""
        self.calls: dict[int, int] = {}  # wire tool index -> block index
        self.call_names: dict[int, str] = {}
        self.finish: str | None = None
        self.done = False

    def on_event(self, event: str, data: str) -> None:
        if data == "[DONE]":
            self.done = True
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            chunk = lenient_json(data)
        if not isinstance(chunk, dict):
            raise ProviderError(f"Unexpected data in the stream: {data[:200]}")
        if event == "error" or "error" in chunk:
            raise ProviderError(_error_text(chunk.get("error", chunk)), retryable=False)
        builder = self.builder
        if builder.response_id is None:
            builder.start()
            if isinstance(chunk.get("id"), str):
                builder.response_id = chunk["id"]
        usage = chunk.get("usage")
        if usage:
            self._usage(usage)
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if delta:
                content = delta.get("content")
                if self.current_kind == "text" and len(delta) == 1 and content.__class__ is str:
                    if content:  # hot path: more text for the open text block
                        builder.text_delta(self.current, content)  # type: ignore[arg-type]
                else:
                    self._delta(delta)
            reason = choice.get("finish_reason")
            if reason:
                self.finish = reason

    def end(self) -> None:
        builder = self.builder
        reason = FINISH_REASONS.get(self.finish or "stop", "stop")
        if reason == "error":
            builder.fail(f"The provider stopped the reply ({self.finish})")
            return
        if self.finish is None and self.calls:
            reason = "toolUse"
        builder.finish(reason)

    def _delta(self, delta: dict[str, Any]) -> None:
        content = delta.get("content")
        if isinstance(content, str):
            self._append("text", content)
            if len(delta) == 1:
                return  # the common case: a plain text delta and nothing else
        elif isinstance(content, list):
            for part in content:
                self._part(part)
        for name in REASONING_FIELDS:
            reasoning = delta.get(name)
            if isinstance(reasoning, str) and reasoning:
                self._append("thinking", reasoning)
                break
        refusal = delta.get("refusal")
        if isinstance(refusal, str):
            self._append("text", refusal)
        for call in delta.get("tool_calls") or ():
            self._tool_call(call)

    def _part(self, part: Any) -> None:
        if not isinstance(part, dict):
            return
        kind = part.get("type")
        if kind == "text":
            self._append("text", part.get("text") or "")
        elif kind == "thinking":
            thinking = part.get("thinking")
            if isinstance(thinking, str):
                self._append("thinking", thinking)
            elif isinstance(thinking, list):
                for inner in thinking:
                    if isinstance(inner, dict):
                        self._append("thinking", inner.get("text") or "")

    def _append(self, kind: str, text: str) -> None:
        if text:
            self.current = self.builder.append_prose(kind, text)
            self.current_kind = kind

    def _close_current(self) -> None:
        """End the open block (text, thinking or a tool call) before another one starts."""
        if self.current is not None:
            self.builder.end(self.current)
        self.current = None
        self.current_kind = ""

    def _tool_call(self, call: dict[str, Any]) -> None:
        wire_index = call.get("index", len(self.calls))
        function = call.get("function") or {}
        block = self.calls.get(wire_index)
        if block is None:
            self._close_current()
            block = self.builder.toolcall_start(call.get("id") or "", function.get("name") or "")
            self.calls[wire_index] = block
            self.current, self.current_kind = block, "toolCall"
        else:
            state = self.builder.blocks[block]
            if not state.call_id and call.get("id"):
                state.call_id = call["id"]
            name = function.get("name")
            if name and name != state.name:
                state.name = name if not state.name else state.name + name
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            state = self.builder.blocks[block]
            if state.json is not None and state.json.text == arguments and arguments.strip().endswith("}"):
                return  # the whole call sent twice (seen from OpenRouter): keep one copy
            self.builder.toolcall_delta(block, arguments)

    def _usage(self, usage: dict[str, Any]) -> None:
        """Cache hits where each server puts them (OpenAI / OpenRouter: ``prompt_tokens_details.
        cached_tokens``; DeepSeek: ``prompt_cache_hit_tokens``; Kimi: ``cached_tokens``) and
        OpenRouter's separate ``cache_write_tokens``, both out of the input count, as pi does."""
        prompt = int(usage.get("prompt_tokens") or 0)
        details = usage.get("prompt_tokens_details") or {}
        cached = _first_count(
            details.get("cached_tokens"), usage.get("prompt_cache_hit_tokens"), usage.get("cached_tokens")
        )
        written = int(details.get("cache_write_tokens") or 0)
        self.builder.set_usage(
            input=max(prompt - cached - written, 0),
            output=int(usage.get("completion_tokens") or 0),
            cache_read=cached,
            cache_write=written,
        )


def _first_count(*values: Any) -> int:
    """The first value that is present (a 0 counts, as JavaScript's ``??`` takes it)."""
    for value in values:
        if value is not None:
            return int(value)
    return 0


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        message = error.get("message") or error.get("error") or orjson.dumps(error).decode()
        code = error.get("code") or error.get("type")
        return f"{message} ({code})" if code else str(message)
    return str(error)


CLIENT = OpenAICompletionsClient()
