"""The requests an MCP sign-in makes to the server and its authorization server: the probe for
its challenge, discovery (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), token
requests (RFC 6749) and the RFC 9207 issuer check of the authorization response.

Everything here raises :class:`Failure` with a short reason; pi_tui/mcp/oauth.py says which
server it was and turns it into a sign-in error or a request to sign in.
"""

from __future__ import annotations

import base64
import contextlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from mcp.client.auth import OAuthRegistrationError
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    handle_registration_response,
    issuers_match,
)
from mcp.shared.auth import OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from mcp.types import LATEST_PROTOCOL_VERSION
from pydantic import ValidationError

PROBE_CLIENT = "pi-tui"


class Failure(Exception):
    """A step of a sign-in or refresh failed; the public functions say which server and what for."""


class TokenError(Failure):
    """The token endpoint answered with an OAuth error (``code`` as RFC 6749 section 5.2 names it)."""

    def __init__(self, code: str, description: str) -> None:
        super().__init__(f"{code}: {description}" if description and description != code else code)
        self.code = code


def is_loopback(host: str | None) -> bool:
    return (host or "").lower() in ("localhost", "127.0.0.1", "::1", "[::1]")


# --- discovery ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Discovery:
    """Where to authorize and get tokens for one MCP server, as found (or configured)."""

    issuer: str
    metadata: OAuthMetadata
    raw_metadata: dict[str, Any]
    resource_metadata: dict[str, Any] | None
    found: bool = True
    """False when no metadata was found and the legacy default endpoints stand in."""

    @property
    def resource(self) -> str | None:
        """The RFC 8707 ``resource`` to name: the protected resource's, when it published one."""
        value = (self.resource_metadata or {}).get("resource")
        return value if isinstance(value, str) else None

    def stored(self) -> dict[str, Any]:
        return {
            "authorizationServerUrl": self.issuer,
            "authorizationServerMetadata": self.raw_metadata,
            "resourceMetadata": self.resource_metadata,
        }

    @classmethod
    def from_stored(cls, value: object) -> Discovery | None:
        if not isinstance(value, dict):
            return None
        raw = value.get("authorizationServerMetadata")
        issuer = value.get("authorizationServerUrl")
        resource = value.get("resourceMetadata")
        if not isinstance(raw, dict) or not isinstance(issuer, str):
            return None
        try:
            metadata = OAuthMetadata.model_validate(raw)
        except ValidationError:
            return None
        return cls(issuer, metadata, raw, resource if isinstance(resource, dict) else None)


async def _get_json(http: httpx.AsyncClient, url: str) -> tuple[int, Any]:
    headers = {"Accept": "application/json", "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION}
    response = await http.get(url, headers=headers)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def discover(
    http: httpx.AsyncClient, server_url: str, metadata_url: str | None, resource_metadata_url: str | None
) -> Discovery:
    """RFC 9728 then RFC 8414 (or the configured metadata URL); raises :class:`Failure`."""
    prm: dict[str, Any] | None = None
    for url in build_protected_resource_metadata_discovery_urls(resource_metadata_url, server_url):
        status, body = await _get_json(http, url)
        if status == 200 and isinstance(body, dict):
            try:
                parsed = ProtectedResourceMetadata.model_validate(body)
            except ValidationError:
                continue
            if not check_resource_allowed(resource_url_from_server_url(server_url), str(parsed.resource)):
                raise Failure(f"the protected resource {parsed.resource} does not match {server_url}")
            prm = body
            break
        if status >= 500 or status == 429:
            raise Failure(f"HTTP {status} loading protected resource metadata from {url}")
    if metadata_url:
        url = metadata_url
        status, body = await _get_json(http, url)
        if status != 200 or not isinstance(body, dict):
            raise Failure(f"HTTP {status} loading authorization server metadata from {url}")
        return Discovery(str(body.get("issuer")), _metadata(body, url), body, prm)
    servers = (prm or {}).get("authorization_servers") or []
    first = servers[0] if isinstance(servers, list) and servers else None
    authorization_server = first if isinstance(first, str) else None
    expected = authorization_server or _origin(server_url)
    for url in build_oauth_authorization_server_metadata_discovery_urls(authorization_server, server_url):
        status, body = await _get_json(http, url)
        if status == 200 and isinstance(body, dict):
            metadata = _metadata(body, url)
            issuer = body.get("issuer")
            if not isinstance(issuer, str) or not issuers_match(issuer, expected):
                raise Failure(
                    f"the authorization server metadata at {url} names issuer {issuer!r}, not {expected!r}"
                )
            return Discovery(issuer, metadata, body, prm)
        if 300 <= status < 500:
            continue
        raise Failure(f"HTTP {status} loading authorization server metadata from {url}")
    base = expected.rstrip("/")
    legacy = {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
    }
    return Discovery(base, OAuthMetadata.model_validate(legacy), {}, prm, found=False)


def _metadata(body: dict[str, Any], url: str) -> OAuthMetadata:
    try:
        return OAuthMetadata.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise Failure(f"invalid authorization server metadata at {url} ({where}: {first['msg']})") from None


def auth_param(header: str, name: str) -> str | None:
    """One parameter of a ``Bearer`` challenge (``name="value"`` or ``name=value``)."""
    if header.strip().split(" ", 1)[0].lower() not in ("bearer", "dpop"):
        return None
    match = re.search(rf'(?:^|[,\s]){name}=(?:"([^"]*)"|([^\s,]+))', header, re.IGNORECASE)
    return (match.group(1) or match.group(2) or None) if match else None


async def probe(http: httpx.AsyncClient, url: str) -> tuple[int, str | None, str | None]:
    """Send the ``initialize`` an MCP client opens with, without a token, for the server's
    challenge: its status, ``resource_metadata`` and ``scope``. A session the server opened
    anyway (it wants no sign-in) is closed again."""
    from pi_tui import __version__

    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": PROBE_CLIENT, "version": __version__},
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION,
    }
    async with http.stream("POST", url, json=body, headers=headers) as response:
        status = response.status_code
        challenge = response.headers.get("www-authenticate", "") if status in (401, 403) else ""
        session = response.headers.get("mcp-session-id") if response.is_success else None
    if session:
        with contextlib.suppress(httpx.HTTPError):  # else the server ends the idle session itself
            await http.delete(url, headers={"mcp-session-id": session})
    return status, auth_param(challenge, "resource_metadata"), auth_param(challenge, "scope")


# --- clients and tokens ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Client:
    client_id: str
    secret: str | None = None
    method: str | None = None
    """``token_endpoint_auth_method`` the client was registered with, if any."""


def stored_client(entry: dict[str, Any] | None) -> tuple[Client, dict[str, Any]] | None:
    info = (entry or {}).get("clientInformation")
    if not isinstance(info, dict) or not isinstance(info.get("client_id"), str):
        return None
    secret = info.get("client_secret")
    method = info.get("token_endpoint_auth_method")
    return Client(info["client_id"], secret if isinstance(secret, str) else None, method), info


def _auth_method(client: Client, supported: list[str]) -> str:
    """How the client proves itself at the token endpoint (the registered method when the server
    takes it, else basic / post with a secret, else none)."""
    known = ("client_secret_basic", "client_secret_post", "none")
    if client.method in known and (not supported or client.method in supported):
        return client.method
    if not supported:
        return "client_secret_basic" if client.secret else "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if client.secret and method in supported:
            return method
    return "none" if "none" in supported or not client.secret else "client_secret_post"


def _require_secure(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and is_loopback(parts.hostname)):
        raise Failure(f"refusing to send credentials to {url}: it is not https")


async def token_request(
    http: httpx.AsyncClient, discovery: Discovery, client: Client, params: dict[str, str]
) -> dict[str, Any]:
    """POST to the token endpoint; the validated token response. Raises :class:`TokenError`."""
    url = str(discovery.metadata.token_endpoint)
    _require_secure(url)
    if discovery.resource:
        params["resource"] = discovery.resource
    headers = {"Accept": "application/json"}
    method = _auth_method(client, discovery.metadata.token_endpoint_auth_methods_supported or [])
    if method == "client_secret_basic" and client.secret:
        pair = f"{quote(client.client_id, safe='')}:{quote(client.secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        params["client_id"] = client.client_id
        if method == "client_secret_post" and client.secret:
            params["client_secret"] = client.secret
    response = await http.post(url, data=params, headers=headers)
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        description = body.get("error_description")
        raise TokenError(body["error"], description if isinstance(description, str) else "")
    if not response.is_success:
        raise TokenError("server_error", f"HTTP {response.status_code} from {url}")
    try:
        return OAuthToken.model_validate(body).model_dump(exclude_none=True)
    except ValidationError:
        raise TokenError("invalid_response", f"{url} answered without a usable bearer token") from None


def http_error(error: httpx.HTTPError) -> str:
    where = f" ({error.request.url})" if _has_request(error) else ""
    return f"{type(error).__name__}{where}: {error}" if str(error) else f"{type(error).__name__}{where}"


def _has_request(error: httpx.HTTPError) -> bool:
    try:
        return error.request is not None  # httpx raises when the error carries no request
    except RuntimeError:
        return False


# --- registration and the authorization response --------------------------------------------------


async def register(
    http: httpx.AsyncClient,
    discovery: Discovery,
    client_name: str,
    redirect_uri: str,
    scope: str | None,
) -> dict[str, Any]:
    """Dynamic client registration (RFC 7591) as a native public client of ``redirect_uri``."""
    endpoint = discovery.metadata.registration_endpoint
    if endpoint is None:
        raise Failure(
            "the authorization server offers no dynamic client registration; set oauth.clientId "
            f"(and clientSecret) of a client registered for the redirect URI {redirect_uri}"
        )
    body: dict[str, Any] = {
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "client_name": client_name,
        "application_type": "native",
    }
    if scope:
        body["scope"] = scope
    response = await http.post(str(endpoint), json=body, headers={"Accept": "application/json"})
    try:
        await handle_registration_response(response)  # the SDK's check of the answer
    except OAuthRegistrationError as error:
        raise Failure(f"client registration at {endpoint} failed: {error}") from None
    info = dict(response.json())
    info["issuer"] = discovery.issuer  # whose client it is: another issuer means registering again
    if not isinstance(info.get("redirect_uris"), list):
        info["redirect_uris"] = [redirect_uri]
    return info


def check_issuer(discovery: Discovery, iss: str | None) -> None:
    """RFC 9207: a response naming another issuer (or none, from a server that promised it) may
    carry another server's code; it is never exchanged here."""
    promised = discovery.raw_metadata.get("authorization_response_iss_parameter_supported") is True
    if iss is None and not promised:
        return
    if iss is None:
        raise Failure("the authorization response names no issuer although the server promises it (RFC 9207)")
    if not discovery.found or not issuers_match(iss, discovery.issuer):
        raise Failure(
            f"the authorization response comes from issuer {iss!r}, not {discovery.issuer!r} (RFC 9207)"
        )
