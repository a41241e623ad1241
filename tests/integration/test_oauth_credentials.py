"""A pi user's subscription logins (auth.json ``"type": "oauth"``, as pi 1.5.2 writes them) work in
pi-tui: the installed ``pi-tui`` sends the token the way pi does to a loopback model server,
renews an expired one at a loopback token server (``PI_TUI_OAUTH_ENDPOINTS``) and writes it back
into pi's own auth.json so pi keeps working (the real pi 1.5.2 reads the renewed token), and a
refused renewal is one line that leaves the file as it was."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.anthropic import CLAUDE_CODE_IDENTITY
from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES
from pi_tui.ai.oauth.providers import ENDPOINTS_ENV
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, ToolCallSpec
from tests.support.real_pi import run_pi
from tests.support.token_server import ACCOUNT_ID, TokenServer

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
HOUR_MS = 3600 * 1000
GROQ = {"type": "api_key", "key": "gsk_kept_0123"}
CODEX = {"type": "oauth", "access": "a.b.c", "refresh": "rt-codex", "expires": 1, "accountId": "acct-old"}


def now_ms() -> int:
    return int(time.time() * 1000)


def anthropic_login(expires: int, access: str = "sk-ant-oat01-saved") -> dict[str, Any]:
    """What pi's Anthropic login and refresh store (pi-ai/dist/auth/oauth/anthropic.js)."""
    return {"type": "oauth", "refresh": "sk-ant-ort01-saved", "access": access, "expires": expires}


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    path.chmod(0o600)


def run(
    tmp_path: Path, *args: str, endpoints: Path | None = None, **variables: str
) -> subprocess.CompletedProcess[str]:
    """The installed pi-tui, print mode, no key in its environment but ``variables``."""
    env = {key: value for key, value in os.environ.items() if key not in KEY_ENV_VAR_NAMES}
    env = {key: value for key, value in env.items() if not key.endswith("_API_KEY")}
    env.update(variables)
    env["HOME"] = str(tmp_path)
    if endpoints is not None:
        env[ENDPOINTS_ENV] = str(endpoints)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return subprocess.run(
        [SCRIPT, "--no-session", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def point_at(agent_dir: Path, server: ModelServer, **providers: dict[str, Any]) -> None:
    """models.json: built-in providers sent to the loopback server (``baseUrl`` only)."""
    data = {
        "providers": {
            name.replace("_", "-"): {"baseUrl": server.base_url, **extra} for name, extra in providers.items()
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(data))


def sent_as_claude_code(request: RecordedRequest, token: str) -> None:
    assert request.header("authorization") == f"Bearer {token}"
    assert request.header("x-api-key") is None
    assert (request.header("anthropic-beta") or "").split(",")[:2] == [
        "claude-code-20250219",
        "oauth-2025-04-20",
    ]
    assert (request.header("user-agent") or "").startswith("claude-cli/")
    assert request.header("x-app") == "cli"
    assert request.body["system"][0]["text"] == CLAUDE_CODE_IDENTITY
    assert len(request.body["system"]) == 2  # the system prompt follows the identity


def test_a_pi_login_is_used_as_claude_code_is(tmp_path: Path, agent_dir: Path) -> None:
    pi_dir = tmp_path / "pi-agent"  # pi's folder, read beneath ours (conftest)
    write_json(pi_dir / "auth.json", {"anthropic": anthropic_login(now_ms() + HOUR_MS)})
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("the notes say 42\n")
    read = Scripted(tool_calls=[ToolCallSpec(name="Read", arguments={"path": "notes.txt"})])
    with ModelServer(read) as server:
        point_at(agent_dir, server, anthropic={})
        done = run(tmp_path, "--provider", "anthropic", "-p", "what do the notes say?")
    assert done.returncode == 0, done.stderr
    first, second = server.requests[:2]
    sent_as_claude_code(first, "sk-ant-oat01-saved")
    assert "Read" in [tool["name"] for tool in first.body["tools"]]
    assert "read" not in [tool["name"] for tool in first.body["tools"]]
    # the model's "Read" ran our read tool, and the history says "Read" again
    sent_as_claude_code(second, "sk-ant-oat01-saved")
    # the default model (claude-opus-5-5) takes its effort as a system message after the history,
    # at pi's default level, medium
    assert second.body["messages"][-1] == {
        "role": "system",
        "content": [],
        "output_config": {"effort": "medium"},
    }
    assistant, results = second.body["messages"][-3:-1]
    assert assistant["content"][-1]["name"] == "Read"
    assert "the notes say 42" in json.dumps(results["content"])


def test_with_only_a_login_and_no_provider_chosen_the_login_is_the_one_used(
    tmp_path: Path, agent_dir: Path
) -> None:
    write_json(tmp_path / "pi-agent" / "auth.json", {"anthropic": anthropic_login(now_ms() + HOUR_MS)})
    with ModelServer() as server:
        point_at(agent_dir, server, anthropic={})
        done = run(tmp_path, "-p", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "echo: hello"  # not the offline demo model
    sent_as_claude_code(server.requests[-1], "sk-ant-oat01-saved")


def test_a_token_in_anthropic_oauth_token_is_sent_the_same_way(tmp_path: Path, agent_dir: Path) -> None:
    with ModelServer() as server:
        point_at(agent_dir, server, anthropic={})
        done = run(tmp_path, "--provider", "anthropic", "-p", "hi", ANTHROPIC_OAUTH_TOKEN="sk-ant-oat01-env")
        assert done.returncode == 0, done.stderr
        sent_as_claude_code(server.requests[-1], "sk-ant-oat01-env")
        # ANTHROPIC_AUTH_TOKEN comes first in pi's order, as a plain bearer (a gateway's token)
        done = run(
            tmp_path,
            "--provider",
            "anthropic",
            "-p",
            "hi",
            ANTHROPIC_OAUTH_TOKEN="sk-ant-oat01-env",
            ANTHROPIC_AUTH_TOKEN="gateway-token",
        )
        assert done.returncode == 0, done.stderr
        request = server.requests[-1]
    assert request.header("authorization") == "Bearer gateway-token"
    assert request.header("x-api-key") is None
    assert "oauth-2025-04-20" not in (request.header("anthropic-beta") or "")
    assert CLAUDE_CODE_IDENTITY not in json.dumps(request.body.get("system", []))


def renew_in_pis_file(tmp_path: Path, agent_dir: Path) -> Path:
    """pi's auth.json with an expired Anthropic login among other entries, renewed by one
    ``pi-tui -p`` run; checks what the token server and model server saw and what the file now
    holds. Returns pi's auth.json."""
    pi_auth = tmp_path / "pi-agent" / "auth.json"
    write_json(pi_auth, {"groq": GROQ, "anthropic": anthropic_login(now_ms() - 1000), "openai-codex": CODEX})
    pi_auth.chmod(0o644)
    ours = agent_dir / "auth.json"
    write_json(ours, {"mistral": {"type": "api_key", "key": "mistral-kept"}})
    ours_before = ours.read_bytes()
    with TokenServer() as tokens, ModelServer() as server:
        point_at(agent_dir, server, anthropic={})
        started = now_ms()
        done = run(
            tmp_path, "--provider", "anthropic", "-p", "hello", endpoints=tokens.endpoints_file(tmp_path)
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "echo: hello"
        [grant] = tokens.seen
        assert grant.body == {
            "grant_type": "refresh_token",
            "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
            "refresh_token": "sk-ant-ort01-saved",
        }
        sent_as_claude_code(server.requests[-1], "sk-ant-oat01-renewed-1")
    saved = json.loads(pi_auth.read_text())
    assert list(saved) == ["groq", "anthropic", "openai-codex"]
    assert saved["groq"] == GROQ and saved["openai-codex"] == CODEX
    renewed = saved["anthropic"]
    assert list(renewed) == ["type", "refresh", "access", "expires"]
    assert renewed["access"] == "sk-ant-oat01-renewed-1" and renewed["refresh"] == "sk-ant-ort01-renewed-1"
    assert renewed["expires"] >= started + 28800_000 - 300_000
    assert stat.S_IMODE(pi_auth.stat().st_mode) == 0o600
    assert not pi_auth.with_name("auth.json.lock").exists()
    assert ours.read_bytes() == ours_before
    return pi_auth


def test_an_expired_login_is_renewed_into_pis_own_file(tmp_path: Path, agent_dir: Path) -> None:
    renew_in_pis_file(tmp_path, agent_dir)


@pytest.mark.pi_interop
def test_pi_reads_the_login_pi_tui_renewed(tmp_path: Path, agent_dir: Path) -> None:
    pi_auth = renew_in_pis_file(tmp_path, agent_dir)
    # pi itself takes the renewed token from its file, without renewing it again
    pi = run_pi(
        ["auth", "print-bearer-token", "--provider", "anthropic"],
        agent_dir=pi_auth.parent,
        cwd=tmp_path,
        pi="1.5.2",
    )
    assert pi.returncode == 0, pi.stderr
    assert pi.stdout.strip() == "sk-ant-oat01-renewed-1"


def test_a_refused_renewal_is_one_line_and_keeps_the_file(tmp_path: Path, agent_dir: Path) -> None:
    auth = agent_dir / "auth.json"
    write_json(auth, {"anthropic": anthropic_login(now_ms() - 1000), "groq": GROQ})
    before = auth.read_bytes()
    with TokenServer(refuse={"anthropic"}) as tokens, ModelServer() as server:
        point_at(agent_dir, server, anthropic={})
        done = run(
            tmp_path, "--provider", "anthropic", "-p", "hello", endpoints=tokens.endpoints_file(tmp_path)
        )
        assert len(tokens.seen) == 1
        assert server.requests == []
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    # the whole line: no hint about the offline demo, which is for a missing key
    assert lines[0].endswith(
        "Anthropic login expired and could not be renewed (HTTP 400: invalid_grant): sign in again with "
        "/login anthropic (pi-tui auth login anthropic from a shell)"
    )
    assert "Traceback" not in done.stderr
    assert auth.read_bytes() == before


def test_copilot_renews_and_talks_to_the_api_its_token_names(tmp_path: Path, agent_dir: Path) -> None:
    login = {
        "type": "oauth",
        "refresh": "ghu_github_token",
        "access": "tid=old;exp=1;proxy-ep=proxy.individual.githubcopilot.com",
        "expires": now_ms() - 1000,
        "availableModelIds": ["loop-claude"],
    }
    write_json(agent_dir / "auth.json", {"github-copilot": login})
    model = {
        "id": "loop-claude",
        "name": "Loop Claude",
        "api": "anthropic-messages",
        "contextWindow": 200000,
        "maxTokens": 8192,
    }
    with TokenServer() as tokens, ModelServer() as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"github-copilot": {"models": [model]}}})
        )
        endpoints = tokens.endpoints_file(tmp_path, github_copilot={"copilotApiUrl": server.base_url})
        done = run(
            tmp_path,
            "--provider",
            "github-copilot",
            "--model",
            "loop-claude",
            "-p",
            "hi",
            endpoints=endpoints,
        )
        assert done.returncode == 0, done.stderr
        [grant] = tokens.seen
        assert grant.headers["authorization"] == "Bearer ghu_github_token"
        request = server.requests[-1]
    renewed = json.loads((agent_dir / "auth.json").read_text())["github-copilot"]
    assert renewed["access"].startswith("tid=renewed-1;")
    assert renewed["availableModelIds"] == ["loop-claude"]
    assert request.header("authorization") == f"Bearer {renewed['access']}"
    assert request.header("x-api-key") is None
    assert request.header("copilot-integration-id") == "vscode-chat"
    assert request.header("editor-version") == "vscode/1.107.0"
    assert request.header("x-initiator") == "user"
    assert request.header("openai-intent") == "conversation-edits"
    assert CLAUDE_CODE_IDENTITY not in json.dumps(request.body.get("system", []))


def test_copilot_chat_completions_say_who_asked(tmp_path: Path, agent_dir: Path) -> None:
    login = {"type": "oauth", "refresh": "ghu_t", "access": "tid=1;proxy-ep=proxy.x.test", "expires": 10**14}
    write_json(agent_dir / "auth.json", {"github-copilot": login})
    model = {"id": "loop-gpt", "name": "Loop GPT", "api": "openai-completions"}
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "a.txt").write_text("alpha\n")
    read = Scripted(tool_calls=[ToolCallSpec(name="read", arguments={"path": "a.txt"})])
    with TokenServer() as tokens, ModelServer(read) as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"github-copilot": {"models": [model]}}})
        )
        endpoints = tokens.endpoints_file(tmp_path, github_copilot={"copilotApiUrl": server.base_url})
        done = run(
            tmp_path,
            "--provider",
            "github-copilot",
            "--model",
            "loop-gpt",
            "-p",
            "read a",
            endpoints=endpoints,
        )
        assert done.returncode == 0, done.stderr
        assert tokens.seen == []  # the token is valid: nothing renewed
    asked, followed = server.requests[:2]
    assert asked.path.endswith("/chat/completions")
    assert asked.header("authorization") == "Bearer tid=1;proxy-ep=proxy.x.test"
    assert asked.header("copilot-integration-id") == "vscode-chat"
    # the user asked first; the request after the tool result is the agent's own
    assert (asked.header("x-initiator"), followed.header("x-initiator")) == ("user", "agent")
    assert followed.header("openai-intent") == "conversation-edits"


def test_codex_renews_and_sends_the_account_of_the_new_token(tmp_path: Path, agent_dir: Path) -> None:
    write_json(agent_dir / "auth.json", {"openai-codex": CODEX})
    with TokenServer() as tokens, ModelServer() as server:
        point_at(agent_dir, server, openai_codex={})
        run(tmp_path, "--provider", "openai-codex", "-p", "hi", endpoints=tokens.endpoints_file(tmp_path))
        [grant] = tokens.seen
        assert grant.body["grant_type"] == "refresh_token" and grant.body["refresh_token"] == "rt-codex"
        request = server.requests[-1]
    renewed = json.loads((agent_dir / "auth.json").read_text())["openai-codex"]
    assert renewed["accountId"] == ACCOUNT_ID and renewed["refresh"] == "rt-renewed-1"
    assert request.header("authorization") == f"Bearer {renewed['access']}"
    assert request.header("chatgpt-account-id") == ACCOUNT_ID
