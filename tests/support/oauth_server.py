"""An OAuth-protected MCP server for tests: a real authorization server and resource on loopback.

Written for pi-tui's tests (no mocks: real HTTP on 127.0.0.1, uvicorn on a thread):

- ``/mcp``: a FastMCP streamable HTTP server with one tool, ``whoami`` (answers with the client
  the bearer token was issued to), behind a bearer check that answers 401 with
  ``WWW-Authenticate: Bearer resource_metadata="..."`` (RFC 9728 section 5.1);
- ``/resource-metadata``: the protected resource metadata (RFC 9728), found only through that
  header; ``/.well-known/oauth-protected-resource/mcp`` too when ``prm_well_known``;
- an authorization server whose issuer has a path (``/as``), so discovery must be path-aware
  (RFC 8414 section 3.1): metadata, ``/as/register`` (RFC 7591), ``/as/authorize`` (approves at
  once and redirects with ``code``, ``state`` and ``iss``, RFC 9207) and ``/as/token``
  (authorization_code with PKCE S256 checked, refresh_token with rotation).

Knobs for the tests: :attr:`access_token_lifetime` (seconds), :meth:`revoke_access_tokens`,
:meth:`revoke_everything`, :meth:`add_client` (a pre-registered client), :attr:`iss_override`,
:attr:`prm_authorization_server` (advertise a wrong one); counters in :attr:`log`.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SCOPE = "mcp:tools"


@dataclass
class Client:
    client_id: str
    redirect_uris: list[str]
    secret: str | None = None
    name: str | None = None


@dataclass
class Grant:
    client_id: str
    scope: str | None
    expires_at: float = float("inf")


@dataclass
class Log:
    """What the server saw, for the tests to assert on."""

    registrations: list[dict[str, Any]] = field(default_factory=list)
    authorize: list[dict[str, str]] = field(default_factory=list)
    token_grants: list[str] = field(default_factory=list)
    token_auth: list[str] = field(default_factory=list)
    """How each token request authenticated: ``none``, ``basic`` or ``post``."""
    rejected: list[str] = field(default_factory=list)
    """Bearer tokens /mcp refused (``""`` for a request without one)."""
    accepted: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    """Every path asked for, in order."""


class OAuthMcpServer:
    """Start with :func:`running_oauth_server` (or :meth:`start` / :meth:`stop`)."""

    def __init__(self, *, prm_well_known: bool = False) -> None:
        self.prm_well_known = prm_well_known
        self.access_token_lifetime: int = 3600
        self.iss_override: str | None = None
        self.prm_authorization_server: str | None = None
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.access_tokens: dict[str, Grant] = {}
        self.refresh_tokens: dict[str, Grant] = {}
        self.log = Log()
        self.base = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # --- addresses ------------------------------------------------------------------------------

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def issuer(self) -> str:
        return f"{self.base}/as"

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-authorization-server/as"

    # --- knobs ----------------------------------------------------------------------------------

    def add_client(self, client_id: str, redirect_uris: list[str], secret: str | None = None) -> None:
        self.clients[client_id] = Client(client_id, redirect_uris, secret)

    def revoke_access_tokens(self) -> None:
        """Every access token issued so far stops working (refresh tokens still do)."""
        self.access_tokens.clear()

    def revoke_everything(self) -> None:
        self.access_tokens.clear()
        self.refresh_tokens.clear()

    # --- the app --------------------------------------------------------------------------------

    def _app(self) -> ASGIApp:
        mcp = FastMCP("oauth-test", host="127.0.0.1", json_response=True)

        @mcp.tool()
        def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
            """Which OAuth client the caller's token belongs to."""
            request = ctx.request_context.request
            header = request.headers.get("authorization", "") if request is not None else ""
            grant = self.access_tokens.get(header.removeprefix("Bearer "))
            return f"client {grant.client_id if grant else '?'}"

        app = mcp.streamable_http_app()
        routes = [
            Route("/resource-metadata", self._resource_metadata),
            Route("/.well-known/oauth-protected-resource/mcp", self._resource_metadata_well_known),
            Route("/.well-known/oauth-authorization-server/as", self._as_metadata),
            Route("/as/register", self._register, methods=["POST"]),
            Route("/as/authorize", self._authorize),
            Route("/as/token", self._token, methods=["POST"]),
        ]
        app.router.routes.extend(routes)
        return self._bearer_check(app)

    def _bearer_check(self, app: ASGIApp) -> ASGIApp:
        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                self.log.requests.append(scope["path"])
            if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
                await app(scope, receive, send)
                return
            headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
            token = headers.get("authorization", "").removeprefix("Bearer ").strip()
            grant = self.access_tokens.get(token)
            if grant is not None and grant.expires_at > time.time():
                self.log.accepted.append(token)
                await app(scope, receive, send)
                return
            self.log.rejected.append(token)
            challenge = f'Bearer resource_metadata="{self.base}/resource-metadata", scope="{SCOPE}"'
            if token:
                challenge += ', error="invalid_token"'
            response = PlainTextResponse("unauthorized", 401, headers={"WWW-Authenticate": challenge})
            await response(scope, receive, send)

        return guarded

    async def _resource_metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "resource": self.mcp_url,
                "authorization_servers": [self.prm_authorization_server or self.issuer],
                "scopes_supported": [SCOPE],
                "bearer_methods_supported": ["header"],
            }
        )

    async def _resource_metadata_well_known(self, request: Request) -> Response:
        if not self.prm_well_known:
            return PlainTextResponse("not here", 404)
        return await self._resource_metadata(request)

    async def _as_metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "registration_endpoint": f"{self.issuer}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": [
                    "none",
                    "client_secret_post",
                    "client_secret_basic",
                ],
                "scopes_supported": [SCOPE],
                "authorization_response_iss_parameter_supported": True,
            }
        )

    async def _register(self, request: Request) -> Response:
        body = await request.json()
        self.log.registrations.append(body)
        uris = body.get("redirect_uris")
        if not isinstance(uris, list) or not uris or not all(isinstance(uri, str) for uri in uris):
            return JSONResponse({"error": "invalid_redirect_uri"}, 400)
        client = Client(f"dyn-{secrets.token_hex(6)}", uris, name=body.get("client_name"))
        self.clients[client.client_id] = client
        answer = {
            "client_id": client.client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": uris,
            "client_name": client.name,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        return JSONResponse(answer, 201)

    async def _authorize(self, request: Request) -> Response:
        query = dict(request.query_params)
        self.log.authorize.append(query)
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or redirect_uri not in client.redirect_uris:
            return PlainTextResponse("unknown client or redirect URI", 400)
        if query.get("response_type") != "code" or query.get("code_challenge_method") != "S256":
            return PlainTextResponse("code with PKCE S256 only", 400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "challenge": query.get("code_challenge", ""),
            "scope": query.get("scope"),
        }
        answer = {"code": code, "state": query.get("state", ""), "iss": self.iss_override or self.issuer}
        return RedirectResponse(f"{redirect_uri}?{urlencode(answer)}", 302)

    def _authenticate(self, request: Request, form: dict[str, str]) -> Client | None:
        header = request.headers.get("authorization", "")
        if header.startswith("Basic "):
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            self.log.token_auth.append("basic")
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
            self.log.token_auth.append("post" if secret else "none")
        client = self.clients.get(client_id)
        if client is None or (client.secret is not None and client.secret != secret):
            return None
        return client

    def _issue(self, client_id: str, scope: str | None) -> dict[str, Any]:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        lifetime = self.access_token_lifetime
        self.access_tokens[access] = Grant(client_id, scope, time.time() + lifetime)
        self.refresh_tokens[refresh] = Grant(client_id, scope)
        answer = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "refresh_token": refresh,
        }
        if scope:
            answer["scope"] = scope
        return answer

    async def _token(self, request: Request) -> Response:
        form = {key: str(value) for key, value in (await request.form()).items()}
        grant_type = form.get("grant_type", "")
        self.log.token_grants.append(grant_type)
        client = self._authenticate(request, form)
        if client is None:
            return JSONResponse({"error": "invalid_client"}, 401)
        if grant_type == "authorization_code":
            code = self.codes.pop(form.get("code", ""), None)
            if code is None or code["client_id"] != client.client_id:
                return JSONResponse({"error": "invalid_grant", "error_description": "unknown code"}, 400)
            if code["redirect_uri"] != form.get("redirect_uri"):
                return JSONResponse(
                    {"error": "invalid_grant", "error_description": "redirect_uri differs"}, 400
                )
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).decode().rstrip("=") != code["challenge"]:
                return JSONResponse({"error": "invalid_grant", "error_description": "PKCE check failed"}, 400)
            return JSONResponse(self._issue(client.client_id, code["scope"]))
        if grant_type == "refresh_token":
            grant = self.refresh_tokens.pop(form.get("refresh_token", ""), None)  # rotation
            if grant is None or grant.client_id != client.client_id:
                return JSONResponse(
                    {"error": "invalid_grant", "error_description": "unknown refresh token"}, 400
                )
            return JSONResponse(self._issue(client.client_id, grant.scope))
        return JSONResponse({"error": "unsupported_grant_type"}, 400)

    # --- running --------------------------------------------------------------------------------

    def start(self) -> OAuthMcpServer:
        config = uvicorn.Config(self._app(), host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="oauth-test-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the OAuth test server did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)


@contextmanager
def running_oauth_server(**options: Any) -> Iterator[OAuthMcpServer]:
    server = OAuthMcpServer(**options).start()
    try:
        yield server
    finally:
        server.stop()
