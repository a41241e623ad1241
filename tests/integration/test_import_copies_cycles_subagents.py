"""``pi-tui import`` of a copy with the same session id, of parent links in a circle, and of
Claude Code sub-agent files (issue 28, item 7), through the installed script.

Before: a second transcript with the same ``sessionId`` was appended to the first import's file
(two session headers, duplicate ids, and the next request lost a turn); a parent-uuid cycle lost
every message in it while the summary still counted them; a sub-agent's own file gave a session
without one message, and a session's sub-agent files were not looked at.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.test_cli_agent import SCRIPT, configure, pi_tui
from tests.integration.test_import_claude import imported, run_import
from tests.support.model_server import ModelServer, text_reply

CLAUDE = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code"
SUBAGENTS = CLAUDE / "ccl-v2.1.114-subagents"
PARENT_ID = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
AGENT_FILE = SUBAGENTS / PARENT_ID / "subagents" / "agent-a36efb2a1231c41e2.jsonl"
SESSION_ID = "5d1c7a3e-2b9f-4e61-8a0d-3c4b5e6f7a81"


def line(uuid: str, parent: str | None, role: str, text: str, **extra: Any) -> str:
    """One Claude Code transcript line."""
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message.update(id=f"msg_{uuid}", model="claude-test", stop_reason="end_turn")
    record = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": role,
        "uuid": uuid,
        "sessionId": SESSION_ID,
        "cwd": "/src/app",
        "timestamp": f"2026-03-01T10:00:{len(uuid):02d}.000Z",
        "message": message,
        **extra,
    }
    return json.dumps(record)


def conversation(turns: list[tuple[str, str]]) -> list[str]:
    """A linear transcript: each turn a prompt and its answer."""
    lines, parent = [], None
    for number, (prompt, answer) in enumerate(turns):
        lines.append(line(f"u{number:04d}", parent, "user", prompt))
        lines.append(line(f"a{number:04d}", f"u{number:04d}", "assistant", answer))
        parent = f"a{number:04d}"
    return lines


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def file_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def texts(entries: list[dict[str, Any]]) -> list[str]:
    return [
        block["text"]
        for entry in entries
        if entry.get("type") == "message"
        for block in entry["message"]["content"]
        if block.get("type") == "text"
    ]


def one_header_unique_ids(path: Path) -> list[dict[str, Any]]:
    entries = file_entries(path)
    assert [entry["type"] for entry in entries].count("session") == 1, path
    assert entries[0]["type"] == "session"
    ids = [entry["id"] for entry in entries[1:]]
    assert len(ids) == len(set(ids)), "duplicate entry ids"
    return entries


def test_a_copy_with_the_same_session_id_is_a_session_of_its_own(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    first = write(
        tmp_path / "a" / f"{SESSION_ID}.jsonl", conversation([("q one", "r one"), ("q two", "r two")])
    )
    other = [("q one", "r one"), ("q two, asked elsewhere", "r two elsewhere"), ("q three", "r three")]
    second = write(tmp_path / "b" / f"{SESSION_ID}.jsonl", conversation(other))

    assert run_import(first, project).returncode == 0
    done = run_import(second, project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Imported {second}")
    sessions = imported(agent_dir)
    assert len(sessions) == 2, sessions
    by_source = {}
    for path in sessions:
        entries = one_header_unique_ids(path)
        source = next(entry for entry in entries if entry.get("customType") == "import-source")
        by_source[source["data"]["path"]] = (path, entries)
    first_path, first_entries = by_source[str(first.resolve())]
    second_path, second_entries = by_source[str(second.resolve())]
    assert texts(first_entries) == ["q one", "r one", "q two", "r two"]
    assert texts(second_entries) == [text for turn in other for text in turn]
    assert first_entries[0]["id"] != second_entries[0]["id"]

    # Importing either again adds nothing and never touches the other.
    before = {path: path.read_bytes() for path in sessions}
    for source in (first, second):
        again = run_import(source, project)
        assert again.returncode == 0 and again.stdout.startswith("Nothing new"), again.stdout
    assert {path: path.read_bytes() for path in sessions} == before

    with ModelServer(text_reply("carried on")) as server:
        configure(agent_dir, server)
        session_id = second_entries[0]["id"]
        cont = pi_tui(
            "--provider", "test", "--model", "m", "--session", session_id, "-p", "next", cwd=project
        )
        assert cont.returncode == 0, cont.stderr
        sent = server.requests[-1].body["messages"]
    said = [json.dumps(message["content"]) for message in sent if message["role"] in ("user", "assistant")]
    for number, text in enumerate([text for turn in other for text in turn] + ["next"]):
        assert text in said[number], (text, said)
    assert len(said) == 2 * len(other) + 1
    one_header_unique_ids(second_path)
    assert first_path.read_bytes() == before[first_path]


def test_parent_links_in_a_circle_are_reported_and_the_messages_kept(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    lines = conversation([("q one", "r one")])
    # Two more lines whose parents point at each other: no root leads to them.
    lines.append(line("c-first", "c-second", "user", "circle prompt"))
    lines.append(line("c-second", "c-first", "assistant", "circle answer"))
    source = write(tmp_path / "src" / f"{SESSION_ID}.jsonl", lines)

    done = run_import(source, project)
    assert done.returncode == 0, done.stderr
    warnings = [text for text in done.stderr.splitlines() if "circle" in text]
    assert len(warnings) == 1, done.stderr
    (session,) = imported(agent_dir)
    entries = one_header_unique_ids(session)
    assert sorted(texts(entries)) == sorted(["q one", "r one", "circle prompt", "circle answer"])
    messages = [entry for entry in entries if entry.get("type") == "message"]
    users = sum(entry["message"]["role"] == "user" for entry in messages)
    assistants = sum(entry["message"]["role"] == "assistant" for entry in messages)
    assert f"{users} user and {assistants} assistant messages" in done.stdout, done.stdout
    # The earliest line of the circle starts a branch; every parent comes before its child.
    by_id = {entry["id"]: entry for entry in entries[1:]}
    seen: set[str] = set()
    for entry in entries[1:]:
        assert entry["parentId"] is None or entry["parentId"] in seen
        seen.add(entry["id"])
    answer = next(entry for entry in messages if texts([entry]) == ["circle answer"])
    prompt = by_id[answer["parentId"]]
    assert texts([prompt]) == ["circle prompt"]
    assert by_id[prompt["parentId"]]["customType"] == "import-source"


def test_a_sub_agent_file_on_its_own_is_a_conversation(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for number, source in enumerate([AGENT_FILE, CLAUDE / "ccl-v2.0.55-agent-file.jsonl"], start=1):
        done = run_import(source, project)
        assert done.returncode == 0, done.stderr
        assert len(imported(agent_dir)) == number
    sessions = {tuple(texts(one_header_unique_ids(path))[:1]): path for path in imported(agent_dir)}
    records = [json.loads(text) for text in AGENT_FILE.read_text().splitlines()]
    first_prompt = records[0]["message"]["content"]
    first_prompt = first_prompt if isinstance(first_prompt, str) else first_prompt[0]["text"]
    alone = sessions[(first_prompt,)]
    entries = file_entries(alone)
    roles = [entry["message"]["role"] for entry in entries if entry.get("type") == "message"]
    assert roles.count("user") == 1 and roles.count("assistant") == 8 and roles.count("toolResult") == 7
    # It is not mixed up with its parent session (same sessionId): its own id, not the parent's.
    header = entries[0]
    assert PARENT_ID not in header["id"]


def test_sub_agent_files_become_branches_of_their_parent_session(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    folder = tmp_path / "claude" / "-experiments-worktrees"
    shutil.copytree(SUBAGENTS, folder)
    done = run_import(folder / f"{PARENT_ID}.jsonl", project)
    assert done.returncode == 0, done.stderr
    assert "1 sub-agent conversations as branches" in done.stdout
    (session,) = imported(agent_dir)
    entries = one_header_unique_ids(session)
    by_id = {entry["id"]: entry for entry in entries[1:]}
    sub_records = [json.loads(text) for text in AGENT_FILE.read_text().splitlines()]
    prompt = sub_records[0]["message"]["content"]
    prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]
    (start,) = [entry for entry in entries if entry.get("type") == "message" and texts([entry]) == [prompt]]
    call_holder = by_id[start["parentId"]]
    calls = [block["id"] for block in call_holder["message"]["content"] if block["type"] == "toolCall"]
    assert "toolu_017y4gSjMWeQ3L2DAKiygU2y" in calls  # the Agent call whose result names agent-a36efb2a…
    # The sub-agent's last answer hangs below its prompt: a branch, not the current path.
    last_answer = sub_records[-1]["message"]["content"][0]["text"]
    (end,) = [
        entry for entry in entries if entry.get("type") == "message" and texts([entry]) == [last_answer]
    ]
    chain, current = [], end
    while current["parentId"] is not None:
        chain.append(current["id"])
        current = by_id[current["parentId"]]
    assert start["id"] in chain and call_holder["id"] in chain
    assert entries[-1]["id"] not in chain  # the file ends on the session's own current branch

    # The older layout: agent-<id>.jsonl beside the session, naming it by sessionId.
    old = tmp_path / "claude" / "-src-deep-manifest"
    agent_lines = (CLAUDE / "ccl-v2.0.55-agent-file.jsonl").read_text().splitlines()
    parent_session = json.loads(agent_lines[0])["sessionId"]
    write(old / "agent-c8d9b115.jsonl", agent_lines)
    task = {
        "parentUuid": "p-user",
        "isSidechain": False,
        "type": "assistant",
        "uuid": "p-task",
        "sessionId": parent_session,
        "timestamp": "2025-11-29T15:24:50.000Z",
        "message": {
            "id": "msg_task",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "content": [
                {"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"prompt": "explore"}}
            ],
        },
    }
    result = {
        "parentUuid": "p-task",
        "isSidechain": False,
        "type": "user",
        "uuid": "p-result",
        "sessionId": parent_session,
        "timestamp": "2025-11-29T15:30:00.000Z",
        "toolUseResult": {"status": "completed", "agentId": "c8d9b115"},
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_task", "content": "explored"}],
        },
    }
    first = json.loads(line("p-user", None, "user", "look at the code"))
    first["sessionId"] = parent_session
    write(old / f"{parent_session}.jsonl", [json.dumps(first), json.dumps(task), json.dumps(result)])
    done = run_import(old / f"{parent_session}.jsonl", project)
    assert done.returncode == 0, done.stderr
    assert "1 sub-agent conversations as branches" in done.stdout
    newest = [path for path in imported(agent_dir) if path != session]
    (old_session,) = newest
    entries = one_header_unique_ids(old_session)
    by_id = {entry["id"]: entry for entry in entries[1:]}
    opening = json.loads(agent_lines[0])["message"]["content"][0]["text"]
    (start,) = [entry for entry in entries if entry.get("type") == "message" and texts([entry]) == [opening]]
    holder = by_id[start["parentId"]]
    assert [block["id"] for block in holder["message"]["content"] if block["type"] == "toolCall"] == [
        "toolu_task"
    ]


def test_import_warnings_are_one_line_each(tmp_path: Path, agent_dir: Path) -> None:
    """A cycle is a warning, not an error: exit 0, and no traceback."""
    project = tmp_path / "project"
    project.mkdir()
    lines = [line("x1", "x2", "user", "one"), line("x2", "x1", "assistant", "two")]
    source = write(tmp_path / "src" / "circle.jsonl", lines)
    done = subprocess.run(
        [SCRIPT, "import", str(source)], cwd=project, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(f"pi-tui: {source}: ") and "circle" in warning
