"""OAuth sign-in for MCP servers over streamable HTTP (pi 1.x's "Authenticate with OAuth").

Two halves, as in pi: a connection never opens a browser by itself. :func:`http_auth` gives the
connection an ``httpx.Auth`` that sends the stored access token, refreshes it when it expired or
the server rejects it (saving the new tokens), and otherwise fails with :class:`SignInRequired`;
:func:`sign_in` (``/mcp`` and ``pi-tui mcp login``) runs the browser flow: discovery (RFC 9728
protected resource metadata, RFC 8414 authorization server metadata with its issuer checked),
the client (configured, registered before, or dynamic client registration), PKCE S256 with a
``state`` and the RFC 9207 ``iss`` checked, and a loopback callback or a pasted redirect URL.

Built on the SDK's OAuth pieces (its metadata models, PKCE, discovery URL lists, registration
response, resource and issuer rules) but not on its ``OAuthClientProvider``: that provider runs
the whole interactive flow on any 401 (registering a client from inside a connection), refreshes
only tokens it knows expired and not rejected ones, refreshes after a restart at the server's
``/token`` because it does not keep the discovered metadata, and has no ``iss`` check and no
configured metadata URL.

The requests to the authorization server are in ``oauth_flow``, the loopback callback and pasted
URLs in ``oauth_callback``, the mcp-auth.json file in ``oauth_store``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import anyio
import httpx
from mcp.client.auth import PKCEParameters
from mcp.client.auth.utils import issuers_match

from pi_tui.mcp.model import ServerConfig
from pi_tui.mcp.oauth_callback import (
    AuthorizationResponse,
    CallbackError,
    LoopbackCallback,
    loopback_plan,
    response_from_pasted,
)
from pi_tui.mcp.oauth_flow import (
    Client,
    Discovery,
    Failure,
    TokenError,
    auth_param,
    check_issuer,
    discover,
    http_error,
    is_loopback,
    probe,
    register,
    stored_client,
    token_request,
)
from pi_tui.mcp.oauth_store import (
    STORE_NAME,
    OAuthError,
    OAuthStore,
    OAuthStoreError,
    canonical_url,
    refresh_lock_path,
    store_key,
)

__all__ = [
    "OAuthError",
    "OAuthStoreError",
    "SignInError",
    "SignInRequired",
    "has_sign_in",
    "http_auth",
    "needs_oauth",
    "sign_in",
    "sign_in_required",
    "sign_out",
    "store_path",
]

CLIENT_NAME = "pi-tui"
"""The name sent when registering a client (``oauth.clientName`` replaces it)."""
REQUEST_TIMEOUT = 15.0
"""Seconds one request to the authorization server may take, so none holds a refresh for long."""
REFRESH_SKEW = 30.0
"""An access token this close to its expiry is refreshed before it is sent (half its life when
it lives less than a minute, so short-lived tokens are not refreshed on every request)."""
REFRESH_LOCK_WAIT = 12.0
_DEAD_GRANT = ("invalid_grant", "invalid_client", "unauthorized_client")
_REGISTRATIONS = ("auto", "dcr", "cimd")


class SignInRequired(OAuthError):
    """The server wants OAuth and no usable token is stored: the user has to sign in."""

    def __init__(self, server: str, reason: str = "not signed in") -> None:
        super().__init__(
            f"MCP server '{server}' needs sign-in ({reason}): /mcp or `pi-tui mcp login {server}` signs in"
        )
        self.server = server
        self.reason = reason


class SignInError(OAuthError):
    """A sign-in could not finish, or the server's ``oauth`` settings are wrong (one line)."""


# --- settings -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """A server's ``oauth`` object (values already resolved), checked."""

    client_id: str | None = None
    client_secret: str | None = None
    client_name: str | None = None
    callback_port: int | None = None
    callback_url: str | None = None
    scope: str | None = None
    auth_server_metadata_url: str | None = None
    registration: str = "auto"


def oauth_settings(server: str, oauth: dict[str, Any] | None) -> OAuthSettings:
    """Read ``oauth``; raises :class:`SignInError` naming the field that is wrong."""
    oauth = oauth or {}

    def fail(field: str, problem: str) -> SignInError:
        return SignInError(f"MCP server '{server}': oauth.{field} {problem}")

    def text(field: str) -> str | None:
        value = oauth.get(field)
        if value is None:
            return None
        if not isinstance(value, str):
            raise fail(field, "must be a string")
        return value.strip() or None

    port = oauth.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise fail("callbackPort", "must be a port number (1-65535)")
    callback_url = text("callbackUrl")
    if callback_url is not None:
        parts = urlsplit(callback_url)
        if parts.scheme != "http" or not is_loopback(parts.hostname):
            raise fail("callbackUrl", "must use http on localhost, 127.0.0.1 or [::1]")
        try:
            _ = parts.port
        except ValueError:
            raise fail("callbackUrl", "has an invalid port") from None
    metadata_url = text("authServerMetadataUrl")
    if metadata_url is not None:
        parts = urlsplit(metadata_url)
        if not (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname))):
            raise fail("authServerMetadataUrl", "must use https (http only on localhost, 127.0.0.1 or [::1])")
    registration = text("clientRegistration") or "auto"
    if registration not in _REGISTRATIONS:
        raise fail("clientRegistration", 'must be "auto", "dcr" or "cimd"')
    return OAuthSettings(
        client_id=text("clientId"),
        client_secret=text("clientSecret"),
        client_name=text("clientName"),
        callback_port=port,
        callback_url=callback_url,
        scope=text("scope"),
        auth_server_metadata_url=metadata_url,
        registration=registration,
    )


# --- the public functions -------------------------------------------------------------------------


def store_path() -> Path:
    """``<agent dir>/mcp-auth.json``."""
    from pi_tui.config.paths import agent_dir

    return agent_dir() / STORE_NAME


def needs_oauth(server: ServerConfig) -> bool:
    """An HTTP server whose headers carry no ``Authorization`` (any case): OAuth may apply."""
    return (
        server.transport == "http"
        and bool(server.url)
        and not any(name.lower() == "authorization" for name in server.headers)
    )


def http_auth(server: ServerConfig, oauth: dict[str, Any] | None, *, store_path: Path) -> httpx.Auth | None:
    """The connection's auth for a server that :func:`needs_oauth`, None for one with an
    ``Authorization`` header. Never interactive: without a usable token a request the server
    rejects fails with :class:`SignInRequired`. A server that wants no OAuth is simply called
    without a token."""
    if not needs_oauth(server) or server.url is None:
        return None
    return StoredTokenAuth(server.name, server.url, oauth_settings(server.name, oauth), store_path)


def has_sign_in(server: ServerConfig, *, store_path: Path) -> bool:
    """Tokens are stored for the server (a registered client alone, left by a sign-in that did
    not finish or a grant the server revoked, is not a sign-in). Raises :class:`OAuthStoreError`."""
    if not server.url:
        return False
    entry = OAuthStore(store_path).entry(store_key(server.name, server.url)) or {}
    return bool((entry.get("tokens") or {}).get("access_token"))


def sign_in_required(error: BaseException) -> SignInRequired | None:
    """The :class:`SignInRequired` in ``error``: the SDK's streamable HTTP client runs requests in
    task groups, so what the auth raised reaches its caller inside an exception group."""
    if isinstance(error, SignInRequired):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = sign_in_required(inner)
            if found is not None:
                return found
    return None


def sign_out(server: ServerConfig, *, store_path: Path) -> bool:
    """Delete the server's stored tokens and registered client; True when something was stored."""
    if not server.url:
        return False
    return OAuthStore(store_path).remove(store_key(server.name, server.url))


async def sign_in(
    server: ServerConfig,
    oauth: dict[str, Any] | None,
    *,
    store_path: Path,
    open_url: Callable[[str], None],
    pasted_redirect: Callable[[], Awaitable[str]] | None = None,
    timeout: float = 300.0,
) -> None:
    """Sign in to ``server`` in the browser and save the tokens.

    ``open_url`` gets the authorization URL (the caller opens a browser or prints it; the
    loopback callback runs on a thread of its own, so ``open_url`` may block while a browser
    follows it). The authorization response arrives at the loopback callback or as a redirected
    URL the user pastes (``pasted_redirect``, for a browser on another machine), whichever comes
    first; an empty paste cancels. Raises :class:`SignInError` (one line) when the sign-in fails
    or does not finish within ``timeout`` seconds, :class:`OAuthStoreError` when mcp-auth.json is
    broken.
    """
    settings = oauth_settings(server.name, oauth)
    if server.transport != "http" or not server.url:
        raise SignInError(f"MCP server '{server.name}' is not an HTTP server: there is nothing to sign in to")
    if settings.registration == "cimd":
        raise SignInError(
            f"MCP server '{server.name}': oauth.clientRegistration \"cimd\" needs a hosted Client ID "
            'Metadata Document, which pi-tui does not have; use "auto" or "dcr", or set oauth.clientId'
        )
    store = OAuthStore(store_path)
    key = store_key(server.name, server.url)
    stored = store.entry(key)  # a broken file stops the sign-in before anything is sent
    try:
        async with asyncio.timeout(timeout):
            await _sign_in(server.url, settings, store, key, stored, open_url, pasted_redirect)
    except TimeoutError:
        raise SignInError(
            f"MCP server '{server.name}': sign-in did not finish within {timeout:g} s; no tokens were saved"
        ) from None
    except Failure as failure:
        raise SignInError(f"MCP server '{server.name}': sign-in failed: {failure}") from None
    except httpx.HTTPError as error:
        raise SignInError(f"MCP server '{server.name}': sign-in failed: {http_error(error)}") from None


def _with_tokens(entry: dict[str, Any], tokens: dict[str, Any]) -> dict[str, Any]:
    entry = {**entry, "tokens": tokens}
    expires_in = tokens.get("expires_in")
    if isinstance(expires_in, int):
        entry["tokensExpireAt"] = int(time.time() * 1000) + expires_in * 1000
    else:
        entry.pop("tokensExpireAt", None)
    return entry


def _expired(entry: dict[str, Any]) -> bool:
    expires_at = entry.get("tokensExpireAt")
    if not isinstance(expires_at, int | float):
        return False
    lifetime = (entry.get("tokens") or {}).get("expires_in")
    skew = min(REFRESH_SKEW, lifetime / 2) if isinstance(lifetime, int) else REFRESH_SKEW
    return time.time() * 1000 >= expires_at - skew * 1000


def _client_for_refresh(settings: OAuthSettings, entry: dict[str, Any] | None) -> Client | None:
    if settings.client_id:
        return Client(settings.client_id, settings.client_secret)
    stored = stored_client(entry)
    return stored[0] if stored else None


# --- the browser sign-in --------------------------------------------------------------------------


def _scopes(*values: str | None) -> str | None:
    """Every scope of the lists, each once, in order."""
    merged = dict.fromkeys(scope for value in values for scope in (value or "").split() if scope)
    return " ".join(merged) or None


def _registered_port(info: dict[str, Any] | None) -> int | None:
    uris = (info or {}).get("redirect_uris")
    if not isinstance(uris, list) or not uris or not isinstance(uris[0], str):
        return None
    try:
        return urlsplit(uris[0]).port
    except ValueError:
        return None


def _reusable(info: dict[str, Any] | None, redirect_uri: str, discovery: Discovery) -> bool:
    """A client registered before still fits: same redirect URI, same authorization server."""
    if info is None or redirect_uri not in (info.get("redirect_uris") or []):
        return False
    issuer = info.get("issuer")
    return not isinstance(issuer, str) or issuers_match(issuer, discovery.issuer)


async def _await_response(
    future: asyncio.Future[AuthorizationResponse],
    pasted_redirect: Callable[[], Awaitable[str]] | None,
    redirect_uri: str,
    state: str,
) -> AuthorizationResponse:
    """The loopback callback's response or the pasted URL's, whichever comes first."""
    if pasted_redirect is None:
        return await future

    async def paste() -> str:
        return await pasted_redirect()

    pasted = asyncio.ensure_future(paste())
    try:
        waiters: set[asyncio.Future[Any]] = {future, pasted}
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in (future, pasted):
            if not waiting.done():
                waiting.cancel()
    if future.done() and not future.cancelled():
        return future.result()
    text = pasted.result()
    if not text or not text.strip():
        raise Failure("cancelled (nothing was pasted)")
    return response_from_pasted(text, redirect_uri, state)


async def _sign_in(
    server_url: str,
    settings: OAuthSettings,
    store: OAuthStore,
    key: str,
    stored: dict[str, Any] | None,
    open_url: Callable[[str], None],
    pasted_redirect: Callable[[], Awaitable[str]] | None,
) -> None:
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT, follow_redirects=False) as http:
        status, resource_metadata_url, challenged_scope = await probe(http, server_url)
        discovery = await discover(http, server_url, settings.auth_server_metadata_url, resource_metadata_url)
        if not discovery.found and discovery.resource_metadata is None and 200 <= status < 300:
            raise Failure("the server does not ask for sign-in and names no authorization server")
        metadata = discovery.metadata
        if "code" not in metadata.response_types_supported:
            raise Failure("the authorization server does not offer authorization codes")
        methods = metadata.code_challenge_methods_supported
        if methods is not None and "S256" not in methods:
            raise Failure("the authorization server does not offer PKCE S256")
        previous = stored_client(stored)
        stored_info = previous[1] if previous else None
        advertised = (discovery.resource_metadata or {}).get("scopes_supported")
        scope = _scopes(settings.scope, challenged_scope) or (
            _scopes(*advertised)
            if isinstance(advertised, list) and all(isinstance(s, str) for s in advertised)
            else None
        )
        plan = loopback_plan(settings.callback_url, settings.callback_port)
        try:
            listening = LoopbackCallback(plan, _registered_port(stored_info))
        except OSError as error:
            where = f"{plan.host}:{plan.port or 0}"
            raise Failure(f"cannot listen for the callback on {where}: {error.strerror or error}") from None
        with listening as callback:
            redirect_uri = callback.redirect_uri
            entry: dict[str, Any] = {"serverUrl": canonical_url(server_url)}
            if settings.client_id:
                client = Client(settings.client_id, settings.client_secret)
            elif previous is not None and _reusable(stored_info, redirect_uri, discovery):
                client, entry["clientInformation"] = previous
            else:
                info = await register(
                    http, discovery, settings.client_name or CLIENT_NAME, redirect_uri, scope
                )
                entry["clientInformation"] = info
                client = Client(
                    info["client_id"], info.get("client_secret"), info.get("token_endpoint_auth_method")
                )
                await anyio.to_thread.run_sync(store.put, key, entry)  # kept for the next sign-in
            pkce = PKCEParameters.generate()
            state = secrets.token_urlsafe(32)
            params = {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "code_challenge": pkce.code_challenge,
                "code_challenge_method": "S256",
            }
            if scope:
                params["scope"] = scope
            if discovery.resource:
                params["resource"] = discovery.resource
            endpoint = str(metadata.authorization_endpoint)
            future = callback.expect(state)
            open_url(f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(params)}")
            try:
                response = await _await_response(future, pasted_redirect, redirect_uri, state)
            except CallbackError as error:
                raise Failure(str(error)) from None
        check_issuer(discovery, response.iss)
        exchange = {
            "grant_type": "authorization_code",
            "code": response.code,
            "code_verifier": pkce.code_verifier,
            "redirect_uri": redirect_uri,
        }
        try:
            tokens = await token_request(http, discovery, client, exchange)
        except TokenError as error:
            raise Failure(f"the token exchange failed: {error}") from None
    if scope and "scope" not in tokens:
        tokens["scope"] = scope  # a response without scope grants the requested one (RFC 6749 5.1)
    entry = _with_tokens(entry, tokens)
    if settings.auth_server_metadata_url is None:
        entry["discovery"] = discovery.stored()
    await anyio.to_thread.run_sync(store.put, key, entry)


# --- the connection's auth ------------------------------------------------------------------------


class StoredTokenAuth(httpx.Auth):
    """Sends the stored access token; refreshes it before a request when it expired and after a
    401, once; otherwise :class:`SignInRequired`. Tokens another process saved meanwhile (a
    sign-in, a refresh) are used as they are: the store is re-read when the file changed, and a
    refresh holds a lock per server so two processes never spend one rotating refresh token."""

    requires_response_body = False

    def __init__(self, name: str, url: str, settings: OAuthSettings, path: Path) -> None:
        self.name = name
        self.url = url
        self.settings = settings
        self.store_path = path
        self.key = store_key(name, url)
        self._store = OAuthStore(path)
        self._lock: asyncio.Lock | None = None

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        entry = self._store.entry(self.key) or {}
        token = (entry.get("tokens") or {}).get("access_token")
        failed: SignInRequired | None = None
        if token and _expired(entry) and (entry.get("tokens") or {}).get("refresh_token"):
            try:
                token = await self._refresh(token)
            except SignInRequired as error:
                failed = error  # the old token still goes out: the server decides
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        challenge = response.headers.get("www-authenticate", "")
        if response.status_code == 403 and auth_param(challenge, "error") == "insufficient_scope":
            raise SignInRequired(self.name, "the server asks for more scope")
        if response.status_code != 401:
            return
        if failed is not None:
            raise failed
        if not token:
            raise SignInRequired(self.name)
        token = await self._refresh(token)
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:
            raise SignInRequired(self.name, "the server rejects the refreshed token")

    async def _refresh(self, stale: str) -> str:
        """A new access token in place of ``stale``, or the one someone else saved meanwhile."""
        from pi_tui.config.lock_folder import LockBusy, lock_folder

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            newer = self._newer_token(stale)
            if newer is not None:
                return newer
            lock = lock_folder(refresh_lock_path(self.store_path, self.key), wait=REFRESH_LOCK_WAIT)
            try:
                await anyio.to_thread.run_sync(lock.__enter__)
            except (LockBusy, OSError):
                newer = self._newer_token(stale)
                if newer is not None:
                    return newer
                raise SignInRequired(self.name, "another process held the token refresh too long") from None
            try:
                newer = self._newer_token(stale)
                return newer if newer is not None else await self._refresh_held()
            finally:
                lock.__exit__(None, None, None)

    def _newer_token(self, stale: str) -> str | None:
        token = ((self._store.entry(self.key) or {}).get("tokens") or {}).get("access_token")
        return token if isinstance(token, str) and token and token != stale else None

    async def _refresh_held(self) -> str:
        entry = self._store.entry(self.key) or {}
        tokens = entry.get("tokens") or {}
        refresh_token = tokens.get("refresh_token")
        client = _client_for_refresh(self.settings, entry)
        if not isinstance(refresh_token, str) or client is None:
            raise SignInRequired(self.name, "the sign-in expired")
        try:
            async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT, follow_redirects=False) as http:
                discovery = (
                    None
                    if self.settings.auth_server_metadata_url
                    else Discovery.from_stored(entry.get("discovery"))
                )
                if discovery is None:
                    discovery = await discover(http, self.url, self.settings.auth_server_metadata_url, None)
                grant = {"grant_type": "refresh_token", "refresh_token": refresh_token}
                fresh = await token_request(http, discovery, client, grant)
        except TokenError as error:
            if error.code in _DEAD_GRANT:
                entry = {k: v for k, v in entry.items() if k not in ("tokens", "tokensExpireAt")}
                if error.code != "invalid_grant":
                    entry.pop("clientInformation", None)
                await anyio.to_thread.run_sync(self._store.put, self.key, entry)
                raise SignInRequired(self.name, "the server no longer accepts the sign-in") from None
            raise SignInRequired(self.name, f"refreshing the token failed: {error}") from None
        except Failure as failure:
            raise SignInRequired(self.name, f"refreshing the token failed: {failure}") from None
        except httpx.HTTPError as error:
            raise SignInRequired(self.name, f"refreshing the token failed: {http_error(error)}") from None
        fresh.setdefault("refresh_token", refresh_token)  # RFC 6749 6: the old one stays valid
        if "scope" in tokens:
            fresh.setdefault("scope", tokens["scope"])
        await anyio.to_thread.run_sync(self._store.put, self.key, _with_tokens(entry, fresh))
        return str(fresh["access_token"])
