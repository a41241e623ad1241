"""The OAuth facts of every provider pi 1.5.2 can log in to, as one table.

Client ids, endpoints, redirect URIs, callback ports, scopes and flows are pi's (read from its
``pi-ai/dist/auth/oauth/*.js``): a token pi obtained must be refreshed with the same client and
endpoint, and a login made here must give pi a credential it can refresh in turn. The login
flows (H3's ``login*`` modules) and the refresh (:mod:`.refresh`) both read this table, so no
URL is written twice.

Flows, as pi offers them:

- ``browser``: the authorize URL is opened; a loopback server on ``callback_port`` (0: any free
  port) receives the redirect. When the browser is on another machine the user pastes the final
  redirect URL instead (pi's fallback for every browser flow).
- ``paste``: a headless variant whose redirect (``paste_redirect_uri``) is a provider page that
  shows a code to copy back (Anthropic's "copy code" login).
- ``device``: the user enters a code at a verification page while we poll the token endpoint.

Tests and proxies point the endpoints elsewhere with :data:`ENDPOINTS_ENV`: a JSON file
``{"anthropic": {"tokenUrl": "http://127.0.0.1:PORT/token", ...}, ...}`` whose keys are
:data:`OVERRIDE_KEYS` (camelCase, as pi's own JSON files spell things). A broken file is one
line naming it (:class:`OAuthConfigError`), never a silent fallback to the real endpoints.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

ENDPOINTS_ENV = "PI_TUI_OAUTH_ENDPOINTS"
"""Names a JSON file of endpoint overrides per provider (tests, proxies)."""

MINUTE_MS = 60 * 1000


class OAuthConfigError(Exception):
    """The endpoint override file cannot be used; the message is one line naming it."""


def _frozen(values: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class OAuthProvider:
    """How one provider's subscription login works, in pi's terms.

    ``refresh_grant`` says how an expired access token is renewed: ``json`` (a JSON
    ``refresh_token`` grant, Anthropic), ``form`` (a form-encoded ``refresh_token`` grant),
    ``copilot`` (the stored GitHub token exchanged for a Copilot token), ``mint`` (the stored
    identity token exchanged for an API key, Meta) or ``none`` (the token does not expire,
    OpenRouter's API key). ``expiry_margin_ms`` is what pi subtracts from ``expires_in`` when it
    stores ``expires``, so a credential written here expires when pi would have it expire.
    """

    id: str
    name: str
    client_id: str
    flows: tuple[str, ...]
    token_url: str
    refresh_grant: str
    expiry_margin_ms: int = 0
    authorize_url: str = ""
    device_code_url: str = ""
    device_token_url: str = ""
    verification_url: str = ""
    redirect_uri: str = ""
    paste_redirect_uri: str = ""
    callback_port: int | None = None
    callback_path: str = ""
    scopes: str = ""
    authorize_params: Mapping[str, str] = field(default_factory=_frozen)
    """Extra query parameters pi adds to the authorize URL."""
    extra: Mapping[str, str] = field(default_factory=_frozen)
    """Provider-specific endpoints and values (Copilot's token URL, Meta's key mint, ...)."""


OVERRIDE_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "tokenUrl": "token_url",
        "authorizeUrl": "authorize_url",
        "deviceCodeUrl": "device_code_url",
        "deviceTokenUrl": "device_token_url",
        "verificationUrl": "verification_url",
        "redirectUri": "redirect_uri",
        "pasteRedirectUri": "paste_redirect_uri",
    }
)
"""Override keys that replace a field; any other string key replaces an ``extra`` entry."""

EXTRA_KEYS: frozenset[str] = frozenset(
    {"copilotTokenUrl", "copilotApiUrl", "mintUrl", "resource", "deviceRedirectUri", "gateway"}
)

ANTHROPIC = OAuthProvider(
    id="anthropic",
    name="Anthropic (Claude Pro/Max)",
    client_id="9d1c250a-e61b-44d9-88ed-5944d1962f5e",
    flows=("browser", "paste"),
    authorize_url="https://claude.ai/oauth/authorize",
    token_url="https://platform.claude.com/v1/oauth/token",
    redirect_uri="http://localhost:53692/callback",
    paste_redirect_uri="https://platform.claude.com/oauth/code/callback",
    callback_port=53692,
    callback_path="/callback",
    scopes=(
        "org:create_api_key user:profile user:inference user:sessions:claude_code "
        "user:mcp_servers user:file_upload"
    ),
    authorize_params=_frozen({"code": "true"}),
    refresh_grant="json",
    expiry_margin_ms=5 * MINUTE_MS,
)

OPENAI_CODEX = OAuthProvider(
    id="openai-codex",
    name="OpenAI (ChatGPT Plus/Pro)",
    client_id="app_EMoamEEZ73f0CkXaXp7hrann",
    flows=("browser", "device"),
    authorize_url="https://auth.openai.com/oauth/authorize",
    token_url="https://auth.openai.com/oauth/token",
    device_code_url="https://auth.openai.com/api/accounts/deviceauth/usercode",
    device_token_url="https://auth.openai.com/api/accounts/deviceauth/token",
    verification_url="https://auth.openai.com/codex/device",
    redirect_uri="http://localhost:1455/auth/callback",
    callback_port=1455,
    callback_path="/auth/callback",
    scopes="openid profile email offline_access",
    authorize_params=_frozen(
        {"id_token_add_organizations": "true", "codex_cli_simplified_flow": "true", "originator": "pi"}
    ),
    extra=_frozen({"deviceRedirectUri": "https://auth.openai.com/deviceauth/callback"}),
    refresh_grant="form",
)

OPENAI_CHATGPT = OAuthProvider(
    id="openai",
    name="OpenAI (ChatGPT subscription)",
    client_id="dynamic_agent_client",
    flows=("browser",),
    authorize_url="https://auth.openai.com/api/accounts/authorize",
    token_url="https://auth.openai.com/api/accounts/oauth/token",
    redirect_uri="http://127.0.0.1:1455/auth/callback",
    callback_port=1455,
    callback_path="/auth/callback",
    scopes="openid profile email offline_access resource.invoke chatgpt.tokens.use.direct",
    extra=_frozen({"resource": "https://api.openai.com/v1"}),
    refresh_grant="form",
    expiry_margin_ms=3 * MINUTE_MS,
)
"""The refresh uses the client id the login was issued (the credential's ``clientId``)."""

GITHUB_COPILOT = OAuthProvider(
    id="github-copilot",
    name="GitHub Copilot",
    client_id="Iv1.b507a08c87ecfe98",
    flows=("device",),
    device_code_url="https://github.com/login/device/code",
    device_token_url="https://github.com/login/oauth/access_token",
    token_url="https://api.github.com/copilot_internal/v2/token",
    scopes="read:user",
    extra=_frozen({"copilotTokenUrl": "https://api.github.com/copilot_internal/v2/token"}),
    refresh_grant="copilot",
    expiry_margin_ms=5 * MINUTE_MS,
)
"""For GitHub Enterprise the URLs are on the credential's ``enterpriseUrl`` domain
(:func:`copilot_urls`)."""

OPENROUTER = OAuthProvider(
    id="openrouter",
    name="OpenRouter OAuth",
    client_id="",
    flows=("browser",),
    authorize_url="https://openrouter.ai/auth",
    token_url="https://openrouter.ai/api/v1/auth/keys",
    callback_port=0,
    callback_path="/oauth/callback/",
    refresh_grant="none",
)
"""The login yields an API key (``expires`` is JavaScript's largest safe integer); the
callback path ends in a random id, OpenRouter sends no ``state``."""

KIMI_CODING = OAuthProvider(
    id="kimi-coding",
    name="Kimi Code (subscription)",
    client_id="17e5f671-d194-4dfb-9706-5516cb48c098",
    flows=("device",),
    device_code_url="https://auth.kimi.com/api/oauth/device_authorization",
    token_url="https://auth.kimi.com/api/oauth/token",
    refresh_grant="form",
)

META = OAuthProvider(
    id="meta",
    name="Meta (Muse subscription)",
    client_id="1031625952748946",
    flows=("device",),
    device_code_url="https://auth.meta.com/oidc/device/authorization/",
    token_url="https://auth.meta.com/oidc/device/token/",
    extra=_frozen({"mintUrl": "https://api.meta.ai/muse-code/key"}),
    refresh_grant="mint",
)
"""The identity token is stored as ``refresh`` and the minted API key (a day long) as
``access``; renewing mints a new key."""

XAI = OAuthProvider(
    id="xai",
    name="xAI (Grok/X subscription)",
    client_id="b1a00492-073a-47ea-816f-4c329264a828",
    flows=("device",),
    device_code_url="https://auth.x.ai/oauth2/device/code",
    token_url="https://auth.x.ai/oauth2/token",
    scopes="openid profile email offline_access grok-cli:access api:access",
    refresh_grant="form",
    expiry_margin_ms=5 * MINUTE_MS,
)

RADIUS = OAuthProvider(
    id="radius",
    name="Radius",
    client_id="pi-gateway",
    flows=("browser", "device"),
    token_url="https://radius.pi.dev/v1/oauth/token",
    device_code_url="https://radius.pi.dev/v1/oauth/device",
    redirect_uri="http://127.0.0.1:1456/oauth/callback",
    callback_port=1456,
    callback_path="/oauth/callback",
    scopes="gateway offline_access",
    extra=_frozen({"gateway": "https://radius.pi.dev"}),
    refresh_grant="form",
    expiry_margin_ms=MINUTE_MS,
)
"""The browser flow's authorize URL comes from the gateway's ``/v1/oauth`` discovery."""

PROVIDERS: tuple[OAuthProvider, ...] = (
    ANTHROPIC,
    GITHUB_COPILOT,
    OPENAI_CODEX,
    OPENAI_CHATGPT,
    OPENROUTER,
    KIMI_CODING,
    META,
    XAI,
    RADIUS,
)

KIMI_HOST_ENVS = ("KIMI_CODE_OAUTH_HOST", "KIMI_OAUTH_HOST")
"""pi moves Kimi's OAuth host with these (either), so pi-tui does too."""


def _kimi_from_env(provider: OAuthProvider) -> OAuthProvider:
    host = next((os.environ[name] for name in KIMI_HOST_ENVS if os.environ.get(name)), "").rstrip("/")
    if not host:
        return provider
    return replace(
        provider,
        device_code_url=f"{host}/api/oauth/device_authorization",
        token_url=f"{host}/api/oauth/token",
    )


def endpoint_overrides() -> dict[str, dict[str, str]]:
    """The override file named by :data:`ENDPOINTS_ENV`, checked; empty when unset."""
    name = os.environ.get(ENDPOINTS_ENV, "").strip()
    if not name:
        return {}
    path = Path(name).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise OAuthConfigError(f"{path} ({ENDPOINTS_ENV}): cannot read: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise OAuthConfigError(f"{path} ({ENDPOINTS_ENV}): not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise OAuthConfigError(f"{path} ({ENDPOINTS_ENV}): expected an object keyed by provider")
    result: dict[str, dict[str, str]] = {}
    for provider, values in data.items():
        if not isinstance(values, dict) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in values.items()
        ):
            raise OAuthConfigError(f"{path} ({ENDPOINTS_ENV}): {provider!r} must map names to URL strings")
        unknown = sorted(set(values) - set(OVERRIDE_KEYS) - EXTRA_KEYS)
        if unknown:
            raise OAuthConfigError(f"{path} ({ENDPOINTS_ENV}): {provider!r}: unknown key {unknown[0]!r}")
        result[str(provider)] = dict(values)
    return result


def _apply(provider: OAuthProvider, values: Mapping[str, str]) -> OAuthProvider:
    fields: dict[str, Any] = {
        OVERRIDE_KEYS[key]: value for key, value in values.items() if key in OVERRIDE_KEYS
    }
    extra = {key: value for key, value in values.items() if key in EXTRA_KEYS}
    if extra:
        fields["extra"] = _frozen({**provider.extra, **extra})
    return replace(provider, **fields)


def oauth_provider(provider_id: str) -> OAuthProvider | None:
    """``provider_id``'s OAuth facts with the overrides applied; None when pi has no OAuth for it.

    Raises :class:`OAuthConfigError` when the override file is broken.
    """
    base = next((entry for entry in PROVIDERS if entry.id == provider_id), None)
    if base is None:
        return None
    if base.id == KIMI_CODING.id:
        base = _kimi_from_env(base)
    values = endpoint_overrides().get(provider_id)
    return _apply(base, values) if values else base


def oauth_provider_ids() -> list[str]:
    """The providers pi offers a subscription login for, in pi's ``/login`` order."""
    return [entry.id for entry in PROVIDERS]


def copilot_urls(provider: OAuthProvider, enterprise_domain: str | None) -> dict[str, str]:
    """GitHub's device, access-token and Copilot-token URLs for github.com or an Enterprise domain.

    An override of the github.com URLs is kept for github.com only: an Enterprise login talks
    to its own host, as pi's does.
    """
    if not enterprise_domain:
        return {
            "deviceCodeUrl": provider.device_code_url,
            "accessTokenUrl": provider.device_token_url,
            "copilotTokenUrl": provider.extra.get("copilotTokenUrl", provider.token_url),
        }
    return {
        "deviceCodeUrl": f"https://{enterprise_domain}/login/device/code",
        "accessTokenUrl": f"https://{enterprise_domain}/login/oauth/access_token",
        "copilotTokenUrl": f"https://api.{enterprise_domain}/copilot_internal/v2/token",
    }
