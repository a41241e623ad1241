"""What an ACP client is sent for pi-tui's events, saved branches and tool calls (the pure parts
of pi_tui/acp; the protocol end to end is tests/integration/test_acp_agent.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.acp.client_mcp import ClientMcpError, client_servers, server_name
from pi_tui.acp.history import replay
from pi_tui.acp.prompt_input import PromptInputError, prompt_parts
from pi_tui.acp.session import stop_reason
from pi_tui.acp.tool_calls import plan_entries, tool_kind, tool_locations, tool_title
from pi_tui.acp.updates import LiveUpdates
from pi_tui.agent.events import AgentEvent
from pi_tui.ai.events import StreamEvent
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.tools.base import ToolResult

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_tool_calls_are_described_by_what_they_do(tmp_path: Path) -> None:
    assert tool_kind("read") == "read" and tool_kind("edit") == "edit" and tool_kind("bash") == "execute"
    assert tool_kind("grep") == "search" and tool_kind("mcp__github__search") == "other"
    assert tool_title("bash", {"command": "ls -la\n  && pwd"}) == "ls -la && pwd"
    assert tool_title("read", {"path": "src/app.py"}) == "Read src/app.py"
    assert tool_title("grep", {"pattern": "TODO", "path": "src"}) == 'grep "TODO" in src'
    assert tool_title("mcp__github__search", {}) == "mcp / github / search"
    assert len(tool_title("bash", {"command": "x" * 500})) == 120
    assert tool_locations("read", {"path": "a.py", "offset": 40}, tmp_path) == [
        {"path": str(tmp_path / "a.py"), "line": 40}
    ]
    assert tool_locations("edit", {"path": "/etc/hosts"}, tmp_path) == [{"path": "/etc/hosts"}]
    assert tool_locations("bash", {"command": "cat a.py"}, tmp_path) == []


def test_a_todo_list_becomes_a_plan_in_the_shapes_extensions_write() -> None:
    assert plan_entries(
        {"todos": [{"text": "write tests", "done": True}, {"content": "ship", "status": "in_progress"}]}
    ) == [
        {"content": "write tests", "status": "completed", "priority": "medium"},
        {"content": "ship", "status": "in_progress", "priority": "medium"},
    ]
    assert plan_entries({"todos": [{"title": "x", "priority": "high"}, "junk", {"done": True}]}) == [
        {"content": "x", "status": "pending", "priority": "high"}
    ]
    assert plan_entries({"diff": "-a\n+b"}) is None and plan_entries(None) is None


def _stream(kind: str, **fields: object) -> AgentEvent:
    return AgentEvent("message_update", {"assistantMessageEvent": StreamEvent(kind, **fields)})  # type: ignore[arg-type]


def test_the_live_stream_announces_a_call_then_runs_it_and_sends_the_edit_as_a_diff(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("print('hello')\n")
    live = LiveUpdates(tmp_path)
    call = ToolCall(id="c1", name="edit", arguments={"path": "app.py", "edits": []})
    sent = live.updates(_stream("text_delta", delta="Fixing."))
    sent += live.updates(_stream("thinking_delta", delta="hmm"))
    sent += live.updates(_stream("toolcall_start", tool_call=ToolCall(id="c1", name="edit")))
    sent += live.updates(_stream("toolcall_end", tool_call=call))
    sent += live.updates(
        AgentEvent("tool_execution_start", {"toolCallId": "c1", "toolName": "edit", "args": call.arguments})
    )
    target.write_text("print('bye')\n")  # what the tool did
    result = ToolResult.text("Applied 1 edit to app.py.", {"diff": "-1 hello\n+1 bye"})
    sent += live.updates(
        AgentEvent(
            "tool_execution_end", {"toolCallId": "c1", "toolName": "edit", "result": result, "isError": False}
        )
    )
    kinds = [(u["sessionUpdate"], u.get("status")) for u in sent]
    assert kinds == [
        ("agent_message_chunk", None),
        ("agent_thought_chunk", None),
        ("tool_call", "pending"),
        ("tool_call_update", None),
        ("tool_call_update", "in_progress"),
        ("tool_call_update", "completed"),
    ]
    assert sent[2]["kind"] == "edit" and sent[3]["title"] == "Edit app.py"
    assert sent[3]["locations"] == [{"path": str(target)}]
    diff = sent[-1]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(target),
        "oldText": "print('hello')\n",
        "newText": "print('bye')\n",
    }
    assert sent[-1]["rawOutput"]["details"] == {"diff": "-1 hello\n+1 bye"}


def test_a_command_output_grows_then_fails_and_a_terminal_run_shows_the_terminal(tmp_path: Path) -> None:
    live = LiveUpdates(tmp_path)
    start = {"toolCallId": "b1", "toolName": "bash", "args": {"command": "make"}}
    sent = live.updates(AgentEvent("tool_execution_start", start))
    assert (
        sent[0]["sessionUpdate"] == "tool_call" and sent[0]["kind"] == "execute"
    )  # never streamed: announced now
    partial = {"content": [TextContent(text="building\n")], "details": None}
    grew = live.updates(AgentEvent("tool_execution_update", {**start, "partialResult": partial}))
    assert grew[0]["content"] == [{"type": "content", "content": {"type": "text", "text": "building\n"}}]
    failed = ToolResult.text("building\n\nCommand exited with code 2")
    end = live.updates(AgentEvent("tool_execution_end", {**start, "result": failed, "isError": True}))
    assert end[0]["status"] == "failed" and "code 2" in end[0]["content"][0]["content"]["text"]

    live.terminals["b2"] = "term-7"
    other = {"toolCallId": "b2", "toolName": "bash", "args": {"command": "ls"}}
    live.updates(AgentEvent("tool_execution_start", other))
    assert live.updates(AgentEvent("tool_execution_update", {**other, "partialResult": partial})) == []
    done = live.updates(
        AgentEvent("tool_execution_end", {**other, "result": ToolResult.text("a"), "isError": False})
    )
    assert done[0]["content"] == [{"type": "terminal", "terminalId": "term-7"}]


def test_a_todo_tool_result_sends_the_plan_and_rules_and_retries_are_said(tmp_path: Path) -> None:
    live = LiveUpdates(tmp_path)
    result = ToolResult.text("ok", {"todos": [{"text": "a", "done": False}]})
    event = {"toolCallId": "t", "toolName": "todo", "args": {}, "result": result, "isError": False}
    sent = live.updates(AgentEvent("tool_execution_end", event))
    assert sent[-1] == {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "status": "pending", "priority": "medium"}],
    }
    rule = live.updates(AgentEvent("ttsr_triggered", {"rules": [{"name": "no-print"}]}))
    assert rule[0]["sessionUpdate"] == "agent_thought_chunk" and "no-print" in rule[0]["content"]["text"]
    retry = live.updates(
        AgentEvent(
            "auto_retry_start", {"errorMessage": "HTTP 529", "delayMs": 2000, "attempt": 1, "maxAttempts": 3}
        )
    )
    assert "HTTP 529; retrying in 2 s, attempt 1/3" in retry[0]["content"]["text"]


def test_a_saved_branch_replays_prompts_replies_finished_calls_and_summaries(tmp_path: Path) -> None:
    messages = [
        UserMessage(content=[TextContent(text="fix it"), ImageContent(data=PNG, mime_type="image/png")]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="looking"),
                TextContent(text="Reading."),
                ToolCall(id="r1", name="read", arguments={"path": "a.py"}),
                ToolCall(id="e1", name="edit", arguments={"path": "a.py"}),
                ToolCall(id="x1", name="bash", arguments={"command": "sleep 100"}),
            ],
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="r1", tool_name="read", content=[TextContent(text="1\tx")]),
        ToolResultMessage(
            tool_call_id="e1",
            tool_name="edit",
            content=[TextContent(text="oldText not found")],
            is_error=True,
        ),
        BashExecutionMessage(command="git status", output="clean", exit_code=0),
        CompactionSummaryMessage(summary="We fixed a.py."),
        AssistantMessage(content=[], stop_reason="error", error_message="HTTP 500"),
    ]
    sent = replay(messages, tmp_path)
    shapes = [(u["sessionUpdate"], u.get("status"), u.get("toolCallId")) for u in sent]
    assert shapes[:2] == [("user_message_chunk", None, None), ("user_message_chunk", None, None)]
    assert sent[1]["content"] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    assert shapes[2:7] == [
        ("agent_thought_chunk", None, None),
        ("agent_message_chunk", None, None),
        ("tool_call", "completed", "r1"),
        ("tool_call", "failed", "e1"),
        ("tool_call", "failed", "x1"),  # no result: cut short
    ]
    assert sent[4]["locations"] == [{"path": str(tmp_path / "a.py")}]
    assert (
        sent[7]["kind"] == "execute" and sent[7]["status"] == "completed" and sent[7]["title"] == "git status"
    )
    assert "We fixed a.py." in sent[8]["content"]["text"]
    assert "HTTP 500" in sent[9]["content"]["text"]


def test_prompt_blocks_become_text_with_context_and_images() -> None:
    blocks = [
        {"type": "text", "text": "Explain"},
        {"type": "resource_link", "uri": "file:///home/me/p/src/a%20b.py", "name": "a b.py"},
        {
            "type": "resource",
            "resource": {"uri": "file:///home/me/p/x.py", "text": "x = 1", "mimeType": "text/x-python"},
        },
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]
    text, images = prompt_parts(blocks)
    assert text.startswith("Explain @/home/me/p/src/a b.py")
    assert '<context ref="/home/me/p/x.py">\nx = 1\n</context>' in text
    assert images == [ImageContent(data=PNG, mime_type="image/png")]
    with pytest.raises(PromptInputError, match="no audio"):
        prompt_parts([{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}])
    with pytest.raises(PromptInputError, match="not valid base64"):
        prompt_parts([{"type": "image", "data": "not base64!", "mimeType": "image/png"}])
    with pytest.raises(PromptInputError, match="PNG, JPEG"):
        prompt_parts([{"type": "image", "data": "AAAA", "mimeType": "image/tiff"}])


def test_the_clients_mcp_servers_become_session_servers() -> None:
    stdio, http = client_servers(
        [
            {
                "name": "My Files",
                "command": "node",
                "args": ["server.js"],
                "env": [{"name": "TOKEN", "value": "t"}],
            },
            {
                "type": "http",
                "name": "docs",
                "url": "https://example.com/mcp",
                "headers": [{"name": "X-Key", "value": "k"}],
            },
        ]
    )
    assert stdio.name == "My-Files" and stdio.command == "node" and stdio.args == ["server.js"]
    assert stdio.env == {"TOKEN": "t"} and stdio.source.label() == "the editor (ACP)"
    assert http.url == "https://example.com/mcp" and http.headers == {"X-Key": "k"}
    assert server_name("  ") == "client"
    with pytest.raises(ClientMcpError, match="SSE"):
        client_servers([{"type": "sse", "name": "old", "url": "https://example.com/sse", "headers": []}])
    with pytest.raises(ClientMcpError, match="command"):
        client_servers([{"name": "broken", "args": []}])


def test_stop_reasons_follow_how_the_run_ended() -> None:
    assert stop_reason(AssistantMessage(stop_reason="stop"), cancelled=False) == "end_turn"
    assert stop_reason(AssistantMessage(stop_reason="length"), cancelled=False) == "max_tokens"
    assert stop_reason(AssistantMessage(stop_reason="aborted"), cancelled=False) == "cancelled"
    assert stop_reason(AssistantMessage(stop_reason="stop"), cancelled=True) == "cancelled"
    refused = AssistantMessage(
        stop_reason="error", error_message="The model stopped without answering (stop_reason: refusal)"
    )
    assert stop_reason(refused, cancelled=False) == "refusal"
    filtered = AssistantMessage(
        stop_reason="error", error_message="The provider stopped the reply (content_filter)"
    )
    assert stop_reason(filtered, cancelled=False) == "refusal"
    assert stop_reason(None, cancelled=False) == "end_turn"


def test_the_model_picker_groups_models_by_provider_when_there_are_several() -> None:
    from types import SimpleNamespace

    from pi_tui.acp.options import model_choices

    one = [
        SimpleNamespace(provider="test", id="m", name="M"),
        SimpleNamespace(provider="test", id="n", name=""),
    ]
    assert model_choices(one) == [
        {"value": "test/m", "name": "M", "description": "test/m"},
        {"value": "test/n", "name": "n", "description": "test/n"},
    ]
    two = [*one, SimpleNamespace(provider="openrouter", id="x/y", name="Y")]
    grouped = model_choices(two)
    assert [group["group"] for group in grouped] == ["test", "openrouter"]
    assert grouped[1]["options"] == [
        {"value": "openrouter/x/y", "name": "Y", "description": "openrouter/x/y"}
    ]
