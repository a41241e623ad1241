"""Azure OpenAI (pi 1.x's ``azure`` provider): the Responses API on an Azure endpoint.

What differs from OpenAI itself, as pi 1.5.2 (its AzureOpenAI client) sends it:

- the endpoint: ``AZURE_OPENAI_BASE_URL``, else
  ``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1``, else the model's
  ``baseUrl`` from models.json; a bare resource URL on ``*.openai.azure.com``,
  ``*.cognitiveservices.azure.com`` or ``*.ai.azure.com`` gets the ``/openai/v1`` path;
- ``?api-version=`` on every request (``AZURE_OPENAI_API_VERSION``, default ``v1``);
- the key in an ``api-key`` header, not ``Authorization: Bearer``;
- the request's ``model`` is the deployment name: the model id, or its entry in
  ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``id=deployment,id2=deployment2``).

Each variable is looked up in the request's provider environment (auth.json's ``env`` for
``azure``, see :class:`pi_tui.config.auth.AuthStore`) before the process environment. Foundry
models configured with ``"api": "openai-completions"`` use the same endpoint and deployment rules
through :mod:`pi_tui.ai.openai_completions` (with a Bearer key, as pi's OpenAI client sends it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import quote, urlsplit, urlunsplit

from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.openai_responses import ResponsesParser, request_body
from pi_tui.ai.protocol import HttpRequest
from pi_tui.ai.types import Context, Model, StreamOptions
from pi_tui.ai.wire import stream_headers

PROVIDER = "azure"
API = "azure-openai-responses"
DEFAULT_API_VERSION = "v1"
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")
_ROOT_PATHS = ("", "/", "/openai", "/openai/v1/responses")


def _lookup(name: str, env: Mapping[str, str] | None) -> str | None:
    """``env`` (auth.json's per-provider values) over the process environment; empty is unset."""
    value = (env or {}).get(name) or os.environ.get(name) or ""
    return value.strip() or None


def base_url(model: Model, env: Mapping[str, str] | None = None) -> str:
    """The endpoint requests go to; a one-line :class:`ConfigError` when nothing gives one."""
    configured = _lookup("AZURE_OPENAI_BASE_URL", env)
    resource = _lookup("AZURE_OPENAI_RESOURCE_NAME", env)
    if configured is None and resource is not None:
        configured = f"https://{resource}.openai.azure.com/openai/v1"
    if configured is None and model.base_url:
        configured = model.base_url
    if configured is None:
        raise ConfigError(
            "Azure OpenAI needs an endpoint: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, "
            'or "baseUrl" for provider "azure" in models.json'
        )
    return _normalise(configured)


def _normalise(url: str) -> str:
    trimmed = url.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"Invalid Azure OpenAI base URL: {url}")
    host = (parts.hostname or "").lower()
    if host.endswith(_AZURE_HOSTS) and parts.path.rstrip("/") in _ROOT_PATHS:
        parts = parts._replace(path="/openai/v1", query="", fragment="")
    return urlunsplit(parts).rstrip("/")


def api_version(env: Mapping[str, str] | None = None) -> str:
    return _lookup("AZURE_OPENAI_API_VERSION", env) or DEFAULT_API_VERSION


def deployment(model: Model, env: Mapping[str, str] | None = None) -> str:
    """The deployment name sent as the request's model (the id unless the map renames it)."""
    for entry in (_lookup("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", env) or "").split(","):
        model_id, equals, name = entry.strip().partition("=")
        if equals and model_id.strip() == model.id and name.strip():
            return name.strip()
    return model.id


class AzureResponsesClient:
    api = API

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        env = options.provider_env
        body = request_body(model, context, options)
        body["model"] = deployment(model, env)
        url = f"{base_url(model, env)}/responses?api-version={quote(api_version(env), safe='')}"
        return HttpRequest(url=url, headers=stream_headers(model, options, "api-key"), body=body)

    def parser(self, builder: MessageBuilder) -> ResponsesParser:
        return ResponsesParser(builder)


CLIENT = AzureResponsesClient()
