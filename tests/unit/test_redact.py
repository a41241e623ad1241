"""Credential shapes in text pi-tui prints: the secret after ``Authorization:`` or ``Bearer`` is
hidden, an ordinary word after them is not (an error line must stay readable)."""

from __future__ import annotations

import pytest

from pi_tui.redact import REDACTED, redact_secrets


@pytest.mark.parametrize(
    "text",
    [
        'MCP server "evtok" header "Authorization": environment variable NOPE_TOKEN not set',
        "x-api-key: missing.",
        "api_key=Environment",
        "servers that take bearer tokens",
        '"Authorization": required',
    ],
)
def test_an_ordinary_word_after_a_credential_name_stays(text: str) -> None:
    assert redact_secrets(text, environ={}) == text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Authorization: Bearer tok-8f3e2d1c0b9a", f"Authorization: Bearer {REDACTED}"),
        ('"Authorization": "Bearer abcdefGHIJ"', f'"Authorization": "Bearer {REDACTED}"'),
        ("x-api-key: abcdefgh123", f"x-api-key: {REDACTED}"),
        ("api_key=SECRETVALUE", f"api_key={REDACTED}"),
        ("api_key=aBcDeFgHiJ", f"api_key={REDACTED}"),
        ("key sk-abcdefghij here", f"key sk-{REDACTED} here"),
        ("Authorization: tok_live_abcdef", f"Authorization: {REDACTED}"),
    ],
)
def test_credentials_are_still_hidden(text: str, shown: str) -> None:
    assert redact_secrets(text, environ={}) == shown


def test_a_known_secret_is_hidden_even_when_it_looks_like_a_word() -> None:
    text = 'header "Authorization": environment'
    assert redact_secrets(text, known=["environment"], environ={}) == f'header "Authorization": {REDACTED}'
    assert redact_secrets(text, environ={"MY_TOKEN": "environment"}) == f'header "Authorization": {REDACTED}'
