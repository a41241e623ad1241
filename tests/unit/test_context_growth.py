"""The manager grows its cached context by the entries a turn appends instead of rebuilding it;
the grown context must always equal a build from scratch of the same leaf."""

from __future__ import annotations

from pathlib import Path

from pi_tui.messages import AssistantMessage, TextContent, UserMessage
from pi_tui.session import SessionManager
from pi_tui.session.context import SessionContext, build_session_context, extend_session_context


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def _reply(text: str, provider: str = "p", model: str = "m") -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], provider=provider, model=model, api="x")


def _dumped(context: SessionContext) -> tuple:
    return (
        [message.to_json_dict() for message in context.messages],
        context.thinking_level,
        context.model,
        context.injected_ttsr_rules,
        context.left_out,
    )


def _from_scratch(manager: SessionManager) -> SessionContext:
    by_id = {raw["id"]: raw for raw in manager.iter_raw_entries()}
    return build_session_context(by_id, manager.get_leaf_id())


def _check(manager: SessionManager) -> None:
    assert _dumped(manager.build_session_context()) == _dumped(_from_scratch(manager))


def test_every_kind_of_append_grows_the_context_as_a_full_build_would() -> None:
    manager = SessionManager.in_memory("/tmp")
    first = manager.append_message(_user("one"))
    manager.append_message(_reply("two"))
    _check(manager)
    manager.append_model_change("q", "n")
    _check(manager)
    manager.append_thinking_level_change("high")
    manager.append_message(_user("three"))
    manager.append_ttsr_injection(["no-print"])
    _check(manager)
    manager.append_custom_message_entry("note", "shown to the model", display=True)
    manager.append_label_change(first, "start")
    manager.append_message(_reply("four", provider="z", model="y"))
    _check(manager)
    context = manager.build_session_context()
    assert [m.role for m in context.messages] == ["user", "assistant", "user", "custom", "assistant"]
    assert context.thinking_level == "high" and context.injected_ttsr_rules == ["no-print"]
    assert (context.model.provider, context.model.model_id) == ("z", "y")


def test_a_compaction_or_a_branch_switch_is_built_again() -> None:
    manager = SessionManager.in_memory("/tmp")
    ids = [manager.append_message(_user(f"u{n}")) for n in range(3)]
    _check(manager)
    manager.append_compaction("summary of u0", ids[1], 1000)
    manager.append_message(_user("after"))
    _check(manager)
    context = manager.build_session_context()
    assert [m.role for m in context.messages] == ["compactionSummary", "user", "user", "user"]
    manager.branch(ids[0])
    manager.append_message(_user("other way"))
    _check(manager)
    assert [m.content[0].text for m in manager.build_session_context().messages] == ["u0", "other way"]


def test_extend_refuses_what_changes_earlier_messages() -> None:
    compaction = {"type": "compaction", "id": "c", "parentId": None, "summary": "s", "firstKeptEntryId": "x"}
    assert extend_session_context(SessionContext(), [compaction]) is None
    boundary = {"type": "reset_boundary", "id": "b", "parentId": None}
    assert extend_session_context(SessionContext(), [boundary]) is None


def test_grown_context_of_a_reopened_file_matches(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), tmp_path)
    for n in range(5):
        manager.append_message(_user(f"q{n}"))
        manager.append_message(_reply(f"a{n}"))
    path = manager.session_file
    manager.close()
    reopened = SessionManager.open(path)
    before = reopened.build_session_context()
    reopened.append_message(_user("more"))
    grown = reopened.build_session_context()
    assert len(grown.messages) == len(before.messages) + 1
    _check(reopened)
    reopened.close()
