"""OpenAI-compatible providers of pi 1.5.2's catalogue: pi-tui sends what the real pi sends.

For each case, the built-in provider's ``baseUrl`` is overridden in models.json (the only change)
to point at the loopback model server, its key comes from the provider's environment variable,
and pi 1.5.2 and pi-tui each answer ``-p hello`` at the same ``--thinking`` level. The two
requests must agree on everything the ``compat`` switches decide: every body field but the
messages and tools (whose texts are each program's own), the roles of the messages and where
Anthropic ``cache_control`` marks go, the fields of a tool (``strict``), and which session
affinity headers carry the session id.

One known difference is pinned rather than compared: pi 1.5.2 marks its four built-in tools for
JSON-schema constrained sampling, so where ``supportsStrictMode`` is on it sends them with
``strict: true`` and schemas made strict; pi-tui's tools carry no such mark yet and go with
``strict: false`` (docs/pi-parity.md). Which tools have the ``strict`` field at all is compared.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_pi_reads_exports import SCRIPT
from tests.support.in_process import Ran, run_main
from tests.support.model_server import ModelServer, RecordedRequest
from tests.support.real_pi import run_pi

pytestmark = pytest.mark.pi_interop

AFFINITY = ("session_id", "x-client-request-id", "x-session-affinity", "x-session-id")
CASES: dict[str, tuple[str, str, str, str, dict[str, str]]] = {
    # name: (provider, model id, --thinking, the provider's key variable, more environment)
    "deepseek": ("deepseek", "deepseek-v4-pro", "high", "DEEPSEEK_API_KEY", {}),
    "zai": ("zai", "glm-5.2", "high", "ZAI_API_KEY", {}),
    "qwen": ("qwen-token-plan", "deepseek-v4-flash", "high", "QWEN_TOKEN_PLAN_API_KEY", {}),
    "openrouter-claude": ("openrouter", "anthropic/claude-fable-5:batch", "high", "OPENROUTER_API_KEY", {}),
    "openrouter-gpt-off": ("openrouter", "openai/gpt-5.4", "off", "OPENROUTER_API_KEY", {}),
    "baseten": ("baseten", "zai-org/GLM-5.2", "high", "BASETEN_API_KEY", {}),
    "together-long": (
        "together",
        "deepseek-ai/DeepSeek-V4-Pro-0813",
        "high",
        "TOGETHER_API_KEY",
        {"PI_CACHE_RETENTION": "long"},
    ),
    "fireworks-long": (
        "fireworks",
        "accounts/fireworks/models/glm-5p3",
        "high",
        "FIREWORKS_API_KEY",
        {"PI_CACHE_RETENTION": "long"},
    ),
    "nvidia-off": ("nvidia", "deepseek-ai/deepseek-v4.1-flash", "off", "NVIDIA_API_KEY", {}),
    "groq": ("groq", "llama-3.1-8b-instant", "off", "GROQ_API_KEY", {}),
    "groq-long": ("groq", "llama-3.1-8b-instant", "off", "GROQ_API_KEY", {"PI_CACHE_RETENTION": "long"}),
}


def shape(request: RecordedRequest) -> dict[str, Any]:
    """What the compat switches decide in one request (texts and session ids left out)."""
    body = dict(request.body)
    messages = body.pop("messages")
    tools = body.pop("tools", None) or []
    if "prompt_cache_key" in body:
        body["prompt_cache_key"] = "<session id>"
    for field in ("max_tokens", "max_completion_tokens"):
        if field in body:
            body[field] = "<number>"  # pi also clamps it to the context window left
    sessions = {request.headers[name] for name in AFFINITY if name in request.headers}
    return {
        "body": body,
        "roles": [message["role"] for message in messages],
        "marks": [_marks(message) for message in messages],
        "tool fields": sorted({key for tool in tools for key in tool["function"]}),
        "last tool mark": tools[-1].get("cache_control") if tools else None,
        "affinity headers": sorted(name for name in AFFINITY if name in request.headers),
        "one session id": len(sessions) <= 1,
    }


def _marks(message: dict[str, Any]) -> Any:
    content = message.get("content")
    if isinstance(content, list):
        return [part.get("cache_control") for part in content if isinstance(part, dict)]
    return "text" if isinstance(content, str) else content


def pi_tui(
    args: list[str], *, agent_dir: Path, cwd: Path, env: dict[str, str], script: bool = False
) -> subprocess.CompletedProcess[str] | Ran:
    """pi-tui's run: through the installed script's entry point in this process
    (tests/support/in_process.py; the Python start-up was most of a case's CPU), through the
    installed script itself with ``script`` (the first case)."""
    full = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    full.update({"PI_CODING_AGENT_DIR": str(agent_dir), **env})
    if not script:
        return run_main(args, cwd=cwd, env=full)
    return subprocess.run([SCRIPT, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", list(CASES))
def test_the_request_matches_pi(case: str, tmp_path: Path) -> None:
    provider, model_id, level, variable, more = CASES[case]
    project = tmp_path / "project"
    project.mkdir()
    ours_dir, pis_dir = tmp_path / "ours", tmp_path / "pis"
    args = ["--provider", provider, "--model", model_id, "--thinking", level, "-p", "hello"]
    with ModelServer() as server:
        for folder in (ours_dir, pis_dir):
            folder.mkdir()
            models = {"providers": {provider: {"baseUrl": server.base_url}}}
            (folder / "models.json").write_text(json.dumps(models))
        env = {"HOME": str(tmp_path), variable: "test-key", **more}
        done = run_pi(args, agent_dir=pis_dir, cwd=project, env=env, pi="1.5.2")
        assert done.returncode == 0, done.stderr
        theirs = server.requests[-1]
        first = case == next(iter(CASES))
        ours_run = pi_tui(args, agent_dir=ours_dir, cwd=project, env=env, script=first)
        assert ours_run.returncode == 0, ours_run.stderr
        ours = server.requests[-1]
    assert ours.headers["authorization"] == theirs.headers["authorization"] == "Bearer test-key"
    assert shape(ours) == shape(theirs)
    ours_strict = {tool["function"].get("strict") for tool in ours.body.get("tools", [])}
    theirs_strict = {tool["function"].get("strict") for tool in theirs.body.get("tools", [])}
    assert ours_strict <= {False, None} and theirs_strict <= {True, None}
