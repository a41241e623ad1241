"""The installed ``pi-tui -p`` with bytes that are not UTF-8 everywhere: argv, @file names, file
names listed by ls/find/grep, bash output. Before, print mode exited 70 ("str is not valid
UTF-8"); now it finishes, saves every line, and the next ``-c -p`` prompt is saved and sent with
every earlier turn. Real process, real files, real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
pytestmark = requires("pi-tui")
TOOLS = b"read,bash,edit,write,grep,find,ls"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    base = os.fsencode(root)
    for name, body in [
        (b"bad\xffname.txt", b"hello from a byte name\n"),
        (b"two\nlines.txt", b"hello\n"),
        (b"esc\x1b[31mred.txt", b"hello \x1b[31mred\n"),
        (b"zzz.txt", b"hello last\n"),
    ]:
        with open(base + b"/" + name, "wb") as handle:
            handle.write(body)
    return root


def pi_tui(*args: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    command = [os.fsencode(SCRIPT), b"--provider", b"test", b"--model", b"m", b"--tools", TOOLS, *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, timeout=60, env=os.environ.copy())


def strict_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of the session file, parsed by orjson, which refuses lone surrogates the way a
    strict provider would: the file must be plain valid UTF-8 JSON."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def tool_texts(lines: list[dict[str, Any]]) -> dict[str, str]:
    return {
        line["message"]["toolName"]: line["message"]["content"][0]["text"]
        for line in lines
        if line["type"] == "message" and line["message"]["role"] == "toolResult"
    }


def test_print_mode_with_bytes_everywhere_saves_every_turn_and_continues(
    agent_dir: Path, project: Path
) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("ls", {})]),
        Scripted(tool_calls=[ToolCallSpec("find", {"pattern": "*.txt"})]),
        Scripted(tool_calls=[ToolCallSpec("grep", {"pattern": "hello"})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": r"printf 'out\xff\xfe\n'"})]),
        Scripted(tool_calls=[ToolCallSpec("read", {"path": "bad\\xffname.txt"})]),
        Scripted(text="done"),
        Scripted(text="second done"),
        Scripted(text="third done"),
    ]
    with ModelServer(*replies) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        first = pi_tui(b"-p", b"@bad\xffname.txt", b"look \xff here", cwd=project)
        assert first.returncode == 0, first.stderr
        assert first.stdout == b"done\n"

        (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
        lines = strict_lines(session)
        user = next(line["message"] for line in lines if line.get("message", {}).get("role") == "user")
        assert user["content"][0]["text"].endswith("hello from a byte name\n\n</file>\nlook \ufffd here")
        assert 'bad\\xffname.txt">' in user["content"][0]["text"]
        texts = tool_texts(lines)
        assert texts["ls"].split("\n\n")[0].split("\n") == [
            "bad\\xffname.txt",
            "esc\\x1b[31mred.txt",
            "two\\nlines.txt",
            "zzz.txt",
        ]
        assert "Output cut" not in texts["ls"]
        assert "two\\nlines.txt" in texts["find"].split("\n") and "zzz.txt" in texts["find"].split("\n")
        assert "bad\\xffname.txt:1:hello from a byte name" in texts["grep"].split("\n")
        assert texts["bash"] == "out\ufffd\ufffd\n"
        assert texts["read"] == "     1\thello from a byte name"
        for request in server.requests:
            orjson.loads(request.raw_body)  # no lone surrogate escape reaches the provider

        second = pi_tui(b"-c", b"-p", b"next \xfe prompt", cwd=project)
        assert second.returncode == 0, second.stderr
        assert second.stdout == b"second done\n"
        lines = strict_lines(session)
        prompts = [
            line["message"]["content"][0]["text"]
            for line in lines
            if line.get("message", {}).get("role") == "user"
        ]
        assert prompts[-1] == "next \ufffd prompt"
        sent = server.requests[-1].body["messages"]
        assert sum(1 for message in sent if message["role"] == "tool") == 5  # every earlier turn

        third = pi_tui(b"--mode", b"json", b"-c", b"-p", b"json \xff too", cwd=project)
        assert third.returncode == 0, third.stderr
        events = [orjson.loads(line) for line in third.stdout.splitlines()]
        assert not [event for event in events if event.get("type") == "subscriber_error"]
        assert third.stderr.decode().splitlines() == [  # said once, nothing else
            "pi-tui: the message is not valid UTF-8 (byte 0xff at character 6); such bytes are sent as \ufffd"
        ]
        assert strict_lines(session)[-2]["message"]["content"][0]["text"] == "json \ufffd too"


def test_a_working_folder_whose_name_is_not_utf8_never_reaches_the_provider_raw(
    agent_dir: Path, tmp_path: Path
) -> None:
    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/proj\xff"))
    folder.mkdir()
    replies = [Scripted(tool_calls=[ToolCallSpec("bash", {"command": "pwd"})]), Scripted(text="done")]
    with ModelServer(*replies) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        result = pi_tui(b"-p", b"where am I?", cwd=folder)
        assert result.returncode == 0, result.stderr
        bodies = [orjson.loads(request.raw_body) for request in server.requests]  # strict: no surrogate
        assert "proj\ufffd" in bodies[0]["messages"][0]["content"]  # the system prompt names the cwd
        tool = next(message for message in bodies[1]["messages"] if message["role"] == "tool")
        assert tool["content"].endswith("proj\ufffd\n")
