"""Our own summaries carry what they cost, as pi 1.x's do: a compaction or branch summary entry
written by pi-tui holds the summary reply's ``usage`` (both replies' for a split turn), and so
counts in the session's totals. Real AgentSession over loopback HTTP, real session files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.messages import UserMessage
from pi_tui.session.entries import BranchSummaryEntry, CompactionEntry
from pi_tui.view.stats import session_usage
from tests.integration.test_agent_session import make_agent, run
from tests.support.model_server import ModelServer, Scripted, ScriptUsage, ToolCallSpec

SUMMARY_USAGE = ScriptUsage(input=900, output=120, cache_read=30)
"""The loopback server speaks openai-completions here, which reports no cache writes."""


def summary_or(reply: Scripted) -> Any:
    """Summary requests (sent without tools) get a priced summary; the rest get ``reply``."""

    def answer(request: Any) -> Scripted:
        if "tools" not in request.body:
            return Scripted(text="## Goal\nsummary of it all", usage=SUMMARY_USAGE)
        return reply

    return answer


def file_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_a_compaction_keeps_the_usage_of_its_summary_and_counts_it(tmp_path: Path) -> None:
    filler = "word " * 200
    with ModelServer(
        default=summary_or(Scripted(text=f"answer {filler}", usage=ScriptUsage(400, 250)))
    ) as server:
        agent, _events = make_agent(server, tmp_path, compaction={"keepRecentTokens": 50, "enabled": False})

        async def scenario() -> None:
            for n in range(3):
                await agent.prompt(f"q{n} " + "z " * 200)
            await agent.compact()

        run(scenario)
        asked = len([r for r in server.requests if "tools" not in r.body])  # 2 when a turn was cut
        entry = next(e for e in agent.manager.get_entries() if isinstance(e, CompactionEntry))
        assert entry.usage is not None and asked >= 1
        usage = (entry.usage.input, entry.usage.output, entry.usage.cache_read, entry.usage.total_tokens)
        assert usage == (900 * asked, 120 * asked, 30 * asked, 1050 * asked)
        path = agent.manager.session_file
        agent.manager.close()
        raw = next(e for e in file_entries(path) if e["type"] == "compaction")
        assert raw["usage"]["input"] == 900 * asked and raw["usage"]["totalTokens"] == 1050 * asked
        assert set(raw["usage"]["cost"]) == {"input", "output", "cacheRead", "cacheWrite", "total"}
        totals = session_usage(file_entries(path))
        assert (totals.input, totals.output) == (3 * 400 + 900 * asked, 3 * 250 + 120 * asked)


def test_a_split_turn_compaction_sums_both_summary_replies(tmp_path: Path) -> None:
    """A short turn, then a long turn of tool calls cut in the middle: the history and the
    turn's beginning are summarised by two requests, whose usage the entry holds as one (pi 1.x
    sums them the same way)."""
    replies = [Scripted(text="first answer " + "w " * 200, usage=ScriptUsage(100, 10))]
    replies += [
        Scripted(tool_calls=[ToolCallSpec("echo", {"text": "x " * 300})], usage=ScriptUsage(100, 10))
        for _ in range(6)
    ]
    replies.append(Scripted(text="done", usage=ScriptUsage(100, 10)))
    turns = iter(replies)

    def answer(request: Any) -> Scripted:
        if "tools" not in request.body:
            return Scripted(text="## Goal\nsummary", usage=SUMMARY_USAGE)
        return next(turns)

    with ModelServer(default=answer) as server:
        agent, _events = make_agent(server, tmp_path, compaction={"keepRecentTokens": 300, "enabled": False})

        async def scenario() -> None:
            await agent.prompt("first " + "v " * 300)
            await agent.prompt("start " + "y " * 300)
            await agent.compact()

        run(scenario)
        summaries = [r for r in server.requests if "tools" not in r.body]
        entry = next(e for e in agent.manager.get_entries() if isinstance(e, CompactionEntry))
        assert entry.usage is not None
        assert len(summaries) == 2, "the cut should fall inside the second turn"
        assert (entry.usage.input, entry.usage.output, entry.usage.total_tokens) == (1800, 240, 2100)


def test_a_branch_summary_keeps_the_usage_of_its_summary_and_counts_it(tmp_path: Path) -> None:
    with ModelServer(
        Scripted(text="A1", usage=ScriptUsage(10, 5)),
        Scripted(text="A2", usage=ScriptUsage(20, 5)),
        Scripted(text="Branch was about q2.", usage=SUMMARY_USAGE),
    ) as server:
        agent, _events = make_agent(server, tmp_path)

        async def scenario() -> Any:
            await agent.prompt("q1")
            await agent.prompt("q2")
            q2 = next(
                e
                for e in agent.manager.get_entries()
                if isinstance(getattr(e, "message", None), UserMessage) and e.message.content[0].text == "q2"
            )
            return await agent.navigate_tree(q2.id, summarize=True)

        result = run(scenario)
        summary = agent.manager.get_entry(result.summary_entry_id)
        assert isinstance(summary, BranchSummaryEntry) and summary.usage is not None
        assert (summary.usage.input, summary.usage.output, summary.usage.cache_read) == (900, 120, 30)
        path = agent.manager.session_file
        agent.manager.close()
        raw = next(e for e in file_entries(path) if e["type"] == "branch_summary")
        assert raw["usage"]["output"] == 120 and "total" in raw["usage"]["cost"]
        totals = session_usage(file_entries(path))
        assert (totals.input, totals.output, totals.cache_read) == (10 + 20 + 900, 5 + 5 + 120, 30)
