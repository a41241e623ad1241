"""auth.json: pi's format, 0600, other entries kept, a broken file never overwritten, and the
place a saved key takes among the other key sources."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from pi_tui.ai.models import ModelRegistry
from pi_tui.config.auth import AuthFileError, AuthStore, auth_file


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_saved_key_is_written_in_pis_format_with_mode_0600(tmp_path: Path) -> None:
    path = auth_file(tmp_path / "fresh" / "agent")
    store = AuthStore(path)
    store.set_api_key("anthropic", "sk-ant-test-123456")
    assert json.loads(path.read_text()) == {"anthropic": {"type": "api_key", "key": "sk-ant-test-123456"}}
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert path.read_text().startswith('{\n  "anthropic": {\n    "type": "api_key"')  # pi's 2-space JSON
    assert not path.with_name("auth.json.lock").exists()
    assert [p.name for p in path.parent.iterdir()] == ["auth.json"]  # no temporary file left


def test_other_entries_survive_a_save_and_a_removal(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    oauth = {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}
    path.write_text(json.dumps({"anthropic": oauth, "groq": {"type": "api_key", "key": "gsk-1"}}))
    path.chmod(0o644)
    store = AuthStore(path)
    # another program adds an entry after we read the file: a change re-reads it first
    data = json.loads(path.read_text())
    data["xai"] = {"type": "api_key", "key": "xai-1"}
    path.write_text(json.dumps(data))
    store.set_api_key("openai", "sk-openai-abcdef")
    saved = json.loads(path.read_text())
    assert saved == {
        "anthropic": oauth,
        "groq": {"type": "api_key", "key": "gsk-1"},
        "xai": {"type": "api_key", "key": "xai-1"},
        "openai": {"type": "api_key", "key": "sk-openai-abcdef"},
    }
    assert mode(path) == 0o600  # tightened even when it was looser
    assert store.remove("groq") is True
    assert "groq" not in json.loads(path.read_text())
    assert store.remove("groq") is False
    assert mode(path) == 0o600
    assert store.providers() == ["anthropic", "xai", "openai"]
    assert store.kind("anthropic") == "oauth"
    assert store.api_key("anthropic") is None  # an OAuth login is not a key pi-tui can use


@pytest.mark.parametrize("text", ['{"groq": {"type": "api_key", "key": "gsk-1"', "[1, 2]"])
def test_a_broken_file_is_reported_and_never_overwritten(tmp_path: Path, text: str) -> None:
    path = tmp_path / "auth.json"
    path.write_text(text)
    store = AuthStore(path)
    assert store.problem is not None and str(path) in store.problem
    assert "\n" not in store.problem
    assert store.providers() == []
    with pytest.raises(AuthFileError, match=r"auth\.json"):
        store.set_api_key("openai", "sk-new-key-123456")
    with pytest.raises(AuthFileError):
        store.remove("groq")
    assert path.read_text() == text  # nothing lost
    assert not path.with_name("auth.json.lock").exists()


def test_an_empty_key_is_refused(tmp_path: Path) -> None:
    store = AuthStore(tmp_path / "auth.json")
    with pytest.raises(AuthFileError, match="empty"):
        store.set_api_key("openai", "")
    assert not (tmp_path / "auth.json").exists()


def test_a_stale_lock_is_taken_over(tmp_path: Path) -> None:
    import os

    path = tmp_path / "auth.json"
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()
    os.utime(lock, (1, 1))
    AuthStore(path).set_api_key("groq", "gsk-123456")
    assert json.loads(path.read_text())["groq"]["key"] == "gsk-123456"
    assert not lock.exists()


def test_the_registry_uses_a_saved_key_after_the_cli_key_and_before_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "from-env")
    monkeypatch.setenv("MY_GROQ", "from-named-variable")
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"groq": {"apiKey": "from-models-json"}}}))
    registry = ModelRegistry(tmp_path / "models.json")
    assert registry.resolve_api_key("groq") == "from-models-json"
    registry.auth.set_api_key("groq", "from-auth-json")
    assert registry.resolve_api_key("groq") == "from-auth-json"  # at once, no restart
    assert registry.resolve_api_key("groq", cli_key="from-cli") == "from-cli"
    assert ModelRegistry(tmp_path / "models.json").resolve_api_key("groq") == "from-auth-json"  # later runs
    registry.auth.set_api_key("groq", "MY_GROQ")  # resolved like apiKey: a variable's name
    assert registry.resolve_api_key("groq") == "from-named-variable"


def test_a_saved_key_makes_a_provider_usable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    registry = ModelRegistry(tmp_path / "models.json")
    assert not registry.has_key("mistral")
    registry.auth.set_api_key("mistral", "mistral-key-123")
    assert registry.has_key("mistral")
    model = registry.provider_default("mistral")
    assert model is not None
    assert registry.request_options(model).api_key == "mistral-key-123"
    registry.auth.remove("mistral")
    assert not registry.has_key("mistral")
    assert "/login" in registry.missing_key_message("mistral")


def test_a_saved_key_never_reaches_a_crash_log(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui import cli

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    AuthStore(auth_file(agent_dir)).set_api_key("groq", "gsk_saved0key1by2login")
    try:
        raise RuntimeError("request failed with gsk_saved0key1by2login")
    except RuntimeError:
        where = Path(cli._crash_log())
    text = where.read_text()
    assert "request failed with [redacted]" in text
    assert "gsk_saved0key1by2login" not in text
