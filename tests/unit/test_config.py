"""Agent dir, session folders and settings loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.config.paths import agent_dir, encode_cwd, session_dir_for_cwd
from pi_tui.config.settings import SettingsError, load_settings


def test_agent_dir_from_env_and_default(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_tui.config import paths

    assert paths.agent_dir() == agent_dir
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", "/home/ann")
    assert paths.agent_dir() == Path("/home/ann/.agent")


def test_session_dir_for_cwd(agent_dir: Path) -> None:
    assert session_dir_for_cwd("/home/ann/src/app") == agent_dir / "sessions" / "--home-ann-src-app--"
    assert session_dir_for_cwd("/x", "/elsewhere") == Path("/elsewhere")
    assert encode_cwd("D:\\code\\app") == "--D--code-app--"


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)


def test_defaults_without_files(tmp_path: Path) -> None:
    settings = load_settings(str(tmp_path))
    assert settings.compaction.enabled is True
    assert settings.compaction.reserve_tokens == 16384
    assert settings.compaction.keep_recent_tokens == 20000
    assert settings.branch_summary.skip_prompt is False
    assert settings.tree_filter_mode == "default"


def test_project_overrides_global_and_unknown_keys_are_kept(tmp_path: Path) -> None:
    write(
        agent_dir() / "settings.json",
        {
            "theme": "light",
            "compaction": {"reserveTokens": 1000, "keepRecentTokens": 40},
            "myExtension": {"a": 1},
        },
    )
    write(tmp_path / ".agent" / "settings.json", {"compaction": {"keepRecentTokens": 99}, "theme": "dark"})
    settings = load_settings(str(tmp_path), project=True)  # a trusted project folder
    assert settings.theme == "dark"
    assert settings.compaction.reserve_tokens == 1000  # merged key by key
    assert settings.compaction.keep_recent_tokens == 99
    assert settings.model_extra == {"myExtension": {"a": 1}}
    assert settings.model_dump(by_alias=True)["myExtension"] == {"a": 1}


def test_broken_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / ".agent" / "settings.json"
    write(path, '{\n  "theme": "dark",\n  "compaction": {\n    "enabled": true,\n  }\n}\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(str(tmp_path), project=True)  # a trusted project folder
    assert str(path) in str(caught.value) and "line 5" in str(caught.value)


def test_wrong_type_names_file_line_and_key(tmp_path: Path) -> None:
    write(agent_dir() / "settings.json", '{\n  "theme": "dark",\n  "treeFilterMode": "sideways"\n}\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(str(tmp_path))
    message = str(caught.value)
    assert "settings.json, line 3" in message and "treeFilterMode" in message


def test_settings_must_be_an_object(tmp_path: Path) -> None:
    write(agent_dir() / "settings.json", "[1, 2]")
    with pytest.raises(SettingsError, match="must be a JSON object"):
        load_settings(str(tmp_path))
