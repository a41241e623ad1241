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


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_tool_arguments_nested_too_deep_never_make_a_line_pi_tui_cannot_read(
    tmp_path: Path, agent_dir: Path
) -> None:
    """A model's tool call whose arguments nest past the limit is treated as a call without
    arguments: the tool says what is missing, and every line written can be read back (before,
    the line was written and then skipped on reading, losing the assistant's turn)."""
    from tests.support.model_server import Scripted, ToolCallSpec

    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# Demo\n")
    sessions = tmp_path / "sessions"
    deep_call = ToolCallSpec("read", {"path": "README.md", "junk": nested(MAX_DEPTH + 50)})
    with ModelServer(Scripted(tool_calls=[deep_call]), text_reply("done")) as server:
        configure(agent_dir, server)
        done = pi_tui(
            "--provider", "test", "--model", "m", "--session-dir", str(sessions), "-p", "go", cwd=project
        )
        clean(done)
    (path,) = sorted(sessions.glob("*.jsonl"))
    from pi_tui import jsonio

    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        jsonio.loads(line)  # every line we wrote is one we (and pi) read
    roles = [json.loads(line)["message"]["role"] for line in lines if '"type":"message"' in line]
    assert roles == ["user", "assistant", "toolResult", "assistant"], roles

    with ModelServer(text_reply("again")) as server:
        configure(agent_dir, server)
        again = pi_tui(
            "--provider",
            "test",
            "--model",
            "m",
            "--session-dir",
            str(sessions),
            "-c",
            "-p",
            "more",
            cwd=project,
        )
        clean(again)
        assert not warnings_about_depth(again.stderr), again.stderr
        sent = server.requests[-1].body["messages"]
    assert any(message.get("role") == "tool" for message in sent), sent


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("models.json", "agent"),
        ("settings.json", "agent"),
        ("trust.json", "agent"),
        ("settings.json", "project"),
    ],
)
def test_config_files_nested_too_deep_are_a_clear_message(
    tmp_path: Path, agent_dir: Path, name: str, where: str
) -> None:
    """A deep config file is a broken file: one line naming it (exit 2 when pi-tui cannot start
    without it, a warning when it can), never exit 70."""
    project = tmp_path / "project"
    project.mkdir()
    folder = agent_dir if where == "agent" else project / ".agent"
    folder.mkdir(parents=True, exist_ok=True)
    if where == "project":
        (agent_dir / "trust.json").write_text(json.dumps({str(project.resolve()): True}))
    else:  # a project resource, so that trust.json is consulted
        (project / ".agent").mkdir()
        (project / ".agent" / "settings.json").write_text("{}")
    with ModelServer(text_reply("fine")) as server:
        configure(agent_dir, server)
        (folder / name).write_text('{"x":' + "[" * 50_000 + "]" * 50_000 + "}")
        done = pi_tui("--provider", "test", "--model", "m", "--no-session", "-p", "hi", cwd=project)
    assert done.returncode in (0, 2), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    if done.returncode == 2:
        assert name in done.stderr and "nested more than" in done.stderr, done.stderr
    else:
        assert done.stdout.strip() == "fine"


def test_a_deep_keybindings_or_theme_file_falls_back_with_one_line(tmp_path: Path) -> None:
    from pi_tui.tui.keybindings import load_keybindings
    from pi_tui.view.theme import load_theme

    deep = '{"x":' + "[" * 50_000 + "]" * 50_000 + "}"
    (tmp_path / "keybindings.json").write_text(deep)
    keys = load_keybindings(tmp_path)
    assert len(keys.problems) == 1 and "nested more than" in keys.problems[0], keys.problems
    (tmp_path / "mine.json").write_text(deep)
    theme = load_theme(tmp_path / "mine.json")
    assert any("nested more than" in problem for problem in theme.problems), theme.problems
