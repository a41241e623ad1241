"""SessionManager operations on real files in a temporary agent dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.config.paths import encode_cwd
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ToolCall,
    UserMessage,
)
from pi_tui.session import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    EntryNotFoundError,
    SessionError,
    SessionManager,
    convert_to_llm,
)
from pi_tui.session.entries import (
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
    SessionInitEntry,
    UnknownEntry,
)
from tests.support.builders import assistant, tool_result, user


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def texts(manager: SessionManager) -> list[str]:
    """The provider-facing conversation as 'role: first text' strings."""
    out = []
    for message in convert_to_llm(manager.build_session_context().messages):
        content = message.content
        text = (
            content if isinstance(content, str) else next((b.text for b in content if b.type == "text"), "")
        )
        out.append(f"{message.role}: {text}")
    return out


@pytest.fixture
def session(tmp_path: Path) -> SessionManager:
    manager = SessionManager.create(str(tmp_path / "project"))
    yield manager
    manager.close()


# --- creation and lazy persistence -----------------------------------------------------------


def test_create_places_file_by_cwd(agent_dir: Path, tmp_path: Path) -> None:
    cwd = str(tmp_path / "project")
    manager = SessionManager.create(cwd)
    manager.append_model_change("fake", "fake-model")
    manager.append_message(user("hi"))
    assert manager.session_file is not None and not manager.session_file.exists()  # no empty sessions
    manager.append_message(assistant("hello"))
    path = manager.session_file
    assert path.parent == agent_dir / "sessions" / encode_cwd(cwd)
    stamp, _, rest = path.name.partition("_")
    assert rest == f"{manager.session_id}.jsonl" and stamp.endswith("Z") and ":" not in stamp
    header, *entries = lines(path)
    assert header == {
        "type": "session",
        "version": 3,
        "id": manager.session_id,
        "timestamp": header["timestamp"],
        "cwd": cwd,
    }
    assert [e["type"] for e in entries] == ["model_change", "message", "message"]
    assert entries[0]["parentId"] is None and entries[1]["parentId"] == entries[0]["id"]
    assert list(entries[1])[:4] == ["type", "id", "parentId", "timestamp"]
    assert entries[0] == {**entries[0], "provider": "fake", "modelId": "fake-model"}
    manager.append_message(user("again"))  # from now on every append is written at once
    assert len(lines(path)) == 5
    manager.close()


def test_encode_cwd() -> None:
    assert encode_cwd("/home/ann/src/app") == "--home-ann-src-app--"
    assert encode_cwd("C:\\Users\\ann") == "--C--Users-ann--"


def test_in_memory_never_writes(agent_dir: Path) -> None:
    manager = SessionManager.in_memory("/tmp/x")
    manager.append_message(user("hi"))
    manager.append_message(assistant("hello"))
    assert manager.session_file is None
    assert not (agent_dir / "sessions").exists()
    assert texts(manager) == ["user: hi", "assistant: hello"]


def test_reopen_never_duplicates(session: SessionManager) -> None:
    session.append_message(user("one"))
    session.append_message(assistant("two"))
    path = session.session_file
    session.close()
    for round_number in range(3):
        reopened = SessionManager.open(path)
        reopened.append_message(user(f"more {round_number}"))
        reopened.close()
    ids = [entry["id"] for entry in lines(path)[1:]]
    assert len(ids) == len(set(ids)) == 5


def test_entry_ids_are_short_hex_and_unique(session: SessionManager) -> None:
    ids = [session.append_custom_entry("x", {"n": n}) for n in range(300)]
    assert len(set(ids)) == 300
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids)


# --- appends of every kind ------------------------------------------------------------------


def test_every_append_kind_round_trips(session: SessionManager) -> None:
    session.append_message(user("start"))
    session.append_message(assistant("ok"))
    ids = {
        "thinking": session.append_thinking_level_change("high"),
        "model": session.append_model_change("anthropic", "claude"),
        "custom": session.append_custom_entry("ext", {"count": 2}),
        "custom_message": session.append_custom_message_entry("rule", "remember this", False, {"k": 1}),
        "info": session.append_session_info("  My session  "),
        "ttsr": session.append_ttsr_injection(["no-print"]),
        "init": session.append_session_init("sys", "task", ["read", "bash"]),
    }
    path = session.session_file
    session.close()
    reopened = SessionManager.open(path)
    assert isinstance(reopened.get_entry(ids["custom"]), CustomEntry)
    custom_message = reopened.get_entry(ids["custom_message"])
    assert isinstance(custom_message, CustomMessageEntry) and custom_message.display is False
    assert custom_message.details == {"k": 1}
    assert isinstance(reopened.get_entry(ids["info"]), SessionInfoEntry)
    assert reopened.get_session_name() == "My session"
    assert isinstance(reopened.get_entry(ids["init"]), SessionInitEntry)
    context = reopened.build_session_context()
    assert context.thinking_level == "high"
    assert (context.model.provider, context.model.model_id) == ("anthropic", "claude")
    assert context.injected_ttsr_rules == ["no-print"]
    # custom entries never reach the model; custom messages do, as user messages
    assert texts(reopened) == ["user: start", "assistant: ok", "user: remember this"]
    assert isinstance(context.messages[-1], CustomMessage)
    reopened.close()


def test_append_writes_camel_case_even_from_snake_case_dicts(session: SessionManager) -> None:
    session.append_message(user("go"))
    entry_id = session.append_message(
        {"role": "toolResult", "tool_call_id": "c1", "tool_name": "read", "content": [], "is_error": True}
    )
    assert session.get_raw_entry(entry_id)["message"] == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [],
        "isError": True,
    }


def test_append_rejects_unknown_thinking_level(session: SessionManager) -> None:
    with pytest.raises(ValueError, match="Unknown thinking level 'extreme'"):
        session.append_thinking_level_change("extreme")
    assert len(session) == 0


def test_append_rejects_invalid_message(session: SessionManager) -> None:
    with pytest.raises(ValueError):
        session.append_message({"role": "toolResult", "content": []})  # no toolCallId/toolName
    assert len(session) == 0


# --- labels ----------------------------------------------------------------------------------


def test_labels_set_overwrite_clear_and_absent_from_context(session: SessionManager) -> None:
    first = session.append_message(user("hi"))
    session.append_message(assistant("hello"))
    before = texts(session)
    label_id = session.append_label_change(first, "start")
    assert session.get_label(first) == "start"
    assert isinstance(session.get_entry(label_id), LabelEntry)
    session.append_label_change(first, "renamed")
    assert session.get_label(first) == "renamed"
    assert texts(session) == before  # labels are never in the context
    clear_id = session.append_label_change(first, None)
    assert session.get_label(first) is None
    assert "label" not in session.get_raw_entry(clear_id)  # cleared = label key absent, as pi writes
    session.append_label_change(first, "   ")  # blank clears too
    assert session.get_label(first) is None
    with pytest.raises(EntryNotFoundError, match="Entry nope not found"):
        session.append_label_change("nope", "x")
    path = session.session_file
    session.append_label_change(first, "final")
    session.close()
    reopened = SessionManager.open(path)
    assert reopened.get_label(first) == "final"
    assert reopened.get_tree()[0].label == "final"
    reopened.close()


# --- navigation ------------------------------------------------------------------------------


def test_branch_then_append_creates_sibling(session: SessionManager) -> None:
    first = session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    q2 = session.append_message(user("q2"))
    session.append_message(assistant("a2"))
    session.branch(a1)
    assert session.get_leaf_id() == a1
    q2b = session.append_message(user("q2 instead"))
    assert [entry.id for entry in session.get_children(a1)] == [q2, q2b]
    assert session.get_entry(q2b).parent_id == a1
    assert texts(session) == ["user: q1", "assistant: a1", "user: q2 instead"]
    assert [e.id for e in session.get_branch()] == [first, a1, q2b]
    assert [e.id for e in session.get_branch(q2)] == [first, a1, q2]
    with pytest.raises(EntryNotFoundError):
        session.branch("missing1")
    with pytest.raises(EntryNotFoundError):
        session.get_branch("missing1")


def test_moving_the_leaf_writes_nothing_and_reload_uses_last_entry(session: SessionManager) -> None:
    session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    last = session.append_message(user("q2"))
    path = session.session_file
    size = path.stat().st_size
    session.branch(a1)
    session.reset_leaf()
    assert path.stat().st_size == size
    session.close()
    reopened = SessionManager.open(path)
    assert reopened.get_leaf_id() == last
    reopened.close()


def test_reset_leaf_starts_new_root(session: SessionManager) -> None:
    session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    session.reset_leaf()
    assert session.get_leaf_id() is None
    assert session.build_session_context().messages == []
    assert session.build_session_context().thinking_level == "off"
    new_root = session.append_message(user("fresh"))
    assert session.get_entry(new_root).parent_id is None
    assert len(session.get_tree()) == 2
    assert texts(session) == ["user: fresh"]


def test_branch_with_summary(session: SessionManager) -> None:
    q1 = session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    session.append_message(user("q2"))
    a2 = session.append_message(assistant("a2"))
    summary_id = session.branch_with_summary(a1, "tried q2", {"readFiles": [], "modifiedFiles": []}, False)
    entry = session.get_entry(summary_id)
    assert isinstance(entry, BranchSummaryEntry)
    # fromId: the leaf that was left (pi 0.84.3+), not where the branch continues
    assert entry.parent_id == a1 and entry.from_id == a2 and entry.from_hook is False
    assert session.get_leaf_id() == summary_id
    messages = session.build_session_context().messages
    assert isinstance(messages[-1], BranchSummaryMessage)
    assert texts(session)[-1] == "user: " + BRANCH_SUMMARY_PREFIX + "tried q2</summary>"
    root_summary = session.branch_with_summary(None, "from scratch")
    assert session.get_raw_entry(root_summary)["fromId"] == summary_id
    empty = SessionManager.in_memory("/tmp/p")
    assert empty.get_raw_entry(empty.branch_with_summary(None, "nothing yet"))["fromId"] == "root"
    assert session.get_raw_entry(root_summary)["parentId"] is None
    assert q1 != root_summary


def test_empty_branch_summary_is_left_out(session: SessionManager) -> None:
    session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    session.branch_with_summary(a1, "")
    assert texts(session) == ["user: q1", "assistant: a1"]


def test_unknown_leaf_falls_back_to_last_entry(session: SessionManager) -> None:
    from pi_tui.session.context import build_session_context

    session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    raw = {entry["id"]: entry for entry in session.iter_raw_entries()}
    last = list(raw)[-1]
    assert len(build_session_context(raw, "zzzzzzzz", last).messages) == 2


def test_get_tree_orders_children_by_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"},
        {
            "type": "message",
            "id": "r",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "root", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "late",
            "parentId": "r",
            "timestamp": "2026-01-01T00:00:09.000Z",
            "message": {"role": "user", "content": "late", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "early",
            "parentId": "r",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "user", "content": "early", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "orphan",
            "parentId": "gone",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {"role": "user", "content": "orphan", "timestamp": 1},
        },
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    manager = SessionManager.open(path, read_only=True)
    with pytest.raises(SessionError, match="read-only"):
        manager.append_message(user("nope"))
    assert len(manager) == 4
    manager.close()
    manager = SessionManager.open(path)
    roots = manager.get_tree()
    assert [node.id for node in roots] == ["r", "orphan"]  # missing parent = root
    assert [node.id for node in roots[0].children] == ["early", "late"]
    assert roots[0].entry.message.content == "root"
    assert [e.id for e in manager.get_children(None)] == ["r", "orphan"]
    assert [e.id for e in manager.get_children("r")] == ["early", "late"]
    manager.branch("r")
    newest = manager.append_message(user("newest"))  # the children index follows appends
    assert [e.id for e in manager.get_children("r")] == ["early", "late", newest]
    assert manager.get_children("late") == []


# --- compaction ------------------------------------------------------------------------------


def test_compaction_context_uses_only_the_last_compaction(session: SessionManager) -> None:
    session.append_message(user("u1"))
    session.append_message(assistant("a1"))
    u2 = session.append_message(user("u2"))
    session.append_message(assistant("a2"))
    session.append_compaction("first summary", u2, 500, {"readFiles": ["a"], "modifiedFiles": []}, False)
    session.append_message(user("u3"))
    session.append_message(assistant("a3"))
    assert texts(session) == [
        "user: " + COMPACTION_SUMMARY_PREFIX + "first summary\n</summary>",
        "user: u2",
        "assistant: a2",
        "user: u3",
        "assistant: a3",
    ]
    u4 = session.append_message(user("u4"))
    session.append_message(assistant("a4"))
    session.append_compaction("second summary", u4, 900)
    session.append_message(user("u5"))
    messages = session.build_session_context().messages
    assert isinstance(messages[0], CompactionSummaryMessage) and messages[0].summary == "second summary"
    assert messages[0].tokens_before == 900
    assert texts(session)[1:] == ["user: u4", "assistant: a4", "user: u5"]


# --- bash executions and tool calls ----------------------------------------------------------


def test_bash_execution_text(session: SessionManager) -> None:
    session.append_message(BashExecutionMessage(command="ls", output="a\n", exit_code=0, timestamp=1))
    session.append_message(
        BashExecutionMessage(
            command="secret", output="x", exit_code=0, exclude_from_context=True, timestamp=1
        )
    )
    session.append_message(BashExecutionMessage(command="false", output="", exit_code=1, timestamp=1))
    session.append_message(
        BashExecutionMessage(command="sleep 9", output="partial", cancelled=True, timestamp=1)
    )
    session.append_message(
        BashExecutionMessage(
            command="big",
            output="tail",
            exit_code=0,
            truncated=True,
            full_output_path="/tmp/o.txt",
            timestamp=1,
        )
    )
    assert texts(session) == [
        "user: Ran `ls`\n```\na\n\n```",
        "user: Ran `false`\n(no output)\n\nCommand exited with code 1",
        "user: Ran `sleep 9`\n```\npartial\n```\n\n(command cancelled)",
        "user: Ran `big`\n```\ntail\n```\n\n[Output truncated. Full output: /tmp/o.txt]",
    ]


def test_tool_calls_and_results_in_context(session: SessionManager) -> None:
    session.append_message(user("read it"))
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.py"})
    session.append_message(assistant("reading", call, stop_reason="toolUse"))
    session.append_message(tool_result("call_1", "ENOENT", is_error=True))
    messages = convert_to_llm(session.build_session_context().messages)
    assert isinstance(messages[1], AssistantMessage) and messages[1].content[1] == call
    assert messages[2].role == "toolResult" and messages[2].is_error is True


# --- unknown data survives -------------------------------------------------------------------


def test_unknown_entry_types_and_fields_survive(tmp_path: Path) -> None:
    path = tmp_path / "future.jsonl"
    rows = [
        {
            "type": "session",
            "version": 3,
            "id": "s1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/p",
            "futureHeader": {"x": 1},
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "future": True}],
                "timestamp": 1,
                "mood": "curious",
            },
            "extraTop": [1, 2],
        },
        {
            "type": "hologram",
            "id": "h1",
            "parentId": "u1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "payload": {"deep": [1, {"k": "v"}]},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "h1",
            "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "hello"}, {"type": "sparkle", "glow": 3}],
                "provider": "p",
                "model": "m",
                "stopReason": "stop",
                "timestamp": 2,
            },
        },
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    manager = SessionManager.open(path)
    hologram = manager.get_entry("h1")
    assert isinstance(hologram, UnknownEntry) and hologram.type == "hologram"
    assert hologram.model_extra == {"payload": {"deep": [1, {"k": "v"}]}}
    assert texts(manager) == ["user: hi", "assistant: hello"]  # unknown entry skipped in context
    typed_user = manager.get_entry("u1")
    assert typed_user.message.model_extra == {"mood": "curious"}
    assert typed_user.to_json_dict() == rows[1]  # typed view dumps back to the same JSON
    assert manager.get_entry("a1").to_json_dict() == rows[3]

    # A branched copy carries the unknown lines byte-for-byte in meaning.
    new_path = manager.create_branched_session("a1")
    copied = lines(new_path)
    assert copied[1:] == rows[1:]
    assert copied[0]["parentSession"] == str(path.resolve())
    manager.close()


def test_model_change_reads_oh_my_pi_form(tmp_path: Path) -> None:
    path = tmp_path / "omp.jsonl"
    rows = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"},
        {
            "type": "model_change",
            "id": "m1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "model": "openai/gpt-4o",
            "role": "default",
        },
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    manager = SessionManager.open(path, read_only=True)
    model = manager.build_session_context().model
    assert (model.provider, model.model_id) == ("openai", "gpt-4o")
    assert manager.get_entry("m1").resolved() == ("openai", "gpt-4o")


# --- branched sessions and forks -------------------------------------------------------------


def test_create_branched_session_keeps_only_on_path_labels(session: SessionManager) -> None:
    q1 = session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    q2 = session.append_message(user("q2"))
    a2 = session.append_message(assistant("a2"))
    session.append_label_change(q1, "start")
    session.append_label_change(q2, "off-path")
    session.branch(a1)
    q3 = session.append_message(user("q3"))
    session.append_label_change(a1, "fork-point")
    old_path = session.session_file

    new_path = session.create_branched_session(q3)
    assert new_path != old_path and new_path.exists()
    assert session.session_file == new_path
    header, *entries = lines(new_path)
    assert header["parentSession"] == str(old_path)
    assert header["id"] == session.session_id
    kept = [e for e in entries if e["type"] != "label"]
    assert [e["id"] for e in kept] == [q1, a1, q3]
    labels = {e["targetId"]: e["label"] for e in entries if e["type"] == "label"}
    assert labels == {q1: "start", a1: "fork-point"}
    assert session.get_label(q2) is None and session.get_label(q1) == "start"
    assert a2 not in {e["id"] for e in entries}
    # old file is untouched and still complete
    assert {e["id"] for e in lines(old_path)[1:]} >= {q1, a1, q2, a2, q3}
    session.append_message(assistant("continues in the new file"))
    assert lines(new_path)[-1]["message"]["content"][0]["text"] == "continues in the new file"


def test_create_branched_session_in_memory(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    q1 = manager.append_message(user("q1"))
    manager.append_message(assistant("a1"))
    assert manager.create_branched_session(q1) is None
    assert [e.id for e in manager.get_entries()] == [q1]


def test_fork_from(tmp_path: Path, agent_dir: Path) -> None:
    source = SessionManager.create(str(tmp_path / "a"))
    source.append_message(user("q1"))
    source.append_message(assistant("a1"))
    source_path = source.session_file
    source.close()
    before = source_path.read_bytes()

    fork = SessionManager.fork_from(source_path, str(tmp_path / "b"))
    assert fork.session_file.parent.name == encode_cwd(str(tmp_path / "b"))
    header, *entries = lines(fork.session_file)
    assert header["parentSession"] == str(source_path) and header["cwd"] == str(tmp_path / "b")
    assert header["id"] != json.loads(before.splitlines()[0])["id"]
    assert entries == [json.loads(line) for line in before.splitlines()[1:]]
    assert source_path.read_bytes() == before
    fork.close()


# --- listing ---------------------------------------------------------------------------------


def test_list_and_continue_recent(tmp_path: Path, agent_dir: Path) -> None:
    cwd = str(tmp_path / "proj")
    assert SessionManager.list(cwd) == []
    fresh = SessionManager.continue_recent(cwd)
    assert fresh.session_file is not None and not fresh.session_file.exists()
    fresh.close()

    first = SessionManager.create(cwd)
    first.append_message(user("first question"))
    first.append_message(assistant("first answer"))
    first.close()
    second = SessionManager.create(cwd)
    second.append_message(user("second question"))
    second.append_message(assistant("second answer"))
    second.append_session_info("Named one")
    second.close()
    # A broken file in the folder is ignored by listing and by -c.
    broken = second.session_file.with_name("zzzz_broken.jsonl")
    broken.write_text("not json\n")

    infos = SessionManager.list(cwd)
    assert [info.path for info in infos] == [second.session_file, first.session_file]
    assert infos[0].name == "Named one" and infos[0].message_count == 2
    assert infos[1].first_message == "first question" and infos[1].name is None
    assert "second answer" in infos[0].all_messages_text
    assert infos[0].cwd == cwd and infos[0].parent_session is None

    import os
    import time

    future = time.time() + 100
    os.utime(broken, (future, future))
    recent = SessionManager.continue_recent(cwd)
    assert recent.session_file == second.session_file
    recent.close()

    other = SessionManager.create(str(tmp_path / "other"))
    other.append_message(user("elsewhere"))
    other.append_message(assistant("ok"))
    other.close()
    assert {info.path for info in SessionManager.list_all()} == {
        first.session_file,
        second.session_file,
        other.session_file,
    }


def test_session_dir_override(tmp_path: Path) -> None:
    folder = tmp_path / "custom-sessions"
    manager = SessionManager.create(str(tmp_path), folder)
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    assert manager.session_file.parent == folder
    manager.close()
    assert [info.path for info in SessionManager.list(str(tmp_path), folder)] == [manager.session_file]


def test_user_message_string_content(session: SessionManager) -> None:
    session.append_message(UserMessage(content="plain", timestamp=1))
    assert texts(session) == ["user: plain"]


def test_cached_paths_and_messages_give_the_same_context_as_a_fresh_build(tmp_path: Path) -> None:
    """The manager reuses the last branch path and typed messages between builds (issue 12);
    after appends, moves to an ancestor and jumps to another branch it must still equal the
    pure build from scratch."""
    from pi_tui.session.context import build_session_context

    manager = SessionManager.create(str(tmp_path / "project"))

    def check() -> None:
        ours = [m.to_json_dict() for m in manager.build_session_context().messages]
        fresh = build_session_context(manager._index.by_id, manager.get_leaf_id())
        assert ours == [m.to_json_dict() for m in fresh.messages]

    ids = []
    for number in range(6):
        ids.append(manager.append_message(user(f"q{number}")))
        check()
        manager.append_message(assistant(f"a{number}"))
        check()
    manager.branch(ids[2])
    check()
    manager.append_message(user("other branch"))
    check()
    manager.branch(ids[5])
    check()
    manager.append_message(assistant("back on the first"))
    check()
    manager.close()
