"""Renewing pi's OAuth logins with each provider's grant (against a loopback token server),
the request options a login gives, and Anthropic's subscription requests as pi sends them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.anthropic import CLAUDE_CODE_IDENTITY, AnthropicClient, MessagesParser
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.key_origin import key_origin
from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.oauth.providers import ENDPOINTS_ENV
from pi_tui.ai.oauth.refresh import oauth_auth
from pi_tui.ai.oauth.tokens import COPILOT_HEADERS, copilot_base_url
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.config.auth import AuthStore
from pi_tui.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from tests.support.model_server import Scripted, ToolCallSpec, encode
from tests.support.token_server import ACCOUNT_ID, COPILOT_PROXY, TokenServer

HOUR_MS = 3600 * 1000
GROQ = {"type": "api_key", "key": "gsk-1"}


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with TokenServer() as server:
        monkeypatch.setenv(ENDPOINTS_ENV, str(server.endpoints_file(tmp_path)))
        yield server


def saved(tmp_path: Path, data: dict[str, Any]) -> tuple[Path, AuthStore]:
    path = tmp_path / "agent" / "auth.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path, AuthStore(path)


def test_an_expired_anthropic_login_is_renewed_with_pis_json_grant(
    tmp_path: Path, tokens: TokenServer
) -> None:
    old = {
        "type": "oauth",
        "refresh": "sk-ant-ort01-old",
        "access": "sk-ant-oat01-old",
        "expires": now_ms() - 1,
    }
    path, store = saved(tmp_path, {"anthropic": old, "groq": GROQ})
    before = now_ms()
    auth = oauth_auth(store, "anthropic")
    assert auth is not None and auth.api_key == "sk-ant-oat01-renewed-1" and auth.base_url is None
    [grant] = tokens.seen
    assert (grant.method, grant.path) == ("POST", "/anthropic/token")
    assert grant.headers["content-type"] == "application/json"
    assert grant.body == {
        "grant_type": "refresh_token",
        "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
        "refresh_token": "sk-ant-ort01-old",
    }
    on_disk = json.loads(path.read_text())
    assert on_disk["groq"] == GROQ
    renewed = on_disk["anthropic"]
    assert list(renewed) == ["type", "refresh", "access", "expires"]
    assert renewed["refresh"] == "sk-ant-ort01-renewed-1"
    # pi's expiry: the token's lifetime less five minutes
    assert before + 28800_000 - 300_000 <= renewed["expires"] <= now_ms() + 28800_000 - 300_000
    assert oauth_auth(store, "anthropic") == auth  # valid now: no second grant
    assert len(tokens.seen) == 1


def test_a_valid_login_is_used_without_asking_anyone(tmp_path: Path, tokens: TokenServer) -> None:
    login = {"type": "oauth", "refresh": "r", "access": "sk-ant-oat01-ok", "expires": now_ms() + HOUR_MS}
    _, store = saved(tmp_path, {"anthropic": login})
    auth = oauth_auth(store, "anthropic")
    assert auth is not None and auth.api_key == "sk-ant-oat01-ok"
    assert tokens.seen == []
    assert oauth_auth(store, "groq") is None


def test_a_refused_renewal_is_one_line_and_the_file_is_kept(tmp_path: Path, tokens: TokenServer) -> None:
    tokens.refuse.add("anthropic")
    old = {"type": "oauth", "refresh": "sk-ant-ort01-old", "access": "sk-ant-oat01-old", "expires": 5}
    path, store = saved(tmp_path, {"anthropic": old, "groq": GROQ})
    before = path.read_bytes()
    with pytest.raises(ConfigError) as caught:
        oauth_auth(store, "anthropic")
    message = str(caught.value)
    assert message == (
        "Anthropic login expired and could not be renewed (HTTP 400: invalid_grant): sign in again with "
        "/login anthropic (pi-tui auth login anthropic from a shell)"
    )
    assert path.read_bytes() == before


def test_an_unreachable_token_server_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoints = tmp_path / "endpoints.json"
    endpoints.write_text(json.dumps({"anthropic": {"tokenUrl": "http://127.0.0.1:9/token"}}))
    monkeypatch.setenv(ENDPOINTS_ENV, str(endpoints))
    old = {"type": "oauth", "refresh": "r", "access": "sk-ant-oat01-old", "expires": 5}
    path, store = saved(tmp_path, {"anthropic": old})
    with pytest.raises(
        ConfigError,
        match=r"^Anthropic login expired and could not be renewed: the network failed \(cannot reach ",
    ) as caught:
        oauth_auth(store, "anthropic")
    assert "try again" in str(caught.value) and "/login" not in str(caught.value)  # the login is fine
    assert json.loads(path.read_text()) == {"anthropic": old}


def test_codex_renews_with_a_form_grant_and_keeps_the_account_id(tmp_path: Path, tokens: TokenServer) -> None:
    old = {"type": "oauth", "access": "a.b.c", "refresh": "rt-old", "expires": 5, "accountId": "acct-old"}
    path, store = saved(tmp_path, {"openai-codex": old})
    auth = oauth_auth(store, "openai-codex")
    [grant] = tokens.seen
    assert grant.headers["content-type"] == "application/x-www-form-urlencoded"
    assert grant.body == {
        "grant_type": "refresh_token",
        "client_id": "app_EMoamEEZ73f0CkXaXp7hrann",
        "refresh_token": "rt-old",
    }
    renewed = json.loads(path.read_text())["openai-codex"]
    assert renewed["accountId"] == ACCOUNT_ID and renewed["refresh"] == "rt-renewed-1"
    assert auth is not None and auth.api_key == renewed["access"]


def test_copilot_exchanges_the_github_token_and_sends_to_the_tokens_host(
    tmp_path: Path, tokens: TokenServer
) -> None:
    old = {
        "type": "oauth",
        "refresh": "ghu_github",
        "access": "tid=old;exp=1;proxy-ep=proxy.individual.githubcopilot.com",
        "expires": 5,
        "availableModelIds": ["gpt-4o"],
    }
    path, store = saved(tmp_path, {"github-copilot": old})
    auth = oauth_auth(store, "github-copilot")
    [grant] = tokens.seen
    assert (grant.method, grant.path) == ("GET", "/github/copilot_internal/v2/token")
    assert grant.headers["authorization"] == "Bearer ghu_github"
    assert {k.lower(): v for k, v in COPILOT_HEADERS.items()}.items() <= grant.headers.items()
    renewed = json.loads(path.read_text())["github-copilot"]
    assert renewed["refresh"] == "ghu_github" and renewed["availableModelIds"] == ["gpt-4o"]
    assert auth is not None and auth.api_key == renewed["access"]
    assert auth.base_url == "https://api.enterprise.example.test"  # proxy.X -> api.X
    assert auth.headers == COPILOT_HEADERS
    assert COPILOT_PROXY in renewed["access"]


def test_copilot_api_host_rules() -> None:
    assert copilot_base_url("tid=1;proxy-ep=proxy.business.githubcopilot.com;x=1", None) == (
        "https://api.business.githubcopilot.com"
    )
    assert copilot_base_url("tid=1", "ghe.example.com") == "https://copilot-api.ghe.example.com"
    assert copilot_base_url("tid=1", None) == "https://api.individual.githubcopilot.com"


def test_xai_keeps_its_refresh_token_when_the_answer_has_none(tmp_path: Path, tokens: TokenServer) -> None:
    old = {"type": "oauth", "refresh": "xai-rt", "access": "xai-old", "expires": 5}
    path, store = saved(tmp_path, {"xai": old})
    auth = oauth_auth(store, "xai")
    renewed = json.loads(path.read_text())["xai"]
    assert auth is not None and auth.api_key == "xai-renewed-1" and renewed["refresh"] == "xai-rt"


def test_chatgpt_renews_with_the_client_id_it_was_issued(tmp_path: Path, tokens: TokenServer) -> None:
    old = {
        "type": "oauth",
        "access": "a",
        "refresh": "crt",
        "expires": 5,
        "clientId": "issued-1",
        "scopes": [],
    }
    path, store = saved(tmp_path, {"openai": old})
    auth = oauth_auth(store, "openai")
    [grant] = tokens.seen
    assert grant.body == {
        "grant_type": "refresh_token",
        "client_id": "issued-1",
        "refresh_token": "crt",
        "resource": "https://api.openai.com/v1",
    }
    renewed = json.loads(path.read_text())["openai"]
    assert renewed["clientId"] == "issued-1" and "chatgpt.tokens.use.direct" in renewed["scopes"]
    assert auth is not None and auth.api_key == "chatgpt-renewed-1"
    del old["clientId"]
    path.write_text(json.dumps({"openai": old}))
    store.reload()
    with pytest.raises(ConfigError, match="no issued client id"):
        oauth_auth(store, "openai")


def test_meta_mints_a_new_key_with_the_identity_token(tmp_path: Path, tokens: TokenServer) -> None:
    old = {"type": "oauth", "refresh": "identity", "access": "meta-old", "expires": 5}
    path, store = saved(tmp_path, {"meta": old})
    auth = oauth_auth(store, "meta")
    [mint] = tokens.seen
    assert (mint.method, mint.path, mint.headers["authorization"]) == ("POST", "/meta/key", "Bearer identity")
    assert mint.headers["x-api-version"] == "1.0.0"
    renewed = json.loads(path.read_text())["meta"]
    assert auth is not None and auth.api_key == "meta-key-1" == renewed["access"]
    assert renewed["refresh"] == "identity" and renewed["expires"] > now_ms() + 23 * HOUR_MS
    tokens.refuse.add("meta")
    path.write_text(json.dumps({"meta": old}))
    store.reload()
    with pytest.raises(ConfigError, match=r"^Meta login expired .*\(Meta ended the session \(HTTP 401\)\)"):
        oauth_auth(store, "meta")


def test_request_options_use_the_login_after_the_command_line_key(
    tmp_path: Path, tokens: TokenServer
) -> None:
    login = {"type": "oauth", "refresh": "r", "access": "sk-ant-oat01-ok", "expires": now_ms() + HOUR_MS}
    copilot = {
        "type": "oauth",
        "refresh": "g",
        "access": f"tid=1;proxy-ep={COPILOT_PROXY}",
        "expires": 10**14,
    }
    _, store = saved(tmp_path, {"anthropic": login, "github-copilot": copilot})
    registry = ModelRegistry(tmp_path / "agent" / "models.json", auth=store)
    model = registry.provider_default("anthropic")
    assert model is not None
    assert registry.request_options(model).api_key == "sk-ant-oat01-ok"
    assert registry.request_options(model, cli_key="sk-cli").api_key == "sk-cli"
    assert registry.resolve_api_key("anthropic") == "sk-ant-oat01-ok"
    origin = key_origin(registry, "anthropic")  # what /login and `auth check` say about it
    assert (origin.layer, origin.by_pi) == ("oauth", False)
    claude = registry.provider_default("github-copilot")
    assert claude is not None
    options = registry.request_options(claude)
    assert options.base_url == "https://api.enterprise.example.test"
    assert options.api_key == copilot["access"]
    assert options.headers["Copilot-Integration-Id"] == "vscode-chat"


def anthropic_model() -> Model:
    return Model(id="claude-x", name="X", api="anthropic-messages", provider="anthropic", base_url="http://h")


def test_a_subscription_request_is_what_pi_sends_for_a_claude_pro_token() -> None:
    tools = [Tool(name="read", description="Read a file", parameters={"type": "object", "properties": {}})]
    tools.append(Tool(name="my_tool", description="Mine", parameters={"type": "object", "properties": {}}))
    history = [
        UserMessage(content="look", timestamp=1),
        AssistantMessage(
            content=[ToolCall(id="toolu_1", name="read", arguments={"path": "a"})],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-x",
            timestamp=2,
        ),
        ToolResultMessage(
            tool_call_id="toolu_1", tool_name="read", content=[TextContent(text="A")], timestamp=3
        ),
    ]
    context = Context(system_prompt="You are pi.", messages=history, tools=tools)
    client = AnthropicClient()
    request = client.build_request(anthropic_model(), context, StreamOptions(api_key="sk-ant-oat01-tok"))
    headers = request.headers
    assert headers["authorization"] == "Bearer sk-ant-oat01-tok" and "x-api-key" not in headers
    assert headers["anthropic-beta"].split(",")[:2] == ["claude-code-20250219", "oauth-2025-04-20"]
    assert headers["user-agent"].startswith("claude-cli/") and headers["x-app"] == "cli"
    assert headers["anthropic-dangerous-direct-browser-access"] == "true"
    system = request.body["system"]
    assert [block["text"] for block in system] == [CLAUDE_CODE_IDENTITY, "You are pi."]
    assert all(block["cache_control"] == {"type": "ephemeral"} for block in system)
    assert [tool["name"] for tool in request.body["tools"]] == ["Read", "my_tool"]
    assert request.body["messages"][1]["content"][0]["name"] == "Read"
    # the answer's "Read" is our "read" again
    parser = client.parser(MessageBuilder(anthropic_model()))
    assert isinstance(parser, MessagesParser)
    reply = Scripted(tool_calls=[ToolCallSpec(name="Read", arguments={"path": "b"})])
    for event in encode("anthropic-messages", reply, "claude-x"):
        name, data = _sse(event)
        parser.on_event(name, data)
    calls = [block for block in parser.builder.snapshot().content if isinstance(block, ToolCall)]
    assert [call.name for call in calls] == ["read"]

    plain = client.build_request(anthropic_model(), context, StreamOptions(api_key="sk-ant-api03-key"))
    assert plain.headers["x-api-key"] == "sk-ant-api03-key" and "authorization" not in plain.headers
    assert [block["text"] for block in plain.body["system"]] == ["You are pi."]
    assert [tool["name"] for tool in plain.body["tools"]] == ["read", "my_tool"]


def _sse(event: bytes) -> tuple[str, str]:
    name, data = "message", ""
    for line in event.decode().splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
    return name, data
