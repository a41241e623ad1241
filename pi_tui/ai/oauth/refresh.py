"""A stored subscription login turned into what a request needs, renewed when it has expired.

pi's rule (``pi-ai/dist/auth/resolve.js``): a credential with less than five minutes left is
renewed before use, under the auth.json lock, re-checked once the lock is held so that two
programs (pi and pi-tui, or two pi-tuis) renew it only once; the renewed credential is written
back in pi's shape before the lock is let go (:meth:`AuthStore.refresh_oauth`). Each provider
renews with its own grant, at pi's endpoints (:mod:`.providers`):

- Anthropic: a JSON ``refresh_token`` grant;
- OpenAI Codex, ChatGPT, Kimi, xAI, Radius: a form-encoded ``refresh_token`` grant;
- GitHub Copilot: the stored GitHub token (``refresh``) exchanged for a Copilot token, whose
  ``proxy-ep`` names the API host to send requests to;
- Meta: the identity token (``refresh``) mints a day-long API key;
- OpenRouter: the login is an API key that does not expire.

This runs synchronously: :meth:`ModelRegistry.request_options` is synchronous and the agent
calls it before each request. A renewal is one short POST about once an hour, bounded by
:data:`GRANT_TIMEOUT` (kept under the lock folder's 10-second staleness, so nobody takes the
lock over while we hold it). A failed renewal is one line naming the login and ``/login``;
auth.json keeps what it had.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from pi_tui.ai.errors import ConfigError
from pi_tui.ai.oauth.providers import (
    OAuthConfigError,
    OAuthProvider,
    copilot_urls,
    oauth_provider,
)
from pi_tui.ai.oauth.tokens import (
    COPILOT_HEADERS,
    META_MINT_HEADERS,
    XAI_DEFAULT_LIFETIME_S,
    TokenAnswerError,
    answer_json,
    copilot_base_url,
    meta_key_credential,
    seconds_field,
    text_field,
    token_credential,
    with_chatgpt_grant,
    with_codex_account,
)
from pi_tui.config.auth import AuthFileError, AuthStore, OAuthCredential

MIN_VALIDITY_MS = 5 * 60 * 1000
"""pi renews a token with less than this left (DEFAULT_OAUTH_MINIMUM_VALIDITY_MS)."""
GRANT_TIMEOUT = 8.0
"""Seconds a renewal request may take."""


class RenewalFailed(Exception):
    """The provider did not renew the token; the message says why in a few words.
    ``unreachable``: the token endpoint was not reached (network), so the login may be fine."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class OAuthAuth:
    """What a request to the provider needs from a login (pi's ``toAuth``)."""

    api_key: str
    base_url: str | None = None
    """Where requests go instead of the model's ``baseUrl`` (Copilot: the token's API host)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Headers the provider's API needs with this login (under the model's own headers)."""


def now_ms() -> int:
    return int(time.time() * 1000)


def expires_soon(credential: OAuthCredential, min_validity_ms: int = MIN_VALIDITY_MS) -> bool:
    """Less than ``min_validity_ms`` left (pi's test, so both renew at the same moment)."""
    return now_ms() + min_validity_ms >= float(credential["expires"])


def short_name(facts: OAuthProvider) -> str:
    """ "Anthropic" of "Anthropic (Claude Pro/Max)": the name a one-line message uses."""
    return facts.name.split(" (")[0]


def oauth_auth(
    store: AuthStore,
    provider: str,
    *,
    client: httpx.Client | None = None,
    min_validity_ms: int = MIN_VALIDITY_MS,
) -> OAuthAuth | None:
    """``provider``'s saved login made ready for a request, renewed first when it has less than
    ``min_validity_ms`` left (pi's ``--min-expiry`` asks for more); None when no OAuth login is
    saved for it (or pi has no OAuth for the provider).

    Raises :class:`ConfigError` with one line when the renewal fails or the file cannot be
    changed; the saved credential is then as it was.
    """
    credential = store.oauth(provider)
    if credential is None:
        return None
    try:
        facts = oauth_provider(provider)
    except OAuthConfigError as error:
        raise ConfigError(str(error)) from None
    if facts is None:
        return None

    def needs(current: OAuthCredential) -> bool:
        return expires_soon(current, min_validity_ms)

    if needs(credential):
        renewed = _renew_saved(store, facts, needs, client)
        if renewed is None:
            return None  # logged out meanwhile
        credential = renewed
    return auth_of(facts, credential)


def _renew_saved(
    store: AuthStore,
    facts: OAuthProvider,
    needs: Callable[[OAuthCredential], bool],
    client: httpx.Client | None,
) -> OAuthCredential | None:
    try:
        if client is not None:
            return store.refresh_oauth(facts.id, needs, lambda current: renew(facts, current, client))
        with httpx.Client(timeout=GRANT_TIMEOUT) as own:
            return store.refresh_oauth(facts.id, needs, lambda current: renew(facts, current, own))
    except RenewalFailed as failed:
        raise ConfigError(renewal_failed_message(facts, failed)) from None
    except AuthFileError as error:
        raise ConfigError(f"{short_name(facts)} login expired and could not be renewed: {error}") from None


def renewal_failed_message(facts: OAuthProvider, failed: RenewalFailed) -> str:
    """One line for a failed renewal: a network failure leaves the login as it is (retry);
    a refusal asks for a new sign-in, named for the TUI and for a shell."""
    if failed.unreachable:
        return (
            f"{short_name(facts)} login expired and could not be renewed: the network failed "
            f"({failed}); the saved login is unchanged, try again when the connection is back"
        )
    return (
        f"{short_name(facts)} login expired and could not be renewed ({failed}): sign in again with "
        f"/login {facts.id} (pi-tui auth login {facts.id} from a shell)"
    )


def auth_of(facts: OAuthProvider, credential: OAuthCredential) -> OAuthAuth:
    """pi's ``toAuth``: the access token, and for Copilot its API host and editor headers."""
    access = str(credential["access"])
    if facts.id != "github-copilot":
        return OAuthAuth(api_key=access)
    override = facts.extra.get("copilotApiUrl")
    domain = _enterprise_domain(credential)
    return OAuthAuth(
        api_key=access,
        base_url=override or copilot_base_url(access, domain),
        headers=dict(COPILOT_HEADERS),
    )


def _enterprise_domain(credential: OAuthCredential) -> str | None:
    value = credential.get("enterpriseUrl")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    host = urlsplit(text if "://" in text else f"https://{text}").hostname
    return host or None


# --- the grants ------------------------------------------------------------------------------


def renew(facts: OAuthProvider, credential: OAuthCredential, client: httpx.Client) -> OAuthCredential:
    """The provider's grant for ``credential``: the new fields, in pi's shape. Raises
    :class:`RenewalFailed`."""
    grant = GRANTS.get(facts.refresh_grant)
    if grant is None:
        return credential  # "none": the login does not expire (OpenRouter's key)
    try:
        return grant(facts, credential, client)
    except TokenAnswerError as error:
        raise RenewalFailed(str(error)) from None
    except httpx.TimeoutException:
        raise RenewalFailed(
            f"{_host(facts, credential)} did not answer in {GRANT_TIMEOUT:g} s", unreachable=True
        ) from None
    except httpx.HTTPError as error:
        raise RenewalFailed(
            f"cannot reach {_host(facts, credential)}: {type(error).__name__}", unreachable=True
        ) from None


def _host(facts: OAuthProvider, credential: OAuthCredential) -> str:
    return urlsplit(_token_url(facts, credential)).netloc or facts.token_url


def _token_url(facts: OAuthProvider, credential: OAuthCredential) -> str:
    if facts.refresh_grant == "copilot":
        return copilot_urls(facts, _enterprise_domain(credential))["copilotTokenUrl"]
    if facts.refresh_grant == "mint":
        return facts.extra.get("mintUrl", facts.token_url)
    return facts.token_url


def _tokens(
    facts: OAuthProvider, data: dict[str, Any], previous_refresh: str | None = None
) -> OAuthCredential:
    """access/refresh/expires from a token answer, read as a login reads it (:mod:`.tokens`)."""
    default = XAI_DEFAULT_LIFETIME_S if facts.id == "xai" else None
    return token_credential(
        data, facts.expiry_margin_ms, previous_refresh=previous_refresh, default_lifetime=default
    )


def _json_grant(facts: OAuthProvider, credential: OAuthCredential, client: httpx.Client) -> OAuthCredential:
    body = {
        "grant_type": "refresh_token",
        "client_id": facts.client_id,
        "refresh_token": credential["refresh"],
    }
    response = client.post(facts.token_url, json=body, headers={"Accept": "application/json"})
    return _tokens(facts, answer_json(response))


def _form_grant(facts: OAuthProvider, credential: OAuthCredential, client: httpx.Client) -> OAuthCredential:
    form = {
        "grant_type": "refresh_token",
        "client_id": facts.client_id,
        "refresh_token": credential["refresh"],
    }
    if facts.id == "openai":
        client_id = credential.get("clientId")
        if not isinstance(client_id, str) or not client_id.strip():
            raise RenewalFailed("the saved login has no issued client id")
        form["client_id"] = client_id
        form["resource"] = facts.extra.get("resource", "")
    response = client.post(facts.token_url, data=form, headers={"Accept": "application/json"})
    data = answer_json(response)
    fresh = _tokens(facts, data, credential["refresh"] if facts.id == "xai" else None)
    if facts.id == "openai-codex":
        fresh = with_codex_account(fresh)
    elif facts.id == "openai":
        fresh = with_chatgpt_grant(fresh, data, form["client_id"])
    elif facts.id == "radius" and isinstance(data.get("scope"), str):
        fresh["scope"] = data["scope"]
    return fresh


def _copilot_grant(
    facts: OAuthProvider, credential: OAuthCredential, client: httpx.Client
) -> OAuthCredential:
    domain = _enterprise_domain(credential)
    url = copilot_urls(facts, domain)["copilotTokenUrl"]
    headers = {
        "Accept": "application/json",
        "Authorization": f"Bearer {credential['refresh']}",
        **COPILOT_HEADERS,
    }
    data = answer_json(client.get(url, headers=headers))
    expires_at = seconds_field(data, "expires_at")
    fresh: OAuthCredential = {
        "type": "oauth",
        "refresh": credential["refresh"],
        "access": text_field(data, "token"),
        "expires": int(expires_at * 1000) - facts.expiry_margin_ms,
    }
    if domain:
        fresh["enterpriseUrl"] = domain
    return fresh


def _meta_grant(facts: OAuthProvider, credential: OAuthCredential, client: httpx.Client) -> OAuthCredential:
    headers = {**META_MINT_HEADERS, "Authorization": f"Bearer {credential['refresh']}"}
    response = client.post(_token_url(facts, credential), content=b"{}", headers=headers)
    return meta_key_credential(response, str(credential["refresh"]))


GRANTS: dict[str, Callable[[OAuthProvider, OAuthCredential, httpx.Client], OAuthCredential]] = {
    "json": _json_grant,
    "form": _form_grant,
    "copilot": _copilot_grant,
    "mint": _meta_grant,
}
