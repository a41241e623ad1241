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
from pi_tui.ai.google import Budgets, GoogleParser, request_body
from pi_tui.ai.protocol import HttpRequest
from pi_tui.ai.types import Context, Model, StreamOptions
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


VERTEX_BUDGETS: Budgets = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}
"""pi 1.5.2's Vertex budgets per Google level: the Gemini API's but for 2.5 Flash-Lite, which
takes Flash's here (``-1``, dynamic, for other budget models)."""


def vertex_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """Gemini's body as pi 1.5.2 sends it (:func:`pi_tui.ai.google.request_body`, checked against
    the real pi in tests/interop/test_google_vertex_vs_pi.py) with Vertex's budget table."""
    return request_body(model, context, options, VERTEX_BUDGETS)


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
