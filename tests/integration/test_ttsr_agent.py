"""TTSR through the real agent loop and loopback HTTP: interrupt + retry, reminders, resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_tui.agent.session import AgentSession
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.types import StreamOptions
from pi_tui.config.settings import TtsrSettings
from pi_tui.messages import ToolResultMessage, UserMessage
from pi_tui.session import SessionManager
from pi_tui.session.entries import CustomMessageEntry, TtsrInjectionEntry
from pi_tui.tools import default_tools
from pi_tui.ttsr.coordinator import TtsrCoordinator
from pi_tui.ttsr.manager import TtsrManager
from pi_tui.ttsr.model import Rule, ScopeToken
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.waiting import async_wait_until

NO_PRINT = "Do not use print() for output in this project; use the logger."


def no_print_rule(project: Path) -> Rule:
    path = project / ".agent" / "rules" / "no-print.md"
    return Rule(
        name="no-print",
        content=NO_PRINT,
        path=path,
        source=".agent/rules",
        priority=100,
        conditions=[r"print\("],
        scopes=(ScopeToken("text"),),
    )


def py_edit_rule(project: Path) -> Rule:
    return Rule(
        name="no-todo-in-python",
        content="Do not leave TODO comments in Python files.",
        path=project / ".agent" / "rules" / "no-todo-in-python.md",
        source=".agent/rules",
        priority=100,
        conditions=["TODO"],
        scopes=(ScopeToken("tool", "edit", "*.py"),),
        interrupt_mode="never",
    )


def make_agent(
    server: ModelServer,
    project: Path,
    rules: list[Rule],
    *,
    context_mode: str = "discard",
    manager: SessionManager | None = None,
) -> tuple[AgentSession, list[Any]]:
    settings = TtsrSettings(context_mode=context_mode)
    matcher = TtsrManager(settings, project)
    for rule in rules:
        assert matcher.add_rule(rule) is None
    session = manager or SessionManager.create(str(project), project / "sessions")
    agent = AgentSession(
        session,
        server.model(),
        tools=default_tools(str(project)),
        system_prompt="test",
        request_options=lambda _model: StreamOptions(api_key="k", base_delay=0.01),
        ttsr=TtsrCoordinator(matcher, project, context_mode=context_mode),
        cwd=project,
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    return agent, events


def run(coroutine_factory: Any) -> Any:
    async def main() -> Any:
        try:
            return await coroutine_factory()
        finally:
            await close_shared_client()

    return asyncio.run(main())


def project_dir(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def main():\n    return 1\n")
    return project


VIOLATION = "Here is the fix: print(result) and then some more words that should never stream"


def test_interrupt_injects_and_retries_discarding_the_partial(tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    replies = [Scripted(text=VIOLATION, event_delay=0.03), Scripted(text="Use logger.info(result) instead.")]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, project, [no_print_rule(project)])
        final = run(lambda: agent.prompt("fix it"))
        assert final.content[0].text == "Use logger.info(result) instead."

        first = server.requests[0]
        assert first.wait_finished(2.0) and first.client_disconnected and not first.completed
        assert first.events_sent < len(VIOLATION.split()) + 2  # cut right after the match

        triggered = [e for e in events if e.type == "ttsr_triggered"]
        assert len(triggered) == 1 and triggered[0]["rules"][0]["name"] == "no-print"
        entries = agent.manager.get_entries()
        injection = next(e for e in entries if isinstance(e, CustomMessageEntry))
        assert injection.custom_type == "ttsr-injection" and injection.display is False
        assert injection.details["rules"] == ["no-print"]
        marks = [e for e in entries if isinstance(e, TtsrInjectionEntry)]
        assert [m.injected_rules for m in marks] == [["no-print"]]
        cut = [
            e.message
            for e in entries
            if getattr(e, "message", None) is not None and e.message.role == "assistant"
        ]
        assert cut[0].stop_reason == "aborted" and "print(" in cut[0].content[0].text

        retry = json.dumps(server.requests[1].body["messages"])
        assert '<system-interrupt reason=\\"rule_violation\\" rule=\\"no-print\\"' in retry
        assert 'path=\\".agent/rules/no-print.md\\"' in retry and NO_PRINT in retry
        assert "print(result)" not in retry  # discard: the partial reply is not resent

        # once: the same violation later in the session passes
        server.queue(Scripted(text="Quick debug: print(x)"))
        again = run(lambda: agent.prompt("and debug?"))
        assert again.content[0].text == "Quick debug: print(x)"
        assert len([e for e in events if e.type == "ttsr_triggered"]) == 1


def test_keep_mode_resends_the_partial_reply(tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    replies = [Scripted(text=VIOLATION, event_delay=0.03), Scripted(text="Corrected.")]
    with ModelServer(*replies) as server:
        agent, _events = make_agent(server, project, [no_print_rule(project)], context_mode="keep")
        final = run(lambda: agent.prompt("fix it"))
        assert final.content[0].text == "Corrected."
        messages = server.requests[1].body["messages"]
        kept = [m for m in messages if m["role"] == "assistant"]
        assert kept and "print(" in kept[-1]["content"]
        assert messages[-1]["role"] == "user" and "system-interrupt" in json.dumps(messages[-1])


def test_non_interrupting_tool_rule_prepends_a_reminder(tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    edit = ToolCallSpec(
        "edit",
        {"path": "src/app.py", "edits": [{"oldText": "return 1", "newText": "return 2  # TODO: check"}]},
    )
    replies = [Scripted(tool_calls=[edit]), Scripted(text="Edited.")]
    with ModelServer(*replies) as server:
        agent, events = make_agent(server, project, [py_edit_rule(project)])
        final = run(lambda: agent.prompt("edit it"))
        assert final.content[0].text == "Edited."
        assert not [e for e in events if e.type == "ttsr_triggered"]  # no interrupt
        assert "# TODO: check" in (project / "src" / "app.py").read_text()  # the edit ran
        result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
        first_block = result.content[0].text
        assert first_block.startswith('<system-reminder reason="rule_violation" rule="no-todo-in-python"')
        assert "Do not leave TODO comments" in first_block and len(result.content) == 2
        marks = [e for e in agent.manager.get_entries() if isinstance(e, TtsrInjectionEntry)]
        assert [m.injected_rules for m in marks] == [["no-todo-in-python"]]


def test_reminder_is_dropped_when_the_reply_is_aborted_before_the_tool_runs(tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    edit = ToolCallSpec(
        "edit",
        {"path": "src/app.py", "edits": [{"oldText": "return 1", "newText": "return 2  # TODO later"}]},
    )
    slow = Scripted(text="Editing now, step by step.", tool_calls=[edit], event_delay=0.05)
    with ModelServer(slow, Scripted(tool_calls=[edit]), Scripted(text="ok")) as server:
        agent, events = make_agent(server, project, [py_edit_rule(project)])

        async def scenario() -> Any:
            task = asyncio.create_task(agent.prompt("edit"))
            await async_wait_until(  # the TODO part of the arguments has streamed
                lambda: (
                    "TODO"
                    in "".join(
                        e["assistantMessageEvent"].delta
                        for e in events
                        if e.type == "message_update" and e["assistantMessageEvent"].type == "toolcall_delta"
                    )
                ),
                "the tool call's arguments up to the TODO",
            )
            agent.abort()
            return await task

        aborted = run(scenario)
        assert aborted.stop_reason == "aborted"
        assert not [e for e in agent.manager.get_entries() if isinstance(e, TtsrInjectionEntry)]
        assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"
        # still eligible: the next matching edit gets the reminder
        run(lambda: agent.prompt("edit again"))
        result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
        assert result.content[0].text.startswith("<system-reminder")


def test_resume_keeps_once_on_the_branch_but_another_branch_can_fire(tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    replies = [Scripted(text=VIOLATION, event_delay=0.03), Scripted(text="Clean answer.")]
    with ModelServer(*replies) as server:
        agent, _events = make_agent(server, project, [no_print_rule(project)])
        run(lambda: agent.prompt("first question"))
        path = agent.manager.session_file
        agent.manager.close()

        # "restart with -c": a new agent on the same file restores the injected rule
        server.queue(Scripted(text="Later: print(value) is fine here"))
        resumed, events = make_agent(
            server, project, [no_print_rule(project)], manager=SessionManager.open(path)
        )
        answer = run(lambda: resumed.prompt("second question"))
        assert answer.content[0].text == "Later: print(value) is fine here"
        assert not [e for e in events if e.type == "ttsr_triggered"]

        # another branch (before the injection) has not seen the rule: it fires there
        first_user = next(
            e
            for e in resumed.manager.get_entries()
            if getattr(e, "message", None) is not None and isinstance(e.message, UserMessage)
        )
        run(lambda: resumed.navigate_tree(first_user.id))
        server.queue(Scripted(text=VIOLATION, event_delay=0.03), Scripted(text="Branch answer."))
        branch_answer = run(lambda: resumed.prompt("first question, again"))
        assert branch_answer.content[0].text == "Branch answer."
        assert len([e for e in events if e.type == "ttsr_triggered"]) == 1


def test_a_cut_ends_at_the_matching_delta_however_the_bytes_arrive(tmp_path: Path) -> None:
    """The whole reply (text and a tool call) reaches the client before the match is seen: the
    kept reply still ends at the word that matched, as ``aborted``, and its tool never runs."""
    project = project_dir(tmp_path)
    reply = Scripted(text=VIOLATION, tool_calls=[ToolCallSpec("write", {"path": "out.txt", "content": "x"})])
    with ModelServer(reply, Scripted(text="Done with the logger.")) as server:
        agent, events = make_agent(server, project, [no_print_rule(project)])
        final = run(lambda: agent.prompt("fix it"))
        assert final.content[0].text == "Done with the logger."
        assert not (project / "out.txt").exists()
        assert not [
            e
            for e in agent.manager.get_entries()
            if isinstance(getattr(e, "message", None), ToolResultMessage)
        ]
        cut = next(
            e.message
            for e in agent.manager.get_entries()
            if getattr(getattr(e, "message", None), "role", "") == "assistant"
        )
        assert cut.stop_reason == "aborted"
        assert [block.type for block in cut.content] == ["text"]
        assert cut.content[0].text == "Here is the fix: print(result) "
        shown = "".join(
            e["assistantMessageEvent"].delta
            for e in events
            if e.type == "message_update" and e["assistantMessageEvent"].type == "text_delta"
        )
        assert shown.startswith("Here is the fix: print(result) ") and "should never" not in shown
