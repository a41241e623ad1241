"""Anthropic Messages: pi-tui sends the request pi 1.5.2 sends, for an API key and a login.

Both programs run ``-p`` on pi's ``anthropic`` provider with a models.json ``baseUrl`` override
pointing at a loopback model server of their own, side by side (tests/interop/test_google_vs_pi.py
runs them). Headers that carry meaning (auth, version, betas, the Claude Code identity of a login)
and the body must agree, the system prompt's and tools' own texts aside. The cases cover the
catalogue's kinds of Claude: budget thinking (Haiku/Sonnet 4.5), adaptive thinking (Opus 4.6),
server-side fallbacks (Fable 5), managed mid-conversation effort with inline tools (Opus/Sonnet
5.5), each at a level, "off" included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_google_vs_pi import run_both
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, ToolCallSpec

pytestmark = pytest.mark.pi_interop

HEADERS = (
    "anthropic-version",
    "anthropic-beta",
    "anthropic-dangerous-direct-browser-access",
    "x-api-key",
    "authorization",
    "x-app",
)
"""The headers that change what Anthropic does with a request (user-agent aside: each program
names itself, except a login, which both send as Claude Code)."""
LOGIN_TOKEN = "sk-ant-oat01-test-login"


def shape(request: RecordedRequest) -> dict[str, Any]:
    """What must agree: path, meaningful headers, the body but for the prompt's and tools' texts.

    pi 1.5.2 marks its built-in tools ``strict`` (JSON-schema constrained sampling, the
    provider's ``compat.supportsStrictTools``); pi-tui's tools carry no such mark yet
    (docs/pi-parity.md), so tools are compared by name and the fields pi-tui sends."""
    body = dict(request.body)
    system = body.pop("system", None) or []
    tools = body.pop("tools", None) or []
    for message in body.get("messages", []):
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_result":
                block["content"] = "…"  # the read tool's output is each program's own wording
    headers = {name: request.headers.get(name) for name in HEADERS}
    return {
        "path": request.path,
        "headers": headers,
        "body": body,
        "system": [{key: ("…" if key == "text" else value) for key, value in b.items()} for b in system],
        "tools": [
            {key: ("…" if key in ("description", "input_schema") else value) for key, value in tool.items()}
            for tool in ({key: value for key, value in tool.items() if key != "strict"} for tool in tools)
        ],
    }


def api_key(folder: Path, server: ModelServer) -> dict[str, str]:
    """pi's ``anthropic`` provider at ``server`` with ``ANTHROPIC_API_KEY``."""
    models = {"providers": {"anthropic": {"baseUrl": server.base_url}}}
    (folder / "models.json").write_text(json.dumps(models))
    return {"ANTHROPIC_API_KEY": "sk-ant-api03-test"}


def login(folder: Path, server: ModelServer) -> dict[str, str]:
    """The same with a Claude Pro/Max login pi wrote to auth.json (not expired)."""
    api_key(folder, server)
    credential = {"type": "oauth", "access": LOGIN_TOKEN, "refresh": "r", "expires": 4102444800000}
    (folder / "auth.json").write_text(json.dumps({"anthropic": credential}))
    return {}


CASES = [
    ("claude-opus-5-5", "medium"),
    ("claude-opus-5-5", "off"),
    ("claude-sonnet-5-5", "xhigh"),
    ("claude-fable-5", "high"),
    ("claude-fable-5-2", "low"),
    ("claude-opus-4-6", "high"),
    ("claude-haiku-4-5", "low"),
    ("claude-sonnet-4-5", "off"),
]


@pytest.mark.parametrize(("model", "level"), CASES)
def test_api_key_request_matches_pi(model: str, level: str, tmp_path: Path) -> None:
    first = (model, level) == CASES[0]
    ours, theirs = run_both(tmp_path, "anthropic", api_key, model, level, "hello", script=first)
    assert len(ours) == len(theirs) == 1
    assert shape(ours[0]) == shape(theirs[0])
    catalogue_max = {"claude-haiku-4-5": 64000, "claude-sonnet-4-5": 64000}.get(model, 128000)
    assert ours[0].body["max_tokens"] == catalogue_max  # the model's maximum, not 0.73's 32000


@pytest.mark.parametrize(("model", "level"), [("claude-opus-5-5", "high"), ("claude-sonnet-4-5", "medium")])
def test_login_request_matches_pi(model: str, level: str, tmp_path: Path) -> None:
    ours, theirs = run_both(tmp_path, "anthropic", login, model, level, "hello")
    assert len(ours) == len(theirs) == 1
    assert shape(ours[0]) == shape(theirs[0])
    assert ours[0].headers["authorization"] == f"Bearer {LOGIN_TOKEN}"
    assert ours[0].headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")


def test_a_tool_call_goes_back_as_pi_sends_it(tmp_path: Path) -> None:
    """After ``read`` ran, the second request (call, result, the effort marker after them) is
    pi's too."""
    reply = Scripted(tool_calls=[ToolCallSpec("read", {"path": "note.txt"}, id="toolu_1")])
    ours, theirs = run_both(tmp_path, "anthropic", api_key, "claude-opus-5-5", "high", "read note.txt", reply)
    assert len(ours) == len(theirs) == 2
    assert shape(ours[1]) == shape(theirs[1])
    assert ours[1].body["messages"][1] == {
        "role": "system",
        "content": [],
        "output_config": {"effort": "high"},
    }
    # the level each reply ran at is kept in the session as pi keeps it, for the next run
    for name in ("ours", "pis"):
        (session,) = (tmp_path / name).glob("sessions/*/*.jsonl")
        entries = [json.loads(line) for line in session.read_text().splitlines()]
        replies = [e["message"] for e in entries if e.get("message", {}).get("role") == "assistant"]
        assert [reply.get("providerThinkingLevel") for reply in replies] == ["high", "high"], name
