"""Lone surrogates (an emoji cut in half by Node) never reach a provider, and stay in the file.

pi-tui continues ``tests/data/surrogates/lone-surrogates-everywhere.jsonl`` against the
loopback model server for each API kind: the lone halves are gone from the texts, thinking and
tool result (a tool call's arguments go as they are, as pi sends them; another model's
thinking is not sent at all, as in pi 1.5.2), the whole pair is kept
as its one character, and the session file still holds every ``\\ud83d``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.support.model_server import API_KINDS, ModelServer

SOURCE = Path(__file__).resolve().parents[1] / "data" / "surrogates" / "lone-surrogates-everywhere.jsonl"
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


SURROGATE = re.compile("[\ud800-\udfff]")


def strings(value: object) -> list[str]:
    """Every string inside a parsed JSON value (keys too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (key, *strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def session_copy(folder: Path, cwd: Path) -> Path:
    lines = SOURCE.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(cwd)
    path = folder / "s.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]) + b"\n")
    return path


def models(agent_dir: Path, base_url: str, api: str) -> None:
    model = {"id": "m", "name": "m", "reasoning": False, "input": ["text"], "contextWindow": 128000}
    provider = {"baseUrl": base_url, "api": api, "apiKey": "k", "models": [model]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"loop": provider}}))


@pytest.mark.parametrize("api", API_KINDS)
def test_lone_surrogates_are_removed_from_the_request_and_kept_on_disk(
    api: str, tmp_path: Path, agent_dir: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    session = session_copy(tmp_path, project)
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env |= {"PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(tmp_path), "PI_OFFLINE": "1"}
    with ModelServer() as server:
        models(agent_dir, server.base_url, api)
        done = subprocess.run(
            [SCRIPT, "--provider", "loop", "--model", "m", "--session", str(session), "-p", "again"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        raw = server.requests[-1].raw_body
    body = json.loads(raw)
    # The one surrogate left is the tool call's argument, which pi 1.5.2 sends as it is too
    # (checked by hand: its anthropic body holds "content":"hi \\ud83d" in the tool_use input).
    assert {text for text in strings(body) if SURROGATE.search(text)} <= {"hi \ud83d"}
    if api.startswith("openai"):  # arguments travel as a JSON text: the body itself is strict
        orjson.loads(raw)
    sent = json.dumps(body, ensure_ascii=False)
    assert "Say hi with an emoji: " in sent  # the user's text, its half emoji gone
    assert "Hi  and a whole one \U0001f600; writing it." in sent
    # the thinking was another model's (anthropic's): pi 1.5.2 sends none of it to this one
    assert "They want" not in sent
    assert "Wrote hi.txt: hi  " in sent
    stored = session.read_bytes()
    assert stored.count(b"\\ud83d") >= 4 and b"\\ude00" in stored  # the file as it was, plus the turn
    assert stored.startswith(SOURCE.read_bytes().split(b"\n", 1)[0][:20])
