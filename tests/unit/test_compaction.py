"""Compaction building blocks without a model: token estimates, cut points, serialisation,
file tracking, preparation and branch collection, checked against real sessions (in-memory
SessionManager) and against what pi itself sent (tests/data/pi-sessions 08 and 06)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.compaction import (
    FileOperations,
    collect_entries_for_branch_summary,
    context_tokens,
    estimate_tokens,
    find_cut_point,
    format_file_tags,
    is_valid_cut_point,
    prepare_branch_messages,
    prepare_compaction,
    serialize_conversation,
    should_compact,
    strip_file_tags,
)
from pi_tui.compaction.branch_summary import branch_prompt
from pi_tui.compaction.compact import branch_context_messages, history_prompt
from pi_tui.compaction.cut_point import compaction_boundary
from pi_tui.compaction.serialize import truncate_for_summary
from pi_tui.config.settings import CompactionSettings
from pi_tui.js_semantics import js_length, js_sorted, js_stringify
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_tui.session.context import build_session_context
from pi_tui.session.manager import SessionManager
from tests.conftest import PI_SESSIONS

FIXTURE_08 = PI_SESSIONS / "08-manual-compact"
FIXTURE_06 = PI_SESSIONS / "06-tree-branch-summary"


# --- helpers --------------------------------------------------------------------------------


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def reply(text: str = "", *calls: ToolCall, total: int = 0, stop: str = "stop") -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    content.extend(calls)
    return AssistantMessage(
        content=content,
        api="openai-completions",
        provider="fake",
        model="fake-model",
        usage=Usage(total_tokens=total) if total else None,
        stop_reason="toolUse" if calls else stop,
        timestamp=1,
    )


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def result(text: str, call_id: str = "c1", name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], timestamp=1
    )


def fixture_request(folder: Path, number: int) -> dict[str, Any]:
    lines = (folder / "requests.jsonl").read_text().splitlines()
    return json.loads(lines[number - 1])


def prompt_text(request: dict[str, Any]) -> str:
    messages = request["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[1]["content"][0]["text"]


def conversation_part(text: str) -> str:
    """``<conversation>...</conversation>\\n\\n`` of a summarisation prompt."""
    end = text.index("</conversation>\n\n") + len("</conversation>\n\n")
    assert text.startswith("<conversation>\n")
    return text[:end]


def fixture_entry(folder: Path, kind: str) -> dict[str, Any]:
    for line in (folder / "session.jsonl").read_text().splitlines():
        data = json.loads(line)
        if data.get("type") == kind:
            return data
    raise AssertionError(f"no {kind} entry")


def open_fixture(folder: Path) -> SessionManager:
    return SessionManager.open(folder / "session.jsonl", read_only=True)


def words(count: int, word: str = "word") -> str:
    """About ``count`` * (len(word)+1) / 4 tokens of text."""
    return " ".join([word] * count)


def session_with_turns(turns: int, size: int = 100) -> SessionManager:
    """user / assistant(tool call) / tool result / assistant, ``turns`` times; each message ~size tokens."""
    manager = SessionManager.in_memory("/tmp/project")
    for turn in range(turns):
        manager.append_message(user(f"turn {turn} " + "u" * (size * 4)))
        manager.append_message(
            reply("a" * (size * 4), call("read", f"c{turn}", path=f"f{turn}.py"), total=1000 + turn)
        )
        manager.append_message(result("r" * (size * 4), f"c{turn}"))
        manager.append_message(reply("done " + "b" * (size * 4), total=1100 + turn))
    return manager


# --- JS semantics ---------------------------------------------------------------------------


def test_js_length_counts_utf16_units() -> None:
    assert js_length("abc") == 3
    assert js_length("é") == 1
    assert js_length("😀") == 2


def test_js_stringify_matches_json_stringify() -> None:
    assert js_stringify({"oldText": "Hello", "newText": "Hi"}) == '{"oldText":"Hello","newText":"Hi"}'
    assert js_stringify([1.0, 2.5, True, None, "ü\n"]) == '[1,2.5,true,null,"ü\\n"]'
    assert js_stringify({"b": 1, "2": 2, "1": 3, "01": 4}) == '{"1":3,"2":2,"b":1,"01":4}'
    assert js_stringify(1e21) == "1e+21"
    assert js_stringify(1e-7) == "1e-7"
    assert js_stringify(0.000001) == "0.000001"
    assert js_stringify(1.5e-7) == "1.5e-7"
    assert js_stringify(123456789012345680000.0) == "123456789012345680000"
    assert js_stringify(float("nan")) == "null"


def test_js_sorted_uses_utf16_order() -> None:
    assert js_sorted(["b", "a", "B"]) == ["B", "a", "b"]
    assert js_sorted(["\U0001f600", "\uff5e"]) == ["\U0001f600", "\uff5e"]  # surrogates sort first


# --- token estimates ------------------------------------------------------------------------


def test_estimate_tokens_per_role() -> None:
    assert estimate_tokens(user("abcde")) == 2  # ceil(5/4)
    assert estimate_tokens(UserMessage(content="abcd")) == 1
    image = ImageContent(data="xx", mime_type="image/png")
    assert estimate_tokens(UserMessage(content=[TextContent(text="abcd"), image])) == 1201
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="t" * 8),
            TextContent(text="x" * 4),
            call("read", path="README.md"),
        ]
    )
    # 8 + 4 + len("read") + len('{"path":"README.md"}')
    assert estimate_tokens(assistant) == -(-(8 + 4 + 4 + 20) // 4)
    tool = ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(text="x" * 9), image])
    assert estimate_tokens(tool) == -(-(9 + 4800) // 4)
    assert estimate_tokens(BashExecutionMessage(command="ls", output="a b")) == 2
    assert estimate_tokens(CustomMessage(custom_type="x", content="y" * 12)) == 3
    assert estimate_tokens(BranchSummaryMessage(summary="s" * 5, from_id="r")) == 2
    assert estimate_tokens(CompactionSummaryMessage(summary="s" * 4)) == 1
    assert estimate_tokens(user("😀😀")) == 1  # 4 UTF-16 units


def test_context_tokens_uses_last_usage_plus_trailing_estimates() -> None:
    messages = [user("x" * 40), reply("ok", total=500), user("y" * 40)]
    assert context_tokens(messages) == 500 + 10
    # A failed response's usage is not trusted: fall back to the previous one.
    failed = reply("", total=9999, stop="error")
    assert context_tokens([*messages, failed]) == 500 + 10
    # No usage at all: estimate everything.
    assert context_tokens([user("x" * 40), reply("abcd")]) == 11
    # Usage given by the caller covers up to the newest assistant message.
    assert context_tokens(messages, Usage(input=100, output=20)) == 120 + 10


def test_should_compact_threshold() -> None:
    settings = CompactionSettings(reserve_tokens=16384)
    assert not should_compact(128_000 - 16384, 128_000, settings)
    assert should_compact(128_000 - 16383, 128_000, settings)
    assert not should_compact(200_000, 128_000, CompactionSettings(enabled=False))


# --- serialisation --------------------------------------------------------------------------


def test_serialization_equals_pi_compaction_request() -> None:
    """Fixture 08, request 5: the compaction prompt's conversation, byte for byte."""
    manager = open_fixture(FIXTURE_08)
    compaction = fixture_entry(FIXTURE_08, "compaction")
    branch = manager.get_branch(compaction["parentId"])
    preparation = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=40))
    assert preparation is not None
    expected = conversation_part(prompt_text(fixture_request(FIXTURE_08, 5)))
    serialized = serialize_conversation(preparation.messages_to_summarize)
    assert f"<conversation>\n{serialized}\n</conversation>\n\n" == expected
    assert conversation_part(history_prompt(preparation)) == expected


def test_preparation_matches_pi_compaction_entry() -> None:
    manager = open_fixture(FIXTURE_08)
    compaction = fixture_entry(FIXTURE_08, "compaction")
    preparation = prepare_compaction(
        manager.get_branch(compaction["parentId"]), CompactionSettings(keep_recent_tokens=40)
    )
    assert preparation is not None
    assert preparation.first_kept_entry_id == compaction["firstKeptEntryId"]
    assert preparation.tokens_before == compaction["tokensBefore"]
    assert preparation.file_ops.details() == compaction["details"]
    assert not preparation.is_split_turn
    assert preparation.previous_summary is None
    read, modified = preparation.file_ops.file_lists()
    assert compaction["summary"].endswith(format_file_tags(read, modified))


def test_serialization_equals_pi_branch_summary_request() -> None:
    """Fixture 06, request 5: only the abandoned entries after the selected user message, tool
    results left out."""
    manager = open_fixture(FIXTURE_06)
    summary_entry = fixture_entry(FIXTURE_06, "branch_summary")
    old_leaf = "634488e3"  # the last assistant message of the abandoned path
    selected = manager.get_children(summary_entry["fromId"])
    selected_user = next(e for e in selected if e.type == "message" and e.message.role == "user")
    entries = collect_entries_for_branch_summary(manager, old_leaf, selected_user.id)
    assert [entry.id for entry in entries] == ["337bfd64", "f708d90c", "634488e3"]
    messages, file_ops = prepare_branch_messages(entries, 128_000 - 16384)
    expected = conversation_part(prompt_text(fixture_request(FIXTURE_06, 5)))
    assert conversation_part(branch_prompt(messages)) == expected
    assert file_ops.details() == summary_entry["details"]
    assert summary_entry["summary"].endswith(format_file_tags(*file_ops.file_lists()))


def test_serialize_roles_and_truncation() -> None:
    messages = [
        UserMessage(
            content=[
                TextContent(text="a"),
                ImageContent(data="x", mime_type="image/png"),
                TextContent(text="b"),
            ]
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm"),
                ThinkingContent(thinking="more"),
                TextContent(text="one"),
                TextContent(text="two"),
                call("read", "c1", path="a.py", offset=10),
                call("bash", "c2", command='echo "hi"'),
            ]
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="z" * 2500)]),
        ToolResultMessage(tool_call_id="c2", tool_name="bash", content=[]),
        BashExecutionMessage(command="ls", output="file"),
        BashExecutionMessage(command="secret", output="x", exclude_from_context=True),
        UserMessage(content=""),
    ]
    text = serialize_conversation(messages)
    assert text == (
        "[User]: ab\n\n"
        "[Assistant thinking]: hmm\nmore\n\n"
        "[Assistant]: one\ntwo\n\n"
        '[Assistant tool calls]: read(path="a.py", offset=10); bash(command="echo \\"hi\\"")\n\n'
        f"[Tool result]: {'z' * 2000}\n\n[... 500 more characters truncated]\n\n"
        "[User]: Ran `ls`\n```\nfile\n```"
    )


def test_truncate_keeps_short_text() -> None:
    assert truncate_for_summary("abc", 3) == "abc"
    assert truncate_for_summary("abcd", 3) == "abc\n\n[... 1 more characters truncated]"


def test_file_operations_and_tags() -> None:
    ops = FileOperations()
    ops.add_message(
        reply(
            "",
            call("read", "1", path="b.py"),
            call("read", "2", path="a.py"),
            call("edit", "3", path="a.py"),
            call("write", "4", path="c.py"),
            call("bash", "5", command="cat d.py"),
            call("read", "6"),
        )
    )
    ops.add_message(user("read e.py"))
    ops.add_details({"readFiles": ["z.py"], "modifiedFiles": ["y.py"]})
    ops.add_details("not a dict")
    assert ops.file_lists() == (["b.py", "z.py"], ["a.py", "c.py", "y.py"])
    tags = format_file_tags(*ops.file_lists())
    assert tags == (
        "\n\n<read-files>\nb.py\nz.py\n</read-files>\n\n<modified-files>\na.py\nc.py\ny.py\n</modified-files>"
    )
    assert format_file_tags([], []) == ""
    assert strip_file_tags("## Goal\nx" + tags) == "## Goal\nx"
    assert strip_file_tags("## Goal\nx") == "## Goal\nx"
    # A mention inside the text is not at the end: kept.
    inner = "see <read-files>\na\n</read-files> above\nmore"
    assert strip_file_tags(inner) == inner


# --- cut points -----------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0, 1, 50, 99, 100, 101, 150, 250, 399, 400, 401, 800, 1500, 10_000])
def test_cut_point_never_at_tool_result_and_keeps_budget(keep: int) -> None:
    manager = session_with_turns(4)
    entries = manager.get_branch()
    cut = find_cut_point(entries, keep)
    assert cut is not None
    first = entries[cut.first_kept_index]
    assert first.id == cut.first_kept_entry_id
    assert is_valid_cut_point(first)
    assert first.message.role != "toolResult"

    def tokens_from(index: int) -> int:
        return sum(estimate_tokens(entry.message) for entry in entries[index:])

    # The budget is reached after the previous valid cut point (so that one would keep too much)
    # and not yet after the cut entry itself (the cut is the first valid point at or after the
    # entry where the walk back reached the budget; a tool result there is skipped forward).
    assert tokens_from(cut.first_kept_index + 1) < keep or keep == 0
    earlier = [i for i in range(cut.first_kept_index) if is_valid_cut_point(entries[i])]
    if earlier:
        assert tokens_from(earlier[-1] + 1) >= keep


def test_cut_point_split_turn_detection() -> None:
    manager = session_with_turns(3)
    entries = manager.get_branch()
    # Keeping only the last assistant message (~101 tokens) cuts inside turn 2.
    cut = find_cut_point(entries, 50)
    assert cut is not None
    assert cut.first_kept_index == len(entries) - 1
    assert entries[cut.first_kept_index].message.role == "assistant"
    assert cut.is_split_turn
    assert cut.turn_start_index == 8
    assert entries[8].message.role == "user"
    # Keeping a whole turn cuts at its user message: not split.
    cut = find_cut_point(entries, 350)
    assert cut is not None
    assert entries[cut.first_kept_index].message.role == "user"
    assert not cut.is_split_turn
    assert cut.turn_start_index is None


def test_cut_point_keeps_settings_entries_before_it() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_message(user("x" * 400))
    manager.append_message(reply("y" * 400, total=300))
    manager.append_model_change("other", "model")
    manager.append_thinking_level_change("high")
    second = manager.append_message(user("z" * 400))
    manager.append_message(reply("w" * 400, total=500))
    entries = manager.get_branch()
    cut = find_cut_point(entries, 150)
    assert cut is not None
    assert entries[cut.first_kept_index].type == "model_change"
    assert entries[cut.first_kept_index + 2].id == second
    assert not cut.is_split_turn


def test_cut_point_with_huge_trailing_tool_result_still_compacts() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_message(user("old " * 200))
    manager.append_message(reply("old answer " * 50, total=400))
    manager.append_message(user("read the log"))
    manager.append_message(reply("", call("read", "c9", path="log.txt"), total=500))
    manager.append_message(result("L" * 200_000, "c9"))
    entries = manager.get_branch()
    cut = find_cut_point(entries, 1000)
    assert cut is not None
    assert entries[cut.first_kept_index].message.role == "assistant"
    assert cut.is_split_turn and cut.turn_start_index == 2


def test_cut_point_none_without_valid_points() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_model_change("p", "m")
    entries = manager.get_branch()
    assert find_cut_point(entries, 10) is None


def test_custom_message_and_branch_summary_are_cut_points() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_message(user("a" * 400))
    manager.append_message(reply("b" * 400, total=200))
    manager.append_custom_message_entry("note", "c" * 400, display=True)
    manager.append_message(reply("d" * 40, total=300))
    entries = manager.get_branch()
    cut = find_cut_point(entries, 100)
    assert cut is not None
    assert entries[cut.first_kept_index].type == "custom_message"
    assert not cut.is_split_turn

    manager.branch_with_summary(entries[1].id, "summary " * 100)
    manager.append_message(reply("e" * 40, total=300))
    entries = manager.get_branch()
    cut = find_cut_point(entries, 100)
    assert cut is not None
    assert entries[cut.first_kept_index].type == "branch_summary"


# --- preparation ----------------------------------------------------------------------------


def test_prepare_returns_none_when_everything_fits() -> None:
    manager = session_with_turns(2)
    assert prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=100_000)) is None
    assert prepare_compaction([], CompactionSettings()) is None


def test_prepare_returns_none_right_after_a_compaction() -> None:
    manager = session_with_turns(3)
    entries = manager.get_branch()
    manager.append_compaction("summary", entries[4].id, 1234)
    assert prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=10)) is None


def test_prepare_split_turn_collects_prefix() -> None:
    manager = session_with_turns(3)
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=50))
    assert preparation is not None
    assert preparation.is_split_turn
    assert len(preparation.messages_to_summarize) == 8  # turns 0 and 1
    assert [m.role for m in preparation.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert preparation.file_ops.file_lists() == (["f0.py", "f1.py", "f2.py"], [])
    assert preparation.tokens_before == 1102  # last usage, nothing after it


def test_prepare_respects_previous_compaction() -> None:
    manager = session_with_turns(3)
    first = manager.get_branch()
    kept_id = first[4].id  # turn 1 starts here
    manager.append_compaction(
        "## Goal\nold goal\n\n<read-files>\nf0.py\n</read-files>",
        kept_id,
        5000,
        {"readFiles": ["f0.py", "old.py"], "modifiedFiles": ["m.py"]},
        from_hook=False,
    )
    for turn in range(3, 5):
        manager.append_message(user(f"turn {turn} " + "u" * 400))
        manager.append_message(reply("a" * 400, call("edit", f"e{turn}", path=f"g{turn}.py"), total=2000))
        manager.append_message(result("ok", f"e{turn}", "edit"))
        manager.append_message(reply("done", total=2100 + turn))
    entries = manager.get_branch()
    assert entries[compaction_boundary(entries)].id == kept_id

    preparation = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=150))
    assert preparation is not None
    # Turn 0 is inside the old summary; turn 1 and 2 were kept verbatim and come first now.
    first_text = preparation.messages_to_summarize[0].content[0].text
    assert first_text.startswith("turn 1 ")
    assert all(not isinstance(m, CompactionSummaryMessage) for m in preparation.messages_to_summarize)
    assert preparation.previous_summary is not None
    assert preparation.previous_summary.startswith("## Goal\nold goal")
    assert preparation.file_ops.file_lists() == (
        ["f0.py", "f1.py", "f2.py", "old.py"],
        ["g3.py", "m.py"],
    )
    prompt = history_prompt(preparation, "focus on tests")
    assert "<previous-summary>\n## Goal\nold goal\n</previous-summary>\n\n" in prompt
    assert "focus on tests" in prompt
    # tokens_before: the last usage of the current context, nothing after it.
    assert preparation.tokens_before == 2104

    # The new compaction's context: summary, then from its first kept entry on.
    manager.append_compaction("new", preparation.first_kept_entry_id, preparation.tokens_before)
    context = manager.build_session_context().messages
    assert isinstance(context[0], CompactionSummaryMessage)
    assert context[0].summary == "new"
    assert context[1].role == "user"
    assert context[1].content[0].text.startswith("turn 4 ")


def test_prepare_from_hook_details_are_not_trusted() -> None:
    manager = session_with_turns(3)
    manager.append_compaction(
        "ext", manager.get_branch()[4].id, 10, {"readFiles": ["ext.py"], "modifiedFiles": []}, from_hook=True
    )
    for turn in range(3, 6):
        manager.append_message(user(f"turn {turn} " + "u" * 400))
        manager.append_message(reply("b" * 400, total=3000))
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=150))
    assert preparation is not None
    assert "ext.py" not in preparation.file_ops.file_lists()[0]


def test_branch_context_messages_match_session_context() -> None:
    manager = session_with_turns(3)
    manager.append_compaction("s", manager.get_branch()[4].id, 10)
    manager.append_message(user("after"))
    ours = branch_context_messages(manager.get_branch())
    theirs = manager.build_session_context().messages
    assert [m.to_json_dict() for m in ours[1:]] == [m.to_json_dict() for m in theirs[1:]]
    assert ours[0].summary == theirs[0].summary


def test_tokens_before_counts_messages_after_last_usage() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_message(user("a" * 4000))
    manager.append_message(reply("b" * 40, total=1234))
    manager.append_message(user("c" * 400))
    manager.append_message(reply("d" * 40, total=0))  # provider reported no usage
    preparation = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=50))
    assert preparation is not None
    assert preparation.tokens_before == 1234 + 100 + 10


# --- branch collection ----------------------------------------------------------------------


def test_collect_entries_for_branch_summary() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    root = manager.append_message(user("root"))
    a1 = manager.append_message(reply("a1", total=10))
    a2 = manager.append_message(user("a2"))
    a3 = manager.append_message(reply("a3", total=10))
    manager.branch(a1)
    b1 = manager.append_message(user("b1"))
    assert [e.id for e in collect_entries_for_branch_summary(manager, a3, b1)] == [a2, a3]
    assert [e.id for e in collect_entries_for_branch_summary(manager, a3, a1)] == [a2, a3]
    assert [e.id for e in collect_entries_for_branch_summary(manager, a3, a3)] == []
    assert [e.id for e in collect_entries_for_branch_summary(manager, a3, None)] == [root, a1, a2, a3]
    assert collect_entries_for_branch_summary(manager, None, b1) == []


def test_prepare_branch_messages_budget_and_summaries() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_message(user("old " + "o" * 4000))
    manager.append_message(reply("", call("write", "w", path="new.py"), total=10))
    manager.append_message(result("written", "w", "write"))
    manager.append_compaction("compacted " * 40, manager.get_leaf_id() or "", 10, {"readFiles": ["r.py"]})
    manager.append_message(user("recent " + "r" * 400))
    manager.append_message(reply("answer", total=10))
    entries = manager.get_branch()
    messages, ops = prepare_branch_messages(entries, 200)
    # Newest first within 200 tokens: the answer, the user message, then the compaction summary
    # (overflows, but the budget is less than 90% used); older messages are dropped.
    assert [m.role for m in messages] == ["compactionSummary", "user", "assistant"]
    # Files still come from every entry and from the compaction's details.
    assert ops.file_lists() == (["r.py"], ["new.py"])
    everything, _ = prepare_branch_messages(entries)
    assert [m.role for m in everything] == ["user", "assistant", "compactionSummary", "user", "assistant"]


def test_compaction_entry_in_fixture_context() -> None:
    """The fixture's stored compaction rebuilds the context pi sent next (sanity of the format)."""
    manager = open_fixture(FIXTURE_08)
    context = build_session_context(
        {raw["id"]: raw for raw in manager.iter_raw_entries()}, manager.get_leaf_id()
    )
    assert isinstance(context.messages[0], CompactionSummaryMessage)
    assert context.messages[1].content[0].text.startswith("Here is my plan")


def test_cut_point_starts_at_previous_compactions_first_kept_entry() -> None:
    manager = session_with_turns(3)
    kept = manager.get_branch()[4]
    manager.append_compaction("earlier", kept.id, 100)
    manager.append_message(user("more"))
    entries = manager.get_branch()
    # Everything fits: the cut is the first valid point at or after the boundary, not the root.
    cut = find_cut_point(entries, 1_000_000)
    assert cut is not None
    assert cut.first_kept_entry_id == kept.id
    # An explicit range overrides the boundary.
    cut = find_cut_point(entries, 1_000_000, 0)
    assert cut is not None and cut.first_kept_index == 0
