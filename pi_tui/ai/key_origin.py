"""Where a provider's API key comes from, layer by layer, without running a ``!command`` or
reading the key: one answer that ``/login``'s list and ``pi-tui auth check`` each put in words.

The layers are the order requests resolve a key in (:meth:`ModelRegistry.resolve_api_key`):
auth.json (ours, or pi's beneath it), models.json's ``apiKey``, the provider's environment
variable (auth.json's ``env`` for that provider counts, as it does for requests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry


@dataclass(frozen=True, slots=True)
class KeyOrigin:
    layer: Literal["auth.json", "models.json", "env", "none"]
    by_pi: bool = False
    """auth.json: the key is in pi's file, read beneath ours."""
    command: bool = False
    """models.json: the ``apiKey`` is a ``!command``."""
    env_var: str | None = None
    """The provider's environment variable (None: a provider that needs no key)."""
    oauth_saved: bool = False
    """An OAuth login is saved for the provider, which pi-tui cannot use."""


def key_origin(registry: ModelRegistry, provider: str) -> KeyOrigin:
    """The first layer that has a key for ``provider``, or ``none``."""
    from pi_tui.ai.catalogue import ENV_VARS

    store = registry.auth
    if store.api_key(provider):
        return KeyOrigin("auth.json", by_pi=store.saved_by_pi(provider))
    configured = registry.config.providers.get(provider)
    if configured is not None and configured.api_key:
        return KeyOrigin("models.json", command=configured.api_key.startswith("!"))
    env_var = ENV_VARS.get(provider)
    found = env_var is not None and registry.has_key(provider)  # the two layers above are empty
    return KeyOrigin("env" if found else "none", env_var=env_var, oauth_saved=store.kind(provider) == "oauth")
