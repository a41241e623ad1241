"""A new session starts at pi's default thinking level, medium (pi 0.73.1 and 1.5.2 alike: their
``DEFAULT_THINKING_LEVEL``), clamped to what the model runs; ``defaultThinkingLevel`` in a
settings file pi wrote still wins.

Each case runs ``pi-tui -p`` without ``--thinking`` against a loopback model server and reads the
request it sent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.interop.test_pi_reads_exports import SCRIPT
from tests.support.model_server import ModelServer


def ask(tmp_path: Path, provider: str, model: str, models: dict[str, Any], **env: str) -> dict[str, Any]:
    """The body of the one request ``pi-tui -p hello`` sends to ``model``."""
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    with ModelServer() as server:
        for entry in models["providers"].values():
            entry["baseUrl"] = server.base_url
        (agent_dir / "models.json").write_text(json.dumps(models))
        full = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
        full |= {"PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(tmp_path), **env}
        done = subprocess.run(
            [SCRIPT, "--provider", provider, "--model", model, "-p", "hello"],
            cwd=project,
            env=full,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 1
        return server.requests[0].body


def test_deepseek_thinks_at_pis_default(tmp_path: Path) -> None:
    """deepseek-v4-pro has no "medium" (its level map says null): pi clamps to high, as here."""
    models = {"providers": {"deepseek": {}}}
    body = ask(tmp_path, "deepseek", "deepseek-v4-pro", models, DEEPSEEK_API_KEY="k")
    assert body["thinking"] == {"type": "enabled"}
    assert body["reasoning_effort"] == "high"


def test_a_claude_model_starts_at_medium(tmp_path: Path) -> None:
    models = {"providers": {"anthropic": {}}}
    body = ask(tmp_path, "anthropic", "claude-sonnet-4-5", models, ANTHROPIC_API_KEY="k")
    assert body["thinking"]["type"] == "enabled"
    assert body["thinking"]["budget_tokens"] == 8192  # medium's budget


def test_a_settings_file_from_pi_073_still_turns_it_off(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "off"}))
    models = {"providers": {"deepseek": {}}}
    body = ask(tmp_path, "deepseek", "deepseek-v4-pro", models, DEEPSEEK_API_KEY="k")
    assert body["thinking"] == {"type": "disabled"}
    assert "reasoning_effort" not in body


def test_a_model_without_reasoning_stays_off(tmp_path: Path) -> None:
    model = {"id": "plain", "name": "plain", "reasoning": False, "input": ["text"], "contextWindow": 128000}
    provider = {"api": "anthropic-messages", "apiKey": "k", "models": [model]}
    body = ask(tmp_path, "loop", "plain", {"providers": {"loop": provider}})
    assert "thinking" not in body and "output_config" not in body


def test_a_session_that_never_recorded_a_level_continues_at_the_default(tmp_path: Path) -> None:
    """pi 1.5.2 continues a session file without a ``thinking_level_change`` (one another program
    wrote) at the default level, not off."""
    models = {"providers": {"anthropic": {}}}
    ask(tmp_path, "anthropic", "claude-sonnet-4-5", models, ANTHROPIC_API_KEY="k")
    (session,) = (tmp_path / "agent").glob("sessions/*/*.jsonl")
    lines = session.read_text().splitlines()
    kept = [line for line in lines if json.loads(line).get("type") != "thinking_level_change"]
    assert len(kept) == len(lines) - 1
    session.write_text("\n".join(kept) + "\n")
    with ModelServer() as server:
        models["providers"]["anthropic"]["baseUrl"] = server.base_url
        (tmp_path / "agent" / "models.json").write_text(json.dumps(models))
        full = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
        full |= {
            "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
            "HOME": str(tmp_path),
            "ANTHROPIC_API_KEY": "k",
        }
        done = subprocess.run(
            [SCRIPT, "-c", "-p", "again"],
            cwd=tmp_path / "project",
            env=full,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    assert request.body["model"] == "claude-sonnet-4-5"
    assert request.body["thinking"]["budget_tokens"] == 8192  # medium, not off
