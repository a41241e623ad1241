"""pi 1.x's ``compaction.modelOverrides`` decides compaction for the active model, everywhere.

pi reads the resolved values (override, then the ordinary setting, then the default, field by
field) for the automatic threshold, overflow recovery and ``/compact``, and a model switch changes
the next check. These drive a real :class:`AgentSession` against the loopback model server: the
same conversation compacts or not depending only on which model the override names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from pi_tui.agent.session import AgentSession
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.types import StreamOptions
from pi_tui.config.settings import Settings
from pi_tui.session import SessionManager
from pi_tui.session.entries import CompactionEntry
from pi_tui.tools.base import ToolContext, ToolResult
from tests.support.model_server import HttpError, ModelServer, Scripted, ScriptUsage

T = TypeVar("T")


class NoteTool:
    """One tool, so turn requests carry ``tools`` and summary requests (sent without) differ."""

    name = "note"
    label = "Note"
    description = "Take a note."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text("noted")


def run(make: Callable[[], Awaitable[T]]) -> T:
    """Run one scenario and close the shared HTTP client inside the same loop."""

    async def main() -> T:
        try:
            return await make()
        finally:
            await close_shared_client()

    return asyncio.run(main())


def reply_or_summary(request: Any) -> Scripted:
    """Summary requests (no tools) get a summary; turns get a ~250-token answer."""
    if "tools" not in request.body:
        return Scripted(text="## Goal\nsummary of it all")
    return Scripted(text="answer " + "word " * 200, usage=ScriptUsage(input=700, output=250))


def make_agent(server: ModelServer, tmp_path: Path, compaction: dict[str, Any]) -> AgentSession:
    """An agent on model ``test/m`` (1,500-token window) with these compaction settings."""
    manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    return AgentSession(
        manager,
        server.model(context_window=1500),
        tools=[NoteTool()],
        system_prompt="test prompt",
        settings=Settings.model_validate({"compaction": compaction}),
        request_options=lambda _model: StreamOptions(api_key="k", base_delay=0.01),
    )


def compactions(agent: AgentSession) -> list[CompactionEntry]:
    return [entry for entry in agent.manager.get_entries() if isinstance(entry, CompactionEntry)]


def threshold_run(tmp_path: Path, overridden: str) -> AgentSession:
    """Two turns with an ordinary reserve too small to trigger; the override says 1,000."""
    compaction = {
        "reserveTokens": 10,
        "keepRecentTokens": 100,
        "modelOverrides": {overridden: {"reserveTokens": 1000}},
    }
    with ModelServer(default=reply_or_summary) as server:
        agent = make_agent(server, tmp_path, compaction)

        async def scenario() -> None:
            await agent.prompt("first " + "x " * 200)
            await agent.prompt("second " + "y " * 200)

        run(scenario)
    return agent


def test_the_active_models_override_sets_the_automatic_threshold(tmp_path: Path) -> None:
    agent = threshold_run(tmp_path / "a", "test/m")
    assert compactions(agent), "the override's reserve of 1,000 should have started compaction"
    assert agent.compaction_settings().reserve_tokens == 1000
    assert agent.compaction_settings().keep_recent_tokens == 100  # not overridden: ordinary


def test_another_models_override_leaves_the_threshold_alone(tmp_path: Path) -> None:
    agent = threshold_run(tmp_path / "b", "test/other")
    assert not compactions(agent)
    assert agent.compaction_settings().reserve_tokens == 10


def test_manual_compaction_keeps_what_the_override_says_and_follows_a_model_switch(
    tmp_path: Path,
) -> None:
    compaction = {
        "enabled": False,
        "keepRecentTokens": 100_000,
        "modelOverrides": {"test/small": {"keepRecentTokens": 50}},
    }
    with ModelServer(default=reply_or_summary) as server:
        agent = make_agent(server, tmp_path, compaction)

        async def scenario() -> tuple[Any, Any]:
            await agent.prompt("first " + "x " * 200)
            await agent.prompt("second " + "y " * 200)
            before = await agent.compact()  # test/m: everything is within the newest 100,000
            agent.set_model(server.model(id="small", context_window=1500))
            after = await agent.compact()  # test/small keeps only ~50 tokens
            return before, after

        before, after = run(scenario)
    assert before is None
    assert after is not None and len(compactions(agent)) == 1


def test_overflow_recovery_uses_the_override(tmp_path: Path) -> None:
    overflow = HttpError(400, message="This model's maximum context length is 1000 tokens")
    script = [
        Scripted(text="one " + "word " * 200, usage=ScriptUsage(input=300, output=250)),
        Scripted(text="two " + "word " * 200, usage=ScriptUsage(input=600, output=250)),
        overflow,
    ]
    compaction = {
        "enabled": True,
        "reserveTokens": 0,
        "keepRecentTokens": 100_000,
        "modelOverrides": {"test/m": {"keepRecentTokens": 100}},
    }

    def then(request: Any) -> Scripted:
        if "tools" not in request.body:
            return Scripted(text="## Goal\nsummary of it all")
        return Scripted(text="retried")

    with ModelServer(*script, default=then) as server:
        agent = make_agent(server, tmp_path, compaction)

        async def scenario() -> Any:
            await agent.prompt("first " + "x " * 200)
            await agent.prompt("second " + "y " * 200)
            return await agent.prompt("third")

        final = run(scenario)
    assert final.content[0].text == "retried"
    assert len(compactions(agent)) == 1
