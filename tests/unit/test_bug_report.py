"""/bug's redaction: credential-looking keys and URL secrets never reach the report."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from pi_tui.tui.slash_bug import (
    REDACTED,
    bug_arguments,
    is_sensitive_key,
    redact_json,
    redact_url,
    write_report,
)


def test_sensitive_keys_in_any_spelling() -> None:
    for key in ("apiKey", "api_key", "x-api-key", "authToken", "password", "Authorization", "sessionCookie"):
        assert is_sensitive_key(key), key
    for key in ("theme", "tokenizer", "keepRecentTokens", "reserveTokens", "passage"):
        assert not is_sensitive_key(key), key


def test_urls_lose_user_password_and_secret_query_values() -> None:
    assert redact_url("https://user:pw@example.com/v1?key=1&api_key=abc") == (
        f"https://example.com/v1?key=1&api_key={REDACTED.replace('<', '%3C').replace('>', '%3E')}"
    )
    assert redact_url("https://example.com/v1") == "https://example.com/v1"
    assert redact_url("not a url") == "not a url"


def test_json_values_under_sensitive_keys_are_replaced_at_any_depth() -> None:
    data = {
        "compaction": {"reserveTokens": 100},
        "providers": [{"apiKey": "sk-12345678", "baseUrl": "https://u:p@h.example/"}],
        "token": None,
    }
    assert redact_json(data) == {
        "compaction": {"reserveTokens": 100},
        "providers": [{"apiKey": REDACTED, "baseUrl": "https://h.example/"}],
        "token": None,
    }


def test_arguments_and_secret_values_in_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert bug_arguments("--with-transcript it crashed") == (True, "it crashed")
    assert bug_arguments("it crashed") == (False, "it crashed")
    monkeypatch.setenv("PI_TUI_TEST_SECRET_TOKEN", "zz-very-secret-value")
    path = write_report(tmp_path, "abc", {"report.json": '{"note": "zz-very-secret-value"}'})
    assert path.name == "pi-tui-bug-report-abc.zip"
    with zipfile.ZipFile(path) as archive:
        assert "zz-very-secret-value" not in archive.read("report.json").decode()
