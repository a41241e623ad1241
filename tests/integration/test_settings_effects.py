"""Settings that change what the agent does, read at the moment they matter (so /settings applies
them mid-session): queue modes, blocked images, the shell and its prefix, thinking budgets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.transform import BLOCKED_IMAGE_TEXT
from pi_tui.ai.types import Context, StreamOptions
from pi_tui.messages import ImageContent, TextContent, UserMessage
from pi_tui.tools import ToolContext, ToolError
from pi_tui.tools.bash import BashTool
from tests.integration.test_agent_session import make_agent, run
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import async_wait_until
from tests.unit import test_anthropic, test_google


def _last_user_texts(body: dict[str, Any]) -> list[str]:
    """The user texts after the last assistant message of a request (openai-completions shape)."""
    texts: list[str] = []
    for message in body["messages"]:
        if message["role"] == "assistant":
            texts = []
        elif message["role"] == "user":
            content = message["content"]
            texts.extend([content] if isinstance(content, str) else [part["text"] for part in content])
    return texts


def _steer_twice(tmp_path: Path, mode: str) -> list[dict[str, Any]]:
    replies = [Scripted(text="a b c d e f", event_delay=0.05), Scripted(text="one"), Scripted(text="two")]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, tmp_path, steeringMode="one-at-a-time")
        agent.settings.steering_mode = mode  # as /settings does: the same object, changed in place

        async def scenario() -> Any:
            task = asyncio.create_task(agent.prompt("go"))
            await async_wait_until(
                lambda: any(e.type == "message_update" for e in events), "the reply to stream"
            )
            await agent.prompt("first", streaming_behavior="steer")
            await agent.prompt("second", streaming_behavior="steer")
            return await task

        run(scenario)
        return [request.body for request in server.requests]


def test_steering_one_at_a_time_gives_one_message_per_turn(tmp_path: Path) -> None:
    bodies = _steer_twice(tmp_path, "one-at-a-time")
    assert len(bodies) == 3
    assert _last_user_texts(bodies[1]) == ["first"]
    assert _last_user_texts(bodies[2]) == ["second"]


def test_steering_all_gives_every_queued_message_at_once(tmp_path: Path) -> None:
    bodies = _steer_twice(tmp_path, "all")
    assert len(bodies) == 2
    assert _last_user_texts(bodies[1]) == ["first", "second"]


def test_follow_up_mode_is_read_when_the_agent_stops(tmp_path: Path) -> None:
    replies = [Scripted(text="a b c d e f", event_delay=0.05), Scripted(text="both")]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, tmp_path)

        async def scenario() -> Any:
            task = asyncio.create_task(agent.prompt("go"))
            await async_wait_until(
                lambda: any(e.type == "message_update" for e in events), "the reply to stream"
            )
            await agent.prompt("later one", streaming_behavior="followUp")
            await agent.prompt("later two", streaming_behavior="followUp")
            agent.settings.follow_up_mode = "all"
            return await task

        run(scenario)
        assert len(server.requests) == 2
        assert _last_user_texts(server.requests[1].body) == ["later one", "later two"]
        assert agent.state()["followUpMode"] == "all"


def test_blocked_images_never_reach_the_provider(tmp_path: Path) -> None:
    with ModelServer(Scripted(text="ok")) as server:
        agent, _events = make_agent(server, tmp_path)
        picture = ImageContent(data="aGVsbG8=", mime_type="image/png")
        agent.manager.append_message(
            UserMessage(content=[TextContent(text="look"), picture, picture], timestamp=1)
        )
        assert any(isinstance(block, ImageContent) for block in agent.build_context().messages[0].content)
        agent.settings.images.block_images = True
        content = agent.build_context().messages[0].content
        assert [getattr(block, "text", None) for block in content] == ["look", BLOCKED_IMAGE_TEXT]
        # The session keeps the image; only the request goes without it.
        assert isinstance(agent.messages[0].content[1], ImageContent)


def test_shell_path_and_prefix_reach_the_bash_tool(tmp_path: Path) -> None:
    shell = tmp_path / "my-shell"
    shell.write_text('#!/bin/sh\necho "my shell ran"\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)
    ctx = ToolContext(cwd=tmp_path, shell_path=str(shell), command_prefix="WORD=from-prefix")
    result = asyncio.run(BashTool().execute("c1", {"command": "echo $WORD"}, ctx))
    assert result.content[0].text.split() == ["my", "shell", "ran", "from-prefix"]


def test_a_missing_shell_path_is_a_clear_error(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, shell_path=str(tmp_path / "nope"))
    with pytest.raises(ToolError) as caught:
        asyncio.run(BashTool().execute("c1", {"command": "true"}, ctx))
    assert "shellPath in settings.json" in str(caught.value) and "\n" not in str(caught.value)


def test_thinking_budgets_replace_the_built_in_ones() -> None:
    claude = test_anthropic.fake_claude(max_tokens=64000)
    sent = test_anthropic.body(claude, [], thinking="low", thinking_budgets={"low": 3000})
    assert sent["thinking"]["budget_tokens"] == 3000 and sent["max_tokens"] == 64000  # the model's max
    gemini = test_google.model("gemini-2.5-pro", reasoning=True)
    config = test_google.body(gemini, Context(), thinking="medium", thinking_budgets={"medium": 5000})
    assert config["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 5000
    default = StreamOptions()
    assert default.thinking_budgets == {}
