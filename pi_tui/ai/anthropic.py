"""Anthropic Messages (``POST {baseUrl}/v1/messages``).

Request: pi's shapes exactly (checked against a request the real pi sent, see
``tests/data/pi-sessions/04-thinking-anthropic``): user content as blocks, consecutive tool
results merged into one user message of ``tool_result`` blocks, thinking sent back with its
signature (only to the model that signed it), prompt-cache breakpoints on the system prompt, the
last tool and the last user block, and pi's thinking budgets.

Stream: ``message_start`` / ``content_block_*`` / ``message_delta`` / ``message_stop``, ``ping``
and mid-stream ``error`` events. Blocks that are not ours to keep (server tools, search results,
compaction, anything new) are skipped without shifting the indices of the blocks we do keep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import orjson

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError, lenient_json
from pi_tui.ai.protocol import HttpRequest, ParserBase
from pi_tui.ai.thinking import clamp_level, forces_adaptive, level_map
from pi_tui.ai.transform import sanitize_id, transform_messages
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.ai.wire import stream_headers, text_of
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

API_VERSION = "2023-06-01"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01"
"""For a model whose ``compat.allowedFallbackModels`` names models the server may answer with."""
MID_CONVERSATION_EFFORT_BETAS = (
    "mid-conversation-output-config-2026-07-01",
    "thinking-binding-controls-2026-08-01",
)
"""For ``compat.supportsMidConvoEffort``: the effort rides in system messages, thinking is bound."""
INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
"""For models that take tool changes mid-conversation (``supportsMidConvoSystemMessages`` and
``supportsMidConvoToolChanges``): pi declares a deferred placeholder tool with its tools."""
DEFERRED_TOOL_PLACEHOLDER = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}
"""pi 1.5.2 sends this never-activated tool after the real ones so that a later tool change
keeps the cached prefix; sending the same keeps pi-tui's prefix and pi's alike."""
BOUND_THINKING = {"prefix_mismatch_behavior": "drop_block"}
"""``thinking.block_binding`` for mid-conversation-effort models: a thinking block whose prefix
no longer matches is dropped instead of failing the request with a 400."""
CONTEXT_SAFETY_TOKENS = 4096
CONTEXT_SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_RATIO_MARGIN = 32_768
CACHE_CONTROL = {"type": "ephemeral"}
"""Copied into each body, so a caller editing one request cannot change the next."""
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_OUTPUT_TOKENS = 1024
"""What pi leaves for the answer when the thinking budget would eat all of ``max_tokens``."""
ADAPTIVE_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
"""Effort for a level the model's ``thinkingLevelMap`` does not name (anything else: high)."""
REDACTED_THINKING_TEXT = "[Reasoning redacted]"
IMAGE_PLACEHOLDER = "(see attached image)"
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
    "sensitive": "error",
}
RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
"""Mid-stream error types that are the server's trouble, not the request's (529, 500, 429, 504)."""

# A Claude Pro/Max login (an OAuth token, ``sk-ant-oat...``, from auth.json or
# ANTHROPIC_OAUTH_TOKEN) is accepted only from Claude Code: pi sends what Claude Code sends.
OAUTH_TOKEN_MARK = "sk-ant-oat"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_VERSION = "2.1.322"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_TOOLS = (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
    "ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite",
    "WebFetch", "WebSearch",
)  # fmt: skip
"""Claude Code's tool names: a tool of ours with one of these names, in any case, is sent
under Claude Code's spelling (``read`` -> ``Read``) and answered under ours."""
_CLAUDE_CODE_NAMES = {name.lower(): name for name in CLAUDE_CODE_TOOLS}
_SENT_NAMES: ContextVar[Mapping[str, str] | None] = ContextVar("anthropic_sent_tool_names", default=None)
"""Sent name -> our name for the request this task built last: the task that builds a request
is the one that reads its answer (pi_tui/ai/stream.py), so its parser finds the names here."""
_SENT_EFFORT: ContextVar[str | None] = ContextVar("anthropic_sent_effort", default=None)
"""The managed effort the request this task built last asked for (the same way as the names)."""
ANTHROPIC_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})


def is_oauth_token(key: str | None) -> bool:
    """An Anthropic subscription token (pi tells them from API keys the same way)."""
    return key is not None and OAUTH_TOKEN_MARK in key


def claude_code_name(name: str) -> str:
    return _CLAUDE_CODE_NAMES.get(name.lower(), name)


class AnthropicClient:
    api = "anthropic-messages"

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        headers = request_headers(model, options, has_tools=bool(context.tools))
        body = request_body(model, context, options)
        marker = body["messages"][-1] if body["messages"] else {}
        managed = marker.get("role") == "system" and "output_config" in marker
        _SENT_EFFORT.set(marker["output_config"]["effort"] if managed else None)
        sent: dict[str, str] = {}
        if model.provider != "github-copilot" and is_oauth_token(options.api_key):
            sent = as_claude_code(body, context)
        _SENT_NAMES.set(sent)
        return HttpRequest(url=model.base_url.rstrip("/") + "/v1/messages", headers=headers, body=body)

    def parser(self, builder: MessageBuilder) -> MessagesParser:
        builder.provider_thinking_level = _SENT_EFFORT.get()
        return MessagesParser(builder, tool_names=_SENT_NAMES.get())


def as_claude_code(body: dict[str, Any], context: Context) -> dict[str, str]:
    """The body of a subscription request as pi sends it: Claude Code's identity as the first
    system block (the system prompt after it, each with the cache breakpoint) and tools under
    Claude Code's names, also in the history. Returns sent name -> our name for the answer."""
    cache = {"cache_control": dict(CACHE_CONTROL)}
    body["system"] = [{"type": "text", "text": CLAUDE_CODE_IDENTITY, **cache}, *body.get("system", [])]
    for tool in body.get("tools", []):
        tool["name"] = claude_code_name(tool["name"])
    for message in body["messages"]:
        if message["role"] == "assistant":
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    block["name"] = claude_code_name(block["name"])
    ours = [tool.name for tool in context.tools]
    return {claude_code_name(name): name for name in ours if claude_code_name(name) != name}


# --- request --------------------------------------------------------------------------------


def thinking_enabled(model: Model, options: StreamOptions) -> bool:
    return model.reasoning and options.thinking != "off" and clamp_level(model, options.thinking) != "off"


def is_adaptive(model: Model) -> bool:
    """Whether the model thinks adaptively (an effort instead of a token budget): pi 1.x's
    ``compat.forceAdaptiveThinking``, which its catalogue sets for the Claude models that need
    it (pi 0.73 guessed from the id; a models.json entry now says so itself)."""
    return forces_adaptive(model) is True


def adaptive_effort(model: Model, level: str) -> str:
    """The effort of a level the model has (already clamped): its map's value, else pi's
    table."""
    mapped = level_map(model).get(level)
    return mapped if isinstance(mapped, str) else ADAPTIVE_EFFORT.get(level, "high")


def effort_messages(model: Model) -> bool:
    """pi 1.5.2's managed effort (``compat.supportsMidConvoEffort``): the level goes in a system
    message after the conversation, the top-level effort stays "low" so the cached prefix never
    changes with the level (these models cannot turn thinking off)."""
    return model.compat.get("supportsMidConvoEffort") is True


def native_tool_changes(model: Model, has_tools: bool) -> bool:
    """Whether pi declares its tools for mid-conversation tool changes (and the placeholder)."""
    compat = model.compat
    return (
        has_tools
        and compat.get("supportsMidConvoSystemMessages") is True
        and compat.get("supportsMidConvoToolChanges") is True
    )


def fallback_models(model: Model) -> list[dict[str, Any]]:
    """``compat.allowedFallbackModels`` as the body's ``fallbacks`` (model ids only)."""
    allowed = model.compat.get("allowedFallbackModels")
    if not isinstance(allowed, list):
        return []
    return [{"model": entry["model"]} for entry in allowed if isinstance(entry, dict) and "model" in entry]


def request_headers(model: Model, options: StreamOptions, *, has_tools: bool = False) -> dict[str, str]:
    """Auth (x-api-key, or Bearer with ``authHeader``), API version, the betas pi 1.5.2 asks for,
    in its order (a login's Claude Code betas; the older fine-grained tool streaming where
    ``compat.supportsEagerToolInputStreaming`` is false; interleaved thinking for budget-thinking
    models; server-side fallback, mid-conversation effort and inline tools where the model's
    compat says so); models.json headers, then per-request headers, win."""
    extra = {"anthropic-version": API_VERSION, "anthropic-dangerous-direct-browser-access": "true"}
    betas: list[str] = []
    if has_tools and model.compat.get("supportsEagerToolInputStreaming") is False:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if thinking_enabled(model, options) and not is_adaptive(model):
        # Lets budget-thinking models think between tool calls, as pi asks for.
        betas.append(INTERLEAVED_THINKING_BETA)
    if fallback_models(model):
        betas.append(SERVER_SIDE_FALLBACK_BETA)
    if effort_messages(model):
        betas.extend(MID_CONVERSATION_EFFORT_BETAS)
    if native_tool_changes(model, has_tools):
        betas.append(INLINE_TOOLS_BETA)
    key_header = "authorization" if model.auth_header else "x-api-key"
    if model.provider == "github-copilot":
        key_header = "authorization"  # the Copilot token, as a bearer (pi)
    elif is_oauth_token(options.api_key):
        key_header = "authorization"
        betas[:0] = OAUTH_BETAS
        extra.update(
            {
                "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}",
                "x-app": "cli",
            }
        )
    if betas:
        extra["anthropic-beta"] = ",".join(betas)
    return stream_headers(model, options, key_header, extra=extra)


def request_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The JSON body, keys in pi's order (model, messages, max_tokens, stream, system, ...).

    ``max_tokens`` is the model's own maximum (as pi 1.5.2 asks; 0.73 capped it at 32000), fitted
    into the context window beside the conversation. A reasoning model at "off" gets thinking
    ``disabled`` unless its level map says it cannot turn thinking off."""
    max_tokens = fit_to_context(model, context, options.max_tokens or model.max_tokens)
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    active_effort: str | None = None
    if thinking_enabled(model, options):
        level = clamp_level(model, options.thinking)  # max on a model without it: the nearest
        if effort_messages(model):
            thinking = {"type": "adaptive", "display": "summarized", "block_binding": dict(BOUND_THINKING)}
            effort = "low"  # organisations may cap effort; the real level is in the system message
            active_effort = adaptive_effort(model, level)
        elif is_adaptive(model):
            thinking = {"type": "adaptive", "display": "summarized"}
            effort = adaptive_effort(model, level)
        else:
            max_tokens, budget = thinking_budget(
                level, max_tokens, model.max_tokens, options.thinking_budgets
            )
            max_tokens = fit_to_context(model, context, max_tokens)  # again, with the budget
            budget = min(budget, max(0, max_tokens - MIN_OUTPUT_TOKENS))
            thinking = {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
    elif model.reasoning and level_map(model).get("off", "off") is not None:
        thinking = {"type": "disabled"}

    messages = convert_messages(model, context, managed_effort=active_effort is not None)
    if active_effort is not None:
        messages.append(effort_marker(active_effort))
    body: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": True,
    }
    if context.system_prompt:
        body["system"] = [
            {"type": "text", "text": context.system_prompt, "cache_control": dict(CACHE_CONTROL)}
        ]
    # Not with thinking, nor where compat.supportsTemperature is false (Opus 4.7+), as pi 1.x.
    if (
        options.temperature is not None
        and (thinking is None or thinking["type"] == "disabled")
        and not effort_messages(model)
        and model.compat.get("supportsTemperature") is not False
    ):
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = convert_tools(context.tools, model)
        if native_tool_changes(model, True):
            body["tools"].append(dict(DEFERRED_TOOL_PLACEHOLDER))
    if thinking is not None:
        body["thinking"] = thinking
    if effort is not None:
        body["output_config"] = {"effort": effort}
    if fallbacks := fallback_models(model):
        body["fallbacks"] = fallbacks
    return body


def fit_to_context(model: Model, context: Context, max_tokens: int) -> int:
    """pi's ``clampMaxTokensToContext``: the output cap fitted into the context window beside
    the conversation, with a margin for the input being counted higher than estimated (15% of
    it, at least 4096 tokens; only the 4096 when the 15% would leave less than 32768)."""
    window = model.context_window
    if window <= 0:
        return max(1, max_tokens)
    used = context_estimate(context)
    room = window - used - max(CONTEXT_SAFETY_TOKENS, math.ceil(used * CONTEXT_SAFETY_RATIO))
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, window - used - CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(1, room))


def context_estimate(context: Context) -> int:
    """Tokens of the conversation as pi estimates them before a request: the newest usable
    usage an answer reported, plus characters / 4 (1200 per image) for what came after it."""
    messages = list(context.messages)
    start, tokens = 0, 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
            continue
        usage = message.usage
        if usage is not None:
            total = usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write
            if total > 0:
                start, tokens = index + 1, int(total)
                break
    return tokens + sum(_estimate(message) for message in messages[start:])


def _estimate(message: object) -> int:
    chars = 0
    if isinstance(message, UserMessage | ToolResultMessage):
        blocks = [TextContent(text=message.content)] if isinstance(message.content, str) else message.content
        for block in blocks:
            chars += len(block.text) if isinstance(block, TextContent) else 4800
    elif isinstance(message, AssistantMessage):
        for part in message.content:
            if isinstance(part, TextContent):
                chars += len(part.text)
            elif isinstance(part, ThinkingContent):
                chars += len(part.thinking)
            elif isinstance(part, ToolCall):
                chars += len(part.name) + len(orjson.dumps(part.arguments))
    return math.ceil(chars / 4)


def thinking_budget(
    level: str, max_tokens: int, model_max_tokens: int, budgets: Mapping[str, int] | None = None
) -> tuple[int, int]:
    """pi's ``adjustMaxTokensForThinking``: (max_tokens, budget_tokens) for a thinking level.

    The budget is added on top of the answer's tokens, within the model's limit; when the limit
    leaves no room beside the budget, the budget shrinks to leave ``MIN_OUTPUT_TOKENS`` for the
    answer. ``xhigh`` and ``max`` have no larger budget than ``high`` (they matter for adaptive
    models). ``budgets`` (the user's ``thinkingBudgets``) replaces the built-in budget of a level.
    """
    key = "high" if level in ("xhigh", "max") else level
    budget = (budgets or {}).get(key, THINKING_BUDGETS[key])
    total = min(max_tokens + budget, model_max_tokens)
    if total <= budget:
        budget = max(0, total - MIN_OUTPUT_TOKENS)
    return total, budget


def convert_tools(tools: list[Tool], model: Model | None = None) -> list[dict[str, Any]]:
    """Tools with streamed input; the last one carries the cache breakpoint for all of them.
    ``compat.supportsEagerToolInputStreaming`` / ``supportsCacheControlOnTools`` false (servers
    that reject those fields) leave them out, as pi 1.x does."""
    compat = model.compat if model is not None else {}
    eager = (
        {"eager_input_streaming": True} if compat.get("supportsEagerToolInputStreaming") is not False else {}
    )
    converted: list[dict[str, Any]] = [
        {
            "name": tool.name,
            "description": tool.description,
            **eager,
            "input_schema": {
                "type": "object",
                "properties": tool.parameters.get("properties") or {},
                "required": tool.parameters.get("required") or [],
            },
        }
        for tool in tools
    ]
    if converted and compat.get("supportsCacheControlOnTools") is not False:
        converted[-1]["cache_control"] = dict(CACHE_CONTROL)
    return converted


def effort_marker(effort: str) -> dict[str, Any]:
    """The system message that sets the effort of the reply after it (managed-effort models)."""
    return {"role": "system", "content": [], "output_config": {"effort": effort}}


def convert_messages(model: Model, context: Context, *, managed_effort: bool = False) -> list[dict[str, Any]]:
    """Context -> Messages ``messages`` (pi's exact shapes, after :func:`transform_messages`).

    ``managed_effort``: each earlier reply of this provider's managed-effort Claude is preceded
    by the effort it answered at (its ``providerThinkingLevel``), as pi 1.5.2 sends it."""
    out: list[dict[str, Any]] = []
    merging_results = False  # the last message out is a user message of tool results
    for message in transform_messages(context.messages, model, _normalize_id):
        if isinstance(message, ToolResultMessage):
            block = _tool_result(message)
            if merging_results:
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
                merging_results = True
            continue
        converted = _user(message) if isinstance(message, UserMessage) else _assistant(message)
        if converted is not None:
            if managed_effort and isinstance(message, AssistantMessage):
                level = (message.model_extra or {}).get("providerThinkingLevel")
                if (
                    message.api == model.api
                    and message.provider == model.provider
                    and level in ANTHROPIC_EFFORTS
                ):
                    out.append(effort_marker(level))
            out.append(converted)
            merging_results = False
    _mark_cache_breakpoint(out)
    return out


def normalize_tool_call_id(call_id: str) -> str:
    """Anthropic wants ``^[a-zA-Z0-9_-]{1,64}$``; other APIs' ids (OpenAI's ``|``) are not."""
    return sanitize_id(call_id, 64)


def _normalize_id(call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return normalize_tool_call_id(call_id)


def _image(image: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _user(message: UserMessage) -> dict[str, Any] | None:
    """Blank text is dropped (the API rejects it); images of a text-only model are already text."""
    if isinstance(message.content, str):
        return {"role": "user", "content": message.content} if message.content.strip() else None
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent) and block.text.strip():
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            blocks.append(_image(block))
    return {"role": "user", "content": blocks} if blocks else None


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": normalize_tool_call_id(message.tool_call_id),
        "content": _tool_result_content(message),
        "is_error": message.is_error,
    }


def _tool_result_content(message: ToolResultMessage) -> str | list[dict[str, Any]]:
    """Text only: one string. With images: blocks, and a text block first if there is none."""
    if not any(isinstance(b, ImageContent) for b in message.content):
        return text_of(message.content)
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            blocks.append(_image(block))
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": IMAGE_PLACEHOLDER})
    return blocks


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    # Another model's thinking was already left out, and its signatures dropped, by transform_messages.
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            converted = _thinking(block)
            if converted is not None:
                blocks.append(converted)
        elif isinstance(block, ToolCall):
            # Sanitised again (a no-op on Anthropic's own ids): a same-model message keeps its ids in
            # transform_messages, and an id the API cannot take would be a 400 for the whole session.
            call_id = normalize_tool_call_id(block.id)
            blocks.append({"type": "tool_use", "id": call_id, "name": block.name, "input": block.arguments})
    return {"role": "assistant", "content": blocks} if blocks else None


def _thinking(block: ThinkingContent) -> dict[str, Any] | None:
    if block.redacted:
        # Opaque data only the signing model can read (other models' redacted thinking is gone).
        return {"type": "redacted_thinking", "data": block.thinking_signature}
    if not block.thinking.strip():
        return None
    if not (block.thinking_signature or "").strip():
        # Unsigned (an aborted stream): the API would reject it as thinking.
        return {"type": "text", "text": block.thinking}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.thinking_signature}


def _mark_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
    """Cache the conversation up to its end: the last user message's last block."""
    if not messages or messages[-1]["role"] != "user":
        return
    last = messages[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": dict(CACHE_CONTROL)}]
        return
    block = last["content"][-1]
    if block["type"] in ("text", "image", "tool_result"):
        block["cache_control"] = dict(CACHE_CONTROL)


# --- stream ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _WireBlock:
    """One of our blocks, as the wire numbers it."""

    index: int
    """The builder's block index."""
    kind: str
    """``text`` | ``thinking`` | ``toolCall``."""
    preset: dict[str, Any] | None = None
    """Tool input sent whole in ``content_block_start`` (not streamed)."""
    streamed: bool = False
    open: bool = True


class MessagesParser(ParserBase):
    """Messages stream events -> builder calls."""

    def __init__(self, builder: MessageBuilder, tool_names: Mapping[str, str] | None = None) -> None:
        self.builder = builder
        self.tool_names = tool_names or {}
        """Name in the answer -> our tool's name (a subscription request renames some tools)."""
        self.blocks: dict[int, _WireBlock | None] = {}  # wire index -> ours, None = skipped
        self.stop_reason: str | None = None
        self.started = False
        self._handlers = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "error": self._error,
        }

    def on_event(self, event: str, data: str) -> None:
        try:
            payload = orjson.loads(data)  # takes the API's space-padded JSON as it is
        except orjson.JSONDecodeError:
            if not data or data.isspace():
                return
            payload = lenient_json(data)
        if payload.__class__ is not dict:
            raise ProviderError(f"Unexpected data in the stream: {data[:200]}")
        if payload.get("type") == "content_block_delta":
            # The hot path (nearly every event): more text for an open text block.
            delta = payload.get("delta")
            wire = self.blocks.get(payload.get("index"))  # type: ignore[arg-type]
            if wire is not None and wire.open and wire.kind == "text" and delta.__class__ is dict:
                text = delta.get("text")
                if delta.get("type") == "text_delta" and text.__class__ is str:
                    self.builder.text_delta(wire.index, text)
                    return
            if not self.builder.finished:
                self._block_delta(payload)
            return
        declared = payload.get("type")
        kind: str = declared if isinstance(declared, str) else event
        if event == "error":
            kind = "error"
        handler = self._handlers.get(kind)
        if handler is not None and not self.builder.finished:
            handler(payload)

    def end(self) -> None:
        """The byte stream ended: a reply with a stop reason is complete, anything else is cut off."""
        if self.builder.finished:
            return
        if self.stop_reason is not None:
            self._finish()
            return
        raise ProviderError(
            "The stream ended before the reply was complete"
            if self.started
            else "The stream ended before the reply began",
            retryable=not self.builder.has_output,
        )

    # --- message ------------------------------------------------------------------------------

    def _message_start(self, payload: dict[str, Any]) -> None:
        self.started = True
        message = payload.get("message") or {}
        builder = self.builder
        builder.start()
        if isinstance(message.get("id"), str):
            builder.response_id = message["id"]
        usage = message.get("usage") or {}
        builder.set_usage(
            input=_count(usage, "input_tokens") or 0,
            output=_count(usage, "output_tokens") or 0,
            cache_read=_count(usage, "cache_read_input_tokens") or 0,
            cache_write=_count(usage, "cache_creation_input_tokens") or 0,
        )

    def _message_delta(self, payload: dict[str, Any]) -> None:
        reason = (payload.get("delta") or {}).get("stop_reason")
        if isinstance(reason, str) and reason:
            self.stop_reason = reason
        # Counts are cumulative; a proxy may leave some out, which keeps the earlier value.
        usage = payload.get("usage") or {}
        self.builder.set_usage(
            input=_count(usage, "input_tokens"),
            output=_count(usage, "output_tokens"),
            cache_read=_count(usage, "cache_read_input_tokens"),
            cache_write=_count(usage, "cache_creation_input_tokens"),
        )

    def _message_stop(self, payload: dict[str, Any]) -> None:
        self._finish()

    def _finish(self) -> None:
        for wire in self.blocks.values():
            if wire is not None:
                self._close(wire)
        reason = self.stop_reason or "end_turn"
        mapped = STOP_REASONS.get(reason, "stop")
        if mapped == "error":
            self.builder.fail(f"The model stopped without answering (stop_reason: {reason})")
        else:
            self.builder.finish(mapped)

    def _error(self, payload: dict[str, Any]) -> None:
        error = payload.get("error")
        if not isinstance(error, dict):
            error = payload
        kind = error.get("type") if isinstance(error.get("type"), str) else ""
        message = error.get("message") or kind or orjson.dumps(payload).decode()
        raise ProviderError(str(message), retryable=kind in RETRYABLE_ERRORS and not self.builder.has_output)

    # --- blocks -------------------------------------------------------------------------------

    def _block_start(self, payload: dict[str, Any]) -> None:
        wire_index = payload.get("index")
        block = payload.get("content_block") or {}
        if not isinstance(wire_index, int) or not isinstance(block, dict):
            return
        self.blocks[wire_index] = self._open(block)

    def _open(self, block: dict[str, Any]) -> _WireBlock | None:
        builder = self.builder
        kind = block.get("type")
        if kind == "text":
            index = builder.text_start()
            builder.text_delta(index, _text(block, "text"))
            return _WireBlock(index, "text")
        if kind == "thinking":
            index = builder.thinking_start()
            builder.thinking_delta(index, _text(block, "thinking"))
            if _text(block, "signature"):
                builder.set_signature(index, _text(block, "signature"))
            return _WireBlock(index, "thinking")
        if kind == "redacted_thinking":
            index = builder.thinking_start(redacted=True)
            builder.thinking_delta(index, REDACTED_THINKING_TEXT)
            builder.set_signature(index, _text(block, "data"))
            return _WireBlock(index, "thinking")
        if kind == "tool_use":
            name = _text(block, "name")
            index = builder.toolcall_start(_text(block, "id"), self.tool_names.get(name, name))
            preset = block.get("input")
            return _WireBlock(
                index, "toolCall", preset=preset if isinstance(preset, dict) and preset else None
            )
        return None  # server tools, their results, compaction, future block types: not ours

    def _block_delta(self, payload: dict[str, Any]) -> None:
        wire = self.blocks.get(payload.get("index"))  # type: ignore[arg-type]
        delta = payload.get("delta")
        if wire is None or not wire.open or not isinstance(delta, dict):
            return
        builder = self.builder
        kind = delta.get("type")
        if kind == "text_delta" and wire.kind == "text":
            text = delta.get("text")
            builder.text_delta(wire.index, text if isinstance(text, str) else "")
        elif kind == "thinking_delta" and wire.kind == "thinking":
            builder.thinking_delta(wire.index, _text(delta, "thinking"))
        elif kind == "signature_delta" and wire.kind == "thinking":
            builder.set_signature(wire.index, _text(delta, "signature"), append=True)
        elif kind == "input_json_delta" and wire.kind == "toolCall":
            fragment = _text(delta, "partial_json")
            if fragment:
                wire.streamed = True
                builder.toolcall_delta(wire.index, fragment)
        # citations_delta and unknown deltas carry nothing we keep.

    def _block_stop(self, payload: dict[str, Any]) -> None:
        wire = self._wire(payload)
        if wire is not None:
            self._close(wire)

    def _wire(self, payload: dict[str, Any]) -> _WireBlock | None:
        index = payload.get("index")
        return self.blocks.get(index) if isinstance(index, int) else None

    def _close(self, wire: _WireBlock) -> None:
        if not wire.open:
            return
        wire.open = False
        if wire.preset is not None and not wire.streamed:
            self.builder.toolcall_delta(wire.index, orjson.dumps(wire.preset).decode())
        self.builder.end(wire.index)


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _count(usage: dict[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


CLIENT = AnthropicClient()
