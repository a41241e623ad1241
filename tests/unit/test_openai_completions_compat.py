"""pi 1.5.2's ``compat`` switches of OpenAI-compatible servers, on the request pi-tui builds.

The models are entries of pi 1.5.2's catalogue (``models.generated.js``: provider, id, base URL,
``compat`` and ``thinkingLevelMap`` as pi ships them); the expected fields are what pi's
``openai-completions`` client (``detectCompat`` / ``getCompat`` / ``buildParams`` /
``convertMessages`` / ``createClient``) puts in the body and headers for them.

``supportsMidConvoSystemMessages`` and ``supportsMidConvoToolAdditions`` change only how pi sends
system messages and tools that appear in the middle of a transcript; pi-tui's context has one
system prompt and one tool list, so for it they change nothing and are not tested here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_tui.ai.openai_completions import CLIENT, detected_compat
from pi_tui.ai.types import Context, Model, StreamOptions, ThinkingLevel, Tool
from pi_tui.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage

TOOLS = [
    Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}}),
    Tool(name="bash", description="Run a command", parameters={"type": "object", "properties": {}}),
]
SESSION = "019a7c2e-5d1b-7f3a-9c4e-2b8d6f0a1e37"


def model(provider: str, model_id: str, base_url: str, compat: dict[str, Any], **fields: Any) -> Model:
    values: dict[str, Any] = {"reasoning": True, "max_tokens": 32000, "input": ["text"], **fields}
    return Model(
        id=model_id, api="openai-completions", provider=provider, base_url=base_url, compat=compat, **values
    )


def history(target: Model) -> list[UserMessage | AssistantMessage | ToolResultMessage]:
    """A user turn, the same model's tool call (no thinking) and its result, then a user turn."""
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.txt"})
    reply = AssistantMessage(
        content=[TextContent(text="Reading."), call],
        api="openai-completions",
        provider=target.provider,
        model=target.id,
        stop_reason="toolUse",
    )
    result = ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="hello")])
    return [UserMessage(content="read a.txt"), reply, result, UserMessage(content="and now?")]


def request(
    target: Model, level: ThinkingLevel = "high", *, tools: bool = True, past: bool = False, **options: Any
) -> tuple[dict[str, Any], dict[str, str]]:
    messages: list[UserMessage | AssistantMessage | ToolResultMessage] = (
        history(target) if past else [UserMessage(content="hi")]
    )
    context = Context(system_prompt="be brief", messages=messages, tools=TOOLS if tools else [])
    built = CLIENT.build_request(target, context, StreamOptions(thinking=level, api_key="k", **options))
    return built.body, built.headers


# --- detected compat: models whose compat does not say ---------------------------------------


def test_a_deepseek_model_without_compat_gets_what_pi_detects() -> None:
    deepseek = model("deepseek", "deepseek-v4-pro", "https://api.deepseek.com", {})
    body, _ = request(deepseek, past=True)
    assert body["thinking"] == {"type": "enabled"} and body["reasoning_effort"] == "high"
    assert body["max_tokens"] == 32000 and "max_completion_tokens" not in body
    assert "store" not in body
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    (assistant,) = [m for m in body["messages"] if m["role"] == "assistant"]
    assert assistant["reasoning_content"] == ""  # requiresReasoningContentOnAssistantMessages
    off, _ = request(deepseek, "off")
    assert off["thinking"] == {"type": "disabled"} and "reasoning_effort" not in off


def test_a_standard_server_gets_store_the_developer_role_and_max_completion_tokens() -> None:
    local = model("my-vllm", "qwen3", "http://127.0.0.1:8000/v1", {})
    body, _ = request(local)
    assert body["store"] is False
    assert body["messages"][0] == {"role": "developer", "content": "be brief"}
    assert body["max_completion_tokens"] == 32000 and body["reasoning_effort"] == "high"
    plain = model("my-vllm", "llama", "http://127.0.0.1:8000/v1", {}, reasoning=False)
    assert request(plain)[0]["messages"][0]["role"] == "system"  # developer only for reasoning models


@pytest.mark.parametrize(
    ("provider", "base_url", "expected"),
    [
        (
            "together",
            "https://api.together.ai/v1",
            {"thinkingFormat": "together", "supportsReasoningEffort": False},
        ),
        (
            "zai",
            "https://api.z.ai/api/coding/paas/v4",
            {"thinkingFormat": "zai", "maxTokensField": "max_tokens"},
        ),
        ("proxy", "https://open.bigmodel.cn/api/paas/v4", {"thinkingFormat": "zai", "supportsStore": False}),
        (
            "moonshotai",
            "https://api.moonshot.ai/v1",
            {"supportsReasoningEffort": False, "supportsStore": False},
        ),
        ("nvidia", "https://integrate.api.nvidia.com/v1", {"supportsLongCacheRetention": False}),
        (
            "ant-ling",
            "https://api.ant-ling.com/v1",
            {"thinkingFormat": "ant-ling", "maxTokensField": "max_tokens"},
        ),
        ("xai", "https://api.x.ai/v1", {"supportsReasoningEffort": False, "supportsDeveloperRole": False}),
        (
            "cerebras",
            "https://api.cerebras.ai/v1",
            {"supportsStore": False, "maxTokensField": "max_completion_tokens"},
        ),
        (
            "openrouter",
            "https://openrouter.ai/api/v1",
            {"thinkingFormat": "openrouter", "supportsDeveloperRole": False},
        ),
        ("groq", "https://api.groq.com/openai/v1", {"supportsStore": True, "supportsDeveloperRole": True}),
    ],
)
def test_detection_by_provider_and_base_url(provider: str, base_url: str, expected: dict[str, Any]) -> None:
    detected = detected_compat(provider, base_url, "some-model")
    assert {key: detected[key] for key in expected} == expected


def test_explicit_compat_wins_key_by_key_over_detection() -> None:
    # Together's gpt-oss entry: thinkingFormat "openai" and supportsReasoningEffort true, although
    # the provider detects as "together" without reasoning_effort
    gpt_oss = model(
        "together",
        "openai/gpt-oss-120b",
        "https://api.together.ai/v1",
        {
            "supportsStore": False,
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": True,
            "maxTokensField": "max_tokens",
            "thinkingFormat": "openai",
            "supportsLongCacheRetention": False,
            "supportsStrictMode": False,
        },
        thinking_level_map={"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high"},
    )
    body, _ = request(gpt_oss)
    assert body["reasoning_effort"] == "high" and "reasoning" not in body
    assert "strict" not in body["tools"][0]["function"]


# --- thinkingFormat values --------------------------------------------------------------------


def test_zai_thinking_and_tool_stream() -> None:
    glm = model(
        "zai",
        "glm-5.2",
        "https://api.z.ai/api/coding/paas/v4",
        {
            "supportsStore": False,
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": True,
            "maxTokensField": "max_tokens",
            "thinkingFormat": "zai",
            "supportsStrictMode": True,
            "zaiToolStream": True,
        },
        thinking_level_map={
            "off": "none",
            "minimal": None,
            "low": None,
            "medium": None,
            "high": "high",
            "max": "max",
        },
    )
    body, _ = request(glm)
    assert body["thinking"] == {"type": "enabled", "clear_thinking": False}
    assert body["reasoning_effort"] == "high" and body["tool_stream"] is True
    assert body["tools"][0]["function"]["strict"] is False  # supportsStrictMode
    off, _ = request(glm, "off", tools=False)
    assert (
        off["thinking"] == {"type": "disabled"} and "reasoning_effort" not in off and "tool_stream" not in off
    )


def test_qwen_enable_thinking_with_and_without_reasoning_effort() -> None:
    base = "https://token-plan.ap-southeast-1.maas.aliyuncs.com/compatible-mode/v1"
    common = {
        "supportsStrictMode": True,
        "thinkingFormat": "qwen",
        "supportsDeveloperRole": False,
        "supportsStore": False,
    }
    flash = model(
        "qwen-token-plan",
        "deepseek-v4-flash",
        base,
        {**common, "supportsReasoningEffort": True},
        thinking_level_map={
            "off": None,
            "minimal": None,
            "low": None,
            "medium": None,
            "high": "high",
            "max": "max",
        },
    )
    body, _ = request(flash)
    assert body["enable_thinking"] is True and body["reasoning_effort"] == "high"
    qwen = model("qwen-token-plan", "qwen3.6-flash", base, {**common, "supportsReasoningEffort": False})
    body, _ = request(qwen)
    assert body["enable_thinking"] is True and "reasoning_effort" not in body
    assert request(qwen, "off")[0]["enable_thinking"] is False


def test_qwen_chat_template() -> None:
    served = model("local", "qwen3.6", "http://127.0.0.1:8000/v1", {"thinkingFormat": "qwen-chat-template"})
    assert request(served)[0]["chat_template_kwargs"] == {"enable_thinking": True, "preserve_thinking": True}
    assert request(served, "off")[0]["chat_template_kwargs"] == {
        "enable_thinking": False,
        "preserve_thinking": True,
    }


def test_deepseek_format_leaves_thinking_out_when_off_is_not_allowed() -> None:
    highspeed = model(
        "kimi-coding",
        "kimi-for-coding-highspeed",
        "https://api.kimi.com/coding/v1",
        {
            "supportsStrictMode": False,
            "supportsStore": False,
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": False,
            "maxTokensField": "max_tokens",
            "thinkingFormat": "deepseek",
        },
        thinking_level_map={"off": None},
    )
    body, _ = request(highspeed)
    assert body["thinking"] == {"type": "enabled"} and "reasoning_effort" not in body
    assert "thinking" not in request(highspeed, "off")[0]


def test_openrouter_reasoning_object_developer_role_and_off() -> None:
    gpt = model(
        "openrouter",
        "openai/gpt-5.4",
        "https://openrouter.ai/api/v1",
        {"thinkingFormat": "openrouter", "supportsStrictMode": True, "sendSessionAffinityHeaders": True},
        thinking_level_map={"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high"},
    )
    body, headers = request(gpt, session_id=SESSION)
    assert body["reasoning"] == {"effort": "high"} and "reasoning_effort" not in body
    assert body["messages"][0]["role"] == "developer"  # openai/ and anthropic/ models behind OpenRouter
    assert headers["x-session-id"] == SESSION
    assert "session_id" not in headers and "x-session-affinity" not in headers
    assert request(gpt, "off")[0]["reasoning"] == {"effort": "none"}


def test_baseten_chat_template_args_and_mapped_effort() -> None:
    glm = model(
        "baseten",
        "zai-org/GLM-5.2",
        "https://inference.baseten.co/v1",
        {
            "supportsStrictMode": True,
            "supportsStore": False,
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": True,
            "supportsUsageInStreaming": True,
            "maxTokensField": "max_tokens",
            "sendSessionAffinityHeaders": True,
            "supportsLongCacheRetention": False,
            "thinkingFormat": "baseten",
            "chatTemplateArgs": {"enable_thinking": {"$var": "thinking.enabled"}},
        },
        thinking_level_map={
            "off": "none",
            "minimal": None,
            "low": None,
            "medium": None,
            "high": "high",
            "max": "max",
        },
    )
    body, headers = request(glm, session_id=SESSION)
    assert body["chat_template_args"] == {"enable_thinking": True} and body["reasoning_effort"] == "high"
    assert body["stream_options"] == {"include_usage": True}
    assert {name: headers[name] for name in ("session_id", "x-client-request-id", "x-session-affinity")} == {
        "session_id": SESSION,
        "x-client-request-id": SESSION,
        "x-session-affinity": SESSION,
    }
    off, _ = request(glm, "off")
    assert off["chat_template_args"] == {"enable_thinking": False} and off["reasoning_effort"] == "none"


def test_together_reasoning_enabled() -> None:
    v4 = model(
        "together",
        "deepseek-ai/DeepSeek-V4-Pro-0813",
        "https://api.together.ai/v1",
        {
            "supportsStore": False,
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": True,
            "maxTokensField": "max_tokens",
            "thinkingFormat": "together",
            "supportsLongCacheRetention": False,
            "supportsStrictMode": False,
        },
        thinking_level_map={"minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None},
    )
    body, _ = request(v4)
    assert body["reasoning"] == {"enabled": True} and body["reasoning_effort"] == "high"
    assert request(v4, "off")[0]["reasoning"] == {"enabled": False}


def test_ant_ling_effort_only_from_the_map() -> None:
    ling = model(
        "ant-ling",
        "Ring-2.6",
        "https://api.ant-ling.com/v1",
        {"thinkingFormat": "ant-ling", "supportsReasoningEffort": False},
        thinking_level_map={"low": "low", "high": "high"},
    )
    assert request(ling)[0]["reasoning"] == {"effort": "high"}
    assert "reasoning" not in request(ling, "off")[0]


# --- the other switches -----------------------------------------------------------------------


def test_usage_in_streaming_max_tokens_field_and_strict_mode() -> None:
    quiet = model(
        "p", "m", "http://127.0.0.1:1/v1", {"supportsUsageInStreaming": False, "maxTokensField": "max_tokens"}
    )
    body, _ = request(quiet)
    assert "stream_options" not in body and body["max_tokens"] == 32000
    assert "strict" not in body["tools"][0]["function"]  # supportsStrictMode: false unless said
    strict = model("p", "m", "http://127.0.0.1:1/v1", {"supportsStrictMode": True})
    assert request(strict)[0]["tools"][1]["function"]["strict"] is False


def test_reasoning_content_on_every_assistant_message() -> None:
    kimi = model(
        "moonshotai",
        "kimi-k3",
        "https://api.moonshot.ai/v1",
        {
            "thinkingFormat": "openai",
            "requiresReasoningContentOnAssistantMessages": True,
            "supportsReasoningEffort": True,
        },
    )
    (assistant,) = [m for m in request(kimi, past=True)[0]["messages"] if m["role"] == "assistant"]
    assert assistant["reasoning_content"] == "" and assistant["tool_calls"][0]["id"] == "call_1"
    without = model(
        "moonshotai",
        "kimi-k3",
        "https://api.moonshot.ai/v1",
        {"requiresReasoningContentOnAssistantMessages": False},
    )
    (assistant,) = [m for m in request(without, past=True)[0]["messages"] if m["role"] == "assistant"]
    assert "reasoning_content" not in assistant


def test_session_affinity_headers_give_way_to_the_requests_own() -> None:
    fireworks = model(
        "fireworks",
        "accounts/fireworks/models/glm-5p3",
        "https://api.fireworks.ai/inference/v1",
        {"supportsStore": False, "sendSessionAffinityHeaders": True, "supportsLongCacheRetention": False},
    )
    _, headers = request(fireworks, session_id=SESSION, headers={"x-session-affinity": "pinned"})
    assert headers["x-session-affinity"] == "pinned" and headers["session_id"] == SESSION
    _, no_session = request(fireworks)
    assert not {"session_id", "x-client-request-id", "x-session-affinity"} & set(no_session)
    _, off = request(model("p", "m", "http://127.0.0.1:1/v1", {}), session_id=SESSION)
    assert "session_id" not in off and "x-session-id" not in off


def test_prompt_cache_key_and_long_retention() -> None:
    long = {"PI_CACHE_RETENTION": "long"}
    local = model("p", "m", "http://127.0.0.1:1/v1", {})
    body, _ = request(local, session_id=SESSION + "-" + "x" * 40, provider_env=long)
    assert body["prompt_cache_key"] == (SESSION + "-" + "x" * 40)[:64]
    assert body["prompt_cache_retention"] == "24h"
    short, _ = request(local, session_id=SESSION)
    assert "prompt_cache_key" not in short and "prompt_cache_retention" not in short
    openai = model("openai", "gpt-5.4", "https://api.openai.com/v1", {})
    body, _ = request(openai, session_id=SESSION)
    assert body["prompt_cache_key"] == SESSION and "prompt_cache_retention" not in body
    no_long = model("p", "m", "http://127.0.0.1:1/v1", {"supportsLongCacheRetention": False})
    body, _ = request(no_long, session_id=SESSION, provider_env=long)
    assert "prompt_cache_key" not in body and "prompt_cache_retention" not in body
    enabled = model("p", "m", "http://127.0.0.1:1/v1", {"promptCacheKeyMode": "enabled"})
    assert request(enabled, session_id=SESSION)[0]["prompt_cache_key"] == SESSION
    disabled = model("openai", "gpt-5.4", "https://api.openai.com/v1", {"promptCacheKeyMode": "disabled"})
    assert "prompt_cache_key" not in request(disabled, session_id=SESSION)[0]


def test_anthropic_cache_control_behind_openrouter() -> None:
    claude = model(
        "openrouter",
        "anthropic/claude-fable-5:batch",
        "https://openrouter.ai/api/v1",
        {"thinkingFormat": "openrouter", "supportsStrictMode": True, "cacheControlFormat": "anthropic"},
    )
    body, _ = request(claude, past=True)
    marker = {"type": "ephemeral"}
    system, *rest = body["messages"]
    assert system == {
        "role": "developer",
        "content": [{"type": "text", "text": "be brief", "cache_control": marker}],
    }
    assert body["tools"][-1]["cache_control"] == marker and "cache_control" not in body["tools"][0]
    assert rest[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "and now?", "cache_control": marker}],
    }
    assert all("cache_control" not in str(message) for message in rest[:-1])
    long, _ = request(claude, provider_env={"PI_CACHE_RETENTION": "long"})
    assert long["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    # detected too: an anthropic/ model on the openrouter provider needs no compat entry
    bare = model("openrouter", "anthropic/claude-fable-5", "https://openrouter.ai/api/v1", {})
    assert request(bare)[0]["tools"][-1]["cache_control"] == marker
    other = model("openrouter", "openai/gpt-5.4", "https://openrouter.ai/api/v1", {})
    assert "cache_control" not in str(request(other)[0])


# --- what pi does for every server alike: usage fields, empty tool results ----------------------


def usage_of(usage: dict[str, Any]) -> tuple[float, float, float, float]:
    from pi_tui.ai.builder import MessageBuilder

    builder = MessageBuilder(model("p", "m", "http://127.0.0.1:1/v1", {}))
    parser = CLIENT.parser(builder)
    parser.on_event("", json.dumps({"id": "c1", "choices": [{"index": 0, "delta": {"content": "ok"}}]}))
    parser.on_event("", json.dumps({"id": "c1", "choices": [], "usage": usage}))
    parser.end()
    (done,) = [event for event in builder.take_events() if event.type == "done"]
    assert done.message is not None and done.message.usage is not None
    found = done.message.usage
    return found.input, found.output, found.cache_read, found.cache_write


def test_cache_hits_wherever_the_server_reports_them_and_openrouters_cache_writes() -> None:
    # OpenRouter: hits and separate writes, both out of the input
    openrouter = {
        "prompt_tokens": 1000,
        "completion_tokens": 20,
        "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300},
    }
    assert usage_of(openrouter) == (100, 20, 600, 300)
    # Kimi: a top-level cached_tokens on the last usage chunk
    assert usage_of({"prompt_tokens": 500, "completion_tokens": 5, "cached_tokens": 400}) == (100, 5, 400, 0)
    # DeepSeek
    assert usage_of({"prompt_tokens": 50, "completion_tokens": 5, "prompt_cache_hit_tokens": 30}) == (
        20,
        5,
        30,
        0,
    )


def test_an_empty_tool_result_is_sent_as_pis_placeholder() -> None:
    local = model("p", "m", "http://127.0.0.1:1/v1", {})
    call = ToolCall(id="call_9", name="bash", arguments={"command": "true"})
    reply = AssistantMessage(
        content=[call], api="openai-completions", provider="p", model="m", stop_reason="toolUse"
    )
    empty = ToolResultMessage(tool_call_id="call_9", tool_name="bash", content=[TextContent(text="  \n")])
    context = Context(messages=[UserMessage(content="run it"), reply, empty])
    body = CLIENT.build_request(local, context, StreamOptions(api_key="k")).body
    (result,) = [message for message in body["messages"] if message["role"] == "tool"]
    assert result == {"role": "tool", "content": "(no tool output)", "tool_call_id": "call_9"}
