"""openai-completions: recordings assemble as expected; requests equal pi's real requests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.openai_completions import CLIENT, convert_messages
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import TextContent, ThinkingContent, ToolCall
from pi_tui.session import SessionManager, convert_to_llm
from tests.conftest import PI_SESSIONS
from tests.support.builders import assistant, tool_result, user
from tests.support.recordings import assemble, expected, recordings

NAMES = recordings("openai") + recordings("openai-compat")
STOP = {"stop": "stop", "length": "length", "tool_calls": "toolUse", None: None}


def expected_choice(name: str) -> dict[str, Any]:
    return expected(name)["choices"]["0"]


def expected_thinking(choice: dict[str, Any]) -> str:
    for key, value in choice.items():
        if key.startswith(("reasoning", "thinking")) and isinstance(value, str):
            return value
    return ""


@pytest.mark.parametrize("chunk_size", [0, 1, 7])
@pytest.mark.parametrize("name", NAMES)
def test_recording_assembles_to_expected(name: str, chunk_size: int) -> None:
    message = assemble(name, chunk_size)
    want = expected(name)
    choice = expected_choice(name)

    text = "".join(block.text for block in message.content if isinstance(block, TextContent))
    assert text == (choice.get("content") or choice.get("refusal") or "")
    thinking = "".join(block.thinking for block in message.content if isinstance(block, ThinkingContent))
    assert thinking == expected_thinking(choice)
    calls = [block for block in message.content if isinstance(block, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        (call["id"], call["name"], call["parsed_arguments"]) for call in choice.get("tool_calls", [])
    ]

    if want["errors"]:
        error = want["errors"][0]["error"]
        assert message.stop_reason == "error"
        assert error["message"] in message.error_message
    elif choice["finish_reason"] is None:
        assert message.stop_reason == ("toolUse" if calls else "stop")
    else:
        assert message.stop_reason == STOP[choice["finish_reason"]]

    usage = want.get("usage")
    if usage:
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        assert message.usage.input == usage["prompt_tokens"] - cached
        assert message.usage.output == usage["completion_tokens"]
        assert message.usage.cache_read == cached
    else:
        assert message.usage.input == message.usage.output == 0
    assert message.response_id == want["id"]


def test_text_blocks_and_events_are_well_formed() -> None:
    from pi_tui.ai.builder import MessageBuilder
    from pi_tui.ai.sse import SSEDecoder
    from tests.support.recordings import SSE_DIR, recorded_model

    builder = MessageBuilder(recorded_model("openai-completions"))
    parser = CLIENT.parser(builder)
    decoder = SSEDecoder()
    for event in decoder.feed(
        (SSE_DIR / "openai-compat/deepseek-reasoner-reasoning-content.sse").read_bytes()
    ):
        parser.handle(event)
    parser.end()
    kinds = [event.type for event in builder.take_events()]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds[1] == "thinking_start" and "thinking_end" in kinds
    assert kinds.index("thinking_end") < kinds.index("text_start")  # one block closes before the next
    assert kinds.count("text_end") == 1


def test_each_tool_call_ends_before_the_next_starts() -> None:
    from pi_tui.ai.builder import MessageBuilder
    from pi_tui.ai.sse import SSEDecoder
    from tests.support.recordings import SSE_DIR, recorded_model

    builder = MessageBuilder(recorded_model("openai-completions"))
    parser = CLIENT.parser(builder)
    for event in SSEDecoder().feed((SSE_DIR / "openai/chat-parallel-tool-calls-gpt4o.sse").read_bytes()):
        parser.handle(event)
    parser.end()
    calls = [
        (e.type, e.content_index)
        for e in builder.take_events()
        if e.type in ("toolcall_start", "toolcall_end")
    ]
    assert calls == [("toolcall_start", 0), ("toolcall_end", 0), ("toolcall_start", 1), ("toolcall_end", 1)]


# --- requests, against what pi really sent ----------------------------------------------------

CASES = sorted(
    path.name for path in PI_SESSIONS.iterdir() if path.is_dir() and path.name != "04-thinking-anthropic"
)
SESSION_OF_LAST_REQUEST = {"14-fork-clone": "clone.jsonl"}


def context_before_last_reply(case: str, tmp_path: Path) -> Context:
    copy = tmp_path / "session.jsonl"
    shutil.copy(PI_SESSIONS / case / SESSION_OF_LAST_REQUEST.get(case, "session.jsonl"), copy)
    manager = SessionManager.open(copy, read_only=True)
    manager.branch(manager.get_leaf_entry().parent_id)
    return Context(
        system_prompt="<system prompt removed>",
        messages=convert_to_llm(manager.build_session_context().messages),
    )


@pytest.mark.parametrize("case", CASES)
def test_request_messages_equal_pis(case: str, tmp_path: Path) -> None:
    pi_request = json.loads((PI_SESSIONS / case / "requests.jsonl").read_text().splitlines()[-1])
    model = Model(
        id=pi_request["model"],
        provider="fake",
        api="openai-completions",
        base_url="http://127.0.0.1:1/v1",
        input=["text", "image"] if "vision" in pi_request["model"] else ["text"],
        max_tokens=pi_request["max_completion_tokens"],
        # The recordings are pi 0.73's, which sent "strict": false on every tool; pi 1.x sends
        # it only where compat.supportsStrictMode says the server takes the field.
        compat={"supportsStrictMode": True},
    )
    context = context_before_last_reply(case, tmp_path)
    context.tools = [Tool(**tool["function"]) for tool in pi_request["tools"]]
    request = CLIENT.build_request(model, context, StreamOptions(api_key="k"))
    assert request.url == "http://127.0.0.1:1/v1/chat/completions"
    body = request.body
    assert body["messages"] == pi_request["messages"]  # system prompt text included: we set the same
    # pairing: every tool call is answered by the next tool messages, in order
    for key in ("model", "stream", "stream_options", "store", "max_completion_tokens", "tools"):
        assert body[key] == pi_request[key], key
    assert list(body) == list(pi_request)


def test_tool_result_images_follow_in_a_user_message() -> None:
    from pi_tui.messages import ImageContent, ToolResultMessage

    model = Model(id="v", provider="p", api="openai-completions", input=["text", "image"])
    call = ToolCall(id="c1", name="read", arguments={"path": "a.png"})
    image = ImageContent(data="QUJD", mime_type="image/png")
    result = ToolResultMessage(
        tool_call_id="c1", tool_name="read", content=[TextContent(text="Read image file [image/png]"), image]
    )
    messages = convert_messages(model, Context(messages=[user("look"), assistant("", call), result]))
    assert messages[-2] == {"role": "tool", "content": "Read image file [image/png]", "tool_call_id": "c1"}
    assert messages[-1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,QUJD"},
    }
    text_only = Model(id="t", provider="p", api="openai-completions")
    assert (
        convert_messages(text_only, Context(messages=[user("look"), assistant("", call), result]))[-1]["role"]
        == "tool"
    )


def test_failed_replies_are_not_resent_and_unanswered_calls_get_results() -> None:
    model = Model(id="m", provider="p", api="openai-completions")
    call = ToolCall(id="c9", name="bash", arguments={"command": "ls"})
    dangling = ToolCall(id="c10", name="bash", arguments={"command": "pwd"})
    messages = [
        user("one"),
        assistant("partial", stop_reason="aborted"),
        user("two"),
        assistant("", call, dangling, stop_reason="toolUse"),
        tool_result("c9", "a b"),
        user("three"),
    ]
    converted = convert_messages(model, Context(messages=messages))
    roles = [(m["role"], m.get("tool_call_id")) for m in converted]
    assert roles == [
        ("user", None),
        ("user", None),
        ("assistant", None),
        ("tool", "c9"),
        ("tool", "c10"),
        ("user", None),
    ]
    assert converted[4]["content"] == "No result provided"


def test_reasoning_and_compat_switches() -> None:
    model = Model(
        id="r",
        provider="p",
        api="openai-completions",
        reasoning=True,
        compat={"supportsDeveloperRole": True, "maxTokensField": "max_tokens", "supportsStore": False},
    )
    body = CLIENT.build_request(
        model, Context(system_prompt="sys", messages=[user("hi")]), StreamOptions(thinking="high")
    ).body
    assert body["messages"][0] == {"role": "developer", "content": "sys"}
    assert body["reasoning_effort"] == "high" and "max_tokens" in body and "store" not in body
    plain = Model(id="p", provider="p", api="openai-completions")
    body = CLIENT.build_request(
        plain, Context(system_prompt="sys", messages=[user("hi")]), StreamOptions(thinking="high")
    ).body
    assert body["messages"][0]["role"] == "system" and "reasoning_effort" not in body
