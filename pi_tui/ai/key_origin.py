"""Where a provider's API key comes from, layer by layer, without running a ``!command`` or
reading the key: one answer that ``/login``'s list and ``pi-tui auth check`` each put in words.

The layers are the order requests resolve a key in (:meth:`ModelRegistry.resolve_api_key`):
a subscription login saved in auth.json (``oauth``: its token is used and renewed, as pi does),
an API key saved there (ours, or pi's beneath it), models.json's ``apiKey``, the provider's
environment variable (auth.json's ``env`` for that provider counts, as it does for requests).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry


@dataclass(frozen=True, slots=True)
class KeyOrigin:
    layer: Literal["oauth", "auth.json", "models.json", "env", "ambient", "none"]
    by_pi: bool = False
    """oauth, auth.json: the login or key is in pi's file, read beneath ours."""
    command: bool = False
    """models.json: the ``apiKey`` is a ``!command``."""
    env_var: str | None = None
    """The provider's variable that is set, else the one holding its plain API key (None: a
    provider that reads none)."""
    ambient: str | None = None
    """ambient: which of the machine's credentials ("AWS access keys"), as pi's /login names it."""


def key_origin(registry: ModelRegistry, provider: str) -> KeyOrigin:
    """The first layer that has a key for ``provider``, or ``none``."""
    from pi_tui.ai.catalogue import API_KEY_ENV_VARS, ENV_VARS
    from pi_tui.ai.config_values import env_value

    store = registry.auth
    if store.oauth(provider) is not None:
        return KeyOrigin("oauth", by_pi=store.saved_by_pi(provider))
    if store.api_key(provider):
        return KeyOrigin("auth.json", by_pi=store.saved_by_pi(provider))
    configured = registry.config.providers.get(provider)
    if configured is not None and configured.api_key:
        return KeyOrigin("models.json", command=configured.api_key.startswith("!"))
    env = store.env(provider)
    set_vars = [name for name in API_KEY_ENV_VARS.get(provider, ()) if env_value(name, env)]
    env_var = set_vars[0] if set_vars else ENV_VARS.get(provider)  # anthropic: maybe its OAuth token
    if set_vars:
        return KeyOrigin("env", env_var=env_var)
    ambient = ambient_source(provider, env)
    if ambient is not None:
        return KeyOrigin("ambient", env_var=env_var, ambient=ambient)
    found = env_var is not None and registry.has_key(provider)  # the two layers above are empty
    return KeyOrigin("env" if found else "none", env_var=env_var)


def ambient_source(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """Which ambient credentials ``provider`` would use (Bedrock's AWS ones, Vertex's application
    default credentials), named as pi's /login shows them; None when there are none."""
    from pi_tui.ai.catalogue import AMBIENT_AUTH, ambient_credentials

    kind = AMBIENT_AUTH.get(provider)
    if kind is None or not ambient_credentials(provider, env):
        return None
    if kind == "google-adc":
        return "Google application default credentials"

    def get(name: str) -> str | None:
        return (env or {}).get(name) or os.environ.get(name) or None

    if get("AWS_BEARER_TOKEN_BEDROCK"):
        return "env: AWS_BEARER_TOKEN_BEDROCK"
    if get("AWS_PROFILE"):
        return "env: AWS_PROFILE"
    if get("AWS_ACCESS_KEY_ID") and get("AWS_SECRET_ACCESS_KEY"):
        return "AWS access keys"
    if get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") or get("AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        return "ECS task role"
    return "web identity token"


def no_credentials(provider: str) -> str | None:
    """What to set for a provider whose credentials may be ambient and are absent; None for
    other providers."""
    from pi_tui.ai.catalogue import AMBIENT_AUTH

    kind = AMBIENT_AUTH.get(provider)
    if kind == "aws":
        return (
            "no AWS credentials: set AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "AWS_BEARER_TOKEN_BEDROCK"
        )
    if kind == "google-adc":
        return (
            "no key: set GOOGLE_CLOUD_API_KEY, or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION with "
            "application default credentials (gcloud auth application-default login)"
        )
    return None


def missing_url_variables(registry: ModelRegistry, provider: str) -> list[str]:
    """The ``{VARIABLE}`` placeholders of the provider's base URL (Cloudflare's account and
    gateway ids) set neither in its auth.json ``env`` nor in the environment: requests cannot
    be sent without them, so the provider is not ready."""
    import re

    env = registry.auth.env(provider)
    models = [model for model in registry.all() if model.provider == provider]
    names: list[str] = []
    for model in models[:1]:
        for name in re.findall(r"\{([A-Z][A-Z0-9_]*)\}", model.base_url):
            if not (env.get(name) or os.environ.get(name)) and name not in names:
                names.append(name)
    return names


URL_VARIABLE_PROMPTS = {
    "CLOUDFLARE_ACCOUNT_ID": "Cloudflare account ID",
    "CLOUDFLARE_GATEWAY_ID": "Cloudflare AI Gateway ID",
}
"""How a login asks for each variable a base URL names (pi's prompts)."""


def url_variables(provider: str) -> list[tuple[str, str]]:
    """(variable, what to ask) for each ``{VARIABLE}`` of the built-in provider's base URL: an
    API-key login asks for them after the key and saves them in the credential's ``env``, as
    pi's Cloudflare logins do."""
    import re

    from pi_tui.ai.catalogue import PROVIDERS

    info = PROVIDERS.get(provider)
    if info is None:
        return []
    names = dict.fromkeys(re.findall(r"\{([A-Z][A-Z0-9_]*)\}", info.base_url))
    return [(name, URL_VARIABLE_PROMPTS.get(name, name)) for name in names]
