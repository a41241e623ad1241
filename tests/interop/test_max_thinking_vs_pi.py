"""``--thinking max`` (pi 1.x's new strongest level): pi-tui sends what the real pi 1.5.2 sends
for the same models.json, records the same level in the session, and continues pi's session
that recorded ``max`` at ``max``.

A model has ``max`` only when its ``thinkingLevelMap`` names it; elsewhere the level becomes the
nearest one the model has (stronger first), so the four models below cover: an adaptive Claude
with max (effort "max"), a budget Claude without it (high's budget), a Responses model with
only xhigh (effort "xhigh"), a Chat Completions model without a map (effort "high").
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_pi_reads_exports import SCRIPT
from tests.support.model_server import ModelServer
from tests.support.real_pi import run_pi, write_models_json

pytestmark = pytest.mark.pi_interop

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # name: (API kind, what models.json adds to the model)
    "adaptive-claude": (
        "anthropic-messages",
        {"thinkingLevelMap": {"max": "max"}, "compat": {"forceAdaptiveThinking": True}},
    ),
    "budget-claude": ("anthropic-messages", {}),
    "responses-xhigh": ("openai-responses", {"thinkingLevelMap": {"xhigh": "xhigh", "minimal": None}}),
    "completions-plain": ("openai-completions", {}),
}
THINKING_KEYS = ("thinking", "output_config", "max_tokens", "reasoning", "reasoning_effort")


def models_file(agent_dir: Path, base_url: str, api: str, extra: dict[str, Any]) -> None:
    path = write_models_json(agent_dir, base_url, api, reasoning=True)
    data = json.loads(path.read_text())
    data["providers"]["loop"]["models"][0].update(extra)
    path.write_text(json.dumps(data))


def thinking_part(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in THINKING_KEYS if key in body}


def levels_recorded(agent_dir: Path) -> list[str]:
    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [line["thinkingLevel"] for line in lines if line.get("type") == "thinking_level_change"]


def replies(agent_dir: Path) -> list[dict[str, Any]]:
    (session,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [line["message"] for line in lines if line.get("message", {}).get("role") == "assistant"]


def pi_tui(*args: str, agent_dir: Path, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update({"PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(home), "PI_OFFLINE": "1"})
    return subprocess.run([SCRIPT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", list(CASES))
def test_max_thinking_is_sent_and_recorded_as_pi_does(case: str, tmp_path: Path) -> None:
    api, extra = CASES[case]
    project = tmp_path / "project"
    project.mkdir()
    ours_dir, pis_dir = tmp_path / "ours", tmp_path / "pis"
    args = ["--provider", "loop", "--model", "m", "--thinking", "max", "-p", "hello"]
    with ModelServer() as server:
        for folder in (ours_dir, pis_dir):
            models_file(folder, server.base_url, api, extra)
        done = run_pi(args, agent_dir=pis_dir, cwd=project, env={"HOME": str(tmp_path)}, pi="1.5.2")
        assert done.returncode == 0, done.stderr
        theirs = thinking_part(server.requests[-1].body)
        ours_run = pi_tui(*args, agent_dir=ours_dir, cwd=project, home=tmp_path)
        assert ours_run.returncode == 0, ours_run.stderr
        ours = thinking_part(server.requests[-1].body)
    assert ours == theirs
    assert levels_recorded(ours_dir) == levels_recorded(pis_dir)
    expected = {"adaptive-claude": "max", "responses-xhigh": "xhigh"}.get(case, "high")
    assert levels_recorded(ours_dir) == [expected]
    # each reply names the level it asked for and how long it took, as pi 1.x writes them
    for folder in (ours_dir, pis_dir):
        (reply,) = replies(folder)
        assert reply["thinkingLevel"] == expected
        assert isinstance(reply["durationMs"], int) and reply["durationMs"] >= 0


def test_pi_tui_continues_a_session_pi_recorded_at_max(tmp_path: Path, agent_dir: Path) -> None:
    api, extra = CASES["adaptive-claude"]
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer() as server:
        models_file(agent_dir, server.base_url, api, extra)
        first = ["--provider", "loop", "--model", "m", "--thinking", "max", "-p", "hello"]
        done = run_pi(first, agent_dir=agent_dir, cwd=project, env={"HOME": str(tmp_path)}, pi="1.5.2")
        assert done.returncode == 0, done.stderr
        assert levels_recorded(agent_dir) == ["max"]
        ours = pi_tui("-c", "-p", "next", agent_dir=agent_dir, cwd=project, home=tmp_path)
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout.strip() == "echo: next"
        assert server.requests[-1].body["output_config"] == {"effort": "max"}
    assert levels_recorded(agent_dir) == ["max"]  # the level already recorded: nothing new
