"""models.json ``compat`` fields of pi 1.x that change the request pi-tui sends.

Expected bodies are what pi 1.5.2 sent for the same models.json and ``--thinking`` (checked with
the real pi against the loopback server); see docs/pi-parity.md for the fields only accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.ai.anthropic import CLIENT as ANTHROPIC
from pi_tui.ai.openai_completions import CLIENT as COMPLETIONS
from pi_tui.ai.openai_responses import CLIENT as RESPONSES
from pi_tui.ai.types import Context, Model, StreamOptions, Tool, ToolCall, ToolResultMessage, UserMessage
from pi_tui.messages import AssistantMessage

TOOL = Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}})


def _model(api: str, compat: dict[str, Any], **extra: Any) -> Model:
    fields: dict[str, Any] = {"reasoning": True, "max_tokens": 4096, **extra}
    return Model(id="m", api=api, provider="loop", base_url="http://127.0.0.1:1", compat=compat, **fields)


def _body(model: Model, level: str = "medium", tools: bool = True, **options: Any) -> dict[str, Any]:
    context = Context(
        system_prompt="sys", messages=[UserMessage(content="hi")], tools=[TOOL] if tools else []
    )
    client = {
        "openai-completions": COMPLETIONS,
        "openai-responses": RESPONSES,
        "anthropic-messages": ANTHROPIC,
    }
    return client[model.api].build_request(model, context, StreamOptions(thinking=level, **options)).body


def test_zai_format_priority_budget_field_and_routing_as_pi_sent_them() -> None:
    compat = {
        "thinkingFormat": "zai",
        "vllmPriority": 3,
        "thinkingTokenBudgetField": "thinking_budget",
        "openRouterRouting": {"only": ["x"]},
        "supportsStrictMode": True,
        "zaiToolStream": True,
    }
    body = _body(_model("openai-completions", compat))
    assert body["thinking"] == {"type": "enabled", "clear_thinking": False}
    assert body["reasoning_effort"] == "medium"
    assert body["priority"] == 3
    assert body["thinking_budget"] == 3072  # medium's 8192, leaving 1024 of 4096 for the answer
    assert body["provider"] == {"only": ["x"]}
    assert body["tools"][0]["function"]["strict"] is False
    assert body["tool_stream"] is True
    off = _body(_model("openai-completions", compat), level="off")
    assert off["thinking"] == {"type": "disabled"} and "thinking_budget" not in off


@pytest.mark.parametrize(
    ("form", "on", "off"),
    [
        ("openai", {"reasoning_effort": "medium"}, {}),
        ("openrouter", {"reasoning": {"effort": "medium"}}, {"reasoning": {"effort": "none"}}),
        (
            "deepseek",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "medium"},
            {"thinking": {"type": "disabled"}},
        ),
        ("qwen", {"enable_thinking": True, "reasoning_effort": "medium"}, {"enable_thinking": False}),
        (
            "qwen-chat-template",
            {"chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True}},
            {"chat_template_kwargs": {"enable_thinking": False, "preserve_thinking": True}},
        ),
        (
            "together",
            {"reasoning": {"enabled": True}, "reasoning_effort": "medium"},
            {"reasoning": {"enabled": False}},
        ),
        ("string-thinking", {"thinking": "medium"}, {"thinking": "none"}),
    ],
)
def test_thinking_formats(form: str, on: dict[str, Any], off: dict[str, Any]) -> None:
    fields = ("reasoning_effort", "reasoning", "thinking", "enable_thinking", "chat_template_kwargs")
    model = _model("openai-completions", {"thinkingFormat": form})
    assert {k: v for k, v in _body(model).items() if k in fields} == on
    assert {k: v for k, v in _body(model, level="off").items() if k in fields} == off


def test_strict_is_left_out_by_default_and_tool_history_can_need_an_empty_list() -> None:
    body = _body(_model("openai-completions", {}))
    assert "strict" not in body["tools"][0]["function"]  # pi 1.x: only with supportsStrictMode
    history = [
        UserMessage(content="hi"),
        AssistantMessage(
            content=[ToolCall(id="c1", name="read", arguments={})],
            api="openai-completions",
            provider="loop",
            model="m",
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[]),
    ]
    context = Context(messages=history)
    plain = COMPLETIONS.build_request(_model("openai-completions", {}), context, StreamOptions()).body
    needs = COMPLETIONS.build_request(
        _model(
            "openai-completions",
            {"requiresToolsWithToolHistory": True, "requiresNonNullAssistantContent": True},
        ),
        context,
        StreamOptions(),
    ).body
    assert "tools" not in plain and needs["tools"] == []
    assistant = next(m for m in needs["messages"] if m["role"] == "assistant")
    assert assistant["content"] == ""
    assert next(m for m in plain["messages"] if m["role"] == "assistant")["content"] is None


def test_responses_compat() -> None:
    body = _body(_model("openai-responses", {}), session_id="s1")
    assert body["input"][0]["role"] == "developer" and body["max_output_tokens"] == 4096
    assert body["prompt_cache_key"] == "s1"
    compat = {
        "supportsDeveloperRole": False,
        "supportsMaxOutputTokens": False,
        "promptCacheKeyMode": "disabled",
    }
    body = _body(_model("openai-responses", compat), session_id="s1")
    assert body["input"][0]["role"] == "system"
    assert "max_output_tokens" not in body and "prompt_cache_key" not in body


def test_anthropic_compat() -> None:
    plain = _model("anthropic-messages", {}, reasoning=False)
    context = Context(messages=[UserMessage(content="hi")], tools=[TOOL])
    request = ANTHROPIC.build_request(plain, context, StreamOptions(temperature=0.5))
    assert request.body["temperature"] == 0.5
    assert (
        request.body["tools"][0]["eager_input_streaming"] is True
        and "cache_control" in request.body["tools"][0]
    )
    assert "anthropic-beta" not in request.headers
    compat = {
        "supportsTemperature": False,
        "supportsEagerToolInputStreaming": False,
        "supportsCacheControlOnTools": False,
    }
    limited = _model("anthropic-messages", compat, reasoning=False)
    request = ANTHROPIC.build_request(limited, context, StreamOptions(temperature=0.5))
    assert "temperature" not in request.body
    assert (
        "eager_input_streaming" not in request.body["tools"][0]
        and "cache_control" not in request.body["tools"][0]
    )
    assert request.headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"


def test_sampling_params_merge_last_per_thinking_level() -> None:
    extra = {
        "samplingParams": {"top_p": 0.9, "temperature": 0.2},
        "samplingParamsByThinkingLevel": {"high": {"temperature": 1.0}, "off": {"top_k": 5}},
    }
    for api in ("openai-completions", "openai-responses"):
        model = Model.model_validate(
            {"id": "m", "api": api, "provider": "loop", "reasoning": True, "maxTokens": 4096, **extra}
        )
        assert {k: _body(model, level="high")[k] for k in ("top_p", "temperature")} == {
            "top_p": 0.9,
            "temperature": 1.0,
        }
        off = _body(model, level="off")
        assert (off["temperature"], off["top_k"]) == (0.2, 5)


def test_chat_template_and_baseten_values() -> None:
    kwargs = {
        "enable": {"$var": "thinking.enabled"},
        "budget": {"$var": "thinking.budget"},
        "effort": {"$var": "thinking.effort", "omitWhenOff": True},
        "fixed": "yes",
    }
    model = _model("openai-completions", {"thinkingFormat": "chat-template", "chatTemplateKwargs": kwargs})
    on = _body(model)
    assert on["chat_template_kwargs"] == {"enable": True, "budget": 3072, "effort": "medium", "fixed": "yes"}
    assert "reasoning_effort" not in on
    assert _body(model, level="off")["chat_template_kwargs"] == {"enable": False, "fixed": "yes"}
    baseten = _model(
        "openai-completions",
        {"thinkingFormat": "baseten", "chatTemplateArgs": {"t": {"$var": "thinking.enabled"}}},
    )
    body = _body(baseten, level="high")
    assert body["chat_template_args"] == {"t": True} and body["reasoning_effort"] == "high"
