"""models.json / auth.json values read as pi 1.x reads them (resolve-config-value in pi 1.5.2).

``"$VAR"`` / ``"${VAR}"`` are environment variables (also inside a longer value), ``"!cmd"`` is a
command's output, and anything else is the text itself. pi-tui used to read a plain value as a
variable's name and sent ``$MY_KEY`` literally; a bare name of a *set* variable keeps that 0.73
meaning, with one notice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_tui.ai import azure
from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES
from pi_tui.ai.config_values import (
    clear_command_cache,
    is_value_configured,
    resolve_config_value,
    value_without_commands,
)
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.http import NO_LIMIT, apply_http_proxy, idle_limits
from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.types import Model
from pi_tui.config.settings import Settings


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in KEY_ENV_VAR_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_TUI_PI_AGENT_DIR", "")  # nothing of pi's own folder
    clear_command_cache()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("$MY_KEY", "k-123"),
        ("${MY_KEY}", "k-123"),
        ("Bearer $MY_KEY!", "Bearer k-123!"),
        ("${MY_KEY}suffix", "k-123suffix"),
        ("sk-literal-value", "sk-literal-value"),
        ("cost $$5 and $!bang", "cost $5 and !bang"),
        ("${not a name} $ 1", "${not a name} $ 1"),
        ("${MY_KEY", "${MY_KEY"),
        ("MY_KEY", "k-123"),  # pi 0.73's form: a bare name of a set variable
        ("UNSET_NAME_XYZ", "UNSET_NAME_XYZ"),  # a bare name of nothing set is just text
    ],
)
def test_value_rules(value: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "k-123")
    monkeypatch.delenv("UNSET_NAME_XYZ", raising=False)
    assert resolve_config_value(value, "where") == expected


def test_an_unset_variable_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE_A", raising=False)
    monkeypatch.setenv("EMPTY_B", "")  # empty counts as unset, as in pi
    with pytest.raises(ConfigError) as caught:
        resolve_config_value("$NOPE_A:${EMPTY_B}", "models.json: providers.x.apiKey")
    assert str(caught.value) == (
        "models.json: providers.x.apiKey: environment variables NOPE_A, EMPTY_B not set"
    )
    assert not is_value_configured("$NOPE_A")
    assert value_without_commands("$NOPE_A") is None


def test_commands_run_once_per_run_and_fail_in_one_line(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    command = f"!echo run >> {counter}; echo '  from-command  '"
    assert resolve_config_value(command, "w") == "from-command"
    assert resolve_config_value(command, "w") == "from-command"
    assert counter.read_text().count("run") == 1
    assert is_value_configured(command) and value_without_commands(command) is None
    assert not counter.read_text().count("run") > 1  # neither check runs it
    with pytest.raises(ConfigError) as caught:
        resolve_config_value("!echo n$((6*7)) >&2; exit 4", "auth.json: x.key")
    assert str(caught.value) == (
        "auth.json: x.key: command `echo n$((6*7)) >&2; exit 4` failed with exit code 4 "
        "(its output is not shown)"
    )
    with pytest.raises(ConfigError) as unquoted:
        resolve_config_value("!echo nope >&2; exit 4", "mcp: env", quote_command=False)
    assert str(unquoted.value) == "mcp: env: the command failed with exit code 4 (its output is not shown)"
    with pytest.raises(ConfigError, match="printed nothing"):
        resolve_config_value("!true", "w")


def test_registry_resolves_keys_and_headers_the_pi1_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", "from-env-var")
    monkeypatch.setenv("TEAM", "blue")
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "groq": {"apiKey": "$MY_KEY", "headers": {"x-team": "team-${TEAM}", "x-lit": "TEAMS"}},
                    "mistral": {"apiKey": "plain-literal-key"},
                    "cerebras": {"apiKey": "$UNSET_NAME_XYZ"},
                }
            }
        )
    )
    registry = ModelRegistry(agent / "models.json")
    assert registry.resolve_api_key("groq") == "from-env-var"
    assert registry.resolve_api_key("mistral") == "plain-literal-key"
    assert not registry.has_key("cerebras")  # pi counts a $VAR key only when it is set
    model = registry.get("groq", "openai/gpt-oss-120b")
    assert model is not None
    options = registry.request_options(model)
    assert options.api_key == "from-env-var"
    assert options.headers == {"x-team": "team-blue", "x-lit": "TEAMS"}
    assert registry.problems == []  # nothing in 0.73's form


def test_a_073_value_keeps_working_with_one_notice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_OLD_KEY", "old-style-value")
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    path = agent / "models.json"
    path.write_text(json.dumps({"providers": {"groq": {"apiKey": "MY_OLD_KEY"}}}))
    registry = ModelRegistry(path)
    assert registry.resolve_api_key("groq") == "old-style-value"
    assert len(registry.problems) == 1
    notice = registry.problems[0]
    assert "\n" not in notice and "providers.groq.apiKey" in notice and '"$MY_OLD_KEY"' in notice
    registry.reload()
    assert registry.problems == []  # once per run


def test_auth_json_env_wins_for_its_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "process-env")
    monkeypatch.setenv("HEADER_VALUE", "process-header")
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "models.json").write_text(
        json.dumps({"providers": {"groq": {"headers": {"x-h": "$HEADER_VALUE"}}}})
    )
    (agent / "auth.json").write_text(
        json.dumps(
            {
                "groq": {
                    "type": "api_key",
                    "key": "${KEY_IN_ENV}",
                    "env": {"KEY_IN_ENV": "from-auth-env", "HEADER_VALUE": "auth-header"},
                },
                "cerebras": {"type": "api_key", "env": {"CEREBRAS_API_KEY": "env-only-credential"}},
            }
        )
    )
    registry = ModelRegistry(agent / "models.json")
    assert registry.resolve_api_key("groq") == "from-auth-env"
    assert registry.resolve_api_key("cerebras") == "env-only-credential"
    assert registry.has_key("cerebras")
    model = registry.get("groq", "openai/gpt-oss-120b")
    assert model is not None
    assert registry.request_options(model).headers["x-h"] == "auth-header"
    # Saving a new key with /login keeps the credential's env.
    registry.auth.set_api_key("groq", "new-key")
    assert json.loads((agent / "auth.json").read_text())["groq"]["env"]["KEY_IN_ENV"] == "from-auth-env"


@pytest.mark.parametrize(
    ("settings", "between", "first_byte"),
    [
        ({}, 90.0, 120.0),  # not set: pi-tui's retry.* limits
        ({"retry": {"idleTimeoutSeconds": 5, "firstByteTimeoutSeconds": 7}}, 5.0, 7.0),
        ({"httpIdleTimeoutMs": 2500, "retry": {"idleTimeoutSeconds": 5}}, 2.5, 2.5),  # pi 1.x wins
        ({"httpIdleTimeoutMs": 0}, NO_LIMIT, NO_LIMIT),
        ({"httpIdleTimeoutMs": "disabled"}, NO_LIMIT, NO_LIMIT),
    ],
)
def test_idle_limits(settings: dict[str, object], between: float, first_byte: float) -> None:
    limits = idle_limits(Settings.model_validate(settings))
    assert (limits.between, limits.first_byte) == (between, first_byte)


def test_http_proxy_fills_only_unset_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "")  # recorded, so the value set below is undone after
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.setenv("HTTPS_PROXY", "http://users-own:1")
    apply_http_proxy("  http://proxy.example:3128 ")
    assert os.environ["HTTP_PROXY"] == "http://proxy.example:3128"
    assert os.environ["HTTPS_PROXY"] == "http://users-own:1"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"AZURE_OPENAI_RESOURCE_NAME": "res"}, "https://res.openai.azure.com/openai/v1"),
        (
            {"AZURE_OPENAI_BASE_URL": "https://res.cognitiveservices.azure.com/"},
            "https://res.cognitiveservices.azure.com/openai/v1",
        ),
        ({"AZURE_OPENAI_BASE_URL": "https://res.ai.azure.com/openai"}, "https://res.ai.azure.com/openai/v1"),
        (
            {"AZURE_OPENAI_BASE_URL": "https://proxy.example/azure/", "AZURE_OPENAI_RESOURCE_NAME": "res"},
            "https://proxy.example/azure",
        ),
        ({}, "https://from-models-json.openai.azure.com/openai/v1"),
    ],
)
def test_azure_endpoint(env: dict[str, str], expected: str) -> None:
    model = Model(
        id="gpt-5.4",
        api="azure-openai-responses",
        provider="azure",
        base_url="https://from-models-json.openai.azure.com",
    )
    assert azure.base_url(model, env) == expected


def test_azure_deployment_map() -> None:
    model = Model(id="gpt-5.4", api="azure-openai-responses", provider="azure")
    assert azure.deployment(model, {"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "a=b, gpt-5.4 = dep ,bad"}) == "dep"
    assert azure.deployment(model, {"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "other=x"}) == "gpt-5.4"
    with pytest.raises(ConfigError, match="AZURE_OPENAI_BASE_URL"):
        azure.base_url(model, {})
