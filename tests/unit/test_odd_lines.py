"""Files pi, oh-my-pi or a crash wrote: one odd line never stops a session (issue 11).

Each test writes a real file whose odd line sits between ordinary turns, opens it with the
SessionManager and checks the tree, the context sent to the model and the warnings; lines we
read must round-trip unchanged, and the session must stay writable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui import jsonio
from pi_tui.messages import UserMessage
from pi_tui.session import SessionManager, convert_to_llm
from pi_tui.session.info import session_info

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0199aaaa-0000-7000-8000-000000000001",
    "timestamp": "2025-06-01T10:00:00.000Z",
    "cwd": "/tmp/project",
}
USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def entry(
    entry_id: Any, parent: Any, message: dict[str, Any] | None = None, *, second: int = 0, **fields: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "message" if message is not None else fields.pop("type"),
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2025-06-01T10:00:{second:02d}.000Z",
    }
    if message is not None:
        body["message"] = message
    body.update(fields)
    return body


def user(text: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1748772000000, **extra}


def reply(text: str, **extra: Any) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": "loop",
        "model": "m",
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": 1748772001000,
    }
    message.update(extra)
    return {key: value for key, value in message.items() if value is not ...}


def write(path: Path, *lines: Any, prefix: bytes = b"") -> Path:
    data = b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )
    path.write_bytes(prefix + data)
    return path


def conversation(manager: SessionManager) -> list[str]:
    """The request's messages as 'role: text' (tool results: 'toolResult[name]: text')."""
    out = []
    for message in convert_to_llm(manager.build_session_context().messages):
        content = message.content
        text = (
            content
            if isinstance(content, str)
            else " ".join(
                getattr(block, "text", "") or "" for block in content if getattr(block, "type", "") == "text"
            )
        )
        role = f"toolResult[{message.tool_name}]" if message.role == "toolResult" else message.role
        out.append(f"{role}: {text}")
    return out


def five_turns(odd: dict[str, Any]) -> list[dict[str, Any]]:
    """Two turns, the odd entry (id "odd"), then one more turn under it."""
    return [
        entry("a1", None, user("first question"), second=1),
        entry("a2", "a1", reply("first answer"), second=2),
        odd,
        entry("a4", "odd", user("last question"), second=4),
        entry("a5", "a4", reply("last answer"), second=5),
    ]


def open_with(tmp_path: Path, odd: dict[str, Any]) -> SessionManager:
    return SessionManager.open(write(tmp_path / "s.jsonl", HEADER, *five_turns(odd)))


def test_tool_result_without_tool_name_is_sent(tmp_path: Path) -> None:
    lines = [
        entry("a1", None, user("read it"), second=1),
        entry(
            "a2",
            "a1",
            reply(
                "",
                content=[{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}}],
                stopReason="toolUse",
            ),
            second=2,
        ),
        entry(
            "a3",
            "a2",
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "content": [{"type": "text", "text": "data"}],
                "isError": False,
                "timestamp": 1,
            },
            second=3,
        ),
        entry("a4", "a3", reply("done"), second=4),
    ]
    manager = SessionManager.open(write(tmp_path / "s.jsonl", HEADER, *lines))
    assert conversation(manager) == ["user: read it", "assistant: ", "toolResult[]: data", "assistant: done"]
    assert manager.warnings == []


@pytest.mark.parametrize(
    ("odd_message", "why"),
    [
        (user(42), "content"),
        (user(None), "content"),
        ({"role": "toolResult"}, "toolCallId"),
    ],
)
def test_a_message_that_cannot_be_sent_is_left_out_with_file_and_line(
    tmp_path: Path, odd_message: dict[str, Any], why: str
) -> None:
    manager = open_with(tmp_path, entry("odd", "a2", odd_message, second=3))
    assert conversation(manager) == [
        "user: first question",
        "assistant: first answer",
        "user: last question",
        "assistant: last answer",
    ]
    assert len(manager.warnings) == 1
    assert manager.warnings[0].startswith(f"{tmp_path / 's.jsonl'}:4: left out of the model's context")
    assert why in manager.warnings[0]
    assert manager.take_new_warnings() == manager.warnings and manager.take_new_warnings() == []
    # The tree still holds the entry, and the session stays writable.
    assert manager.get_entry("odd") is not None
    manager.append_message(UserMessage(content="more"))
    manager.close()


def test_assistant_content_null_is_left_out_and_a_role_that_is_a_number_is_not_sent(tmp_path: Path) -> None:
    manager = open_with(tmp_path, entry("odd", "a2", reply("x", content=None), second=3))
    assert len(conversation(manager)) == 4
    assert manager.warnings[0].endswith(
        "left out of the model's context: its content is None, which no message can hold"
    )
    manager.close()
    manager = open_with(tmp_path, entry("odd", "a2", {"role": 7, "content": "?"}, second=3))
    assert conversation(manager) == [
        "user: first question",
        "assistant: first answer",
        "user: last question",
        "assistant: last answer",
    ]
    assert [node.id for node in manager.get_tree()] == ["a1"]
    manager.close()


@pytest.mark.parametrize(
    "usage",
    [
        {"input": 3, "output": 3.5, "totalTokens": 6.5},
        {"input": 3},
        ...,
        "lots",
    ],
    ids=["floats", "missing-fields", "no-usage", "not-an-object"],
)
def test_odd_usage_is_read(tmp_path: Path, usage: Any) -> None:
    manager = open_with(tmp_path, entry("odd", "a2", reply("middle answer", usage=usage), second=3))
    assert conversation(manager)[2] == "assistant: middle answer"
    assert manager.warnings == []
    typed = manager.get_entry("odd").message
    assert typed.usage is None or typed.usage.input == 3


def test_ids_and_parents_that_are_not_text(tmp_path: Path) -> None:
    lines = [
        entry("a1", None, user("first question"), second=1),
        entry(["x"], "a1", reply("answer with a list id"), second=2),
        entry("a3", {}, user("question under an object parent"), second=3),
        entry("a4", "a3", reply("last answer"), second=4),
    ]
    path = write(tmp_path / "s.jsonl", HEADER, *lines)
    original = path.read_bytes()
    manager = SessionManager.open(path)
    # pi: the {} parent makes a3 a root, so the model sees the branch from a3 on.
    assert conversation(manager) == ["user: question under an object parent", "assistant: last answer"]
    assert [node.id for node in manager.get_tree()] == ["a1", "a3"]
    assert manager.get_tree()[0].children[0].id == "line-3"
    assert any(":3: the entry's id is not text" in w for w in manager.warnings)
    assert any(":4: the entry's parentId is not an entry id" in w for w in manager.warnings)
    manager.append_message(UserMessage(content="next"))
    manager.close()
    assert path.read_bytes().startswith(original)  # nothing read was rewritten


def test_an_entry_that_is_its_own_parent_is_a_root(tmp_path: Path) -> None:
    lines = [
        entry("a1", None, user("first question"), second=1),
        entry("a2", "a2", reply("own parent"), second=2),
        entry("a3", "a2", user("after"), second=3),
    ]
    manager = SessionManager.open(write(tmp_path / "s.jsonl", HEADER, *lines))
    assert [node.id for node in manager.get_tree()] == ["a1", "a2"]
    assert conversation(manager) == ["assistant: own parent", "user: after"]


def test_compaction_with_tokens_before_as_text(tmp_path: Path) -> None:
    odd = entry(
        "odd",
        "a2",
        type="compaction",
        summary="they talked",
        firstKeptEntryId="a2",
        tokensBefore="many",
        second=3,
    )
    manager = open_with(tmp_path, odd)
    context = manager.build_session_context()
    assert context.messages[0].tokens_before == 0
    assert conversation(manager)[1:] == [
        "assistant: first answer",
        "user: last question",
        "assistant: last answer",
    ]
    assert manager.get_entry("odd").tokens_before == 0


def test_oh_my_pi_thinking_level_null_means_off(tmp_path: Path) -> None:
    lines = [
        entry("t1", None, type="thinking_level_change", thinkingLevel="high", second=0),
        *five_turns(entry("odd", "a2", type="thinking_level_change", thinkingLevel=None, second=3)),
    ]
    lines[1]["parentId"] = "t1"
    manager = SessionManager.open(write(tmp_path / "s.jsonl", HEADER, *lines))
    assert manager.build_session_context().thinking_level == "off"
    assert manager.get_entry("odd").thinking_level is None


def test_oh_my_pi_title_slot_before_the_header(tmp_path: Path) -> None:
    title = {"type": "title", "v": 1, "title": "Fix the parser", "pad": " " * 40}
    path = write(
        tmp_path / "s.jsonl", title, HEADER, *five_turns(entry("odd", "a2", user("middle"), second=3))
    )
    manager = SessionManager.open(path)
    assert manager.session_id == HEADER["id"]
    assert len(conversation(manager)) == 5
    manager.append_message(UserMessage(content="appended"))
    manager.close()
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[0]) == title and json.loads(lines[1]) == HEADER
    assert json.loads(lines[-1])["message"]["content"] == "appended"
    info = session_info(path)
    assert info is not None and info.name == "Fix the parser" and info.id == HEADER["id"]
    # -c finds it (a flat session folder lists the sessions of the project asking, as pi does)
    assert SessionManager.list(HEADER["cwd"], tmp_path)[0].path == path


def test_byte_order_mark_and_header_without_timestamp(tmp_path: Path) -> None:
    header = {key: value for key, value in HEADER.items() if key != "timestamp"}
    path = write(
        tmp_path / "s.jsonl",
        header,
        *five_turns(entry("odd", "a2", user("middle"), second=3)),
        prefix=b"\xef\xbb\xbf",
    )
    manager = SessionManager.open(path)
    assert manager.get_header().timestamp == ""
    assert len(conversation(manager)) == 5 and manager.warnings == []
    assert session_info(path) is not None


def test_a_lone_surrogate_keeps_the_line_and_goes_out_as_node_writes_it(tmp_path: Path) -> None:
    odd = entry("odd", "a2", user("half an emoji: X"), second=3)
    line = json.dumps(odd).replace("X", "\\ud83d").encode()
    assert b"\\ud83d" in line
    path = write(tmp_path / "s.jsonl", HEADER, *five_turns(odd)[:2], line, *five_turns(odd)[3:])
    manager = SessionManager.open(path)
    assert conversation(manager) == [
        "user: first question",
        "assistant: first answer",
        "user: half an emoji: \ud83d",
        "user: last question",
        "assistant: last answer",
    ]
    assert manager.warnings == []
    # What we write (a fork copies every line; a request carries the text) is Node's escape again.
    fork = SessionManager.fork_from(path, str(tmp_path), tmp_path / "forks")
    fork.close()
    copied = [raw for raw in fork.session_file.read_bytes().splitlines() if b'"odd"' in raw]
    assert b"\\ud83d" in copied[0]
    assert jsonio.loads(copied[0]) == jsonio.loads(line)
    assert jsonio.dumps({"t": "\ud83d\u00e9"}) == b'{"t":"\\ud83d\xc3\xa9"}'


def test_invalid_utf8_is_read_as_node_reads_it(tmp_path: Path) -> None:
    odd = entry("odd", "a2", user("bytes: X"), second=3)
    line = json.dumps(odd).replace("X", "\udcff").encode("utf-8", "surrogateescape")
    assert b"\xff" in line
    path = write(tmp_path / "s.jsonl", HEADER, *five_turns(odd)[:2], line, *five_turns(odd)[3:])
    manager = SessionManager.open(path)
    assert conversation(manager)[2] == "user: bytes: \ufffd"


def test_siblings_are_ordered_by_time_not_text(tmp_path: Path) -> None:
    # As text: "...05+01:00" < "...05.500Z" < "...05Z"; as time: +01:00 (04:00:05) first, then
    # 10:00:05, then 10:00:05.500.
    lines = [
        entry("r", None, user("root"), second=1),
        {**entry("late", "r", reply("half a second later")), "timestamp": "2025-06-01T10:00:05.500Z"},
        {**entry("mid", "r", reply("on the second")), "timestamp": "2025-06-01T10:00:05Z"},
        {**entry("early", "r", reply("an hour earlier")), "timestamp": "2025-06-01T10:00:05+01:00"},
    ]
    manager = SessionManager.open(write(tmp_path / "s.jsonl", HEADER, *lines))
    assert [child.id for child in manager.get_tree()[0].children] == ["early", "mid", "late"]
    assert [child.id for child in manager.get_children("r")] == ["early", "mid", "late"]


def test_oh_my_pi_reset_boundary_starts_the_context_again(tmp_path: Path) -> None:
    lines = [
        entry("m1", None, type="model_change", provider="loop", modelId="m", second=0),
        entry("a1", "m1", user("before the clear"), second=1),
        entry("a2", "a1", reply("old answer"), second=2),
        entry("b", "a2", type="reset_boundary", second=3),
        entry("a4", "b", user("after the clear"), second=4),
        entry("a5", "a4", reply("new answer"), second=5),
    ]
    manager = SessionManager.open(write(tmp_path / "s.jsonl", HEADER, *lines))
    context = manager.build_session_context()
    assert conversation(manager) == ["user: after the clear", "assistant: new answer"]
    assert context.model is not None and context.model.model_id == "m"
    manager.branch("a2")  # on a branch without the boundary, everything counts again
    assert conversation(manager) == ["user: before the clear", "assistant: old answer"]


def test_a_broken_line_in_the_middle_loses_nothing_around_it(tmp_path: Path) -> None:
    odd = entry("odd", "a2", user("middle"), second=3)
    path = write(
        tmp_path / "s.jsonl",
        HEADER,
        *five_turns(odd)[:2],
        b'{"type": "message", "id": "zz"',
        odd,
        *five_turns(odd)[3:],
    )
    manager = SessionManager.open(path)
    assert len(conversation(manager)) == 5
    assert manager.warnings == [f"{path}:4: skipped a line that is not valid JSON"]
    assert manager._where("a4") == f"{path}:6"  # line numbers count the skipped line


def test_migrating_an_old_file_keeps_the_title_slot_first(tmp_path: Path) -> None:
    title = {"type": "title", "v": 1, "title": "Old work", "pad": " " * 20}
    header = {key: value for key, value in HEADER.items() if key != "version"}  # no version: v1
    lines = [
        {"type": "message", "timestamp": "2025-06-01T10:00:01.000Z", "message": user("v1 question")},
        {"type": "message", "timestamp": "2025-06-01T10:00:02.000Z", "message": reply("v1 answer")},
    ]
    path = write(tmp_path / "s.jsonl", title, header, *lines)
    manager = SessionManager.open(path)
    assert conversation(manager) == ["user: v1 question", "assistant: v1 answer"]
    manager.close()
    rewritten = path.read_bytes().splitlines()
    assert json.loads(rewritten[0]) == title
    assert json.loads(rewritten[1])["version"] == 3 and len(rewritten) == 4
    assert (tmp_path / "s.jsonl.v1.bak").exists()


def test_typed_messages_are_built_once_across_context_builds(tmp_path: Path) -> None:
    """Issue 12: the agent builds the context several times a turn while entries are appended;
    each message's typed view is made once and reused, problems are reported once."""
    manager = open_with(tmp_path, entry("odd", "a2", user(42), second=3))
    first = manager.build_session_context().messages
    manager.append_message(UserMessage(content="one more"))
    second = manager.build_session_context().messages
    assert len(second) == len(first) + 1
    assert all(a is b for a, b in zip(first, second, strict=False))
    assert len(manager.warnings) == 1
    manager.close()


def test_an_entry_without_an_id_is_skipped_and_the_session_goes_on(tmp_path: Path) -> None:
    lines = [
        entry("a1", None, user("first question"), second=1),
        entry("a2", "a1", reply("first answer"), second=2),
        {"type": "weird", "parentId": "a2", "timestamp": "2025-06-01T10:00:03.000Z"},
    ]
    path = write(tmp_path / "s.jsonl", HEADER, *lines)
    original = path.read_bytes()
    manager = SessionManager.open(path)
    assert any(":4: skipped an entry without an id" in w for w in manager.warnings)
    assert conversation(manager) == ["user: first question", "assistant: first answer"]
    assert manager.get_leaf_id() == "a2"
    manager.append_message(UserMessage(content="next"))
    manager.close()
    written = path.read_bytes()
    assert written.startswith(original)  # the odd line stays where it was
    assert json.loads(written.splitlines()[-1])["parentId"] == "a2"
