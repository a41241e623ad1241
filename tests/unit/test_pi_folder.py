"""pi's folder (``~/.pi/agent``) read beneath pi-tui's: where it is, and settings, keys and
models layered under ours (issue 27, "Folders"). Real files in the test's own folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.errors import ConfigError
from pi_tui.ai.models import ModelRegistry
from pi_tui.config.auth import AuthStore, auth_file
from pi_tui.config.pi_folder import (
    PI_FOLDER_ENV,
    pi_agent_dir,
    session_origin,
    twin_session_folder,
)
from pi_tui.config.session_dir import SESSION_DIR_ENV, chosen_session_dir
from pi_tui.config.settings import load_settings, update_global_settings


@pytest.fixture
def pi_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pi's folder where HOME puts it (no override), created empty."""
    home = tmp_path / "home"
    folder = home / ".pi" / "agent"
    folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(PI_FOLDER_ENV)
    return folder


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


# --- where pi's folder is ------------------------------------------------------------------------


def test_pi_folder_is_home_pi_agent_and_none_when_it_is_ours(
    pi_dir: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pi_agent_dir() == pi_dir
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi_dir))  # both programs share pi's folder
    assert pi_agent_dir() is None
    link = pi_dir.parent / "agent-link"
    link.symlink_to(pi_dir)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(link))  # another name for the same folder
    assert pi_agent_dir() is None
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv(PI_FOLDER_ENV, "")  # switched off
    assert pi_agent_dir() is None


def test_twin_folders_and_origin(pi_dir: Path, agent_dir: Path, tmp_path: Path) -> None:
    ours = agent_dir / "sessions" / "--home-ann-app--"
    theirs = pi_dir / "sessions" / "--home-ann-app--"
    assert twin_session_folder(ours) == theirs
    assert twin_session_folder(theirs) == ours
    assert twin_session_folder(tmp_path / "custom") is None
    assert twin_session_folder(agent_dir / "sessions" / "not-a-project") is None
    assert session_origin(theirs / "a.jsonl") == "pi"
    assert session_origin(ours / "a.jsonl") is None


# --- settings ------------------------------------------------------------------------------------


def test_settings_deep_merge_pi_then_ours_then_project(pi_dir: Path, agent_dir: Path, tmp_path: Path) -> None:
    write_json(
        pi_dir / "settings.json",
        {
            "defaultProvider": "loop",
            "defaultModel": "m",
            "theme": "light",
            "compaction": {"reserveTokens": 1000, "keepRecentTokens": 5000},
            "piOnlyKey": {"kept": True},
        },
    )
    write_json(agent_dir / "settings.json", {"theme": "dark", "compaction": {"reserveTokens": 2000}})
    project = tmp_path / "project"
    write_json(project / ".agent" / "settings.json", {"compaction": {"enabled": False}})
    settings = load_settings(str(project), project=True)  # a trusted project folder
    assert (settings.default_provider, settings.default_model, settings.theme) == ("loop", "m", "dark")
    assert settings.compaction.reserve_tokens == 2000  # ours over pi's, key by key
    assert settings.compaction.keep_recent_tokens == 5000  # pi's where ours says nothing
    assert settings.compaction.enabled is False  # the project's over both


def test_pi_settings_pi_tui_cannot_use_are_left_out_not_fatal(pi_dir: Path, agent_dir: Path) -> None:
    write_json(pi_dir / "settings.json", {"theme": "light", "hideThinkingBlock": "sometimes"})
    settings = load_settings()
    assert settings.theme == "light" and settings.hide_thinking_block is False
    (pi_dir / "settings.json").write_text("{ not json")
    assert load_settings().theme is None


def test_writing_settings_goes_to_our_folder_only(pi_dir: Path, agent_dir: Path) -> None:
    pi_file = write_json(pi_dir / "settings.json", {"theme": "light", "defaultModel": "m"})
    before = pi_file.read_bytes()
    written = update_global_settings({"theme": "dark"})
    assert written == agent_dir / "settings.json"
    assert json.loads(written.read_text()) == {"theme": "dark"}
    assert pi_file.read_bytes() == before
    assert load_settings().default_model == "m"


# --- auth.json -----------------------------------------------------------------------------------


def test_auth_reads_pi_keys_beneath_ours_and_writes_only_ours(pi_dir: Path, agent_dir: Path) -> None:
    pi_auth = write_json(
        pi_dir / "auth.json",
        {"anthropic": {"type": "api_key", "key": "sk-pi"}, "openai": {"type": "api_key", "key": "sk-pi-o"}},
    )
    write_json(agent_dir / "auth.json", {"openai": {"type": "api_key", "key": "sk-ours"}})
    store = AuthStore(auth_file(agent_dir), pi_auth)
    assert store.api_key("anthropic") == "sk-pi" and store.saved_by_pi("anthropic")
    assert store.api_key("openai") == "sk-ours" and not store.saved_by_pi("openai")
    assert set(store.providers()) == {"anthropic", "openai"}
    store.set_api_key("google", "g-key")
    assert store.remove("anthropic") is False  # pi's key is pi's: nothing of ours to remove
    assert json.loads(pi_auth.read_text())["anthropic"]["key"] == "sk-pi"
    assert set(json.loads((agent_dir / "auth.json").read_text())) == {"openai", "google"}
    assert store.api_key("anthropic") == "sk-pi"


def test_registry_uses_a_key_saved_by_pi(pi_dir: Path, agent_dir: Path) -> None:
    write_json(pi_dir / "auth.json", {"anthropic": {"type": "api_key", "key": "sk-from-pi"}})
    registry = ModelRegistry()
    assert registry.has_key("anthropic")
    model = next(model for model in registry.all() if model.provider == "anthropic")
    assert registry.request_options(model).api_key == "sk-from-pi"
    from pi_tui.tui.slash_auth import key_status

    assert key_status(registry, "anthropic") == "✓ saved by pi"  # /login's list says whose it is


# --- models.json ---------------------------------------------------------------------------------


def provider(base_url: str, *models: dict[str, object], **fields: object) -> dict[str, object]:
    return {"baseUrl": base_url, "api": "openai-completions", "apiKey": "k", "models": list(models), **fields}


def test_models_provider_by_provider_and_model_by_model(pi_dir: Path, agent_dir: Path) -> None:
    write_json(
        pi_dir / "models.json",
        {
            "providers": {
                "loop": provider("http://pi-host", {"id": "m", "name": "pi's m"}, {"id": "n"}),
                "pionly": provider("http://pi-only", {"id": "x"}),
            }
        },
    )
    write_json(
        agent_dir / "models.json",
        {"providers": {"loop": {"baseUrl": "http://our-host", "models": [{"id": "m", "name": "our m"}]}}},
    )
    registry = ModelRegistry()
    assert registry.problems == []
    loop = {model.id: model for model in registry.all() if model.provider == "loop"}
    assert set(loop) == {"m", "n"}
    assert loop["m"].name == "our m" and loop["n"].name == "n"
    assert {model.base_url for model in loop.values()} == {"http://our-host"}  # our field wins
    assert registry.request_options(loop["n"]).api_key == "k"  # pi's apiKey where ours has none
    assert [model.id for model in registry.all() if model.provider == "pionly"] == ["x"]


def test_pi_models_pi_tui_cannot_use_are_left_out_with_a_line(pi_dir: Path, agent_dir: Path) -> None:
    write_json(
        pi_dir / "models.json",
        {
            "providers": {
                "good": provider("http://good", {"id": "g"}),
                "odd": provider("http://odd", {"id": "o"}, api="some-future-api"),
            }
        },
    )
    registry = ModelRegistry()
    assert [model.id for model in registry.all() if model.provider in ("good", "odd")] == ["g"]
    assert len(registry.problems) == 1 and "provider odd is left out" in registry.problems[0]
    assert str(pi_dir / "models.json") in registry.problems[0]
    (pi_dir / "models.json").write_text("{ broken")
    registry.reload()
    assert "pi's models are not used" in registry.problems[0]


def test_our_broken_models_json_is_still_an_error(pi_dir: Path, agent_dir: Path) -> None:
    write_json(pi_dir / "models.json", {"providers": {"good": provider("http://good", {"id": "g"})}})
    bad = provider("http://b", {"id": "b"}, api="nope")
    write_json(agent_dir / "models.json", {"providers": {"bad": bad}})
    with pytest.raises(ConfigError, match=str(agent_dir / "models.json")):
        ModelRegistry()


# --- the chosen session folder -------------------------------------------------------------------


def test_session_dir_flag_then_env_then_setting(
    pi_dir: Path, agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.delenv(SESSION_DIR_ENV, raising=False)
    assert chosen_session_dir(str(project), None) is None
    write_json(pi_dir / "settings.json", {"sessionDir": "~/pi-sessions"})
    assert chosen_session_dir(str(project), None) == str(tmp_path / "home" / "pi-sessions")
    write_json(agent_dir / "settings.json", {"sessionDir": "local-sessions"})  # relative: the project's
    assert chosen_session_dir(str(project), None) == str(project / "local-sessions")
    monkeypatch.setenv(SESSION_DIR_ENV, "~/from-env")
    assert chosen_session_dir(str(project), None) == str(tmp_path / "home" / "from-env")
    assert chosen_session_dir(str(project), "/flag/wins") == "/flag/wins"
    assert load_settings(str(project)).session_dir == "local-sessions"
