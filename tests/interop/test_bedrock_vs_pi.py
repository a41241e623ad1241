"""Amazon Bedrock: pi-tui sends what the real pi 1.5.2 (its AWS SDK) sends.

For each case, amazon-bedrock's ``baseUrl`` is overridden in models.json (the only change) to
point at the loopback Bedrock of tests/support/bedrock_server.py, AWS keys with a session token
and a region come from the environment, and pi 1.5.2 and pi-tui each answer ``-p hello there``
at the same ``--thinking`` level. Both requests must carry a SigV4 signature the server
recomputes on its own (so the server's check is itself held to the AWS SDK's signing), go to the
same path, and agree on the body: its keys in order, the messages, where cache points go, the
inference config and the thinking fields (the system prompt's and the tools' texts are each
program's own).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.bedrock_server import BedrockServer, Keys, Recorded, load_script
from tests.support.in_process import Ran, run_main
from tests.support.real_pi import run_pi

pytestmark = pytest.mark.pi_interop

KEYS = Keys("AKIDINTEROPTEST", "interop/secret+key", session_token="interop-session", region="eu-west-3")
CASES: dict[str, tuple[str, str, dict[str, str]]] = {
    # name: (model id, --thinking, more environment)
    "claude-budget": ("anthropic.claude-sonnet-4-5-20250929-v1:0", "medium", {}),
    "claude-off-long-cache": (
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "off",
        {"PI_CACHE_RETENTION": "long"},
    ),
    "claude-adaptive-binding": ("anthropic.claude-opus-4-7", "xhigh", {}),
    "nova": ("amazon.nova-pro-v1:0", "off", {}),
    "gpt": ("global.openai.gpt-5.6-sol", "minimal", {}),
    "deepseek": ("deepseek.v3.2", "high", {}),
}


FIRST = sorted(CASES)[0]
"""The case whose pi-tui runs the installed script; the others run its entry point in process."""


def shape(request: Recorded) -> dict[str, Any]:
    body = request.json
    system = [{"text": "..."} if "text" in block else block for block in body.get("system", [])]
    tools = body.get("toolConfig", {}).get("tools", [])
    return {
        "path": request.path,
        "keys": list(body),
        "messages": body["messages"],
        "system": system,
        "inferenceConfig": body.get("inferenceConfig"),
        "additionalModelRequestFields": body.get("additionalModelRequestFields"),
        "tool names": sorted(tool["toolSpec"]["name"] for tool in tools),
    }


def env_for(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {key: "" for key in os.environ if key.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID=KEYS.access_key_id,
        AWS_SECRET_ACCESS_KEY=KEYS.secret_access_key,
        AWS_SESSION_TOKEN=KEYS.session_token or "",
        AWS_REGION=KEYS.region,
        AWS_BEDROCK_FORCE_HTTP1="1",  # pi's SDK speaks HTTP/2 unless told; the server is HTTP/1.1
        HOME=str(home),
        **extra,
    )
    return env


@pytest.mark.parametrize("case", sorted(CASES))
def test_pi_tui_sends_what_pi_sends(case: str, tmp_path: Path) -> None:
    model_id, thinking, extra = CASES[case]
    args = ["-p", "--no-session", "--provider", "amazon-bedrock", "--model", model_id, "--thinking", thinking]
    shapes = []
    done: subprocess.CompletedProcess[str] | Ran
    for program in ("pi", "pi-tui"):
        agent = tmp_path / program / "agent"
        agent.mkdir(parents=True)
        with BedrockServer([load_script("text.json")], keys=KEYS) as server:
            models = {"providers": {"amazon-bedrock": {"baseUrl": server.base_url}}}
            (agent / "models.json").write_text(json.dumps(models))
            env = env_for(tmp_path / program / "home", extra)
            if program == "pi":
                done = run_pi([*args, "hello there"], agent_dir=agent, cwd=tmp_path, env=env, pi="1.5.2")
            elif case != FIRST:  # through the script's entry point in this process (in_process.py)
                full = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
                full.update({k: v for k, v in env.items() if v}, PI_CODING_AGENT_DIR=str(agent))
                done = run_main([*args, "hello there"], cwd=tmp_path, env=full)
            else:
                full = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
                full.update({k: v for k, v in env.items() if v}, PI_CODING_AGENT_DIR=str(agent))
                done = subprocess.run(
                    ["pi-tui", *args, "hello there"],
                    env=full,
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
        assert done.returncode == 0, f"{program}: {done.stderr[-2000:]}"
        assert done.stdout.strip() == "Hello from Bédrock 🪨", program
        (request,) = server.requests
        assert request.auth_ok, f"{program}: {request.auth_problem}"
        assert request.headers["x-amz-security-token"] == KEYS.session_token
        shapes.append(shape(request))
    pi_shape, ours = shapes
    assert ours == pi_shape


def _results_as_dots(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results' texts are each program's own tool output: compare their shape only."""
    out = []
    for message in messages:
        content = []
        for block in message["content"]:
            if "toolResult" in block:
                result = dict(block["toolResult"])
                result["content"] = [
                    {"text": "..."} if "text" in part else part for part in result["content"]
                ]
                block = {"toolResult": result}
            content.append(block)
        out.append({**message, "content": content})
    return out


def test_a_tool_turn_goes_back_as_pi_sends_it(tmp_path: Path) -> None:
    """Thinking with its signature, text and a tool call, then the tool's result: the second
    request of the turn carries them back the same way from both programs."""
    model_id = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    args = ["-p", "--no-session", "--provider", "amazon-bedrock", "--model", model_id, "--thinking", "low"]
    (tmp_path / "note.txt").write_text("the note\n")
    seconds = []
    for program in ("pi", "pi-tui"):
        agent = tmp_path / program / "agent"
        agent.mkdir(parents=True)
        with BedrockServer([load_script("read_call.json"), load_script("text.json")], keys=KEYS) as server:
            (agent / "models.json").write_text(
                json.dumps({"providers": {"amazon-bedrock": {"baseUrl": server.base_url}}})
            )
            env = env_for(tmp_path / program / "home", {})
            if program == "pi":
                done = run_pi([*args, "read note.txt"], agent_dir=agent, cwd=tmp_path, env=env, pi="1.5.2")
            else:
                full = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
                full.update({k: v for k, v in env.items() if v}, PI_CODING_AGENT_DIR=str(agent))
                done = subprocess.run(
                    ["pi-tui", *args, "read note.txt"],
                    env=full,
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
        assert done.returncode == 0, f"{program}: {done.stderr[-2000:]}"
        assert len(server.requests) == 2 and all(r.auth_ok for r in server.requests), program
        second = server.requests[1].json
        seconds.append((_results_as_dots(second["messages"]), second.get("additionalModelRequestFields")))
    assert seconds[1] == seconds[0]
