"""Where a Vertex AI request goes, as pi 1.5.2 (through Google's SDK) decides it.

The request itself travels over loopback in tests/integration/test_google_vertex.py; these pin
the URL rules that a loopback server cannot reach (Google's hosts per location).
"""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.ai import google
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.google_vertex import CLIENT, endpoint, model_path
from pi_tui.ai.types import Context, Model, StreamOptions, ThinkingLevel, Tool
from pi_tui.messages import UserMessage

ADC = {"GOOGLE_CLOUD_PROJECT": "proj", "GOOGLE_CLOUD_LOCATION": "us-central1"}
TAIL = "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def model(base_url: str = "https://{location}-aiplatform.googleapis.com", **fields: Any) -> Model:
    values: dict[str, Any] = {"id": "gemini-2.5-flash", "api": "google-vertex", "provider": "google-vertex"}
    values.update(fields)
    return Model(base_url=base_url, **values)


def url(env: dict[str, str], key: str | None = None, base: str | None = None) -> str:
    chosen = model() if base is None else model(base)
    return endpoint(chosen, StreamOptions(api_key=key, provider_env=env)).url


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_VERTEX_BASE_URL",
        "GOOGLE_CLOUD_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def test_regional_location_uses_the_regional_host_and_the_project_path() -> None:
    assert url(ADC) == (
        f"https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/{TAIL}"
    )


def test_global_and_multi_regional_locations() -> None:
    assert url({**ADC, "GOOGLE_CLOUD_LOCATION": "global"}) == (
        f"https://aiplatform.googleapis.com/v1/projects/proj/locations/global/{TAIL}"
    )
    assert url({**ADC, "GOOGLE_CLOUD_LOCATION": "eu"}) == (
        f"https://aiplatform.eu.rep.googleapis.com/v1/projects/proj/locations/eu/{TAIL}"
    )


def test_gcloud_project_is_the_fallback_and_the_process_env_is_read_after_auth_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GCLOUD_PROJECT", "from-process")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "asia-east1")
    assert "/projects/from-process/locations/asia-east1/" in url({})
    assert "/projects/from-auth-json/locations/asia-east1/" in url({"GOOGLE_CLOUD_PROJECT": "from-auth-json"})


def test_an_api_key_is_express_mode_and_ignores_project_and_location() -> None:
    assert url(ADC, key="AIza-k") == f"https://aiplatform.googleapis.com/v1/{TAIL}"
    # pi's ambient-credentials marker and <placeholders> are not keys
    assert "/projects/proj/" in url(ADC, key="gcp-vertex-credentials")
    assert "/projects/proj/" in url(ADC, key="<authenticated>")


def test_a_models_json_base_url_is_the_collection_the_model_path_follows() -> None:
    assert url(ADC, base="https://proxy.example/vertex") == f"https://proxy.example/vertex/v1/{TAIL}"
    named = "https://proxy.example/v1/projects/p/locations/l"
    assert url(ADC, base=named) == f"{named}/{TAIL}"
    assert url(ADC, base="https://proxy.example/v1beta1/") == f"https://proxy.example/v1beta1/{TAIL}"


def test_google_vertex_base_url_replaces_only_the_host() -> None:
    env = {**ADC, "GOOGLE_VERTEX_BASE_URL": "http://127.0.0.1:9/"}
    assert url(env) == f"http://127.0.0.1:9/v1/projects/proj/locations/us-central1/{TAIL}"


def test_model_paths() -> None:
    assert model_path("gemini-2.5-pro") == "publishers/google/models/gemini-2.5-pro"
    assert model_path("anthropic/claude-x") == "publishers/anthropic/models/claude-x"
    assert model_path("projects/p/locations/l/endpoints/9") == "projects/p/locations/l/endpoints/9"


def test_missing_project_is_a_config_error_naming_the_variables() -> None:
    with pytest.raises(ConfigError, match=r"^Google Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT"):
        url({"GOOGLE_CLOUD_LOCATION": "us-central1"})


# --- the body: what pi sends Vertex beyond Gemini's shared builder ------------------------------


def body(target: Model, level: ThinkingLevel, tools: list[Tool] | None = None) -> dict[str, Any]:
    context = Context(messages=[UserMessage(content="hi")], tools=tools or [])
    options = StreamOptions(api_key="k", thinking=level)
    return CLIENT.build_request(target, context, options).body


def test_tools_go_as_the_whole_json_schema_with_const_as_enum() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"const": "fast"},
            "const": {"type": "string"},  # a property named "const" stays a property
            "items": {"type": "array", "items": {"anyOf": [{"const": 1}, {"const": True}]}},
        },
        "additionalProperties": False,
        "$schema": "https://json-schema.org/draft/2020-12/schema",
    }
    sent = body(model(), "high", [Tool(name="pick", description="Pick", parameters=schema)])
    (declaration,) = sent["tools"][0]["functionDeclarations"]
    assert "parameters" not in declaration
    assert declaration["parametersJsonSchema"] == {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast"]},
            "const": {"type": "string"},
            "items": {"type": "array", "items": {"anyOf": [{"enum": [1]}, {"const": True}]}},
        },
        "additionalProperties": False,
        "$schema": "https://json-schema.org/draft/2020-12/schema",
    }
    empty = body(model(), "high", [Tool(name="now", description="Time")])
    assert empty["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == {
        "type": "object",
        "properties": {},
    }


def test_a_thinking_model_at_off_is_told_not_to_think() -> None:
    flash = model(reasoning=True)
    assert body(flash, "off")["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    # a level model that cannot stop thinking gets its weakest level
    pro = model(id="gemini-3-pro-preview", reasoning=True, thinking_level_map={"off": None, "minimal": None})
    assert body(pro, "off")["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "LOW"}
    plain = model(reasoning=False)
    assert "thinkingConfig" not in body(plain, "off")["generationConfig"]


def test_thinking_levels_and_budgets_as_pi_sends_them_to_vertex() -> None:
    def config(target: Model, level: ThinkingLevel, **options: Any) -> Any:
        context = Context(messages=[UserMessage(content="hi")])
        sent = CLIENT.build_request(target, context, StreamOptions(api_key="k", thinking=level, **options))
        return sent.body["generationConfig"]["thinkingConfig"]

    pro = model(id="gemini-2.5-pro", reasoning=True)
    assert config(pro, "high") == {"includeThoughts": True, "thinkingBudget": 32768}
    assert config(pro, "minimal") == {"includeThoughts": True, "thinkingBudget": 128}
    assert config(pro, "low", thinking_budgets={"low": 3000}) == {
        "includeThoughts": True,
        "thinkingBudget": 3000,
    }
    other = model(id="gemini-2.0-flash-thinking", reasoning=True)
    assert config(other, "medium") == {"includeThoughts": True, "thinkingBudget": -1}
    levels = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high"}
    pro3 = model(id="gemini-3.1-pro-preview", reasoning=True, thinking_level_map=levels)
    assert config(pro3, "medium") == {"includeThoughts": True, "thinkingLevel": "MEDIUM"}
    lite = model(id="gemini-3.1-flash-lite", reasoning=True)
    assert config(lite, "minimal") == {"includeThoughts": True, "thinkingLevel": "MINIMAL"}


def test_flash_lite_takes_flashs_budgets_at_vertex_and_its_own_at_the_gemini_api() -> None:
    """The one place pi 1.5.2's Vertex body differs from its Gemini API body: 2.5 Flash-Lite's
    ``minimal`` budget (128 at Vertex, as Flash; 512 at the Gemini API)."""
    lite = model(id="gemini-2.5-flash-lite", reasoning=True)
    options = StreamOptions(api_key="k", thinking="minimal")
    context = Context(messages=[UserMessage(content="hi")])
    vertex = CLIENT.build_request(lite, context, options).body["generationConfig"]["thinkingConfig"]
    gemini_api = google.CLIENT.build_request(lite, context, options).body["generationConfig"][
        "thinkingConfig"
    ]
    assert vertex == {"includeThoughts": True, "thinkingBudget": 128}
    assert gemini_api == {"includeThoughts": True, "thinkingBudget": 512}
