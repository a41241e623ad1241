"""The generated catalogue in use: every provider overridable from models.json, credentials the
machine provides, base URLs naming variables, and the API kind pi-tui lists but does not speak.

The facts themselves (pi's providers, models and variables) are checked against the installed
pi in test_catalogue_generated.py; these tests are about what pi-tui does with them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.catalogue import CATALOGUE, KEY_ENV_VAR_NAMES, PROVIDERS, builtin_models
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.model_list import format_model_list
from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.scoped_models import resolve_scope
from pi_tui.ai.types import Model
from pi_tui.cli import main
from tests.support.model_server import ModelServer

AMBIENT = (
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_GATEWAY_ID",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key, cloud credential or account variable of the developer's reaches these tests."""
    for name in (*KEY_ENV_VAR_NAMES, *AMBIENT):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no gcloud ADC file of the developer's


def write_models(agent_dir: Path, data: object) -> None:
    (agent_dir / "models.json").write_text(json.dumps(data), encoding="utf-8")


def test_every_builtin_model_is_what_validation_would_make() -> None:
    """The catalogue is built without validation, for speed: each model must equal the one
    pydantic makes from the same fields (headers too, which a dump leaves out)."""
    for model in builtin_models():
        twin = Model.model_validate({**model.model_dump(by_alias=True), "headers": model.headers})
        assert twin == model, model.label
        assert twin.model_dump(by_alias=True) == model.model_dump(by_alias=True)


def test_models_json_overrides_every_builtin_provider(agent_dir: Path) -> None:
    """baseUrl, headers, compat, an added model and a modelOverrides entry, for all of pi's 43
    providers at once, as they worked for the nine hand-written ones."""
    providers = [name for name in PROVIDERS if name != "offline"]
    config: dict[str, dict[str, object]] = {}
    for name in providers:
        first = CATALOGUE[name][0] if CATALOGUE[name] else None
        entry: dict[str, object] = {
            "baseUrl": f"https://proxy.example.com/{name}",
            "headers": {"x-proxy": name},
            "compat": {"proxyCompat": name},
            "models": [{"id": f"added-{name}", "reasoning": True}],
        }
        if first is not None:
            entry["modelOverrides"] = {first: {"name": f"renamed {name}", "contextWindow": 4242}}
        else:  # pi's typesafe: a provider without chat models, so no API kind to inherit
            entry["api"] = "openai-completions"
        config[name] = entry
    write_models(agent_dir, {"providers": config})
    registry = ModelRegistry()
    for name in providers:
        models = [m for m in registry.all() if m.provider == name]
        assert len(models) == len(CATALOGUE[name]) + 1, name
        assert {m.base_url for m in models} == {f"https://proxy.example.com/{name}"}
        assert all(m.headers["x-proxy"] == name and m.compat["proxyCompat"] == name for m in models)
        added = registry.get(name, f"added-{name}")
        assert added is not None and added.reasoning
        assert added.api == (PROVIDERS[name].api or "openai-completions"), name
        if CATALOGUE[name]:
            renamed = registry.get(name, CATALOGUE[name][0])
            assert renamed is not None
            assert (renamed.name, renamed.context_window) == (f"renamed {name}", 4242)


def test_provider_headers_from_the_catalogue_are_kept_under_an_override(agent_dir: Path) -> None:
    copilot = next(m for m in builtin_models() if m.provider == "github-copilot")
    assert copilot.headers["Copilot-Integration-Id"] == "vscode-chat"  # pi's fact
    write_models(agent_dir, {"providers": {"github-copilot": {"headers": {"x-extra": "1"}}}})
    moved = ModelRegistry().get("github-copilot", copilot.id)
    assert moved is not None
    assert moved.headers == {**copilot.headers, "x-extra": "1"}


def test_bedrock_credentials_are_ambient_not_refused_for_a_missing_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = ModelRegistry()
    model = registry.provider_default("amazon-bedrock")
    assert model is not None and model.api == "bedrock-converse-stream"
    assert model.id == PROVIDERS["amazon-bedrock"].default_model
    assert not registry.has_key("amazon-bedrock") and not registry.needs_key("amazon-bedrock")
    try:  # the Bedrock client may say no AWS credentials were found, but never "No API key"
        registry.request_options(model)
    except ConfigError as error:
        assert "No API key" not in str(error)
    monkeypatch.setenv("AWS_PROFILE", "work")
    assert registry.has_key("amazon-bedrock")
    monkeypatch.delenv("AWS_PROFILE")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA")
    assert not registry.has_key("amazon-bedrock")  # half a key pair is none
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    assert registry.has_key("amazon-bedrock")
    assert registry.request_options(model).api_key is None  # the client signs with the pair


def test_vertex_counts_an_api_key_or_adc_with_project_and_location(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    registry = ModelRegistry()
    assert not registry.has_key("google-vertex")
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "k")
    assert registry.has_key("google-vertex")
    monkeypatch.delenv("GOOGLE_CLOUD_API_KEY")
    adc = tmp_path / "adc.json"
    adc.write_text("{}")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    assert not registry.has_key("google-vertex")  # no location yet
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    assert registry.has_key("google-vertex")
    assert not registry.needs_key("google-vertex") and registry.needs_key("anthropic")


def test_anthropic_bearer_token_variables_count_as_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ModelRegistry()
    assert not registry.has_key("anthropic")
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "sk-ant-oat01-x")
    assert registry.has_key("anthropic")


def test_base_url_variables_are_filled_from_auth_env_then_process_env(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf")
    registry = ModelRegistry()
    model = registry.provider_default("cloudflare-workers-ai")
    assert model is not None and "{CLOUDFLARE_ACCOUNT_ID}" in model.base_url
    with pytest.raises(ConfigError) as caught:
        registry.request_options(model)
    message = str(caught.value)
    assert "\n" not in message and "CLOUDFLARE_ACCOUNT_ID" in message and "auth.json" in message

    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "from-process")  # set after the registry loaded
    expected = "https://api.cloudflare.com/client/v4/accounts/from-process/ai/v1"
    assert registry.request_options(model).base_url == expected
    filled = ModelRegistry().provider_default("cloudflare-workers-ai")
    assert filled is not None
    assert filled.base_url == "https://api.cloudflare.com/client/v4/accounts/from-process/ai/v1"

    auth = {
        "cloudflare-workers-ai": {"type": "api_key", "key": "cf", "env": {"CLOUDFLARE_ACCOUNT_ID": "acct"}}
    }
    (agent_dir / "auth.json").write_text(json.dumps(auth))
    registry = ModelRegistry()
    filled = registry.provider_default("cloudflare-workers-ai")
    assert filled is not None and "/accounts/acct/" in filled.base_url  # auth.json's env first
    assert registry.request_options(filled).api_key == "cf"
    gateway = registry.provider_default("cloudflare-ai-gateway")
    assert gateway is not None and "{CLOUDFLARE_GATEWAY_ID}" in gateway.base_url  # that one unset


def test_vertex_location_placeholder_is_left_to_its_client() -> None:
    model = ModelRegistry().provider_default("google-vertex")
    assert model is not None and model.base_url == "https://{location}-aiplatform.googleapis.com"


def test_radius_models_are_listed_but_using_one_is_one_line(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    registry = ModelRegistry()
    radius = [m for m in registry.list_models("radius/")]
    assert radius and {m.api for m in radius} == {"pi-messages"}
    monkeypatch.setenv("RADIUS_API_KEY", "rk")
    monkeypatch.chdir(tmp_path)
    code = main(["--no-session", "--model", "radius/balanced", "-p", "hi"])
    out, err = capfd.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "radius/balanced" in err and "pi-messages" in err


def test_list_models_search_and_scoped_globs(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ModelRegistry()
    found = registry.list_models("deepseek v4")
    texts = [f"{m.label} {m.name}".lower() for m in found]
    assert found and all("deepseek" in text and "v4" in text for text in texts)
    assert {m.provider for m in found} >= {"deepseek", "openrouter"}
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    scope = resolve_scope(registry, ["openrouter/*", "deepseek/*"])
    assert [s.key for s in scope.models] == [f"openrouter/{i}" for i in CATALOGUE["openrouter"]]
    # "deepseek/*" also names OpenRouter's deepseek/... ids (a glob matches the bare id too, as
    # in pi), already in the scope; deepseek's own are not offered without its key.
    assert scope.unmatched == [] and not any(s.model.provider == "deepseek" for s in scope.models)


@pytest.mark.parametrize(
    ("tokens", "shown"),
    [
        (999, "999"),
        (200_000, "200K"),
        (65_535, "65.5K"),
        (131_072, "131.1K"),
        (2_000_000, "2M"),
        (1_048_576, "1.0M"),
    ],
)
def test_list_models_writes_sizes_as_pi_does(tokens: int, shown: str) -> None:
    """pi's --list-models table: whole units bare, else one decimal (pi-tui rounded 65,535 to
    66K, a size no model has)."""
    model = Model(id="m", api="openai-completions", provider="p", context_window=tokens, max_tokens=tokens)
    assert format_model_list([model]).splitlines()[1].split()[2:4] == [shown, shown]


def test_every_credential_variable_of_the_catalogue_is_hidden_as_a_credential() -> None:
    """Not only each provider's API key variable: anthropic's bearer tokens too."""
    from pi_tui.secrets.sources import known_credentials

    environ = {"ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-abcdefgh", "HF_TOKEN": "hf_abcdefghijk"}
    found = known_credentials(None, None, environ)
    assert set(found) == set(environ.values())


def test_a_resumed_session_on_a_provider_without_credentials_moves_to_one_with_a_key(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """openai-codex reads no variable (a ChatGPT login only): with no login, a session that used
    it continues on a model that has a key, as one whose provider's variable is unset does."""
    codex = PROVIDERS["openai-codex"]
    assert codex.env_vars == () and codex.default_model is not None
    session = tmp_path / "codex.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "0b5e7a1c-1d2e-4f00-8a00-000000000001",
        "timestamp": "2026-11-21T20:11:57.309Z",
        "cwd": str(tmp_path),
    }
    change = {
        "type": "model_change",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": "2026-11-21T20:11:57.335Z",
        "provider": "openai-codex",
        "modelId": codex.default_model,
    }
    session.write_text(json.dumps(header) + "\n" + json.dumps(change) + "\n")  # fmt: skip
    monkeypatch.chdir(tmp_path)
    with ModelServer() as server:
        write_models(agent_dir, server.models_json())
        code = main(["--session", str(session), "-p", "carry on"])
        out, err = capfd.readouterr()
    assert (code, out) == (0, "echo: carry on\n"), err
    assert f"openai-codex/{codex.default_model}, which has no API key here" in err
