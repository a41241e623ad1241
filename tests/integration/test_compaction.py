"""Compaction and branch summaries end to end: real sessions on disk, real HTTP to the loopback
model server, and the results compared with what pi wrote and sent for the same sessions
(tests/data/pi-sessions/08-manual-compact and 06-tree-branch-summary)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pi_tui.ai.http import close_shared_client
from pi_tui.ai.types import StreamOptions
from pi_tui.compaction import (
    CompactionError,
    collect_entries_for_branch_summary,
    compact,
    prepare_compaction,
    summarize_branch,
)
from pi_tui.compaction.prompts import SPLIT_TURN_HEADING, SYSTEM_PROMPT
from pi_tui.config.settings import CompactionSettings
from pi_tui.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_tui.session.context import GENERATED_BRANCH_SUMMARY_PREFIX, convert_to_llm
from pi_tui.session.manager import SessionManager
from tests.conftest import PI_SESSIONS
from tests.support.canonical import from_llm_messages, from_openai_request
from tests.support.model_server import HttpError, ModelServer, RecordedRequest, Scripted

FIXTURE_08 = PI_SESSIONS / "08-manual-compact"
FIXTURE_06 = PI_SESSIONS / "06-tree-branch-summary"
T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run in a fresh loop, closing the pooled HTTP client before the loop ends."""

    async def main() -> T:
        try:
            return await coroutine
        finally:
            await close_shared_client()

    return asyncio.run(main())


def options(**overrides: Any) -> StreamOptions:
    values: dict[str, Any] = {"api_key": "sk-test", "max_retries": 0, "timeout": 10.0}
    values.update(overrides)
    return StreamOptions(**values)


def lines(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "session.jsonl").read_text().splitlines()]


def fixture_request(folder: Path, number: int) -> dict[str, Any]:
    return json.loads((folder / "requests.jsonl").read_text().splitlines()[number - 1])


def entry_of(folder: Path, kind: str) -> dict[str, Any]:
    return next(line for line in lines(folder) if line.get("type") == kind)


def prompt_of(body: dict[str, Any]) -> str:
    """The single user message of an openai-completions summarisation request."""
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    content = messages[1]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def conversation_part(text: str) -> str:
    assert text.startswith("<conversation>\n")
    return text[: text.index("</conversation>\n\n") + len("</conversation>\n\n")]


def strip_tags(summary: str) -> str:
    """The model's text of a stored summary (fixture summaries end with file tags)."""
    return summary[: summary.index("\n\n<")]


def session_until(folder: Path, last_id: str, tmp_path: Path) -> SessionManager:
    """A writable copy of a fixture session cut after entry ``last_id`` (ids kept)."""
    kept: list[str] = []
    for raw in (folder / "session.jsonl").read_text().splitlines():
        kept.append(raw)
        if json.loads(raw).get("id") == last_id:
            break
    path = tmp_path / "sessions" / folder.name / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(kept) + "\n")
    return SessionManager.open(path)


def written_lines(manager: SessionManager) -> list[dict[str, Any]]:
    assert manager.session_file is not None
    return [json.loads(line) for line in manager.session_file.read_text().splitlines()]


# --- compaction -----------------------------------------------------------------------------


def test_compact_reproduces_pi_fixture(tmp_path: Path) -> None:
    stored = entry_of(FIXTURE_08, "compaction")
    manager = session_until(FIXTURE_08, stored["parentId"], tmp_path)
    settings = CompactionSettings(keep_recent_tokens=40)  # the fixture's settings.json
    preparation = prepare_compaction(manager.get_branch(), settings)
    assert preparation is not None

    with ModelServer(Scripted(text=strip_tags(stored["summary"]))) as server:
        model = server.model("openai-completions", id="fake-model")
        result = run(compact(preparation, model, options()))
        (request,) = server.requests

    body = request.body
    pi_body = fixture_request(FIXTURE_08, 5)
    assert "tools" not in body and "tools" not in pi_body
    assert body["max_completion_tokens"] == pi_body["max_completion_tokens"] == 13107
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    prompt = prompt_of(body)
    assert conversation_part(prompt) == conversation_part(prompt_of(pi_body))
    for heading in ("## Goal", "## Constraints & Preferences", "### In Progress", "## Critical Context"):
        assert heading in prompt
    assert "<previous-summary>" not in prompt

    assert result.summary == stored["summary"]  # model text + "\n\n<read-files>\nREADME.md\n</read-files>"
    assert result.first_kept_entry_id == stored["firstKeptEntryId"]
    assert result.tokens_before == stored["tokensBefore"]
    assert result.details == stored["details"]

    entry_id = result.append_to(manager)
    manager.close()
    written = written_lines(manager)[-1]
    assert written["id"] == entry_id
    for key in ("type", "parentId", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"):
        assert written[key] == stored[key], key

    # The next turn's context equals what pi sent after its compaction (request 6).
    manager.append_message(UserMessage(content=[TextContent(text="Continue please")]))
    ours = from_llm_messages(convert_to_llm(manager.build_session_context().messages), "openai-completions")
    assert ours == from_openai_request(fixture_request(FIXTURE_08, 6))


def test_compact_failure_raises_and_appends_nothing(tmp_path: Path) -> None:
    stored = entry_of(FIXTURE_08, "compaction")
    manager = session_until(FIXTURE_08, stored["parentId"], tmp_path)
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=40))
    assert preparation is not None
    before = len(manager)

    with ModelServer(HttpError(400, message="This model's context is on fire")) as server:
        model = server.model("openai-completions", id="fake-model")
        with pytest.raises(CompactionError, match="context is on fire") as caught:
            run(compact(preparation, model, options()))
    assert not caught.value.aborted
    assert len(manager) == before
    assert manager.get_leaf_id() == stored["parentId"]

    with ModelServer(Scripted(text="partial", error="overloaded right now")) as server:
        model = server.model("anthropic-messages", id="claude")
        with pytest.raises(CompactionError, match="overloaded right now"):
            run(compact(preparation, model, options()))
    assert len(manager) == before


def test_compact_empty_answer_is_an_error() -> None:
    manager = long_session()
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=300))
    assert preparation is not None
    with ModelServer(Scripted(text="")) as server, pytest.raises(CompactionError, match="empty"):
        run(compact(preparation, server.model(), options()))


def long_session() -> SessionManager:
    """Three turns of ~300 tokens each with read/edit calls; usage on every answer."""
    manager = SessionManager.in_memory("/tmp/project")
    for turn in range(3):
        manager.append_message(UserMessage(content=[TextContent(text=f"Task {turn}: " + "u" * 400)]))
        manager.append_message(
            AssistantMessage(
                content=[
                    TextContent(text="Looking."),
                    ToolCall(id=f"r{turn}", name="read", arguments={"path": f"src/m{turn}.py"}),
                    ToolCall(id=f"e{turn}", name="edit", arguments={"path": f"src/e{turn}.py", "edits": []}),
                ],
                usage=Usage(total_tokens=1000 * (turn + 1)),
                stop_reason="toolUse",
            )
        )
        for call_id in (f"r{turn}", f"e{turn}"):
            manager.append_message(
                ToolResultMessage(
                    tool_call_id=call_id, tool_name="read", content=[TextContent(text="x" * 400)]
                )
            )
        manager.append_message(
            AssistantMessage(
                content=[TextContent(text=f"Finished task {turn}.")],
                usage=Usage(total_tokens=1000 * (turn + 1) + 300),
                stop_reason="stop",
            )
        )
    return manager


def test_compact_split_turn_sends_two_requests_and_merges() -> None:
    manager = long_session()
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=5))
    assert preparation is not None and preparation.is_split_turn

    def answer(request: RecordedRequest) -> Scripted:
        prompt = prompt_of(request.body)
        return Scripted(
            text="PREFIX SUMMARY" if "beginning of the current turn" in prompt else "HISTORY SUMMARY"
        )

    with ModelServer(default=answer) as server:
        model = server.model("openai-completions")
        result = run(compact(preparation, model, options(), custom_instructions="mention the edits"))
        requests = server.requests

    assert len(requests) == 2
    by_budget = {r.body["max_completion_tokens"]: prompt_of(r.body) for r in requests}
    assert set(by_budget) == {13107, 8192}
    assert "Task 0" in by_budget[13107] and "Task 2" not in by_budget[13107]
    assert "mention the edits" in by_budget[13107]
    assert "[User]: Task 2" in by_budget[8192] and "Task 0" not in by_budget[8192]
    assert all("tools" not in r.body for r in requests)
    assert result.summary.startswith(f"HISTORY SUMMARY\n\n---\n\n{SPLIT_TURN_HEADING}\n\nPREFIX SUMMARY\n\n")
    assert result.details == {
        "readFiles": ["src/m0.py", "src/m1.py", "src/m2.py"],
        "modifiedFiles": ["src/e0.py", "src/e1.py", "src/e2.py"],
    }
    assert result.summary.endswith("<modified-files>\nsrc/e0.py\nsrc/e1.py\nsrc/e2.py\n</modified-files>")
    assert result.tokens_before == 3300


def test_compact_split_turn_failure_cancels_the_other_request() -> None:
    manager = long_session()
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=5))
    assert preparation is not None and preparation.is_split_turn

    def answer(request: RecordedRequest) -> Scripted | HttpError:
        if "beginning of the current turn" in prompt_of(request.body):
            return HttpError(400, message="prefix failed")
        return Scripted(text="slow history", first_byte_delay=5.0)

    with ModelServer(default=answer) as server:
        with pytest.raises(CompactionError, match="prefix failed"):
            run(compact(preparation, server.model(), options()))
        for request in server.requests:
            request.wait_finished(6.0)
        assert all(r.completed is False for r in server.requests if r.body["max_completion_tokens"] == 13107)


def test_second_compaction_updates_the_previous_summary() -> None:
    manager = long_session()
    settings = CompactionSettings(keep_recent_tokens=250)
    with ModelServer(
        Scripted(text="## Goal\nFirst summary"), Scripted(text="## Goal\nSecond summary")
    ) as server:
        model = server.model("openai-completions")
        first = prepare_compaction(manager.get_branch(), settings)
        assert first is not None and not first.is_split_turn
        run(compact(first, model, options())).append_to(manager)
        for turn in range(3, 6):
            manager.append_message(UserMessage(content=[TextContent(text=f"Task {turn}: " + "v" * 400)]))
            manager.append_message(
                AssistantMessage(
                    content=[ToolCall(id=f"w{turn}", name="write", arguments={"path": f"new{turn}.py"})],
                    usage=Usage(total_tokens=5000 + turn),
                    stop_reason="toolUse",
                )
            )
            manager.append_message(
                ToolResultMessage(
                    tool_call_id=f"w{turn}", tool_name="write", content=[TextContent(text="ok")]
                )
            )
            manager.append_message(
                AssistantMessage(
                    content=[TextContent(text="ok")],
                    usage=Usage(total_tokens=5100 + turn),
                    stop_reason="stop",
                )
            )
        second = prepare_compaction(manager.get_branch(), settings)
        assert second is not None
        result = run(compact(second, model, options()))
        prompts = [prompt_of(r.body) for r in server.requests]

    assert "<previous-summary>" not in prompts[0]
    # The earlier summary is sent for updating, without its file tags (they travel in details).
    assert "<previous-summary>\n## Goal\nFirst summary\n</previous-summary>\n\n" in prompts[1]
    # Kept entries of the first compaction are summarised now; the first summary's part is not re-sent.
    assert "Task 2" in prompts[1] and "Task 0" not in prompts[1]
    assert result.summary.startswith("## Goal\nSecond summary\n\n<read-files>\n")
    assert result.details["readFiles"] == ["src/m0.py", "src/m1.py", "src/m2.py"]
    # Files of the first summary carry over; turn 3 onwards is kept verbatim, so not listed yet.
    assert result.details["modifiedFiles"] == ["src/e0.py", "src/e1.py", "src/e2.py"]
    assert "Task 3" not in prompts[1]
    assert result.tokens_before == 5105


def test_cancelling_compaction_aborts_the_request() -> None:
    manager = long_session()
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=250))
    assert preparation is not None

    with ModelServer(Scripted(text="never", first_byte_delay=5.0)) as server:
        model = server.model("openai-completions")

        async def cancel_soon() -> None:
            task = asyncio.create_task(compact(preparation, model, options()))
            await server.wait_for_requests_async(1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        run(cancel_soon())
        request = server.requests[0]
        assert request.wait_finished(6.0)
        assert not request.completed


# --- branch summaries -----------------------------------------------------------------------


def test_summarize_branch_reproduces_pi_fixture(tmp_path: Path) -> None:
    stored = entry_of(FIXTURE_06, "branch_summary")
    old_leaf = "634488e3"
    manager = session_until(FIXTURE_06, old_leaf, tmp_path)
    selected = "ad0a1d25"  # the user message chosen in /tree; the leaf moves to its parent
    entries = collect_entries_for_branch_summary(manager, old_leaf, selected)
    model_text = stored["summary"][len(GENERATED_BRANCH_SUMMARY_PREFIX) :]
    model_text = strip_tags(model_text)

    with ModelServer(Scripted(text=model_text)) as server:
        model = server.model("openai-completions", id="fake-model")
        result = run(summarize_branch(entries, model, options(), custom_focus="the greeting"))
        (request,) = server.requests

    body = request.body
    pi_body = fixture_request(FIXTURE_06, 5)
    assert "tools" not in body
    assert body["max_completion_tokens"] == pi_body["max_completion_tokens"] == 2048
    assert body["messages"][0]["content"] == SYSTEM_PROMPT
    prompt = prompt_of(body)
    assert conversation_part(prompt) == conversation_part(prompt_of(pi_body))
    assert "the greeting" in prompt
    assert result is not None
    assert result.summary == stored["summary"]
    assert result.details == stored["details"]

    parent = manager.get_entry(selected).parent_id
    entry_id = manager.branch_with_summary(parent, result.summary, result.details, from_hook=False)
    manager.close()
    written = written_lines(manager)[-1]
    assert written["id"] == entry_id
    for key in ("type", "parentId", "summary", "details", "fromHook"):
        assert written[key] == stored[key], key
    # pi 0.73 (the fixture) named the target; pi 0.84.3 on names the abandoned leaf, as we do
    assert stored["fromId"] == parent and written["fromId"] == old_leaf


def test_summarize_branch_nothing_to_summarize_makes_no_request() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_model_change("p", "m")
    label_target = manager.append_message(UserMessage(content="hi"))
    manager.append_label_change(label_target, "mark")
    entries = manager.get_branch()[2:]
    with ModelServer() as server:
        assert run(summarize_branch(entries, server.model(), options())) is None
        assert server.requests == []


def test_summarize_branch_budget_and_error() -> None:
    manager = long_session()
    entries = manager.get_branch()
    with ModelServer(Scripted(text="branch"), HttpError(400, message="no summaries today")) as server:
        # A tiny window: only the newest messages fit; tool results never appear.
        model = server.model("openai-completions", context_window=16384 + 130)
        result = run(summarize_branch(entries, model, options(), reserve_tokens=16384))
        prompt = prompt_of(server.requests[0].body)
        with pytest.raises(CompactionError, match="no summaries today"):
            run(summarize_branch(entries, model, options()))
    assert result is not None
    assert "[Tool result]" not in prompt
    assert "Task 2" in prompt and "Task 1" not in prompt and "Task 0" not in prompt
    assert result.summary.startswith(GENERATED_BRANCH_SUMMARY_PREFIX + "branch\n\n<read-files>\nsrc/m0.py")
