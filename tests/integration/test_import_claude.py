"""Issue 18 (Claude Code part): ``pi-tui import`` of every real Claude Code transcript fixture.

Counts are taken from the source lines themselves, independently of the converter: messages,
tool calls and their results, branch points; then the imported session is continued over the
loopback server and the request must hold the source's current branch in order.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.session import SessionManager
from tests.e2e.test_cli_agent import SCRIPT
from tests.support.model_server import ModelServer

CLAUDE = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code"
FILES = sorted(CLAUDE.rglob("*.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def source_counts(path: Path) -> dict[str, int]:
    """What the source holds, counted from its lines: sidechain lines are not the conversation,
    except in a sub-agent's own file (every line a sidechain); a session's sub-agent files
    (``<session>/subagents/agent-*.jsonl``) are imported with it as branches."""
    every = records(path)
    counts = line_counts([r for r in every if not r.get("isSidechain")] or every)
    for sub in sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl")):
        for what, number in line_counts(records(sub)).items():
            counts[what] += number
    return counts


def line_counts(main: list[dict[str, Any]]) -> dict[str, int]:
    by_uuid = {r["uuid"]: r for r in main if r.get("uuid")}
    users = calls = results = assistants = 0
    for r in main:
        content = (r.get("message") or {}).get("content") if isinstance(r.get("message"), dict) else None
        if r.get("type") == "user" and not r.get("isCompactSummary"):
            blocks = (
                content
                if isinstance(content, list)
                else [{"type": "text"}]
                if isinstance(content, str)
                else []
            )
            results += sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result")
            users += any(isinstance(b, dict) and b.get("type") in ("text", "image") for b in blocks)
        if r.get("type") == "assistant":
            # Claude writes one line per block; lines of one API message that follow each other
            # directly are one reply (a tool result in between starts the next one)
            parent = by_uuid.get(r.get("parentUuid") or "")
            same = parent is not None and parent.get("type") == "assistant"
            assistants += not (same and parent["message"].get("id") == r["message"].get("id"))
            if isinstance(content, list):
                calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
    return {"users": users, "assistants": assistants, "tool_calls": calls, "tool_results": results}


def run_import(path: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, "import", str(path)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env or os.environ.copy(),
    )


def imported(agent_dir: Path) -> list[Path]:
    return sorted((agent_dir / "sessions").rglob("*.jsonl"))


@pytest.mark.parametrize("source", FILES, ids=[path.name[:40] for path in FILES])
def test_every_claude_transcript_imports(source: Path, tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = run_import(source, project)
    assert done.returncode == 0, done.stderr
    (session,) = imported(agent_dir)
    assert done.stdout.startswith(f"Imported {source} -> {session}")
    manager = SessionManager.open(session, read_only=True)
    assert manager.take_new_warnings() == []  # every line we wrote is one pi-tui (and pi) reads
    raws = list(manager.iter_raw_entries())
    header = json.loads(session.read_text().splitlines()[0])
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == str(project)
    messages = [r["message"] for r in raws if r["type"] == "message"]
    roles = [m["role"] for m in messages]
    expected = source_counts(source)
    assert roles.count("user") == expected["users"]
    assert roles.count("assistant") == expected["assistants"]
    assert roles.count("toolResult") == expected["tool_results"]
    calls = {
        b["id"]: b["name"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "toolCall"
    }
    assert len(calls) == expected["tool_calls"]
    for message in messages:
        if message["role"] == "toolResult":  # paired: every result answers a call, by id and name
            assert calls[message["toolCallId"]] == message["toolName"]
    # parents always come first, and the file ends on the branch of the source's last message
    seen: set[str] = set()
    for raw in raws:
        assert raw.get("parentId") is None or raw["parentId"] in seen
        seen.add(raw["id"])
    assert raws[0]["type"] == "session_info" and "(Claude Code)" in raws[0]["name"]
    assert raws[1]["customType"] == "import-source" and raws[1]["data"]["path"] == str(source.resolve())


def test_a_rewound_prompt_is_a_branch_and_the_last_one_is_current(tmp_path: Path, agent_dir: Path) -> None:
    source = CLAUDE / "ccl-v2.1.42-rewind-branch.jsonl"
    lines = records(source)
    parent = lines[17]["parentUuid"]
    assert lines[37]["parentUuid"] == parent  # the two prompts SOURCES.md names
    first, second = (lines[i]["message"]["content"] for i in (17, 37))
    assert run_import(source, tmp_path).returncode == 0
    (session,) = imported(agent_dir)
    manager = SessionManager.open(session, read_only=True)
    raws = list(manager.iter_raw_entries())
    children: dict[str | None, list[dict[str, Any]]] = {}
    for raw in raws:
        children.setdefault(raw.get("parentId"), []).append(raw)
    branch_points = {key: value for key, value in children.items() if key is not None and len(value) > 1}
    assert len(branch_points) == 1
    (siblings,) = branch_points.values()
    texts = [s["message"]["content"][0]["text"] for s in siblings]
    assert texts == [_text(first), _text(second)]
    # -c continues on the second prompt's branch
    branch_texts = [
        b.get("text")
        for e in manager.get_branch()
        if e.type == "message"
        for b in e.message.model_dump()["content"]
        if isinstance(b, dict)
    ]
    assert _text(second) in branch_texts and _text(first) not in branch_texts


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def continue_here(project: Path, agent_dir: Path) -> list[dict[str, Any]]:
    """``pi-tui -c -p "carry on"`` in ``project`` over the loopback server: the messages sent."""
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        done = subprocess.run(
            [SCRIPT, "--provider", "test", "--model", "m", "-c", "-p", "carry on"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return server.requests[-1].body["messages"]


def test_a_continued_import_sends_the_current_branch_in_order(tmp_path: Path, agent_dir: Path) -> None:
    source = CLAUDE / "yoavf-pomodoro-v2.0.24.jsonl"
    project = tmp_path / "project"
    project.mkdir()
    assert run_import(source, project).returncode == 0
    # the source's current branch, from its last main line up through parentUuid
    main = [r for r in records(source) if not r.get("isSidechain") and r.get("uuid")]
    by_uuid = {r["uuid"]: r for r in main}
    chain: list[dict[str, Any]] = []
    current = next(r for r in reversed(main) if r.get("type") in ("user", "assistant"))
    while current is not None:
        chain.append(current)
        current = by_uuid.get(current.get("parentUuid") or "")
    chain.reverse()
    prompts = [
        _text(r["message"]["content"])
        for r in chain
        if r["type"] == "user" and _text(r["message"]["content"])
    ]
    replies = [t for r in chain if r["type"] == "assistant" for t in [_text(r["message"]["content"])] if t]
    sent = continue_here(project, agent_dir)
    sent_prompts = [_text(m["content"]) for m in sent if m["role"] == "user"]
    sent_replies = [_text(m["content"]) for m in sent if m["role"] == "assistant" and _text(m["content"])]
    assert sent_prompts[-1] == "carry on"
    assert [p for p in sent_prompts[:-1] if p] == prompts
    # (thinking from another provider travels as text before the reply's own words)
    assert len(sent_replies) >= len(replies)
    position = 0
    for reply in replies:
        while position < len(sent_replies) and reply not in sent_replies[position]:
            position += 1
        assert position < len(sent_replies), f"reply missing or out of order: {reply[:60]!r}"
        position += 1
    tool_messages = [m for m in sent if m["role"] == "tool"]
    assert len(tool_messages) == sum(
        1
        for r in chain
        if r["type"] == "user"
        for b in r["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def test_importing_again_appends_only_what_the_source_gained(tmp_path: Path, agent_dir: Path) -> None:
    full = CLAUDE / "entire-v2.0.76-compaction.jsonl"
    lines = full.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(lines[:20]))
    project = tmp_path / "project"
    project.mkdir()
    assert run_import(growing, project).returncode == 0
    (session,) = imported(agent_dir)
    before = session.read_text().splitlines()
    again = run_import(growing, project)
    assert again.returncode == 0 and again.stdout.startswith("Nothing new")
    assert session.read_text().splitlines() == before
    with growing.open("ab") as stream:  # the other agent keeps writing
        stream.write(b"".join(lines[20:]))
    grown = run_import(growing, project)
    assert grown.returncode == 0 and grown.stdout.startswith(f"Updated {growing}")
    after = session.read_text().splitlines()
    assert after[: len(before)] == before  # appended, never rewritten
    ids = [json.loads(line).get("id") for line in after[1:]]
    assert len(ids) == len(set(ids))
    # the same entries as importing the whole file at once
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(full, tmp_path / "once.jsonl")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent2")}
    assert run_import(tmp_path / "once.jsonl", other, env).returncode == 0
    (whole,) = sorted((tmp_path / "agent2" / "sessions").rglob("*.jsonl"))
    assert _kinds(session.read_text()) == _kinds(whole.read_text())
    # a source cut back (or replaced) is read again into a new session, the old one untouched
    growing.write_bytes(b"".join(lines[:10]))
    redone = run_import(growing, project)
    assert redone.returncode == 0 and redone.stdout.startswith("Imported")
    assert len(imported(agent_dir)) == 2 and session.read_text().splitlines() == after


def _kinds(text: str) -> list[tuple[str, str]]:
    """Each entry's type and message content, sorted (ids and order aside)."""
    lines = [json.loads(line) for line in text.splitlines()[1:]]
    return sorted((line["type"], json.dumps(line.get("message", {}).get("content"))) for line in lines)


def test_import_mistakes_are_one_line(tmp_path: Path, agent_dir: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    for args, message in (
        ([str(bad)], "not a transcript pi-tui knows (Claude Code, Codex or Gemini CLI)"),
        ([str(tmp_path / "missing.jsonl")], "Cannot read"),
        ([], "import takes a transcript file or --from"),
        (["--from", "aider"], "invalid choice"),
    ):
        done = subprocess.run(
            [SCRIPT, "import", *args], cwd=tmp_path, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_from_claude_finds_this_folders_transcripts(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "my.project"
    project.mkdir()
    claude = tmp_path / "claude"
    folder = claude / "projects" / str(project).replace("/", "-").replace(".", "-").replace("_", "-")
    folder.mkdir(parents=True)
    shutil.copy(CLAUDE / "ccl-v1.0.128-image.jsonl", folder / "a.jsonl")
    shutil.copy(CLAUDE / "yoavf-pomodoro-v2.0.24.jsonl", folder / "b.jsonl")
    os.utime(folder / "a.jsonl", (1, 1))
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(claude)}
    newest = subprocess.run(
        [SCRIPT, "import", "--from", "claude"], cwd=project, env=env, capture_output=True, text=True
    )
    assert newest.returncode == 0 and f"Imported {folder / 'b.jsonl'}" in newest.stdout
    every = subprocess.run(
        [SCRIPT, "import", "--from", "claude", "--all"], cwd=project, env=env, capture_output=True, text=True
    )
    assert every.returncode == 0
    assert (
        f"Nothing new in {folder / 'b.jsonl'}" in every.stdout
        and f"Imported {folder / 'a.jsonl'}" in every.stdout
    )
    assert len(imported(agent_dir)) == 2


def test_an_imported_session_continues_with_a_model_that_has_a_key(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    assert run_import(CLAUDE / "ccl-v2.1.42-rewind-branch.jsonl", project).returncode == 0
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        done = subprocess.run(
            [SCRIPT, "-c", "-p", "carry on"], cwd=project, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "echo: carry on"
        assert "which has no API key here" in done.stderr and "anthropic/claude" in done.stderr
        assert len(server.requests) == 1
