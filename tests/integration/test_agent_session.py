"""AgentSession over real loopback HTTP: turns, tools, queues, abort, compaction, tree moves."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pi_tui.agent.history import CompactionFailed
from pi_tui.agent.session import AgentSession
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.types import StreamOptions
from pi_tui.config.settings import Settings
from pi_tui.messages import TextContent, ToolResultMessage, UserMessage
from pi_tui.session import SessionManager
from pi_tui.session.entries import BranchSummaryEntry, CompactionEntry
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from tests.support.model_server import HttpError, ModelServer, Scripted, ScriptUsage, ToolCallSpec
from tests.support.waiting import async_wait_until

T = TypeVar("T")


class EchoTool:
    """A tool that answers with its argument, fails on request, or sleeps (for abort tests)."""

    name = "echo"
    label = "Echo"
    description = "Echo the given text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        text = str(args.get("text", ""))
        if text == "fail":
            raise ToolError("echo refused: fail")
        if text == "sleep":
            await asyncio.sleep(30)
        return ToolResult.text(f"echoed {text}")


def run(make: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        try:
            return await make()
        finally:
            await close_shared_client()

    return asyncio.run(main())


def make_agent(server: ModelServer, tmp_path: Path, **settings: Any) -> tuple[AgentSession, list[Any]]:
    manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    agent = AgentSession(
        manager,
        server.model(context_window=settings.pop("context_window", 128_000)),
        tools=[EchoTool()],
        system_prompt="test prompt",
        settings=Settings.model_validate(settings),
        request_options=lambda _model: StreamOptions(api_key="k", base_delay=0.01),
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    return agent, events


def kinds(events: list[Any]) -> list[str]:
    return [event.type for event in events if event.type != "message_update"]


def test_tool_loop_saves_everything_and_events_are_ordered(tmp_path: Path) -> None:
    replies = [
        Scripted(text="Let me echo.", tool_calls=[ToolCallSpec("echo", {"text": "hi"})]),
        Scripted(tool_calls=[ToolCallSpec("echo", {"text": "fail"}), ToolCallSpec("missing", {})]),
        Scripted(text="All done."),
    ]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, tmp_path)
        final = run(lambda: agent.prompt("start"))
        assert final is not None and final.content[0].text == "All done."
        assert kinds(events)[:6] == [
            "agent_start",
            "turn_start",
            "message_start",  # the user message, after turn_start as pi does
            "message_end",
            "message_start",
            "message_end",
        ]
        assert kinds(events)[-3:] == ["turn_end", "agent_end", "agent_settled"]  # pi 1.x
        assert kinds(events).count("turn_start") == 3
        roles = [(m.role, getattr(m, "is_error", None)) for m in agent.messages]
        assert roles == [
            ("user", None),
            ("assistant", None),
            ("toolResult", False),
            ("assistant", None),
            ("toolResult", True),
            ("toolResult", True),
            ("assistant", None),
        ]
        results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
        assert results[0].content[0].text == "echoed hi"
        assert results[1].content[0].text == "echo refused: fail"
        assert "not available" in results[2].content[0].text
        # The second request carried the first tool result, paired with its call.
        second = server.requests[1].body["messages"]
        assert second[-1]["role"] == "tool" and second[-1]["content"] == "echoed hi"
        reopened = SessionManager.open(agent.manager.session_file, read_only=True)
        assert [e.type for e in reopened.get_entries()][:2] == ["model_change", "thinking_level_change"]
        assert len(reopened.build_session_context().messages) == 7


def test_steering_is_delivered_before_the_next_call_and_skips_remaining_tools(tmp_path: Path) -> None:
    replies = [
        Scripted(
            tool_calls=[ToolCallSpec("echo", {"text": "one"}), ToolCallSpec("echo", {"text": "two"})],
            event_delay=0.05,
        ),
        Scripted(text="steered"),
        Scripted(text="followed"),
    ]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, tmp_path)

        async def scenario() -> Any:
            task = asyncio.create_task(agent.prompt("go"))
            await async_wait_until(
                lambda: any(e.type == "message_update" for e in events), "the reply to stream"
            )
            await agent.prompt("change of plan", streaming_behavior="steer")
            await agent.prompt("then this", streaming_behavior="followUp")
            return await task

        final = run(scenario)
        assert final.content[0].text == "followed"
        second = server.requests[1].body["messages"]
        assert second[-1] == {"role": "user", "content": [{"type": "text", "text": "change of plan"}]}
        skipped = [m for m in agent.messages if isinstance(m, ToolResultMessage)][1]
        assert skipped.is_error and "Skipped" in skipped.content[0].text
        third = server.requests[2].body["messages"]
        assert third[-1]["content"][0]["text"] == "then this"
        queue_events = [e for e in events if e.type == "queue_update"]
        assert queue_events[0]["steering"] == ["change of plan"]


def test_abort_during_stream_and_during_tool(tmp_path: Path) -> None:
    replies = [
        Scripted(text="a b c d e f g h i j k l", event_delay=0.2),
        Scripted(tool_calls=[ToolCallSpec("echo", {"text": "sleep"})]),
        Scripted(text="fine again"),
    ]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, tmp_path)

        async def scenario() -> tuple[Any, float, Any, float, Any]:
            task = asyncio.create_task(agent.prompt("slow"))
            await async_wait_until(
                lambda: any(
                    e.type == "message_update" and e["assistantMessageEvent"].type == "text_delta"
                    for e in events
                ),
                "the first text delta",
            )
            started = time.monotonic()
            agent.abort()
            first = await task
            stream_stop = time.monotonic() - started
            task = asyncio.create_task(agent.prompt("tool"))
            await async_wait_until(
                lambda: any(e.type == "tool_execution_start" for e in events), "the tool's start"
            )
            await asyncio.sleep(0.05)  # time is what is tested: the tool has been running a moment
            started = time.monotonic()
            agent.abort()
            second = await task
            tool_stop = time.monotonic() - started
            third = await agent.prompt("again")
            return first, stream_stop, second, tool_stop, third

        first, stream_stop, second, tool_stop, third = run(scenario)
        assert first.stop_reason == "aborted" and stream_stop < 0.2
        assert first.content and first.content[0].text.startswith("a")
        assert tool_stop < 0.2 and second.stop_reason == "toolUse"
        aborted_result = [m for m in agent.messages if isinstance(m, ToolResultMessage)][-1]
        assert aborted_result.is_error and "Aborted" in aborted_result.content[0].text
        assert third.content[0].text == "fine again"


def test_http_errors_are_retried_with_events(tmp_path: Path) -> None:
    with ModelServer(HttpError(503), Scripted(text="ok")) as server:
        agent, events = make_agent(server, tmp_path)
        final = run(lambda: agent.prompt("hi"))
        assert final.content[0].text == "ok"
        retry = [e for e in events if e.type.startswith("auto_retry")]
        assert [e.type for e in retry] == ["auto_retry_start", "auto_retry_end"]
        assert retry[0]["attempt"] == 1 and retry[1]["success"] is True


def long_turns(count: int) -> list[Scripted]:
    """Replies of ~250 tokens whose reported usage grows like a real conversation's."""
    filler = "word " * 200
    return [
        Scripted(text=f"answer {n} {filler}", usage=ScriptUsage(input=350 * (n + 1), output=250))
        for n in range(count)
    ]


def summaries_or(text: str) -> Callable[[Any], Scripted]:
    """Summary requests (sent without tools) get a summary; everything else gets ``text``."""

    def reply(request: Any) -> Scripted:
        if "tools" not in request.body:
            return Scripted(text="## Goal\nsummary of it all")
        return Scripted(text=text)

    return reply


def test_threshold_compaction_runs_after_a_turn(tmp_path: Path) -> None:
    turns = iter(long_turns(4))

    def reply(request: Any) -> Scripted:
        if "tools" not in request.body:
            return Scripted(text="## Goal\nKeep going.")
        return next(turns)

    with ModelServer(default=reply) as server:
        agent, events = make_agent(
            server,
            tmp_path,
            context_window=1500,
            compaction={"reserveTokens": 1000, "keepRecentTokens": 300},
        )

        async def scenario() -> None:
            for n in range(4):
                await agent.prompt(f"question {n} " + "detail " * 100)

        run(scenario)
        compactions = [e for e in agent.manager.get_entries() if isinstance(e, CompactionEntry)]
        assert compactions, [e.type for e in events]
        entry = compactions[0]
        kept = agent.manager.get_entry(entry.first_kept_entry_id)
        assert kept.message.role != "toolResult"
        assert entry.tokens_before > 500
        assert [e.type for e in events if e.type.startswith("compaction")][:2] == [
            "compaction_start",
            "compaction_end",
        ]
        assert "Keep going." in entry.summary
        # the next request after a compaction starts with the summary wrapper
        after = [r for r in server.requests if "tools" in r.body][-1].body["messages"]
        assert after[1]["content"][0]["text"].startswith(
            "The conversation history before this point was compacted"
        )


def test_overflow_error_compacts_and_retries_once(tmp_path: Path) -> None:
    overflow = HttpError(400, message="This model's maximum context length is 1000 tokens")
    with ModelServer(*long_turns(2), overflow, default=summaries_or("retried")) as server:
        agent, events = make_agent(server, tmp_path, compaction={"keepRecentTokens": 100})

        async def scenario() -> Any:
            await agent.prompt("first " + "x " * 400)
            await agent.prompt("second " + "y " * 400)
            return await agent.prompt("third")

        final = run(scenario)
        assert final.content[0].text == "retried"
        end = next(e for e in events if e.type == "compaction_end")
        assert end["reason"] == "overflow" and end["willRetry"] is True
        last_request = server.requests[-1].body["messages"]
        assert last_request[1]["content"][0]["text"].startswith(
            "The conversation history before this point was compacted"
        )


def test_manual_compact_failure_is_reported(tmp_path: Path) -> None:
    with ModelServer(*long_turns(3), HttpError(400, message="bad request")) as server:
        agent, _events = make_agent(server, tmp_path, compaction={"keepRecentTokens": 50})

        async def scenario() -> None:
            for n in range(3):
                await agent.prompt(f"q{n} " + "z " * 200)
            await agent.compact("focus on z")

        with pytest.raises(CompactionFailed, match="bad request"):
            run(scenario)
        assert not [e for e in agent.manager.get_entries() if isinstance(e, CompactionEntry)]


def test_navigate_tree_with_summary_and_user_message_selection(tmp_path: Path) -> None:
    with ModelServer(
        Scripted(text="A1"), Scripted(text="A2"), Scripted(text="Branch was about q2.")
    ) as server:
        agent, _events = make_agent(server, tmp_path)

        async def scenario() -> Any:
            await agent.prompt("q1")
            await agent.prompt("q2")
            q2 = next(
                e
                for e in agent.manager.get_entries()
                if getattr(e, "message", None) is not None
                and isinstance(e.message, UserMessage)
                and e.message.content[0].text == "q2"
            )
            return q2, await agent.navigate_tree(q2.id, summarize=True)

        q2, result = run(scenario)
        assert result.editor_text == "q2"
        summary = agent.manager.get_entry(result.summary_entry_id)
        assert isinstance(summary, BranchSummaryEntry) and summary.parent_id == q2.parent_id
        assert summary.summary.startswith("The user explored a different conversation branch")
        assert "Branch was about q2." in summary.summary
        assert agent.manager.get_leaf_id() == summary.id
        assert run(lambda: agent.navigate_tree(summary.id)).already_there


def test_user_bash_is_recorded_and_excluded_when_asked(tmp_path: Path) -> None:
    with ModelServer(Scripted(text="seen")) as server:
        agent, _events = make_agent(server, tmp_path)

        async def scenario() -> None:
            await agent.run_bash("echo visible")
            await agent.run_bash("echo hidden", exclude_from_context=True)
            await agent.prompt("what ran?")

        run(scenario)
        sent = server.requests[0].body["messages"]
        texts = [m["content"][0]["text"] for m in sent if m["role"] == "user"]
        assert texts[0] == "Ran `echo visible`\n```\nvisible\n\n```"
        assert "hidden" not in str(sent)


def test_a_failing_subscriber_does_not_break_the_loop(tmp_path: Path) -> None:
    with ModelServer(Scripted(text="still fine")) as server:
        agent, events = make_agent(server, tmp_path)

        def explode(event: Any) -> None:
            if event.type == "turn_start":
                raise RuntimeError("subscriber bug")

        agent.subscribe(explode)
        final = run(lambda: agent.prompt("hi"))
        assert final.content[0].text == "still fine"
        errors = [e for e in events if e.type == "subscriber_error"]
        assert errors and "subscriber bug" in errors[0]["error"]


def test_missing_key_is_a_clear_failed_message(tmp_path: Path) -> None:
    from pi_tui.ai.errors import ConfigError

    with ModelServer() as server:
        agent, _events = make_agent(server, tmp_path)

        def no_key(_model: Any) -> StreamOptions:
            raise ConfigError('No API key for provider "test": set TEST_KEY')

        agent._request_options = no_key
        final = run(lambda: agent.prompt("hi"))
        assert final.stop_reason == "error" and "No API key" in final.error_message
        assert not server.requests


def test_request_options_are_resolved_while_the_event_loop_keeps_running(tmp_path: Path) -> None:
    """A saved login renewed before a turn (an HTTP POST under auth.json's lock) must not freeze
    the front end: the resolver runs off the loop, which keeps serving other tasks meanwhile."""
    import threading

    with ModelServer() as server:
        server.queue(Scripted(text="ok"))
        agent, _events = make_agent(server, tmp_path)
        resolved = threading.Event()
        release = threading.Event()
        plain = agent._request_options

        def slow_renewal(model: Any) -> StreamOptions:
            resolved.set()
            assert release.wait(10), "the loop never got to release the resolver"
            return plain(model)

        agent._request_options = slow_renewal

        async def scenario() -> str:
            turn = asyncio.create_task(agent.prompt("hi"))
            while not resolved.is_set():  # the loop is free: this task runs while it waits
                await asyncio.sleep(0.005)
            release.set()
            final = await turn
            return final.stop_reason

        assert run(scenario) == "stop"
        assert len(server.requests) == 1


def test_images_are_sent_with_the_prompt(tmp_path: Path) -> None:
    from pi_tui.messages import ImageContent

    with ModelServer(Scripted(text="a red dot")) as server:
        agent, _events = make_agent(server, tmp_path)
        agent.model = server.model(input=["text", "image"])
        image = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
        run(lambda: agent.prompt("what is it?", [image]))
        parts = server.requests[0].body["messages"][-1]["content"]
        assert parts[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
        assert isinstance(agent.messages[0].content[0], TextContent)
