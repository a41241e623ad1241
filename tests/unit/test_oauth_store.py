"""OAuth credentials in auth.json (pi's shape) and the table of pi's OAuth facts: reading,
saving a login, renewing once under pi's lock in the file the credential came from, and the
endpoint override file tests and proxies use."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.oauth.providers import (
    ENDPOINTS_ENV,
    OAuthConfigError,
    copilot_urls,
    oauth_provider,
    oauth_provider_ids,
)
from pi_tui.config.auth import AuthFileError, AuthStore

# Shapes exactly as pi writes them (pi-ai/dist/auth/oauth/*.js): Anthropic's refresh gives
# these four fields; Codex adds accountId; Copilot enterpriseUrl and availableModelIds.
ANTHROPIC = {"type": "oauth", "refresh": "sk-ant-ort01-old", "access": "sk-ant-oat01-old", "expires": 1}
CODEX = {"type": "oauth", "access": "a.b.c", "refresh": "rt", "expires": 2, "accountId": "acc-1"}
GROQ = {"type": "api_key", "key": "gsk-1"}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def test_pi_oauth_credentials_are_read_from_ours_and_from_pis_file(tmp_path: Path) -> None:
    ours, pis = tmp_path / "ours" / "auth.json", tmp_path / "pi" / "auth.json"
    write(ours, {"anthropic": ANTHROPIC, "groq": GROQ})
    write(pis, {"openai-codex": CODEX, "broken": {"type": "oauth", "access": "x"}})
    store = AuthStore(ours, pis)
    assert store.oauth("anthropic") == ANTHROPIC
    assert store.oauth("openai-codex") == CODEX
    assert store.oauth("groq") is None  # an API key is not an OAuth credential
    assert store.oauth("broken") is None  # pi would reject it too (no refresh, no expires)
    assert store.oauth_file("anthropic") == ours
    assert store.oauth_file("openai-codex") == pis
    copy = store.oauth("anthropic")
    assert copy is not None
    copy["access"] = "changed"
    assert store.oauth("anthropic") == ANTHROPIC  # callers get a copy


def test_a_login_is_saved_in_pis_shape_keeping_everything_else(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    write(path, {"groq": GROQ})
    store = AuthStore(path)
    store.set_oauth("openai-codex", {"access": "a.b.c", "refresh": "rt", "expires": 2, "accountId": "acc-1"})
    text = path.read_text()
    assert json.loads(text) == {"groq": GROQ, "openai-codex": CODEX}
    assert '"openai-codex": {\n    "type": "oauth",' in text  # type first, 2-space JSON as pi
    assert mode(path) == 0o600
    with pytest.raises(AuthFileError, match="no usable credential"):
        store.set_oauth("anthropic", {"access": "a", "refresh": "r"})  # no expires
    assert "anthropic" not in json.loads(path.read_text())


def test_a_renewal_writes_the_new_tokens_in_the_file_they_came_from(tmp_path: Path) -> None:
    ours, pis = tmp_path / "ours" / "auth.json", tmp_path / "pi" / "auth.json"
    copilot = {
        "type": "oauth",
        "refresh": "ghu_x",
        "access": "tid=1;exp=2",
        "expires": 3,
        "availableModelIds": ["gpt-4o"],
    }
    write(ours, {"groq": GROQ})
    write(pis, {"anthropic": ANTHROPIC, "github-copilot": copilot, "xai": GROQ})
    pis.chmod(0o644)
    store = AuthStore(ours, pis)
    seen: list[dict[str, Any]] = []

    def renew(current: dict[str, Any]) -> dict[str, Any]:
        seen.append(current)
        assert pis.with_name("auth.json.lock").is_dir()  # pi's lock folder is held meanwhile
        return {"type": "oauth", "refresh": "ghu_x", "access": "tid=9;exp=9", "expires": 99}

    renewed = store.refresh_oauth("github-copilot", lambda c: c["expires"] < 10, renew)
    assert seen == [copilot]
    assert renewed == {**copilot, "access": "tid=9;exp=9", "expires": 99}  # availableModelIds kept
    on_disk = json.loads(pis.read_text())
    assert on_disk == {"anthropic": ANTHROPIC, "github-copilot": renewed, "xai": GROQ}
    assert mode(pis) == 0o600
    assert not pis.with_name("auth.json.lock").exists()
    assert json.loads(ours.read_text()) == {"groq": GROQ}  # ours untouched
    assert store.oauth("github-copilot") == renewed


def test_a_token_another_program_renewed_meanwhile_is_used_not_renewed_again(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    write(path, {"anthropic": ANTHROPIC})
    store = AuthStore(path)
    by_pi = {**ANTHROPIC, "access": "sk-ant-oat01-pi", "refresh": "sk-ant-ort01-pi", "expires": 10**13}
    write(path, {"anthropic": by_pi})  # pi renewed after we read the file

    def renew(current: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("renewed twice")

    assert store.refresh_oauth("anthropic", lambda c: c["expires"] < 10**12, renew) == by_pi
    assert store.oauth("anthropic") == by_pi


def test_renewals_in_two_threads_happen_once(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    write(path, {"anthropic": ANTHROPIC})
    calls: list[int] = []
    barrier = threading.Barrier(2)
    results: list[dict[str, Any] | None] = []

    def renew(current: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        return {**current, "access": "new", "expires": 10**13}

    def worker() -> None:
        store = AuthStore(path)
        barrier.wait()
        results.append(store.refresh_oauth("anthropic", lambda c: c["expires"] < 10**12, renew))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert [r and r["access"] for r in results] == ["new", "new"]


def test_a_failed_renewal_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    write(path, {"anthropic": ANTHROPIC, "groq": GROQ})
    before = path.read_bytes()
    store = AuthStore(path)

    def renew(current: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("invalid_grant")

    with pytest.raises(RuntimeError, match="invalid_grant"):
        store.refresh_oauth("anthropic", lambda c: True, renew)
    assert path.read_bytes() == before
    assert not path.with_name("auth.json.lock").exists()
    path.write_text("{}")  # logged out meanwhile: nothing to renew
    assert store.refresh_oauth("anthropic", lambda c: True, renew) is None


def test_the_table_has_pis_oauth_providers_and_facts() -> None:
    assert oauth_provider_ids() == [
        "anthropic",
        "github-copilot",
        "openai-codex",
        "openai",
        "openrouter",
        "kimi-coding",
        "meta",
        "xai",
        "radius",
    ]
    anthropic = oauth_provider("anthropic")
    assert anthropic is not None
    assert anthropic.token_url == "https://platform.claude.com/v1/oauth/token"
    assert anthropic.client_id == "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
    assert anthropic.callback_port == 53692 and anthropic.flows == ("browser", "paste")
    codex = oauth_provider("openai-codex")
    assert codex is not None and codex.refresh_grant == "form" and "device" in codex.flows
    copilot = oauth_provider("github-copilot")
    assert copilot is not None and copilot.flows == ("device",)
    assert copilot_urls(copilot, "ghe.example.com")["copilotTokenUrl"] == (
        "https://api.ghe.example.com/copilot_internal/v2/token"
    )
    assert oauth_provider("groq") is None


def test_the_override_file_points_endpoints_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overrides = tmp_path / "endpoints.json"
    overrides.write_text(
        json.dumps(
            {
                "anthropic": {"tokenUrl": "http://127.0.0.1:9/token"},
                "github-copilot": {"copilotTokenUrl": "http://127.0.0.1:9/copilot"},
            }
        )
    )
    monkeypatch.setenv(ENDPOINTS_ENV, str(overrides))
    anthropic = oauth_provider("anthropic")
    assert anthropic is not None and anthropic.token_url == "http://127.0.0.1:9/token"
    assert anthropic.authorize_url == "https://claude.ai/oauth/authorize"  # the rest stays pi's
    copilot = oauth_provider("github-copilot")
    assert copilot is not None
    assert copilot_urls(copilot, None)["copilotTokenUrl"] == "http://127.0.0.1:9/copilot"
    overrides.write_text(json.dumps({"anthropic": {"tokenURL": "x"}}))
    with pytest.raises(OAuthConfigError, match="unknown key 'tokenURL'"):
        oauth_provider("anthropic")
    overrides.write_text("{")
    with pytest.raises(OAuthConfigError, match="not valid JSON"):
        oauth_provider("anthropic")
