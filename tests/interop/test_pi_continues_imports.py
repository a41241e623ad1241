"""Issue 18: a Claude Code transcript imported by pi-tui opens in the real pi 0.73.1 and is
continued there: pi sends the imported branch's prompts and replies, in order, with its own."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_import_claude import CLAUDE, _text, records
from tests.interop.test_pi_reads_exports import SCRIPT
from tests.support.model_server import ModelServer
from tests.support.real_pi import pi_cli


@pytest.mark.parametrize("name", ["ccl-v2.1.42-rewind-branch.jsonl", "entire-v2.0.76-compaction.jsonl"])
def test_pi_continues_an_imported_claude_session(name: str, tmp_path: Path, agent_dir: Path) -> None:
    command = pi_cli()
    project = tmp_path / "project"
    project.mkdir()
    source = CLAUDE / name
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(tmp_path), "PI_OFFLINE": "1"}
    done = subprocess.run(
        [SCRIPT, "import", str(source)], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        continued = subprocess.run(
            [*command, "--provider", "test", "--model", "m", "--session", str(session), "-p", "go on"],
            cwd=project,
            env={**env, "PI_SKIP_VERSION_CHECK": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert continued.returncode == 0, continued.stderr
        assert continued.stdout.strip() == "echo: go on"
        sent = server.requests[-1].body["messages"]
    sent_prompts = [_text(m["content"]) for m in sent if m["role"] == "user"]
    assert sent_prompts[-1] == "go on"
    main = [r for r in records(source) if not r.get("isSidechain") and r.get("type") == "user"]
    prompts = [
        _text(r["message"]["content"])
        for r in main
        if not r.get("isCompactSummary") and _text(r["message"]["content"])
    ]
    if "compaction" not in name:  # the source's last prompt is the last one before pi's own
        assert sent_prompts[-2] == prompts[-1]
        return
    # pi sends the imported compaction's summary in place of everything before it
    summary = _text(next(r for r in records(source) if r.get("isCompactSummary"))["message"]["content"])
    assert summary[:200] in sent_prompts[0]
    assert not set(prompts) & set(sent_prompts)


@pytest.mark.parametrize("name", ["codex/openprintkit-v0.34.0.jsonl", "gemini/entire-legacy-v0.23.0.json"])
def test_pi_continues_an_imported_codex_or_gemini_session(name: str, tmp_path: Path, agent_dir: Path) -> None:
    command = pi_cli()
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(tmp_path), "PI_OFFLINE": "1"}
    source = CLAUDE.parent / name
    done = subprocess.run(
        [SCRIPT, "import", str(source)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    messages = [entry["message"] for entry in entries if entry["type"] == "message"]
    ours = [_text(message["content"]) for message in messages if message["role"] == "user"]
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        continued = subprocess.run(
            [*command, "--provider", "test", "--model", "m", "--session", str(session), "-p", "go on"],
            cwd=tmp_path,
            env={**env, "PI_SKIP_VERSION_CHECK": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert continued.returncode == 0, continued.stderr
        sent = server.requests[-1].body["messages"]
    assert [_text(m["content"]) for m in sent if m["role"] == "user"] == [*ours, "go on"]
    assert sum(1 for m in sent if m["role"] == "tool") == sum(
        1 for m in messages if m["role"] == "toolResult"
    )
