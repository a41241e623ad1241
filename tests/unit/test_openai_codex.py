"""OpenAI Codex pieces that need no server: the account id read from the access token, the
endpoint for each form of base URL, the reasoning field and the cache key."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pi_tui.ai.errors import ProviderError
from pi_tui.ai.openai_codex import CLIENT, account_id, endpoint, jwt_claims, reasoning_field
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.messages import UserMessage


def token(claims: dict[str, Any]) -> str:
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln"


def model(**fields: Any) -> Model:
    values: dict[str, Any] = {
        "id": "gpt-6-sol",
        "api": "openai-codex-responses",
        "provider": "openai-codex",
        "base_url": "https://chatgpt.com/backend-api",
        "reasoning": True,
    }
    values.update(fields)
    return Model(**values)


def test_the_account_id_comes_from_a_base64url_payload() -> None:
    # "???" and ">>>" encode to "_" and "-" in base64url: plain base64 decoding would refuse them
    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}, "note": "???>>>"}
    jwt = token(claims)
    assert "_" in jwt.split(".")[1] or "-" in jwt.split(".")[1]
    assert jwt_claims(jwt) == claims
    assert account_id(jwt) == "acct-1"


@pytest.mark.parametrize(
    "value",
    [
        token({"https://api.openai.com/auth": {}}),
        token({"chatgpt_account_id": "acct-at-the-top-is-not-the-claim"}),
        token({"https://api.openai.com/auth": {"chatgpt_account_id": ""}}),
        "only.two",
        "a.%%%.c",
        "sk-proj-plain-key",
    ],
)
def test_no_account_id_is_one_clear_error(value: str) -> None:
    with pytest.raises(ProviderError) as caught:
        account_id(value)
    assert str(caught.value).count("\n") == 0 and "https://api.openai.com/auth" in str(caught.value)


def test_endpoints() -> None:
    assert endpoint("https://chatgpt.com/backend-api/") == "https://chatgpt.com/backend-api/codex/responses"
    assert endpoint("http://proxy:8/x/codex") == "http://proxy:8/x/codex/responses"
    assert endpoint("http://proxy:8/x/codex/responses/") == "http://proxy:8/x/codex/responses"
    assert endpoint("  ") == "https://chatgpt.com/backend-api/codex/responses"


def test_reasoning_field() -> None:
    assert reasoning_field(model(reasoning=False), "high") is None
    assert reasoning_field(model(), "off") == {"effort": "none"}
    assert reasoning_field(model(), "medium") == {"effort": "medium", "summary": "auto"}
    assert reasoning_field(model(thinking_level_map={"off": None}), "off") is None
    mapped = model(thinking_level_map={"off": "minimal", "minimal": "low", "max": "max"})
    assert reasoning_field(mapped, "off") == {"effort": "minimal"}
    assert reasoning_field(mapped, "minimal") == {"effort": "low", "summary": "auto"}
    assert reasoning_field(mapped, "max") == {"effort": "max", "summary": "auto"}
    # xhigh is not in this map: the nearest level the model has runs instead
    assert reasoning_field(mapped, "xhigh") == {"effort": "max", "summary": "auto"}


def test_the_cache_key_is_cut_to_64_characters_and_no_key_asks_for_login() -> None:
    jwt = token({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}})
    context = Context(messages=[UserMessage(content="x")])
    request = CLIENT.build_request(model(), context, StreamOptions(api_key=jwt, session_id="s" * 80))
    assert request.body["prompt_cache_key"] == "s" * 64 and request.headers["session-id"] == "s" * 64
    with pytest.raises(ProviderError, match="/login"):
        CLIENT.build_request(model(), context, StreamOptions())
