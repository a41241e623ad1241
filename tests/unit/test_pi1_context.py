"""What pi 1.x's new entries do to the model's context: context edits, system messages (the
prompt text and the tool loadout per branch), retain-none compactions and their checkpoints.

Each case is a hand-made session file in pi 1.5.2's format (docs/session-format.md), opened
from disk by the real SessionManager; the agent's request context is built as a turn would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.agent.session import AgentSession
from pi_tui.ai.types import Model
from pi_tui.messages import AssistantMessage, ToolResultMessage, UserMessage
from pi_tui.session import SessionManager
from pi_tui.start_options import StartOptions
from pi_tui.startup import loadout_pool
from pi_tui.tools import default_tools

STAMP = "2026-11-26T10:00:00.000Z"


def _entry(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": STAMP, **fields}


def _message(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return _entry("message", entry_id, parent, message={"timestamp": 1, **message})


def _user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return _message(entry_id, parent, {"role": "user", "content": [{"type": "text", "text": text}]})


def _assistant(entry_id: str, parent: str | None, text: str, *calls: str) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    blocks += [{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": "a"}} for call in calls]
    return _message(
        entry_id,
        parent,
        {"role": "assistant", "content": blocks, "provider": "p", "model": "m", "stopReason": "stop"},
    )


def _result(entry_id: str, parent: str | None, call: str, text: str) -> dict[str, Any]:
    return _message(
        entry_id,
        parent,
        {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
        },
    )


def _system(entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return _message(entry_id, parent, {"role": "system", "content": "", **fields})


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"the {name} tool", "parameters": {"type": "object"}}


def _open(tmp_path: Path, entries: list[dict[str, Any]]) -> SessionManager:
    header = {"type": "session", "version": 3, "id": "s-1", "timestamp": STAMP, "cwd": str(tmp_path)}
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *entries]))
    return SessionManager.open(path)


def _texts(manager: SessionManager) -> list[tuple[str, str]]:
    """(role, text) of every message the model gets."""
    shown = []
    for message in manager.build_session_context().messages:
        content = getattr(message, "content", getattr(message, "summary", ""))
        text = content if isinstance(content, str) else " | ".join(getattr(b, "text", "?") for b in content)
        shown.append((message.role, text))
    return shown


def _chat() -> list[dict[str, Any]]:
    return [
        _user("u1", None, "read a"),
        _assistant("a1", "u1", "reading", "c1"),
        _result("r1", "a1", "c1", "SECRET CONTENTS"),
        _assistant("a2", "r1", "done"),
        _user("u2", "a2", "private question"),
        _assistant("a3", "u2", "private answer"),
    ]


# --- context edits ----------------------------------------------------------------------------


def test_omitted_tool_result_user_and_assistant_leave_the_context(tmp_path: Path) -> None:
    entries = [
        *_chat(),
        _entry("context_edit", "e1", "a3", targetId="r1", replacement=None),
        _entry("context_edit", "e2", "e1", targetId="u2", replacement=None),
        _entry("context_edit", "e3", "e2", targetId="a3", replacement=None),
    ]
    manager = _open(tmp_path, entries)
    assert _texts(manager) == [("user", "read a"), ("assistant", "reading | ?"), ("assistant", "done")]


def test_replacements_change_only_the_content(tmp_path: Path) -> None:
    entries = [
        *_chat(),
        _entry("context_edit", "e1", "a3", targetId="r1", replacement={"content": "[hidden]"}),
        _entry("context_edit", "e2", "e1", targetId="u2", replacement={"content": "a question"}),
        _entry(
            "context_edit",
            "e3",
            "e2",
            targetId="a3",
            replacement={"content": [{"type": "text", "text": "an answer"}]},
        ),
    ]
    manager = _open(tmp_path, entries)
    messages = manager.build_session_context().messages
    result = messages[2]
    assert isinstance(result, ToolResultMessage)
    assert [block.text for block in result.content] == ["[hidden]"]  # a string becomes one block
    assert result.tool_call_id == "c1" and result.tool_name == "read"
    question = messages[4]
    assert isinstance(question, UserMessage) and question.content == "a question"
    answer = messages[5]
    assert isinstance(answer, AssistantMessage) and answer.model == "m"
    assert [block.text for block in answer.content] == ["an answer"]
    # the raw entries are untouched: the UI and the file still hold the originals
    assert manager.get_entry("r1").message.content[0].text == "SECRET CONTENTS"


def test_the_latest_edit_on_the_branch_wins_and_edits_are_branch_relative(tmp_path: Path) -> None:
    entries = [
        *_chat(),
        _entry("context_edit", "e1", "a3", targetId="r1", replacement={"content": "first"}),
        _entry("context_edit", "e2", "e1", targetId="r1", replacement={"content": "second"}),
        _user("u3", "e2", "go on"),
        # another branch from a3 never saw the edits
        _user("u4", "a3", "other branch"),
    ]
    manager = _open(tmp_path, entries)
    manager.branch("u3")
    assert _texts(manager)[2] == ("toolResult", "second")
    manager.branch("u4")
    assert _texts(manager)[2] == ("toolResult", "SECRET CONTENTS")


def test_an_edit_appended_to_a_live_session_applies_to_the_next_build(tmp_path: Path) -> None:
    manager = _open(tmp_path, _chat())
    assert ("toolResult", "SECRET CONTENTS") in _texts(manager)  # built (and cached) once
    manager.append_context_edit("r1", None)
    assert ("toolResult", "SECRET CONTENTS") not in _texts(manager)


# --- system messages ------------------------------------------------------------------------


def _agent(manager: SessionManager, tmp_path: Path) -> AgentSession:
    options = StartOptions(cwd=str(tmp_path))
    tools = default_tools(tmp_path)
    agent = AgentSession(
        manager,
        Model(id="m", api="openai-completions", provider="p"),
        tools=tools,
        system_prompt="OWN PROMPT",
        cwd=tmp_path,
    )
    agent.loadout_pool = loadout_pool(options, tools)
    return agent


def test_a_branch_without_system_messages_keeps_our_tools(tmp_path: Path) -> None:
    context = _agent(_open(tmp_path, _chat()), tmp_path).build_context()
    assert [tool.name for tool in context.tools] == ["read", "bash", "edit", "write"]
    assert context.system_prompt == "OWN PROMPT"


def test_tools_removed_and_added_per_branch(tmp_path: Path) -> None:
    entries = [
        _system(
            "s0",
            None,
            sections={"preamble": "pi's own"},
            toolsAdded=[_tool(n) for n in ("read", "bash", "edit", "write")],
        ),
        _user("u1", "s0", "hi"),
        _assistant("a1", "u1", "hello"),
        _system("s1", "a1", toolsRemoved=[{"name": "write"}], toolsAdded=[_tool("grep"), _tool("codemode")]),
        _user("u2", "s1", "no writing now"),
        _user("u3", "a1", "a branch that kept write"),
    ]
    manager = _open(tmp_path, entries)
    manager.branch("u2")
    agent = _agent(manager, tmp_path)
    context = agent.build_context()
    # codemode is pi's and pi-tui has no such tool: left out; grep is ours and switched on
    assert [tool.name for tool in context.tools] == ["read", "bash", "edit", "grep"]
    assert context.system_prompt == "OWN PROMPT"  # pi's sections are pi's prompt, not ours
    assert [m.role for m in context.messages] == ["user", "assistant", "user"]
    manager.branch("u3")
    assert [tool.name for tool in agent.build_context().tools] == ["read", "bash", "edit", "write"]


def test_user_supplied_system_content_comes_before_our_prompt(tmp_path: Path) -> None:
    entries = [
        _system("s0", None, content="Always answer in French.", toolsAdded=[_tool("read")]),
        _user("u1", "s0", "hi"),
        _system("s1", "u1", content=[{"type": "text", "text": "And be brief."}]),
        _assistant("a1", "s1", "salut"),
    ]
    context = _agent(_open(tmp_path, entries), tmp_path).build_context()
    assert context.system_prompt == "Always answer in French.\n\nAnd be brief.\n\nOWN PROMPT"
    assert [tool.name for tool in context.tools] == ["read"]


# --- compaction -------------------------------------------------------------------------------


def test_retain_none_compaction_keeps_nothing_before_it(tmp_path: Path) -> None:
    entries = [
        *_chat(),
        _entry("compaction", "k1", "a3", summary="all of it", firstKeptEntryId="k1", tokensBefore=900),
        _user("u9", "k1", "after"),
    ]
    assert [role for role, _ in _texts(_open(tmp_path, entries))] == ["compactionSummary", "user"]


def test_compaction_checkpoint_replaces_the_system_messages_it_summarised(tmp_path: Path) -> None:
    checkpoint = {
        "role": "system",
        "content": "Checkpointed text.",
        "toolsAdded": [_tool("read"), _tool("bash")],
        "timestamp": 5,
    }
    entries = [
        _system("s0", None, content="Old text.", toolsAdded=[_tool("read"), _tool("bash"), _tool("write")]),
        _user("u1", "s0", "one"),
        _system("s1", "u1", content="Kept-range text.", toolsRemoved=[{"name": "write"}]),
        _assistant("a1", "s1", "two"),
        _entry(
            "compaction",
            "k1",
            "a1",
            summary="sum",
            firstKeptEntryId="u1",
            tokensBefore=10,
            systemMessage=checkpoint,
        ),
        _user("u2", "k1", "three"),
    ]
    manager = _open(tmp_path, entries)
    context = _agent(manager, tmp_path).build_context()
    assert context.system_prompt == "Checkpointed text.\n\nOWN PROMPT"
    # the loadout replays every system message on the branch, compacted ones included
    assert [tool.name for tool in context.tools] == ["read", "bash"]
    assert [m.role for m in manager.build_session_context().messages] == [
        "compactionSummary",
        "user",
        "assistant",
        "user",
    ]


def test_our_compaction_writes_a_checkpoint_only_on_a_pi1_branch(tmp_path: Path) -> None:
    plain = _open(tmp_path, _chat())
    plain.append_compaction("sum", "u2", 100)
    assert "systemMessage" not in plain.get_leaf_entry().to_json_dict()

    other = tmp_path / "other"
    other.mkdir()
    entries = [
        _system("s0", None, content="Be terse.", sections={"preamble": "pi"}, toolsAdded=[_tool("read")]),
        *_chat()[:-1],
    ]
    entries[1] = _user("u1", "s0", "read a")
    declared = _open(other, entries)
    declared.append_compaction("sum", "u2", 100)
    line = json.loads((other / "session.jsonl").read_text().splitlines()[-1])
    assert line["systemMessage"]["role"] == "system"
    assert line["systemMessage"]["content"] == "Be terse."
    assert line["systemMessage"]["sections"] == {"preamble": "pi"}
    assert [tool["name"] for tool in line["systemMessage"]["toolsAdded"]] == ["read"]
