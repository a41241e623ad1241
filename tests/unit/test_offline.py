"""The offline demo model, driven through the real streaming runner on a real event loop."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest

from pi_tui.ai import offline
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.offline import DEMO_MODEL, plan_reply, tick_seconds
from pi_tui.ai.stream import stream_message
from pi_tui.ai.types import Context, StreamOptions, Tool
from pi_tui.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from tests.support.builders import assistant, tool_result, user

ALL_TOOLS = [Tool(name=name) for name in ("read", "bash", "edit", "write")]


@dataclass
class Run:
    events: list[StreamEvent]
    message: AssistantMessage

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.message.content if isinstance(block, TextContent))

    @property
    def calls(self) -> list[ToolCall]:
        return [block for block in self.message.content if isinstance(block, ToolCall)]


def run(context: Context, options: StreamOptions | None = None, *, abort_after: str | None = None) -> Run:
    async def go() -> Run:
        stream = stream_message(DEMO_MODEL, context, options)
        events: list[StreamEvent] = []
        async for event in stream:
            events.append(event)
            if abort_after is not None and event.type == abort_after:
                stream.abort()  # idempotent: later queued deltas do not matter
        return Run(events, await stream.result())

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(offline.DELAY_ENV, "0")


def test_plain_prompt_streams_a_marked_demo_reply() -> None:
    result = run(Context(messages=[user("What does this project do?")], tools=ALL_TOOLS))
    assert result.types[0] == "start"
    assert result.types[-1] == "done"
    assert result.types.count("text_delta") >= 5
    assert result.message.stop_reason == "stop"
    assert result.message.provider == "offline" and result.message.model == "demo"
    assert result.message.api == "offline"
    assert "offline demo model" in result.text and "ANTHROPIC_API_KEY" in result.text
    assert "`read README.md`" in result.text and "`run ls`" in result.text
    usage = result.message.usage
    assert usage is not None and usage.input > 0 and usage.output > 0
    assert usage.cost.total == 0
    # The deltas add up to the final text.
    deltas = "".join(e.delta for e in result.events if e.type == "text_delta")
    assert deltas == result.text


def test_later_replies_skip_the_introduction() -> None:
    history = [user("hi"), assistant("hello"), user("and now?")]
    result = run(Context(messages=history, tools=ALL_TOOLS))
    assert "This is the offline demo model" not in result.text
    assert "offline demo" in result.text
    assert "“and now?”" in result.text


def test_read_becomes_a_read_tool_call() -> None:
    result = run(Context(messages=[user("read README.md")], tools=ALL_TOOLS))
    assert result.message.stop_reason == "toolUse"
    assert result.types[-1] == "done" and result.events[-1].reason == "toolUse"
    assert [(c.name, c.arguments) for c in result.calls] == [("read", {"path": "README.md"})]
    assert result.calls[0].id.startswith("offline_")
    assert "toolcall_start" in result.types and "toolcall_end" in result.types
    end = next(e for e in result.events if e.type == "toolcall_end")
    assert end.tool_call is not None and end.tool_call.arguments == {"path": "README.md"}


@pytest.mark.parametrize(
    ("prompt", "name", "arguments"),
    [
        ("run ls -la", "bash", {"command": "ls -la"}),
        ("!git status", "bash", {"command": "git status"}),
        ("please read `docs/a b.md`", "read", {"path": "docs/a b.md"}),
        (
            "edit src/app.py: print('hi') -> print('hello')",
            "edit",
            {"path": "src/app.py", "edits": [{"oldText": "print('hi')", "newText": "print('hello')"}]},
        ),
        (
            "write notes.txt: first line\nsecond line",
            "write",
            {"path": "notes.txt", "content": "first line\nsecond line"},
        ),
    ],
)
def test_tool_phrases(prompt: str, name: str, arguments: dict[str, object]) -> None:
    result = run(Context(messages=[user(prompt)], tools=ALL_TOOLS))
    assert [(c.name, c.arguments) for c in result.calls] == [(name, arguments)]
    assert result.message.stop_reason == "toolUse"


def test_only_tools_in_the_context_are_called() -> None:
    result = run(Context(messages=[user("run ls")], tools=[Tool(name="read")]))
    assert result.calls == []
    assert result.message.stop_reason == "stop"
    assert "not enabled" in result.text
    result = run(Context(messages=[user("hello")], tools=[]))
    assert "No tools are enabled" in result.text


def test_a_tool_result_is_summarised_and_the_turn_stops() -> None:
    first = run(Context(messages=[user("read README.md")], tools=ALL_TOOLS))
    call = first.calls[0]
    content = "\n".join(f"line {n}" for n in range(1, 21))
    history = [user("read README.md"), first.message, tool_result(call.id, content)]
    result = run(Context(messages=history, tools=ALL_TOOLS))
    assert result.calls == []
    assert result.message.stop_reason == "stop"
    assert "`read` tool returned 20 lines" in result.text
    assert "line 1\n" in result.text and "line 6" in result.text and "line 7" not in result.text


def test_a_failed_tool_result_is_reported_as_an_error() -> None:
    failed = ToolResultMessage(
        tool_call_id="c1",
        tool_name="bash",
        content=[TextContent(text="ls: cannot access 'nope': No such file or directory")],
        is_error=True,
    )
    history = [user("run ls nope"), assistant("Running", ToolCall(id="c1", name="bash")), failed]
    result = run(Context(messages=history, tools=ALL_TOOLS))
    assert "`bash` tool reported an error" in result.text
    assert "No such file or directory" in result.text
    assert result.message.stop_reason == "stop"


def test_same_context_same_reply() -> None:
    context = Context(messages=[user("edit a.txt: x -> y")], tools=ALL_TOOLS)
    one, two = run(context), run(context)
    assert [b.to_json_dict() for b in one.message.content] == [b.to_json_dict() for b in two.message.content]
    assert one.types == two.types
    assert one.message.usage == two.message.usage
    assert plan_reply(context) == plan_reply(context)


def test_thinking_streams_a_thinking_block_first() -> None:
    result = run(Context(messages=[user("read README.md")], tools=ALL_TOOLS), StreamOptions(thinking="high"))
    assert result.types[1] == "thinking_start"
    assert result.message.content[0].type == "thinking"
    assert "`read`" in result.message.content[0].thinking  # type: ignore[union-attr]


def test_max_tokens_ends_with_length() -> None:
    result = run(Context(messages=[user("hello")], tools=ALL_TOOLS), StreamOptions(max_tokens=10))
    assert result.message.stop_reason == "length"
    assert len(result.text) <= 40


def test_abort_mid_stream_ends_aborted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(offline.DELAY_ENV, "0.01")
    result = run(Context(messages=[user("hello")], tools=ALL_TOOLS), abort_after="text_delta")
    assert result.message.stop_reason == "aborted"
    assert result.types[-1] == "error" and result.events[-1].reason == "aborted"
    assert result.text  # what streamed before the abort is kept
    monkeypatch.setenv(offline.DELAY_ENV, "0")
    full = run(Context(messages=[user("hello")], tools=ALL_TOOLS))
    assert len(result.text) < len(full.text)


def test_pace_comes_from_the_constant_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(offline.DELAY_ENV)
    assert tick_seconds() == offline.TICK_SECONDS
    monkeypatch.setenv(offline.DELAY_ENV, "not-a-number")
    assert tick_seconds() == offline.TICK_SECONDS
    monkeypatch.setenv(offline.DELAY_ENV, "0.002")
    assert tick_seconds() == 0.002
    started = time.monotonic()
    result = run(Context(messages=[user("hello")], tools=ALL_TOOLS))
    ticks = result.types.count("text_delta")
    assert time.monotonic() - started >= ticks * 0.002 * 0.9
