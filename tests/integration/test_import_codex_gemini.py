"""Issue 18: Codex CLI rollouts and Gemini CLI chats imported as pi sessions.

Counts come from the source records themselves; the cases no public sample has (a Gemini
``$rewindTo``, a Codex ``compacted`` line and fork) are written here from the formats'
descriptions in fixtures/transcripts/SOURCES.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.session import SessionManager
from tests.e2e.test_cli_agent import SCRIPT
from tests.integration.test_import_claude import _text, continue_here, imported, records, run_import

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "data" / "transcripts"
CODEX = sorted((TRANSCRIPTS / "codex").glob("*.jsonl"))
GEMINI = sorted((TRANSCRIPTS / "gemini").iterdir())


def codex_items(path: Path) -> list[dict[str, Any]]:
    items = []
    for record in records(path):
        if record.get("type") == "response_item":
            items.append(record["payload"])
        elif "payload" not in record and record.get("type") and "record_type" not in record:
            items.append(record)  # the oldest layout: bare items
    return items


def part_text(content: Any) -> str:
    """Codex content parts (input_text, output_text) and Gemini parts: their text, joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        part.get("text", "")
        for part in content
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    )


CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")
"""What Codex itself writes as user messages (SOURCES.md): context, not prompts."""


def gemini_messages(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    try:
        return json.loads(text)["messages"]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip() and '"type"' in line]


def session_messages(agent_dir: Path) -> tuple[SessionManager, list[dict[str, Any]]]:
    (session,) = imported(agent_dir)
    manager = SessionManager.open(session, read_only=True)
    assert manager.take_new_warnings() == []
    return manager, [raw["message"] for raw in manager.iter_raw_entries() if raw["type"] == "message"]


def check_pairs(messages: list[dict[str, Any]]) -> int:
    calls = {
        b["id"]: b["name"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "toolCall"
    }
    results = [m for m in messages if m["role"] == "toolResult"]
    assert all(calls[m["toolCallId"]] == m["toolName"] for m in results)
    return len(results)


@pytest.mark.parametrize("source", CODEX, ids=[path.name[:32] for path in CODEX])
def test_every_codex_rollout_imports(source: Path, tmp_path: Path, agent_dir: Path) -> None:
    done = run_import(source, tmp_path)
    assert done.returncode == 0, done.stderr
    _, messages = session_messages(agent_dir)
    items = codex_items(source)
    prompts = [
        part_text(i.get("content")) for i in items if i.get("type") == "message" and i.get("role") == "user"
    ]
    prompts = [prompt for prompt in prompts if not prompt.lstrip().startswith(CONTEXT)]
    calls = [i for i in items if i.get("type") in ("function_call", "custom_tool_call", "local_shell_call")]
    outputs = [i for i in items if i.get("type") in ("function_call_output", "custom_tool_call_output")]
    replies = [
        part_text(i.get("content"))
        for i in items
        if i.get("type") == "message" and i.get("role") == "assistant"
    ]
    assert [_text(m["content"]) for m in messages if m["role"] == "user"] == prompts
    texts = [
        b["text"] for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "text"
    ]
    assert texts == [reply for reply in replies if reply]
    assert sum(
        1 for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"
    ) == len(calls)
    assert check_pairs(messages) == len(outputs)


@pytest.mark.parametrize("source", GEMINI, ids=[path.name[:32] for path in GEMINI])
def test_every_gemini_chat_imports(source: Path, tmp_path: Path, agent_dir: Path) -> None:
    done = run_import(source, tmp_path)
    assert done.returncode == 0, done.stderr
    _, messages = session_messages(agent_dir)
    records = gemini_messages(source)
    assert [_text(m["content"]) for m in messages if m["role"] == "user"] == [
        part_text(r["content"]) for r in records if r["type"] == "user"
    ]
    assert sum(1 for m in messages if m["role"] == "assistant") == sum(
        1 for r in records if r["type"] == "gemini"
    )
    calls = sum(len(r.get("toolCalls") or []) for r in records if r["type"] == "gemini")
    assert check_pairs(messages) == calls


def test_a_gemini_rewind_is_a_branch(tmp_path: Path, agent_dir: Path) -> None:
    chat = tmp_path / "session-2026-05-01T10-00-abc.jsonl"
    lines = [
        {
            "sessionId": "s-rewind",
            "projectHash": "h",
            "startTime": "2026-05-01T10:00:00.000Z",
            "kind": "main",
        },
        {
            "id": "u1",
            "timestamp": "2026-05-01T10:00:01.000Z",
            "type": "user",
            "content": [{"text": "first question"}],
        },
        {"id": "g1", "timestamp": "2026-05-01T10:00:02.000Z", "type": "gemini", "content": "first answer"},
        {
            "id": "u2",
            "timestamp": "2026-05-01T10:00:03.000Z",
            "type": "user",
            "content": [{"text": "a wrong turn"}],
        },
        {"id": "g2", "timestamp": "2026-05-01T10:00:04.000Z", "type": "gemini", "content": "wrong answer"},
        {"$rewindTo": "u2"},
        {
            "id": "u3",
            "timestamp": "2026-05-01T10:00:05.000Z",
            "type": "user",
            "content": [{"text": "the better question"}],
        },
        {"id": "g3", "timestamp": "2026-05-01T10:00:06.000Z", "type": "gemini", "content": "better answer"},
    ]
    chat.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert run_import(chat, tmp_path).returncode == 0
    manager, _ = session_messages(agent_dir)
    raws = list(manager.iter_raw_entries())
    by_text = {_text(r["message"]["content"]): r for r in raws if r["type"] == "message"}
    assert (
        by_text["a wrong turn"]["parentId"]
        == by_text["the better question"]["parentId"]
        == by_text["first answer"]["id"]
    )
    branch = [_text(e.message.model_dump()["content"]) for e in manager.get_branch() if e.type == "message"]
    assert branch == ["first question", "first answer", "the better question", "better answer"]  # current


def test_a_codex_compaction_and_fork(tmp_path: Path, agent_dir: Path) -> None:
    def rollout(name: str, session_id: str, extra: dict[str, Any], items: list[dict[str, Any]]) -> Path:
        path = tmp_path / name
        meta = {"id": session_id, "timestamp": "2026-05-01T10:00:00.000Z", "cwd": str(tmp_path), **extra}
        lines = [{"timestamp": "2026-05-01T10:00:00.000Z", "type": "session_meta", "payload": meta}]
        lines += [{"timestamp": "2026-05-01T10:00:01.000Z", **item} for item in items]
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
        return path

    def say(role: str, text: str) -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return {
            "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        }

    original = rollout(
        "rollout-a.jsonl",
        "orig-1",
        {},
        [
            say("user", "old question"),
            say("assistant", "old answer"),
            {"type": "compacted", "payload": {"message": "SUMMARY: they asked an old question"}},
            say("user", "new question"),
            say("assistant", "new answer"),
        ],
    )
    fork = rollout(
        "rollout-b.jsonl", "fork-1", {"forked_from_id": "orig-1"}, [say("user", "forked question")]
    )
    assert run_import(original, tmp_path).returncode == 0
    (first,) = imported(agent_dir)
    manager = SessionManager.open(first, read_only=True)
    compaction = next(r for r in manager.iter_raw_entries() if r["type"] == "compaction")
    assert compaction["summary"] == "SUMMARY: they asked an old question"
    context = [m.model_dump() for m in manager.build_session_context().messages]
    assert [m.get("role") for m in context] == ["compactionSummary", "user", "assistant"]
    assert run_import(fork, tmp_path).returncode == 0
    second = next(path for path in imported(agent_dir) if path != first)
    assert json.loads(second.read_text().splitlines()[0])["parentSession"] == str(first)


@pytest.mark.parametrize(
    ("source", "api_text"),
    [("codex/yoavf-v0.47.0.jsonl", "codex"), ("gemini/yoavf-legacy-2025-10.json", "gemini")],
)
def test_a_continued_import_sends_the_conversation_in_order(
    source: str, api_text: str, tmp_path: Path, agent_dir: Path
) -> None:
    path = TRANSCRIPTS / source
    assert run_import(path, tmp_path).returncode == 0
    _, messages = session_messages(agent_dir)
    prompts = [_text(m["content"]) for m in messages if m["role"] == "user"]
    sent = continue_here(tmp_path, agent_dir)
    assert [_text(m["content"]) for m in sent if m["role"] == "user"] == [*prompts, "carry on"]
    assert sum(1 for m in sent if m["role"] == "tool") == sum(
        1 for m in messages if m["role"] == "toolResult"
    )


def test_from_codex_and_gemini_find_this_folders_transcripts(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    home = tmp_path / "home"
    codex_day = home / ".codex" / "sessions" / "2026" / "05" / "01"
    codex_day.mkdir(parents=True)
    mine = json.loads((TRANSCRIPTS / "codex" / "yoavf-v0.47.0.jsonl").read_text().splitlines()[0])
    mine["payload"]["cwd"] = str(project)
    rest = (TRANSCRIPTS / "codex" / "yoavf-v0.47.0.jsonl").read_text().splitlines()[1:]
    (codex_day / "rollout-mine.jsonl").write_text("\n".join([json.dumps(mine), *rest]) + "\n")
    (codex_day / "rollout-other.jsonl").write_text(
        (TRANSCRIPTS / "codex" / "edouardzemb-v0.94.0.jsonl").read_text()
    )
    chats = home / ".gemini" / "tmp" / hashlib.sha256(str(project).encode()).hexdigest() / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2026-05-01T10-00-x.json").write_text(
        (TRANSCRIPTS / "gemini" / "yoavf-legacy-2025-10.json").read_text()
    )
    env = {**os.environ, "HOME": str(home)}
    env.pop("CODEX_HOME", None)
    for agent, found in (
        ("codex", codex_day / "rollout-mine.jsonl"),
        ("gemini", chats / "session-2026-05-01T10-00-x.json"),
    ):
        done = subprocess.run(
            [SCRIPT, "import", "--from", agent, "--all"], cwd=project, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("Imported ") == 1 and f"Imported {found}" in done.stdout
    nothing = subprocess.run(
        [SCRIPT, "import", "--from", "claude"], cwd=project, env=env, capture_output=True, text=True
    )
    assert nothing.returncode == 0 and nothing.stdout.startswith("No claude transcripts for this folder")
