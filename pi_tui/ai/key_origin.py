"""Where a provider's API key comes from, layer by layer, without running a ``!command`` or
reading the key: one answer that ``/login``'s list and ``pi-tui auth check`` each put in words.

The layers are the order requests resolve a key in (:meth:`ModelRegistry.resolve_api_key`):
a subscription login saved in auth.json (``oauth``: its token is used and renewed, as pi does),
an API key saved there (ours, or pi's beneath it), models.json's ``apiKey``, the provider's
environment variable (auth.json's ``env`` for that provider counts, as it does for requests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry


@dataclass(frozen=True, slots=True)
class KeyOrigin:
    layer: Literal["oauth", "auth.json", "models.json", "env", "none"]
    by_pi: bool = False
    """oauth, auth.json: the login or key is in pi's file, read beneath ours."""
    command: bool = False
    """models.json: the ``apiKey`` is a ``!command``."""
    env_var: str | None = None
    """The provider's variable that is set, else the one holding its plain API key (None: a
    provider that reads none)."""


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
    found = env_var is not None and registry.has_key(provider)  # the two layers above are empty
    return KeyOrigin("env" if found else "none", env_var=env_var)
