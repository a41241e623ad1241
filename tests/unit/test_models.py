"""The model catalogue, models.json in pi's format, key resolution and model choice."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from pi_tui.ai.catalogue import (
    API_KEY_ENV_VARS,
    CATALOGUE,
    ENV_VARS,
    KEY_ENV_VAR_NAMES,
    KNOWN_APIS,
    PROVIDERS,
    builtin_models,
    catalogue_document,
)
from pi_tui.ai.config_values import clear_command_cache
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.model_list import format_model_list
from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.types import ModelCost, StreamOptions

# The "Full Example" and the compat example of pi's docs/models.md, verbatim.
PI_OLLAMA_FULL_EXAMPLE = """
{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "models": [
        {
          "id": "llama3.1:8b",
          "name": "Llama 3.1 8B (Local)",
          "reasoning": false,
          "input": ["text"],
          "contextWindow": 128000,
          "maxTokens": 32000,
          "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 }
        }
      ]
    }
  }
}
"""

PI_OLLAMA_COMPAT_EXAMPLE = """
{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "compat": {
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": false
      },
      "models": [
        {
          "id": "gpt-oss:20b",
          "reasoning": true
        }
      ]
    }
  }
}
"""


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider key from the developer's environment leaks into these tests."""
    for name in KEY_ENV_VAR_NAMES:
        monkeypatch.delenv(name, raising=False)
    clear_command_cache()


def write_models(agent_dir: Path, data: object) -> Path:
    path = agent_dir / "models.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


# --- catalogue ----------------------------------------------------------------------------------


def test_catalogue_is_complete_and_consistent() -> None:
    # pi's providers (from the generated file) plus pi-tui's own local and offline ones.
    assert set(PROVIDERS) == set(catalogue_document()["providers"]) | {"ollama", "offline"}
    assert set(CATALOGUE) == set(PROVIDERS) - {"offline"}
    # The nine providers pi-tui knew before the generated catalogue keep their key variables.
    assert {name: ENV_VARS[name] for name in ("anthropic", "openai", "google", "openrouter", "groq")} == {
        "anthropic": "ANTHROPIC_API_KEY",
        "openai": "OPENAI_API_KEY",
        "google": "GEMINI_API_KEY",
        "openrouter": "OPENROUTER_API_KEY",
        "groq": "GROQ_API_KEY",
    }
    assert API_KEY_ENV_VARS["anthropic"][-1] == "ANTHROPIC_API_KEY"
    assert "ANTHROPIC_OAUTH_TOKEN" in API_KEY_ENV_VARS["anthropic"]
    models = builtin_models()
    labels = [m.label for m in models]
    assert len(labels) == len(set(labels))
    for model in models:
        assert model.api in KNOWN_APIS
        assert model.context_window > 0 and model.max_tokens > 0
        assert set(model.input) <= {"text", "image"}
        if model.provider not in ("ollama", "offline", "azure"):  # azure: from the environment
            assert model.base_url.startswith("https://")
    for name, info in PROVIDERS.items():  # pi's default model of each provider is one of its models
        if info.default_model is not None:
            assert info.default_model in CATALOGUE[name], name
    assert PROVIDERS["ollama"].base_url == "http://localhost:11434/v1"
    assert PROVIDERS["ollama"].env_var is None and PROVIDERS["ollama"].keyless
    demo = next(m for m in models if m.label == "offline/demo")
    assert demo.api == "offline" and demo.cost == ModelCost()


def test_format_model_list() -> None:
    registry = ModelRegistry()
    table = format_model_list(registry.list_models("anthropic/claude-opus-4-7"))
    lines = table.splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    assert lines[1].split() == ["anthropic", "claude-opus-4-7", "1M", "128K", "yes", "yes"]
    assert len(lines) == 2


def test_list_models_search() -> None:
    registry = ModelRegistry()
    assert len(registry.list_models()) == len(builtin_models())
    labels = [m.label for m in registry.list_models("openrouter claude")]
    expected = [m.label for m in builtin_models() if m.provider == "openrouter" and "claude" in m.label]
    assert labels and labels == expected
    assert registry.list_models("no-such-model-anywhere") == []


def newest(provider: str, fragment: str) -> str:
    """What a fragment resolves to on one provider: of its ids holding ``fragment`` after a
    separator, the undated one pi's ordering puts last (the newest version)."""
    ids = [i for i in CATALOGUE[provider] if f"-{fragment}" in i or f"/{fragment}" in i]
    undated = [i for i in ids if not re.search(r"-\d{8}$", i)]
    key = [tuple((2 if c.isalpha() else 1 if c.isdigit() else 0, c.lower()) for c in i) for i in undated]
    return f"{provider}/{max(zip(key, undated, strict=True))[1]}"


# --- models.json in pi's format -----------------------------------------------------------------


def test_pi_docs_ollama_example_loads(agent_dir: Path) -> None:
    write_models(agent_dir, PI_OLLAMA_FULL_EXAMPLE)
    registry = ModelRegistry()
    model = registry.get("ollama", "llama3.1:8b")
    assert model is not None
    assert model.name == "Llama 3.1 8B (Local)"
    assert model.api == "openai-completions"
    assert model.base_url == "http://localhost:11434/v1"
    assert model.reasoning is False
    assert model.input == ["text"]
    assert model.context_window == 128000
    assert model.max_tokens == 32000
    assert model.cost == ModelCost()
    # Upserted by id: one llama3.1:8b, the catalogue's other Ollama models kept.
    ollama = [m for m in registry.all() if m.provider == "ollama"]
    assert [m.id for m in ollama].count("llama3.1:8b") == 1
    assert len(ollama) == len(CATALOGUE["ollama"])
    assert registry.resolve_api_key("ollama") == "ollama"
    assert registry.has_key("ollama")


def test_pi_docs_compat_example_and_defaults(agent_dir: Path) -> None:
    write_models(agent_dir, PI_OLLAMA_COMPAT_EXAMPLE)
    model = ModelRegistry().get("ollama", "gpt-oss:20b")
    assert model is not None
    assert model.reasoning is True
    assert model.compat["supportsDeveloperRole"] is False
    assert model.compat["supportsReasoningEffort"] is False
    # Fields the example leaves out take pi's defaults.
    assert model.name == "gpt-oss:20b"
    assert (model.context_window, model.max_tokens, model.input) == (128000, 16384, ["text"])


def test_custom_provider_with_compat_headers_and_command_key(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    counter = tmp_path / "runs"
    monkeypatch.setenv("PORTKEY_API_KEY", "portkey-value")
    write_models(
        agent_dir,
        {
            "providers": {
                "custom-proxy": {
                    "baseUrl": "https://proxy.example.com/v1",
                    "api": "openai-completions",
                    "apiKey": f"!echo run >> {counter}; echo secret-key",
                    "authHeader": True,
                    "headers": {"x-portkey-api-key": "PORTKEY_API_KEY", "x-secret": "!echo header-secret"},
                    "compat": {"supportsUsageInStreaming": False, "maxTokensField": "max_tokens"},
                    "futureProviderKey": {"kept": True},
                    "models": [
                        {
                            "id": "big-model",
                            "name": "Big Model",
                            "reasoning": True,
                            "input": ["text", "image"],
                            "contextWindow": 262144,
                            "maxTokens": 8192,
                            "cost": {"input": 0.6, "output": 3, "cacheRead": 0.1, "cacheWrite": 0},
                            "headers": {"x-model": "plain"},
                            "compat": {"maxTokensField": "max_completion_tokens"},
                            "thinkingLevelMap": {"minimal": None},
                        }
                    ],
                }
            }
        },
    )
    registry = ModelRegistry()
    model = registry.get("custom-proxy", "big-model")
    assert model is not None
    assert model.base_url == "https://proxy.example.com/v1"
    assert model.cost == ModelCost(input=0.6, output=3, cache_read=0.1, cache_write=0)
    assert model.compat == {"supportsUsageInStreaming": False, "maxTokensField": "max_completion_tokens"}
    assert model.input == ["text", "image"] and model.context_window == 262144
    assert model.thinking_level_map == {"minimal": None} and not model.model_extra  # pi 1.x's field
    # Loading runs no command; the configured values stay as written.
    assert not counter.exists()
    assert model.headers["x-secret"] == "!echo header-secret"

    options = registry.request_options(model, StreamOptions(headers={"x-call": "1"}))
    assert options.api_key == "secret-key"
    assert options.headers == {
        "x-portkey-api-key": "portkey-value",
        "x-secret": "header-secret",
        "x-model": "plain",
        "Authorization": "Bearer secret-key",
        "x-call": "1",
    }
    assert registry.resolve_api_key("custom-proxy") == "secret-key"
    assert counter.read_text().count("run") == 1  # the command's output is cached


def test_failing_key_command_is_one_clear_line(agent_dir: Path) -> None:
    path = write_models(agent_dir, {"providers": {"anthropic": {"apiKey": "!echo key-$((6*7)) >&2; exit 3"}}})
    registry = ModelRegistry()
    with pytest.raises(ConfigError) as caught:
        registry.resolve_api_key("anthropic")
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message and "providers.anthropic.apiKey" in message
    assert "exit code 3" in message and "output is not shown" in message
    assert "key-42" not in message  # a key command's stderr may quote the key (set -x, a tool's echo)


def test_overriding_a_builtin_provider(agent_dir: Path) -> None:
    write_models(
        agent_dir,
        {
            "providers": {
                "anthropic": {
                    "baseUrl": "https://my-proxy.example.com",
                    "modelOverrides": {
                        "claude-sonnet-4-6": {"name": "Sonnet via proxy", "cost": {"input": 1}},
                        "no-such-model": {"name": "ignored"},
                    },
                    "models": [{"id": "claude-next", "reasoning": True}],
                }
            }
        },
    )
    registry = ModelRegistry()
    anthropic = [m for m in registry.all() if m.provider == "anthropic"]
    assert len(anthropic) == len(CATALOGUE["anthropic"]) + 1
    assert {m.base_url for m in anthropic} == {"https://my-proxy.example.com"}
    sonnet = registry.get("anthropic", "claude-sonnet-4-6")
    assert sonnet is not None and sonnet.name == "Sonnet via proxy"
    assert sonnet.cost.input == 1 and sonnet.cost.output == 15  # partial cost override
    custom = registry.get("anthropic", "claude-next")
    assert custom is not None and custom.api == "anthropic-messages"  # inherited from the built-in
    assert registry.get("openai", "gpt-5.4").base_url == "https://api.openai.com/v1"  # type: ignore[union-attr]


def test_comments_and_trailing_commas_are_tolerated(agent_dir: Path) -> None:
    write_models(
        agent_dir,
        '{\n  // local server\n  "providers": {\n    "vllm": {"baseUrl": "http://h:8000/v1", '
        '"api": "openai-completions", "models": [{"id": "m//1",},],},\n  },\n}\n',
    )
    assert ModelRegistry().get("vllm", "m//1") is not None


def test_missing_or_empty_file_means_catalogue_only(agent_dir: Path) -> None:
    assert len(ModelRegistry().all()) == len(builtin_models())
    write_models(agent_dir, "  \n")
    assert len(ModelRegistry().all()) == len(builtin_models())


BROKEN = [
    pytest.param(
        '{\n  "providers": {\n    "x": {"baseUrl": "u" "api": "openai-completions"}\n  }\n}',
        ["line 3 column", "invalid JSON"],
        id="bad-json",
    ),
    pytest.param(
        {"providers": {"x": {"baseUrl": "http://h/v1", "api": "openai-chat", "models": [{"id": "a"}]}}},
        ["providers.x.api", "unknown API kind", "openai-chat"],
        id="unknown-api",
    ),
    pytest.param(
        {"providers": {"x": {"baseUrl": "http://h/v1", "models": [{"id": "a", "api": "grpc"}]}}},
        ["providers.x.models[0].api", "unknown API kind"],
        id="unknown-model-api",
    ),
    pytest.param(
        {"providers": {"x": {"api": "openai-completions", "apiKey": "k", "models": [{"id": "a"}]}}},
        ["providers.x.baseUrl", "required"],
        id="missing-baseurl",
    ),
    pytest.param(
        {"providers": {"x": {"baseUrl": "http://h/v1", "models": [{"id": "a"}]}}},
        ["providers.x.models[0].api", "no API kind"],
        id="missing-api",
    ),
    pytest.param(
        {
            "providers": {
                "x": {
                    "baseUrl": "u",
                    "api": "openai-completions",
                    "models": [{"id": "a", "contextWindow": "big"}],
                }
            }
        },
        ["providers.x.models[0].contextWindow", "valid integer", '"big"'],
        id="wrong-type",
    ),
    pytest.param(
        {
            "providers": {
                "x": {
                    "baseUrl": "u",
                    "api": "openai-completions",
                    "models": [{"id": "a", "reasoning": "yes"}],
                }
            }
        },
        ["providers.x.models[0].reasoning", "boolean"],
        id="wrong-type-bool",
    ),
    pytest.param(
        {"providers": {"x": {"baseUrl": "u", "api": "openai-completions", "models": [{"name": "a"}]}}},
        ["providers.x.models[0].id", "required"],
        id="missing-id",
    ),
    pytest.param({"providers": []}, ["providers", "JSON object"], id="providers-not-object"),
    pytest.param("[1, 2]", ["JSON object", "array"], id="top-level-array"),
]


@pytest.mark.parametrize(("content", "fragments"), BROKEN)
def test_broken_models_json_is_one_clear_line(agent_dir: Path, content: object, fragments: list[str]) -> None:
    path = write_models(agent_dir, content)
    with pytest.raises(ConfigError) as caught:
        ModelRegistry()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message


# --- keys ---------------------------------------------------------------------------------------


def test_key_resolution_order(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ModelRegistry()
    assert registry.resolve_api_key("anthropic") is None
    assert not registry.has_key("anthropic")

    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    assert registry.resolve_api_key("anthropic") == "from-env"
    assert registry.has_key("anthropic")

    write_models(agent_dir, {"providers": {"anthropic": {"apiKey": "MY_ANTHROPIC_KEY"}}})
    registry = ModelRegistry()
    # An apiKey naming an unset variable is used literally, as pi does.
    assert registry.resolve_api_key("anthropic") == "MY_ANTHROPIC_KEY"
    monkeypatch.setenv("MY_ANTHROPIC_KEY", "from-named-var")
    assert registry.resolve_api_key("anthropic") == "from-named-var"

    assert registry.resolve_api_key("anthropic", cli_key="from-cli") == "from-cli"
    model = registry.get("anthropic", "claude-opus-4-7")
    assert model is not None
    assert registry.request_options(model, cli_key="from-cli").api_key == "from-cli"


def test_missing_key_is_a_clear_error_but_keyless_providers_need_none() -> None:
    registry = ModelRegistry()
    opus = registry.get("anthropic", "claude-opus-4-7")
    assert opus is not None
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        registry.request_options(opus)
    assert registry.request_options(opus, require_key=False).api_key is None
    ollama = registry.get("ollama", "llama3.1:8b")
    assert ollama is not None and registry.request_options(ollama).api_key is None
    assert registry.request_options(registry.offline_model()).api_key is None


# --- finding models -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "label", "thinking"),
    [
        ("anthropic/claude-haiku-4-5", "anthropic/claude-haiku-4-5", None),
        ("ANTHROPIC/Claude-Haiku-4-5", "anthropic/claude-haiku-4-5", None),
        ("sonnet", newest("anthropic", "sonnet"), None),
        ("sonnet:high", newest("anthropic", "sonnet"), "high"),
        ("opus:xhigh", newest("anthropic", "opus"), "xhigh"),
        ("openai/gpt-5.4:low", "openai/gpt-5.4", "low"),
        ("gpt-5.4-mini:off", "openai/gpt-5.4-mini", "off"),
        ("openrouter/anthropic/claude-sonnet-4.6", "openrouter/anthropic/claude-sonnet-4.6", None),
        ("llama3.1:8b", "ollama/llama3.1:8b", None),
        ("llama3.1:8b:medium", "ollama/llama3.1:8b", "medium"),
        ("Gemini 3.1 Flash Lite Preview", "google/gemini-3.1-flash-lite-preview", None),
        ("offline/demo", "offline/demo", None),
    ],
)
def test_find(pattern: str, label: str, thinking: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # With 43 providers, fragments need a key to settle on one: these users have Anthropic's,
    # OpenAI's and Gemini's.
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "k")
    match = ModelRegistry().find(pattern)
    assert match is not None
    assert (match.model.label, match.thinking) == (label, thinking)


def test_an_exact_id_on_several_providers_goes_to_pis_first() -> None:
    """``claude-opus-4-7`` is an id of anthropic, opencode and cloudflare-ai-gateway: with no key
    anywhere, the provider pi prefers (its ``defaultModelPerProvider`` order) is chosen."""
    owners = [name for name, ids in CATALOGUE.items() if "claude-opus-4-7" in ids]
    assert len(owners) > 1 and owners[0] == "anthropic"
    assert ModelRegistry().find("claude-opus-4-7").model.label == "anthropic/claude-opus-4-7"  # type: ignore[union-attr]


def test_find_misses_and_provider_scope() -> None:
    registry = ModelRegistry()
    assert registry.find("no-such-model") is None
    assert registry.find("sonnet:bogus") is None  # an unknown level is not silently dropped
    assert registry.find("") is None
    scoped = registry.find("anthropic/claude-sonnet-4.6", provider="openrouter")
    assert scoped is not None and scoped.model.label == "openrouter/anthropic/claude-sonnet-4.6"
    scoped = registry.find("openrouter/moonshotai/kimi-k2.6", provider="OpenRouter")
    assert scoped is not None and scoped.model.label == "openrouter/moonshotai/kimi-k2.6"
    assert registry.find("sonnet", provider="nope") is None
    with pytest.raises(ConfigError, match="--list-models"):
        registry.resolve("no-such-model")


def test_find_prefers_a_provider_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ModelRegistry()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert registry.find("sonnet").model.provider == "anthropic"  # type: ignore[union-attr]
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    assert registry.find("sonnet").model.provider == "openrouter"  # type: ignore[union-attr]
    # An exact id still wins over a fragment on a provider with a key.
    assert registry.find("claude-sonnet-4-6").model.provider == "anthropic"  # type: ignore[union-attr]


# --- choosing the model to start with -----------------------------------------------------------


def test_default_is_offline_demo_without_any_key() -> None:
    choice = ModelRegistry().default_model()
    assert choice.model.label == "offline/demo"
    assert choice.model.api == "offline"
    assert choice.source == "offline"


def test_default_is_first_provider_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default model (pi's ``defaultModelPerProvider``) of the first provider with a key, in
    pi's order of preference."""
    monkeypatch.setenv("GROQ_API_KEY", "g")
    choice = ModelRegistry().default_model()
    assert (choice.model.label, choice.source) == (f"groq/{PROVIDERS['groq'].default_model}", "key")
    monkeypatch.setenv("OPENAI_API_KEY", "o")
    assert ModelRegistry().default_model().model.label == f"openai/{PROVIDERS['openai'].default_model}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    anthropic = f"anthropic/{PROVIDERS['anthropic'].default_model}"
    assert ModelRegistry().default_model().model.label == anthropic
    assert (
        list(PROVIDERS).index("anthropic") < list(PROVIDERS).index("openai") < list(PROVIDERS).index("groq")
    )


def test_default_uses_a_configured_local_provider(agent_dir: Path) -> None:
    write_models(agent_dir, PI_OLLAMA_FULL_EXAMPLE)
    assert ModelRegistry().default_model().model.provider == "ollama"


def test_default_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    registry = ModelRegistry()
    settings = SimpleNamespace(default_provider="google", default_model="gemini-2.5-pro")
    choice = registry.default_model(settings)
    assert (choice.model.label, choice.source, choice.warning) == ("google/gemini-2.5-pro", "settings", None)

    stale = SimpleNamespace(default_provider="google", default_model="gemini-0.1")
    choice = registry.default_model(stale)
    assert choice.model.label == f"anthropic/{PROVIDERS['anthropic'].default_model}"
    assert choice.warning is not None and "gemini-0.1" in choice.warning


def test_cli_beats_settings_and_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    registry = ModelRegistry()
    settings = SimpleNamespace(default_provider="google", default_model="gemini-2.5-pro")
    choice = registry.default_model(settings, None, "openai/gpt-5.4:high")
    assert (choice.model.label, choice.thinking, choice.source) == ("openai/gpt-5.4", "high", "cli")
    choice = registry.default_model(settings, "openrouter", "anthropic/claude-sonnet-4.6")
    assert choice.model.label == "openrouter/anthropic/claude-sonnet-4.6"
    choice = registry.default_model(settings, "xai", None)
    assert choice.model.label == f"xai/{PROVIDERS['xai'].default_model}"


def test_cli_errors_and_custom_ids() -> None:
    registry = ModelRegistry()
    with pytest.raises(ConfigError, match='Unknown provider "nope"'):
        registry.default_model(None, "nope", "x")
    with pytest.raises(ConfigError, match='Model "no-such-model" not found'):
        registry.default_model(None, None, "no-such-model")
    # A new id on a known provider is used as given, with the provider's settings.
    choice = registry.default_model(None, "openai", "gpt-9:high")
    assert (choice.model.label, choice.thinking) == ("openai/gpt-9", "high")
    assert choice.model.api == "openai-responses" and choice.warning is not None
    choice = registry.default_model(None, None, "anthropic/claude-future-5")
    assert choice.model.label == "anthropic/claude-future-5"
