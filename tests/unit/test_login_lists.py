"""Which providers /login offers a key for, and under which names: pi 1.5.2's.

pi takes an API key for every provider with key authentication (Bedrock's is a bearer token,
Vertex's an express-mode key) and none for a login-only one (OpenAI Codex); its lists name each
provider as its catalogue does ("DeepSeek", "Google", "Amazon Bedrock").
"""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.models import ModelRegistry
from pi_tui.config.auth import AuthStore
from pi_tui.tui.slash_auth import key_providers, provider_name


def registry(folder: Path, models: dict[str, object] | None = None) -> ModelRegistry:
    path = folder / "models.json"
    path.write_text(json.dumps(models or {"providers": {}}))
    return ModelRegistry(path, auth=AuthStore(folder / "auth.json"))


def test_keys_are_offered_for_every_key_provider_and_not_for_logins_only(tmp_path: Path) -> None:
    offered = key_providers(registry(tmp_path))
    assert {"amazon-bedrock", "google-vertex", "deepseek", "anthropic", "radius"} <= set(offered)
    assert "openai-codex" not in offered  # a ChatGPT login, no key
    assert "ollama" not in offered and "offline" not in offered  # need none


def test_names_are_pis_unless_models_json_names_the_provider(tmp_path: Path) -> None:
    plain = registry(tmp_path)
    assert [provider_name(plain, p) for p in ("deepseek", "google", "amazon-bedrock", "kimi-coding")] == [
        "DeepSeek",
        "Google",
        "Amazon Bedrock",
        "Kimi For Coding",
    ]
    named = registry(tmp_path, {"providers": {"deepseek": {"name": "Work DeepSeek"}, "mine": {"name": ""}}})
    assert provider_name(named, "deepseek") == "Work DeepSeek"
    assert provider_name(named, "mine") == "mine"
