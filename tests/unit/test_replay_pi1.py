"""pi 1.x's rules for sending a continued conversation's replies, one rule per test.

Where pi 0.73.1 and pi 1.5.2 replay replies differently, pi-tui follows 1.5.2 (pi 0.73.1's files
still open and continue either way). The whole-request comparisons with pi 1.5.2's own requests
are in test_transform_cross_provider.py; these pin each rule on its own, with the values pi
1.5.2 computes (its hash of a long id was taken from pi-ai 1.5.2's ``shortHash``).
"""

from __future__ import annotations

from pi_tui.ai import anthropic, openai_completions, openai_responses
from pi_tui.ai.types import Context, Model
from pi_tui.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

CHAT = Model(id="tgt", api="openai-completions", provider="loop")
CLAUDE = Model(id="claude-tgt", api="anthropic-messages", provider="anthropic")


def codex_reply(*blocks: TextContent | ThinkingContent | ToolCall, stop: str = "toolUse") -> AssistantMessage:
    """A reply a ChatGPT login wrote (openai-codex-responses): another model to every target here."""
    return AssistantMessage(
        content=list(blocks),
        api="openai-codex-responses",
        provider="openai-codex",
        model="gpt-5.6-sol",
        stop_reason=stop,
    )


def result(call_id: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text=text)])


def context(*messages: AssistantMessage | ToolResultMessage) -> Context:
    return Context(system_prompt="", messages=[UserMessage(content="hi"), *messages])


def test_another_models_thinking_is_not_sent_as_text() -> None:
    """pi 0.73.1 sent it as the reply's first text; pi 1.5.2 sends nothing of it."""
    reply = codex_reply(
        ThinkingContent(thinking="The user wants the README.", thinking_signature='{"type":"reasoning"}'),
        TextContent(text="Reading it."),
        stop="stop",
    )
    (_, assistant) = anthropic.convert_messages(CLAUDE, context(reply))
    assert assistant == {"role": "assistant", "content": [{"type": "text", "text": "Reading it."}]}
    (_, chat) = openai_completions.convert_messages(CHAT, context(reply))
    assert chat["content"] == "Reading it." and "README" not in str(chat)


def test_a_responses_id_keeps_both_halves_in_chat_completions() -> None:
    """``call|item`` becomes ``call_item`` (0.73.1: ``call``), sanitised, and its result follows."""
    reply = codex_reply(ToolCall(id="call_9|fc_+/=", name="read", arguments={"path": "a"}))
    (_, assistant, tool) = openai_completions.convert_messages(CHAT, context(reply, result("call_9|fc_+/=")))
    assert assistant["tool_calls"][0]["id"] == "call_9_fc____"
    assert tool["tool_call_id"] == "call_9_fc____"


def test_calls_sharing_a_call_half_stay_distinct() -> None:
    """One turn's calls may share ``call`` and differ by item; Chat Completions needs two ids."""
    reply = codex_reply(
        ToolCall(id="call_1|fc_a", name="read", arguments={"path": "a"}),
        ToolCall(id="call_1|fc_b", name="read", arguments={"path": "b"}),
    )
    sent = openai_completions.convert_messages(
        CHAT, context(reply, result("call_1|fc_a"), result("call_1|fc_b"))
    )
    assert [call["id"] for call in sent[1]["tool_calls"]] == ["call_1_fc_a", "call_1_fc_b"]
    assert [message["tool_call_id"] for message in sent[2:]] == ["call_1_fc_a", "call_1_fc_b"]


def test_a_combined_id_over_40_characters_is_cut_with_pis_hash() -> None:
    """Over OpenAI's 40: the call half cut to 31, ``_``, 8 characters of pi's hash of the id."""
    long_id = "call_abcdefghijklmnopqrstuvwxyz0123456789AB|fc_1"
    reply = codex_reply(ToolCall(id=long_id, name="read", arguments={}))
    (_, assistant, tool) = openai_completions.convert_messages(CHAT, context(reply, result(long_id)))
    assert assistant["tool_calls"][0]["id"] == "call_abcdefghijklmnopqrstuvwxyz_59xbvmq4"
    assert tool["tool_call_id"] == "call_abcdefghijklmnopqrstuvwxyz_59xbvmq4"


def test_responses_text_without_an_id_is_named_msg_pi() -> None:
    """pi 1.x names an unsigned text item ``msg_pi_<message>`` and a second one ``..._<n>``
    (0.73.1: ``msg_<message>``)."""
    model = Model(id="gpt-tgt", api="openai-responses", provider="openai")
    reply = AssistantMessage(
        content=[TextContent(text="one"), TextContent(text="two")],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-src",
        stop_reason="stop",
    )
    items = openai_responses.convert_input(model, context(reply))
    assert [item["id"] for item in items if item.get("type") == "message"] == ["msg_pi_1", "msg_pi_1_1"]


def test_responses_function_call_keeps_only_an_fc_item_id() -> None:
    """A function_call item id must start ``fc_``; pi 1.x sends any other one not at all."""
    model = Model(id="gpt-src", api="openai-responses", provider="openai")
    reply = AssistantMessage(
        content=[
            ToolCall(id="call_2|item_9", name="read", arguments={}),
            ToolCall(id="call_3|fc_3", name="read"),
        ],
        api="openai-responses",
        provider="openai",
        model="gpt-src",
        stop_reason="toolUse",
    )
    items = openai_responses.convert_input(
        model, context(reply, result("call_2|item_9"), result("call_3|fc_3"))
    )
    calls = [item for item in items if item.get("type") == "function_call"]
    assert [(call.get("id"), call["call_id"]) for call in calls] == [(None, "call_2"), ("fc_3", "call_3")]


def test_chat_completions_reasoning_details_stand_for_the_raw_reasoning_field() -> None:
    """Same model: when the calls carry ``reasoning_details``, pi 1.x sends no ``reasoning_content``
    (0.73.1 sent both); a signature that names no reasoning field is never sent as a key."""
    model = Model(id="qwen-src", api="openai-completions", provider="compat")
    detail = '{"type": "reasoning.encrypted", "id": "c1", "data": "YWJj"}'
    signed = AssistantMessage(
        content=[
            ThinkingContent(thinking="Reasoning here.", thinking_signature="reasoning_content"),
            ToolCall(id="c1", name="read", arguments={}, thought_signature=detail),
        ],
        api="openai-completions",
        provider="compat",
        model="qwen-src",
        stop_reason="toolUse",
    )
    (_, assistant, _) = openai_completions.convert_messages(model, context(signed, result("c1")))
    assert "reasoning_content" not in assistant
    assert assistant["reasoning_details"] == [{"type": "reasoning.encrypted", "id": "c1", "data": "YWJj"}]
    odd = signed.model_copy(
        update={
            "content": [
                ThinkingContent(thinking="Hm.", thinking_signature='[{"x": 1}]'),
                TextContent(text="ok"),
            ]
        }
    )
    (_, plain) = openai_completions.convert_messages(model, context(odd))
    assert plain == {"role": "assistant", "content": "ok"}
