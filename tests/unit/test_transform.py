"""transform_messages on its own: the rules pi applies before any API sees a conversation.

The whole-request comparisons with the real pi are in test_transform_cross_provider.py; these
pin single rules, including ones the recorded cases reach only indirectly.
"""

from __future__ import annotations

from pi_tui.ai.transform import (
    NO_RESULT_TEXT,
    TOOL_IMAGE_PLACEHOLDER,
    USER_IMAGE_PLACEHOLDER,
    transform_messages,
)
from pi_tui.ai.types import Model
from pi_tui.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

TARGET = Model(id="tgt", api="openai-completions", provider="loop", input=["text"])
IMAGE = ImageContent(data="QUJD", mime_type="image/png")


def reply(*blocks: object, model: str = "src", stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks), api="openai-responses", provider="openai", model=model, stop_reason=stop
    )


def result(call_id: str, *blocks: object) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="read", content=list(blocks) or [TextContent(text="ok")]
    )


def cut_at_bar(call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return call_id.split("|")[0]


def test_input_messages_are_not_changed() -> None:
    call = ToolCall(id="c|fc", name="read", thought_signature="sig")
    messages = [
        UserMessage(content=[TextContent(text="look"), IMAGE]),
        reply(ThinkingContent(thinking="hm", thinking_signature="x"), call),
        result("c|fc", IMAGE),
    ]
    before = [message.model_dump() for message in messages]
    transform_messages(messages, TARGET, cut_at_bar)
    assert [message.model_dump() for message in messages] == before


def test_runs_of_images_become_one_placeholder_each() -> None:
    user = UserMessage(
        content=[
            IMAGE,
            IMAGE,
            TextContent(text="and"),
            IMAGE,
            TextContent(text=USER_IMAGE_PLACEHOLDER),
            IMAGE,
        ]
    )
    (out,) = transform_messages([user], TARGET)
    assert [block.text for block in out.content] == [
        USER_IMAGE_PLACEHOLDER,
        "and",
        USER_IMAGE_PLACEHOLDER,
        USER_IMAGE_PLACEHOLDER,  # an existing placeholder counts: the image after it adds none
    ]
    (tool,) = transform_messages([result("c", TextContent(text="t"), IMAGE)], TARGET)
    assert [block.text for block in tool.content] == ["t", TOOL_IMAGE_PLACEHOLDER]
    seeing = TARGET.model_copy(update={"input": ["text", "image"]})
    assert transform_messages([user], seeing)[0].content == user.content


def test_other_model_thinking_is_left_out_and_ids_follow_to_results() -> None:
    """pi 1.x leaves another model's thinking out, readable, signed or redacted (pi 0.73.1 sent
    the readable kind as text, which the new model took for part of the visible reply)."""
    call = ToolCall(id="c1|fc_1", name="read", thought_signature="sig")
    messages = [
        reply(
            ThinkingContent(thinking="plan", thinking_signature="s"),
            ThinkingContent(thinking="unsigned plan"),
            ThinkingContent(thinking="  "),
            ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
            TextContent(text="go", text_signature="msg_1"),
            call,
        ),
        result("c1|fc_1"),
    ]
    sent = transform_messages(messages, TARGET, cut_at_bar)
    assistant, tool = sent
    assert [(type(b).__name__, getattr(b, "text", None)) for b in assistant.content] == [
        ("TextContent", "go"),
        ("ToolCall", None),
    ]
    assert assistant.content[0].text_signature is None
    assert assistant.content[1].id == "c1" and assistant.content[1].thought_signature is None
    assert tool.tool_call_id == "c1"


def test_same_model_keeps_everything() -> None:
    same = Model(id="src", api="openai-responses", provider="openai")
    blocks = [
        ThinkingContent(thinking="", thinking_signature="{}"),
        ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
        TextContent(text="go", text_signature="msg_1"),
        ToolCall(id="c1|fc_1", name="read", thought_signature="sig"),
    ]
    (assistant, _tool) = transform_messages([reply(*blocks), result("c1|fc_1")], same, cut_at_bar)
    assert assistant.content == blocks
    readable = [ThinkingContent(thinking="plan"), ThinkingContent(thinking=" "), TextContent(text="go")]
    (kept,) = transform_messages([reply(*readable, stop="stop")], same)
    assert kept.content == [readable[0], readable[2]]  # only empty unsigned thinking goes


def test_orphans_failed_replies_and_synthetic_results() -> None:
    messages = [
        reply(ToolCall(id="a", name="read"), ToolCall(id="b", name="read")),
        result("a"),
        UserMessage(content="stop"),
        reply(ToolCall(id="c", name="read"), stop="aborted"),
        reply(ToolCall(id="d", name="read"), stop="error"),
        result("d"),
        reply(ToolCall(id="e", name="read")),
    ]
    sent = transform_messages(messages, TARGET)
    summary = [
        (m.role, getattr(m, "tool_call_id", None), m.content[0].text if m.role == "toolResult" else None)
        for m in sent
    ]
    assert summary == [
        ("assistant", None, None),
        ("toolResult", "a", "ok"),
        ("toolResult", "b", NO_RESULT_TEXT),  # answered where the user spoke, after the real result
        ("user", None, None),
        ("toolResult", "d", "ok"),  # pi leaves the failed replies out, but still sends this result
        ("assistant", None, None),
        ("toolResult", "e", NO_RESULT_TEXT),  # the conversation ended on an unanswered call
    ]
    assert all(m.is_error for m in sent if m.role == "toolResult" and m.content[0].text == NO_RESULT_TEXT)
