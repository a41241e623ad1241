"""Google Vertex AI (pi's ``google-vertex`` provider): Gemini models on Google Cloud.

The body and the stream are Gemini's (:mod:`pi_tui.ai.google`'s builder and parser); what
differs is where the request goes and how it is authorised, as pi 1.5.2 (through Google's SDK)
decides it:

- an API key (``GOOGLE_CLOUD_API_KEY``, auth.json or ``--api-key``): Vertex "express mode",
  ``https://aiplatform.googleapis.com/v1/publishers/google/models/{id}:streamGenerateContent``
  with the key in ``x-goog-api-key``;
- otherwise Application Default Credentials (:mod:`pi_tui.ai.google_adc`) as a Bearer token,
  and the project (``GOOGLE_CLOUD_PROJECT`` or ``GCLOUD_PROJECT``) and location
  (``GOOGLE_CLOUD_LOCATION``) are required:
  ``https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/
  publishers/google/models/{id}:streamGenerateContent?alt=sse`` (``global`` on
  ``aiplatform.googleapis.com``, the multi-regions ``us`` / ``eu`` on
  ``aiplatform.{location}.rep.googleapis.com``);
- ``GOOGLE_VERTEX_BASE_URL`` replaces the host (the project path still follows); a model's
  ``baseUrl`` without the catalogue's ``{location}`` placeholder (a models.json override) is
  the collection the model path is appended to, with ``/v1`` unless it names a version.

Each variable is looked up in the request's provider environment (auth.json's ``env`` for
``google-vertex``) before the process environment.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from pi_tui.ai import google_adc
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ConfigError, ProviderError
from pi_tui.ai.google import GoogleParser, google_level, request_body, requires_tool_call_id
from pi_tui.ai.protocol import HttpRequest
from pi_tui.ai.thinking import clamp_level, request_level
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.ai.wire import stream_headers

API = "google-vertex"
API_VERSION = "v1"
GLOBAL_HOST = "https://aiplatform.googleapis.com"
MULTI_REGIONS = frozenset({"us", "eu"})
CREDENTIALS_MARKER = "gcp-vertex-credentials"
"""The key pi stores for "use ambient credentials": not a key."""
_VERSION_PART = re.compile(r"v\d+(?:beta\d*)?")


def _lookup(name: str, env: Mapping[str, str] | None) -> str | None:
    value = (env or {}).get(name) or os.environ.get(name) or ""
    return value.strip() or None


def api_key(options: StreamOptions) -> str | None:
    """The request's key, unless it is pi's ambient-credentials marker or a ``<placeholder>``."""
    key = (options.api_key or "").strip()
    if not key or key == CREDENTIALS_MARKER or re.fullmatch(r"<[^>]+>", key):
        return None
    return key


def project_and_location(env: Mapping[str, str] | None) -> tuple[str, str]:
    """Both, or a one-line :class:`ConfigError` naming the variable to set."""
    project = _lookup("GOOGLE_CLOUD_PROJECT", env) or _lookup("GCLOUD_PROJECT", env)
    if project is None:
        raise ConfigError(
            "Google Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), "
            "or use an API key (GOOGLE_CLOUD_API_KEY)"
        )
    location = _lookup("GOOGLE_CLOUD_LOCATION", env)
    if location is None:
        raise ConfigError(
            "Google Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION (e.g. us-central1 or global), "
            "or use an API key (GOOGLE_CLOUD_API_KEY)"
        )
    return project, location


def check(options: StreamOptions) -> None:
    """Fail now, in one line, when a request could not be sent (startup calls this through
    :meth:`pi_tui.ai.models.ModelRegistry.request_options`)."""
    if api_key(options) is not None:
        return
    project_and_location(options.provider_env)
    path = google_adc.credentials_path(options.provider_env)
    if not path.is_file():
        raise ConfigError(google_adc.missing_message(path, options.provider_env))


@dataclass(slots=True)
class Endpoint:
    url: str
    project: str | None = None
    location: str | None = None


def endpoint(model: Model, options: StreamOptions) -> Endpoint:
    """The streaming URL for ``model`` (see the module docstring for the rules)."""
    env = options.provider_env
    project = location = None
    if api_key(options) is None:
        project, location = project_and_location(env)
    version = API_VERSION
    custom = _custom_base(model.base_url)
    collection = custom is not None
    if custom is not None:
        base = custom
        if _names_version(custom):
            version = ""
    else:
        base = _lookup("GOOGLE_VERTEX_BASE_URL", env) or _default_host(location)
    parts = [base.rstrip("/")]
    if version:
        parts.append(version)
    if not collection and project and location and not model.id.startswith("projects/"):
        parts.append(f"projects/{quote(project, safe='')}/locations/{quote(location, safe='')}")
    parts.append(f"{model_path(model.id)}:streamGenerateContent?alt=sse")
    return Endpoint("/".join(parts), project, location)


def _custom_base(base_url: str) -> str | None:
    """A configured base URL, unless it is the catalogue's ``{location}`` template (pi's rule)."""
    trimmed = base_url.strip()
    return None if not trimmed or "{location}" in trimmed else trimmed


def _names_version(url: str) -> bool:
    return any(_VERSION_PART.fullmatch(part) for part in urlsplit(url).path.split("/"))


def _default_host(location: str | None) -> str:
    if location is None or location == "global":
        return GLOBAL_HOST
    if location in MULTI_REGIONS:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def model_path(model_id: str) -> str:
    """``publishers/google/models/{id}``; ``publisher/model`` ids and full resource names kept."""
    if model_id.startswith(("publishers/", "projects/", "models/")):
        return model_id
    if "/" in model_id:
        publisher, name = model_id.split("/", 1)
        return f"publishers/{publisher}/models/{name}"
    return f"publishers/google/models/{model_id}"


def vertex_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """Gemini's body as pi 1.5.2 sends it to Vertex (checked against the real pi in
    tests/interop/test_google_vertex_vs_pi.py): tools as ``parametersJsonSchema`` (the whole JSON
    schema, ``const`` as a one-value ``enum``), pi's thinking settings for Vertex (levels,
    budgets, and a thinking model asked not to think told so), and no call ids on Gemini's
    parts."""
    body = request_body(model, context, options)
    if not requires_tool_call_id(model.id):
        _drop_call_ids(body["contents"])
    if context.tools:
        body["tools"] = [{"functionDeclarations": [json_schema_declaration(tool) for tool in context.tools]}]
    if model.reasoning:
        body["generationConfig"]["thinkingConfig"] = thinking_config(model, options)
    return body


_PI_BUDGETS = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}
"""pi's Vertex thinking budgets per Google level (``-1``, dynamic, for other budget models)."""


def thinking_config(model: Model, options: StreamOptions) -> dict[str, Any]:
    """A thinking model's ``thinkingConfig`` as pi sends it to Vertex: its Google level
    (``thinkingLevelMap``'s value, else the level) as ``thinkingLevel`` for the models that take
    one, else pi's token budget for that level (the user's ``thinkingBudgets`` first); at
    ``off``, :func:`disabled_thinking`."""
    level = request_level(model, options.thinking)
    if level is None:
        return disabled_thinking(model)
    google = google_level(model, level)
    if uses_thinking_level(model.id):
        return {"includeThoughts": True, "thinkingLevel": google.upper()}
    custom = options.thinking_budgets.get(google)
    if custom is not None:
        return {"includeThoughts": True, "thinkingBudget": custom}
    table = next((budgets for name, budgets in _PI_BUDGETS.items() if name in model.id), None)
    return {"includeThoughts": True, "thinkingBudget": table.get(google, -1) if table else -1}


def json_schema_declaration(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parametersJsonSchema": const_as_enum(tool.parameters),
    }


_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_SUBSCHEMAS = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)


def const_as_enum(schema: Any, names: bool = False) -> Any:
    """String and number ``const`` values as one-value ``enum``s, at every schema level (Gemini
    ignores ``const`` in a JSON schema but honours ``enum``); property names are left alone."""
    if isinstance(schema, list):
        return [const_as_enum(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if names or key in _SUBSCHEMAS:
            result[key] = const_as_enum(value)
        elif key in _NAME_MAPS:
            result[key] = const_as_enum(value, names=True)
        else:
            result[key] = value
    if not names and "const" in result and "enum" not in result:
        value = result["const"]
        if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)):
            del result["const"]
            result["enum"] = [value]
    return result


_LEVEL_MODELS = re.compile(r"gemini-3(?:\.\d+)?-(?:pro|flash)|gemini-(?:[4-9]|[1-9]\d)|gemma-?4")


def uses_thinking_level(model_id: str) -> bool:
    """Gemini 3 Pro/Flash, Gemini 4 on, Gemma 4 and the ``-latest`` Flash aliases take a
    ``thinkingLevel`` instead of a token budget (pi's ``usesGoogleThinkingLevel``)."""
    lowered = model_id.lower()
    return bool(_LEVEL_MODELS.search(lowered)) or lowered in (
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    )


def disabled_thinking(model: Model) -> dict[str, Any]:
    """What pi sends a thinking model at ``off``: a zero budget, or, for a level model that
    cannot stop thinking, its weakest level."""
    if not uses_thinking_level(model.id):
        return {"thinkingBudget": 0}
    weakest = clamp_level(model, "off")
    if weakest == "off":
        return {"thinkingBudget": 0}
    return {"thinkingLevel": google_level(model, weakest).upper()}


def _drop_call_ids(contents: list[dict[str, Any]]) -> None:
    """Vertex refuses ``id`` in ``functionCall`` / ``functionResponse`` parts of Gemini models;
    pi sends ids only to the models that need them (Claude, gpt-oss), and so does this."""
    for content in contents:
        for part in content.get("parts") or ():
            for name in ("functionCall", "functionResponse"):
                inner = part.get(name)
                if isinstance(inner, dict):
                    inner.pop("id", None)


class AdcSigner:
    """Adds the ADC Bearer token (and ``x-goog-user-project``) to each attempt, as the runner's
    ``request.signer``: the token is fetched, when the cache has none fresh, in a worker thread,
    so the event loop never waits on Google's token endpoint; a retry takes a renewed token.
    Headers the request already carries (a models.json ``Authorization``) are left as they are."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)

    async def __call__(self, url: str, headers: dict[str, str], payload: bytes) -> dict[str, str]:
        try:
            token = await asyncio.to_thread(google_adc.access_token, self.env)
        except ConfigError as error:
            raise ProviderError(str(error)) from None
        given = {name.lower() for name in headers}
        added = {**token.headers, "authorization": f"Bearer {token.token}"}
        return {name: value for name, value in added.items() if name not in given}


class GoogleVertexClient:
    api = API

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        try:
            where = endpoint(model, options)
        except ConfigError as error:  # the message ends with this one line, not a class name
            raise ProviderError(str(error)) from None
        key = api_key(options)
        body = vertex_body(model, context, options)
        if key is not None:
            headers = stream_headers(model, options.model_copy(update={"api_key": key}), "x-goog-api-key")
            return HttpRequest(url=where.url, headers=headers, body=body)
        headers = stream_headers(model, options.model_copy(update={"api_key": None}))
        return HttpRequest(url=where.url, headers=headers, body=body, signer=AdcSigner(options.provider_env))

    def parser(self, builder: MessageBuilder) -> GoogleParser:
        return GoogleParser(builder)


CLIENT = GoogleVertexClient()
