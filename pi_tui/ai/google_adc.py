"""Google Application Default Credentials (ADC): an OAuth access token for Vertex AI.

pi's ``google-vertex`` provider (through Google's SDK) signs requests with the credentials
``gcloud auth application-default login`` leaves behind, or a key file named by
``GOOGLE_APPLICATION_CREDENTIALS``. This module reads the same files and gets the same token:

- ``authorized_user`` (what gcloud writes): the refresh token exchanged at the file's
  ``token_uri`` (else Google's ``https://oauth2.googleapis.com/token``); a
  ``quota_project_id`` becomes the ``x-goog-user-project`` header, as Google's library sends it;
- ``service_account`` (a key file): a JWT signed RS256 with the file's private key, exchanged
  with the ``jwt-bearer`` grant at the file's ``token_uri``;
- ``impersonated_service_account``: the source credential's token exchanged at the file's
  ``service_account_impersonation_url`` (IAM ``generateAccessToken``);
- ``external_account`` (workload identity federation) is not supported: one line says so.

Tokens live in memory only (never written to disk), keyed by the file's path and content, and
are fetched again five minutes before they expire (Google's library uses the same margin). The
token endpoint comes from the file, so tests point it at a loopback server.

:func:`access_token` is synchronous (one short POST about once an hour per credential); the
Vertex client calls it from a worker thread as the request's signer
(:class:`pi_tui.ai.google_vertex.AdcSigner`), so the event loop never waits on it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import orjson

from pi_tui.ai.errors import ConfigError, ProviderError

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
WELL_KNOWN = Path(".config") / "gcloud" / "application_default_credentials.json"
REFRESH_MARGIN = 300.0
"""Seconds before expiry at which a cached token is replaced."""
TOKEN_TIMEOUT = 20.0
JWT_LIFETIME = 3600
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SUPPORTED = ("authorized_user", "service_account", "impersonated_service_account")


def _lookup(name: str, env: Mapping[str, str] | None) -> str | None:
    """``env`` (auth.json's values for the provider) over the process environment."""
    value = (env or {}).get(name) or os.environ.get(name) or ""
    return value.strip() or None


def credentials_path(env: Mapping[str, str] | None = None) -> Path:
    """``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's well-known ADC file."""
    named = _lookup("GOOGLE_APPLICATION_CREDENTIALS", env)
    if named:
        return Path(named).expanduser()
    return Path.home() / WELL_KNOWN


def has_credentials(env: Mapping[str, str] | None = None) -> bool:
    return credentials_path(env).is_file()


@dataclass(slots=True)
class AccessToken:
    """A bearer token and the headers that go with it (``x-goog-user-project``)."""

    token: str
    expires_at: float
    """Wall-clock seconds (``time.time()``)."""
    headers: dict[str, str] = field(default_factory=dict)


_CACHE: dict[tuple[str, str], AccessToken] = {}
_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every cached token (a test, or a credential known to be revoked)."""
    with _LOCK:
        _CACHE.clear()


def access_token(env: Mapping[str, str] | None = None, *, http: httpx.Client | None = None) -> AccessToken:
    """A valid token for the ADC file ``env`` points at: the cached one, or a new one.

    Raises :class:`ConfigError` (one line) for a missing or unusable file, and
    :class:`ProviderError` when the token endpoint refuses or cannot be reached.
    """
    path = credentials_path(env)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(missing_message(path, env)) from None
    except OSError as error:
        raise ConfigError(f"Cannot read Google credentials {path}: {error.strerror or error}") from None
    key = (str(path), hashlib.sha256(raw).hexdigest())
    with _LOCK:  # one fetch at a time: a second caller waits and takes the first one's token
        cached = _CACHE.get(key)
        if cached is not None and cached.expires_at - REFRESH_MARGIN > time.time():
            return cached
        info = _parse(raw, path)
        token = _fetch(info, path, http)
        _CACHE[key] = token
        return token


def missing_message(path: Path, env: Mapping[str, str] | None) -> str:
    if _lookup("GOOGLE_APPLICATION_CREDENTIALS", env):
        return f"GOOGLE_APPLICATION_CREDENTIALS names {path}, which does not exist"
    return (
        "Google Vertex AI needs credentials: set GOOGLE_CLOUD_API_KEY, run "
        "`gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS "
        "to a service account key file"
    )


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        info = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ConfigError(f"Google credentials {path} are not valid JSON") from None
    if not isinstance(info, dict):
        raise ConfigError(f"Google credentials {path} are not a JSON object")
    return info


def _fetch(info: dict[str, Any], path: Path, http: httpx.Client | None) -> AccessToken:
    kind = info.get("type")
    if kind == "authorized_user":
        return _authorized_user(info, path, http)
    if kind == "service_account":
        return _service_account(info, path, http)
    if kind == "impersonated_service_account":
        return _impersonated(info, path, http)
    if kind == "external_account":
        raise ConfigError(
            f"Google credentials {path} are an external_account (workload identity federation), "
            "which pi-tui does not support: use a service account key file or GOOGLE_CLOUD_API_KEY"
        )
    raise ConfigError(f"Google credentials {path} have type {kind!r}; pi-tui reads {', '.join(SUPPORTED)}")


def _need(info: dict[str, Any], names: tuple[str, ...], path: Path) -> list[str]:
    values = [info.get(name) for name in names]
    missing = [
        name for name, value in zip(names, values, strict=True) if not isinstance(value, str) or not value
    ]
    if missing:
        raise ConfigError(f"Google credentials {path} lack {', '.join(missing)}")
    return [str(value) for value in values]


def _authorized_user(info: dict[str, Any], path: Path, http: httpx.Client | None) -> AccessToken:
    client_id, client_secret, refresh = _need(info, ("client_id", "client_secret", "refresh_token"), path)
    form = {
        "grant_type": "refresh_token",
        "client_id": client_id,
        "client_secret": client_secret,
        "refresh_token": refresh,
    }
    token = _token_request(_token_uri(info), form, http)
    quota = info.get("quota_project_id")
    if isinstance(quota, str) and quota:
        token.headers["x-goog-user-project"] = quota
    return token


def _service_account(info: dict[str, Any], path: Path, http: httpx.Client | None) -> AccessToken:
    email, private_key = _need(info, ("client_email", "private_key"), path)
    token_uri = _token_uri(info)
    now = int(time.time())
    claims = {"iss": email, "scope": SCOPE, "aud": token_uri, "iat": now, "exp": now + JWT_LIFETIME}
    header: dict[str, Any] = {"alg": "RS256", "typ": "JWT"}
    if isinstance(info.get("private_key_id"), str) and info["private_key_id"]:
        header["kid"] = info["private_key_id"]
    assertion = sign_jwt(header, claims, private_key, path)
    return _token_request(token_uri, {"grant_type": JWT_GRANT, "assertion": assertion}, http)


def _impersonated(info: dict[str, Any], path: Path, http: httpx.Client | None) -> AccessToken:
    (url,) = _need(info, ("service_account_impersonation_url",), path)
    source = info.get("source_credentials")
    if not isinstance(source, dict):
        raise ConfigError(f"Google credentials {path} lack source_credentials")
    if source.get("type") not in ("authorized_user", "service_account"):
        raise ConfigError(
            f"Google credentials {path}: source_credentials of type {source.get('type')!r} "
            "cannot be impersonated by pi-tui (authorized_user or service_account can)"
        )
    base = _fetch(source, path, http)
    delegates = info.get("delegates") if isinstance(info.get("delegates"), list) else []
    body = {"scope": [SCOPE], "delegates": delegates, "lifetime": f"{JWT_LIFETIME}s"}
    headers = {"authorization": f"Bearer {base.token}", "content-type": "application/json"}
    answer = _post(url, http, headers=headers, content=orjson.dumps(body))
    token = answer.get("accessToken")
    if not isinstance(token, str) or not token:
        raise ProviderError(f"Google's impersonation endpoint {url} sent no accessToken")
    return AccessToken(token, _expiry(answer.get("expireTime")))


def _expiry(value: Any) -> float:
    """An RFC 3339 ``expireTime``; an hour from now when absent or unreadable."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return time.time() + JWT_LIFETIME


def _token_uri(info: dict[str, Any]) -> str:
    uri = info.get("token_uri") or info.get("token_url")
    return uri if isinstance(uri, str) and uri else DEFAULT_TOKEN_URI


def _token_request(url: str, form: dict[str, str], http: httpx.Client | None) -> AccessToken:
    answer = _post(url, http, data=form)
    token = answer.get("access_token")
    if not isinstance(token, str) or not token:
        raise ProviderError(f"Google's token endpoint {url} sent no access_token")
    expires_in = answer.get("expires_in")
    lifetime = float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else JWT_LIFETIME
    return AccessToken(token, time.time() + lifetime)


def _post(url: str, http: httpx.Client | None, **kwargs: Any) -> dict[str, Any]:
    """POST and read a JSON object; failures as one-line :class:`ProviderError`s."""
    try:
        if http is not None:
            response = http.post(url, timeout=TOKEN_TIMEOUT, **kwargs)
        else:
            with httpx.Client(timeout=TOKEN_TIMEOUT) as client:
                response = client.post(url, **kwargs)
    except httpx.HTTPError as error:
        raise ProviderError(
            f"Cannot get a Google access token from {url}: {type(error).__name__}", retryable=True
        ) from None
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if response.status_code >= 400 or not isinstance(answer, dict):
        detail = ""
        if isinstance(answer, dict):
            reason = answer.get("error")
            if isinstance(reason, dict):
                reason = reason.get("message") or reason.get("status")
            text = answer.get("error_description") or ""
            detail = ": " + " ".join(str(part) for part in (reason, text) if part)
        raise ProviderError(
            f"Google's token endpoint refused the credentials (HTTP {response.status_code}){detail}"
            + (" (run `gcloud auth application-default login` again)" if response.status_code == 400 else ""),
            status=response.status_code,
            retryable=response.status_code >= 500,
        )
    return answer


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign_jwt(header: dict[str, Any], claims: dict[str, Any], private_key_pem: str, path: Path) -> str:
    """``header.claims.signature``, RS256 with the service account's PEM key."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    try:
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    except (ValueError, TypeError):
        raise ConfigError(f"Google credentials {path}: private_key is not a readable PEM key") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError(f"Google credentials {path}: private_key is not an RSA key")
    signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}"
    signature = key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64(signature)}"
