"""One valid JSON line nested far too deep, anywhere pi-tui reads JSON (issue 28, item 6).

Before, a session file holding one line nested 50,000 deep made ``--list-sessions``, ``-c``,
``--export`` and ``import`` exit 70 (RecursionError in the standard library's parser, which
pi-tui falls back to when orjson refuses a line); a line 900 deep parsed and then broke the code
that walks values. Now such a line is a bad line like any other: skipped with one warning, every
other line kept. Everything runs through the installed ``pi-tui`` script.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.jsonio import MAX_DEPTH
from tests.e2e.test_cli_agent import SCRIPT, configure, pi_tui
from tests.support.model_server import ModelServer, text_reply

CLAUDE = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code"
DEPTHS = [50_000, 900, MAX_DEPTH + 1]
HEADER_ID = "0b7d2a0e-6c1f-4d57-9e37-5f1d2c3b4a59"


def deep_line(depth: int) -> str:
    """Valid JSON: an entry whose data nests ``depth`` levels in all."""
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    return '{"type":"custom","id":"deep0001","parentId":"a1","customType":"x","data":{"v":' + inner + "}}"


def message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        body.update(
            api="openai-completions",
            provider="test",
            model="m",
            usage={"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            stopReason="stop",
        )
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": body,
    }


def write_session(folder: Path, project: Path, depth: int) -> Path:
    """Four turns' worth of messages around one line nested ``depth`` deep."""
    header = {
        "type": "session",
        "version": 3,
        "id": HEADER_ID,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(project),
    }
    lines = [
        json.dumps(header),
        json.dumps(message("u1", None, "user", "first question")),
        json.dumps(message("a1", "u1", "assistant", "first answer")),
        deep_line(depth),
        json.dumps(message("u2", "a1", "user", "second question")),
        json.dumps(message("a2", "u2", "assistant", "second answer")),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-01-01T00-00-00-000Z_{HEADER_ID}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def warnings_about_depth(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if f"nested more than {MAX_DEPTH} levels" in line]


def clean(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr


@pytest.mark.parametrize("depth", DEPTHS)
def test_session_with_a_deep_line_lists_continues_and_exports(
    tmp_path: Path, agent_dir: Path, depth: int
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sessions = tmp_path / "sessions"
    path = write_session(sessions, project, depth)
    folder = ["--session-dir", str(sessions)]

    listed = pi_tui(*folder, "--list-sessions", cwd=project)
    clean(listed)
    assert "4 msgs" in listed.stdout and "first question" in listed.stdout, listed.stdout

    page = tmp_path / "page.html"
    exported = pi_tui("--export", str(path), str(page), cwd=project)
    clean(exported)
    assert len(warnings_about_depth(exported.stderr)) == 1, exported.stderr
    assert f"{path}:4:" in exported.stderr
    html = page.read_text(encoding="utf-8")
    assert "first answer" in html and "second answer" in html

    with ModelServer(text_reply("carried on")) as server:
        configure(agent_dir, server)
        done = pi_tui("--provider", "test", "--model", "m", *folder, "-c", "-p", "hi", cwd=project)
        clean(done)
        assert done.stdout.strip() == "carried on"
        assert len(warnings_about_depth(done.stderr)) == 1, done.stderr
        sent = json.dumps(server.requests[-1].body["messages"])
    for text in ("first question", "first answer", "second question", "second answer", "hi"):
        assert text in sent, text
    lines = path.read_text().splitlines()
    assert lines[3] == deep_line(depth)  # the bad line is left as it was, the turn appended
    assert json.loads(lines[-1])["message"]["role"] == "assistant"


@pytest.mark.parametrize("depth", [50_000, 900])
@pytest.mark.parametrize("where", [0, 12])
def test_import_of_a_claude_transcript_with_a_deep_line(
    tmp_path: Path, agent_dir: Path, depth: int, where: int
) -> None:
    """Among the first lines (where the agent is told from the content) and further down."""
    project = tmp_path / "project"
    project.mkdir()
    original = CLAUDE / "ccl-v2.1.42-rewind-branch.jsonl"
    plain = tmp_path / "plain" / original.name
    plain.parent.mkdir()
    shutil.copy(original, plain)
    lines = original.read_text(encoding="utf-8").splitlines()
    lines.insert(where, '{"type":"user","deep":' + "[" * depth + "]" * depth + "}")
    broken = tmp_path / "broken" / original.name
    broken.parent.mkdir()
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")

    reference = pi_tui("import", str(plain), cwd=project)
    clean(reference)
    done = pi_tui("import", str(broken), cwd=project)
    clean(done)
    assert "1 unreadable lines skipped" in done.stdout, done.stdout
    assert "unreadable" not in reference.stdout
    # Everything else as in the import of the untouched copy.
    assert reference.stdout.split("(", 1)[1] == done.stdout.split("(", 1)[1].replace(
        ", 1 unreadable lines skipped", ""
    )


def test_rpc_answers_a_deep_command_with_an_error_and_goes_on(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(text_reply("fine")) as server:
        configure(agent_dir, server)
        commands = [
            '{"type":"get_state","id":"deep-a","x":' + "[" * 50_000 + "]" * 50_000 + "}",
            '{"type":"get_state","id":"deep-b","x":' + "[" * 900 + "]" * 900 + "}",
            json.dumps({"type": "get_state", "id": "after"}),
        ]
        done = subprocess.run(
            [SCRIPT, "--provider", "test", "--model", "m", "--no-session", "--mode", "rpc"],
            cwd=project,
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert "Traceback" not in done.stderr, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    responses = [answer for answer in answers if answer.get("type") == "response"]
    errors = [answer for answer in responses if answer.get("success") is False]
    assert len(errors) == 2, responses
    assert all("Failed to parse command" in answer["error"] for answer in errors)
    assert any(f"nested more than {MAX_DEPTH}" in answer["error"] for answer in errors)
    (after,) = [answer for answer in responses if answer.get("id") == "after"]
    assert after["success"] is True
