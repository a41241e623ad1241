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
from tests.support.real_pi import run_pi


def import_then_continue(
    source: Path, cwd: Path, agent_dir: Path, home: Path
) -> tuple[list[dict], str, list[dict]]:
    """pi-tui imports ``source`` in ``cwd``; the real pi continues the new session with "go on"
    against a loopback model. The imported entries (before pi added its own), what pi printed,
    the messages pi sent."""
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(home), "PI_OFFLINE": "1"}
    done = subprocess.run([SCRIPT, "import", str(source)], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    imported = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    with ModelServer() as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        continued = run_pi(
            ["--provider", "test", "--model", "m", "--session", str(session), "-p", "go on"],
            agent_dir=agent_dir,
            cwd=cwd,
            env={"HOME": str(home), "PI_SKIP_VERSION_CHECK": "1"},
        )
        assert continued.returncode == 0, continued.stderr
        sent = server.requests[-1].body["messages"]
    return imported, continued.stdout, sent


@pytest.mark.parametrize("name", ["ccl-v2.1.42-rewind-branch.jsonl", "entire-v2.0.76-compaction.jsonl"])
def test_pi_continues_an_imported_claude_session(name: str, tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source = CLAUDE / name
    _entries, printed, sent = import_then_continue(source, project, agent_dir, tmp_path)
    assert printed.strip() == "echo: go on"
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
    source = CLAUDE.parent / name
    entries, _printed, sent = import_then_continue(source, tmp_path, agent_dir, tmp_path)
    messages = [entry["message"] for entry in entries if entry["type"] == "message"]
    ours = [_text(message["content"]) for message in messages if message["role"] == "user"]
    assert [_text(m["content"]) for m in sent if m["role"] == "user"] == [*ours, "go on"]
    assert sum(1 for m in sent if m["role"] == "tool") == sum(
        1 for m in messages if m["role"] == "toolResult"
    )
