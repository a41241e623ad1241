"""The subscription providers' authorization servers, on loopback, for the login tests.

One real HTTP server (standard library, a thread) that answers as pi's providers do, at paths
under one prefix per provider, so the tests point pi-tui at it with the endpoint override
(``PI_TUI_OAUTH_ENDPOINTS``) and play the browser and the user:

- Anthropic: ``GET /anthropic/authorize`` approves at once and redirects (302) to the
  ``redirect_uri`` with ``code`` and ``state``; ``POST /anthropic/token`` takes JSON
  (``authorization_code`` with the PKCE verifier checked against the challenge, the redirect URI
  and the state; ``refresh_token``).
- OpenAI (Codex): ``GET /openai/oauth/authorize`` likewise; ``POST /openai/oauth/token`` takes a
  form and answers with a JWT access token holding the ChatGPT account id; the device code login:
  ``POST /openai/api/accounts/deviceauth/usercode`` and ``.../deviceauth/token`` (403 while the
  user has not entered the code, then the authorization code and its verifier).
- GitHub: ``POST /github/login/device/code``, ``POST /github/login/oauth/access_token``
  (``authorization_pending`` until :meth:`approve`, one ``slow_down`` first when
  :attr:`slow_down_once`, ``expired_token`` after :meth:`expire`), and
  ``GET /github/copilot_internal/v2/token`` exchanging the GitHub token for a Copilot token.

- OpenAI (ChatGPT subscription, ``openai``): ``GET /chatgpt/authorize`` registers a client and
  redirects with ``code``, ``state`` and the issued ``client_id``; ``POST /chatgpt/token`` takes a
  form with that client id and the ``resource``, and answers with an ``id_token`` and the
  granted ``scope``.
- OpenRouter: ``GET /openrouter/auth`` redirects to the ``callback_url`` with a ``code`` (no
  state); ``POST /openrouter/api/v1/auth/keys`` (JSON, PKCE checked) answers with a ``key``.
- Kimi, xAI, Meta (RFC 8628, form-encoded): ``POST /<provider>/device`` and
  ``POST /<provider>/token`` (``authorization_pending`` with HTTP 400 until :meth:`approve`);
  Meta's token is an identity token that ``POST /meta/muse-code/key`` turns into an API key.

What the server saw is in :attr:`log` for the tests to assert on. Nothing sleeps: the device
endpoints answer at once, with an interval the tests choose (``interval``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

ACCOUNT_ID = "acct-test-0001"
RFC8628_PROVIDERS = ("kimi-coding", "xai")
"""Device sign-ins answered by the generic RFC 8628 endpoints (Meta's are there too, with its mint)."""
DEVICE_PROVIDERS = (*RFC8628_PROVIDERS, "meta")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


"""The ChatGPT account id inside the OpenAI access tokens this server issues."""


def fake_jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT (header.payload.signature) carrying ``claims``: what pi reads the ChatGPT
    account id from."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.c2ln"


def challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass
class Grant:
    provider: str
    client_id: str
    redirect_uri: str
    challenge: str
    state: str | None


@dataclass
class Device:
    provider: str
    device_code: str
    user_code: str
    client_id: str = ""
    approved: bool = False
    expired: bool = False
    polls: int = 0


@dataclass
class Log:
    """What the server saw."""

    authorize: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, Any]] = field(default_factory=list)
    """Each token request's body (JSON or form), with ``_provider`` and ``_content_type``."""
    device_polls: list[str] = field(default_factory=list)
    """The user code of each device poll."""
    device_starts: list[dict[str, Any]] = field(default_factory=list)
    """Each device authorization request's form, with ``_provider``."""
    key_mints: list[str] = field(default_factory=list)
    """The identity token of each Meta key mint."""
    copilot_exchanges: list[str] = field(default_factory=list)
    """The GitHub token of each Copilot token request."""
    paths: list[str] = field(default_factory=list)


class ProviderAuthServer:
    """Start with :func:`running_auth_server`."""

    def __init__(self) -> None:
        self.log = Log()
        self.grants: dict[str, Grant] = {}
        self.devices: dict[str, Device] = {}
        self.interval: float = 0.01
        """Seconds the device endpoints tell the client to wait between polls."""
        self.slow_down_once = False
        self.expires_in = 3600
        self.deny = False
        """The authorize endpoint answers ``error=access_denied``."""
        self.copilot_models: list[dict[str, Any]] = [
            {"id": "gpt-4.1", "model_picker_enabled": True, "policy": {"state": "enabled"}},
            {"id": "claude-sonnet-4", "model_picker_enabled": True, "policy": {"state": "disabled"}},
            {"id": "text-embedding-3-small", "model_picker_enabled": False},
        ]
        """What ``/copilot/models`` lists: one usable, one its policy disables, one not for chat."""
        self.issued: dict[str, list[str]] = {"access": [], "refresh": []}
        self.issued_client = f"app_issued_{secrets.token_hex(4)}"
        """The client id the ChatGPT authorize step registers (named on the redirect)."""
        self.chatgpt_redirect = f"http://127.0.0.1:{_free_port()}/auth/callback"
        """ChatGPT's registered redirect: 127.0.0.1:1455 for real, a free port here."""
        self.auto_approve = False
        """Kimi, xAI and Meta device codes are allowed as soon as they are issued (a user who
        entered the code at once: for a sign-in run in the test's own thread)."""
        self.meta_mint_status = 200
        """What Meta's key mint answers (401: the identity token is refused)."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    # --- what the tests use -------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def approve(self, user_code: str) -> None:
        """The user entered ``user_code`` at the verification page and allowed the sign-in."""
        with self._lock:
            for device in self.devices.values():
                if device.user_code == user_code:
                    device.approved = True
                    return
        raise AssertionError(f"no device sign-in with user code {user_code!r}")

    def expire(self) -> None:
        """Every device code in progress expires (the user waited too long)."""
        with self._lock:
            for device in self.devices.values():
                device.expired = True

    def endpoints(self) -> dict[str, dict[str, str]]:
        """The endpoint override: each provider's URLs on this server."""
        base = self.base_url
        return {
            "anthropic": {
                "authorizeUrl": f"{base}/anthropic/authorize",
                "tokenUrl": f"{base}/anthropic/token",
            },
            "openai-codex": {
                "authorizeUrl": f"{base}/openai/oauth/authorize",
                "tokenUrl": f"{base}/openai/oauth/token",
                "deviceCodeUrl": f"{base}/openai/api/accounts/deviceauth/usercode",
                "deviceTokenUrl": f"{base}/openai/api/accounts/deviceauth/token",
                "verificationUrl": f"{base}/openai/codex/device",
                "deviceRedirectUri": f"{base}/openai/deviceauth/callback",
            },
            "github-copilot": {
                "deviceCodeUrl": f"{base}/github/login/device/code",
                "deviceTokenUrl": f"{base}/github/login/oauth/access_token",
                "tokenUrl": f"{base}/github/copilot_internal/v2/token",
                "copilotTokenUrl": f"{base}/github/copilot_internal/v2/token",
                "copilotApiUrl": f"{base}/copilot",
            },
            "openai": {
                "authorizeUrl": f"{base}/chatgpt/authorize",
                "tokenUrl": f"{base}/chatgpt/token",
                "redirectUri": self.chatgpt_redirect,
            },
            "openrouter": {
                "authorizeUrl": f"{base}/openrouter/auth",
                "tokenUrl": f"{base}/openrouter/api/v1/auth/keys",
            },
            **{
                provider: {
                    "deviceCodeUrl": f"{base}/{provider}/device",
                    "tokenUrl": f"{base}/{provider}/token",
                }
                for provider in RFC8628_PROVIDERS
            },
            "meta": {
                "deviceCodeUrl": f"{base}/meta/device",
                "tokenUrl": f"{base}/meta/token",
                "mintUrl": f"{base}/meta/muse-code/key",
            },
        }

    def write_endpoints(self, path: Any) -> Any:
        path.write_text(json.dumps(self.endpoints()))
        return path

    # --- token minting ------------------------------------------------------------------------

    def _tokens(self, provider: str) -> dict[str, Any]:
        serial = len(self.issued["access"]) + 1
        if provider == "openai-codex":
            claims = {"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}, "n": serial}
            access = fake_jwt(claims)
        else:
            access = f"{provider}-access-{serial}-{secrets.token_hex(4)}"
        refresh = f"{provider}-refresh-{serial}-{secrets.token_hex(4)}"
        if provider == "anthropic":  # Anthropic's own prefixes, by which pi 0.73.1 knows a login
            access, refresh = f"sk-ant-oat01-{access}", f"sk-ant-ort01-{refresh}"
        self.issued["access"].append(access)
        self.issued["refresh"].append(refresh)
        answer: dict[str, Any] = {
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": self.expires_in,
        }
        if provider == "openai":
            answer["id_token"] = fake_jwt({"sub": "user-1"})
            answer["scope"] = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"
        return answer

    # --- the HTTP side ------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> dict[str, Any]:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                kind = self.headers.get("Content-Type") or ""
                if kind.startswith("application/json"):
                    body = json.loads(raw or "{}")
                else:
                    body = {name: values[0] for name, values in parse_qs(raw).items()}
                body["_content_type"] = kind
                return body

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                server.log.paths.append(parts.path)
                query = {name: values[0] for name, values in parse_qs(parts.query).items()}
                if parts.path in ("/chatgpt/authorize", "/openrouter/auth"):
                    provider = "openai" if parts.path.startswith("/chatgpt") else "openrouter"
                    server.log.authorize.append({"_provider": provider, **query})
                    self._authorize(provider, query)
                elif parts.path in ("/anthropic/authorize", "/openai/oauth/authorize"):
                    provider = "anthropic" if parts.path.startswith("/anthropic") else "openai-codex"
                    server.log.authorize.append({"_provider": provider, **query})
                    self._authorize(provider, query)
                elif parts.path == "/github/copilot_internal/v2/token":
                    token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                    server.log.copilot_exchanges.append(token)
                    if not token.startswith("gho_"):
                        self._send(401, {"message": "Bad credentials"})
                        return
                    expires_at = int(time.time()) + 1800
                    copilot = (
                        f"tid=test;exp={expires_at};proxy-ep=proxy.individual.githubcopilot.com;sku=test"
                    )
                    self._send(200, {"token": copilot, "expires_at": expires_at, "refresh_in": 1500})
                elif parts.path == "/copilot/models":
                    token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                    if not token.startswith("tid="):
                        self._send(401, {"message": "Bad credentials"})
                        return
                    self._send(200, {"data": server.copilot_models})
                else:
                    self._send(404, {"error": "not_found"})

            def _authorize(self, provider: str, query: dict[str, str]) -> None:
                redirect = query.get("redirect_uri") or query.get("callback_url", "")
                state = query.get("state")
                client = server.issued_client if provider == "openai" else query.get("client_id", "")
                if server.deny:
                    params = {"error": "access_denied", "error_description": "The user said no"}
                else:
                    code = f"code-{secrets.token_hex(6)}"
                    server.grants[code] = Grant(
                        provider, client, redirect, query.get("code_challenge", ""), state
                    )
                    params = {"code": code}
                    if provider == "openai":
                        params["client_id"] = client
                if state is not None:
                    params["state"] = state
                self._send(302, None, {"Location": f"{redirect}?{urlencode(params)}"})

            def do_POST(self) -> None:
                parts = urlsplit(self.path)
                server.log.paths.append(parts.path)
                body = self._body()
                with server._lock:
                    if parts.path == "/anthropic/token":
                        self._token("anthropic", body)
                    elif parts.path == "/openai/oauth/token":
                        self._token("openai-codex", body)
                    elif parts.path == "/openai/api/accounts/deviceauth/usercode":
                        self._codex_device_start(body)
                    elif parts.path == "/openai/api/accounts/deviceauth/token":
                        self._codex_device_poll(body)
                    elif parts.path == "/chatgpt/token":
                        self._token("openai", body)
                    elif parts.path == "/openrouter/api/v1/auth/keys":
                        self._openrouter_key(body)
                    elif parts.path == "/meta/muse-code/key":
                        self._meta_mint()
                    elif parts.path.endswith("/device") and parts.path.split("/")[1] in DEVICE_PROVIDERS:
                        self._rfc8628_start(parts.path.split("/")[1], body)
                    elif parts.path.endswith("/token") and parts.path.split("/")[1] in DEVICE_PROVIDERS:
                        self._rfc8628_token(parts.path.split("/")[1], body)
                    elif parts.path == "/github/login/device/code":
                        self._github_device_start(body)
                    elif parts.path == "/github/login/oauth/access_token":
                        self._github_device_poll(body)
                    else:
                        self._send(404, {"error": "not_found"})

            def _token(self, provider: str, body: dict[str, Any]) -> None:
                server.log.token_requests.append({"_provider": provider, **body})
                grant_type = body.get("grant_type")
                if grant_type == "refresh_token":
                    if body.get("refresh_token") not in server.issued["refresh"]:
                        self._send(400, {"error": "invalid_grant"})
                        return
                    self._send(200, server._tokens(provider))
                    return
                if grant_type != "authorization_code":
                    self._send(400, {"error": "unsupported_grant_type"})
                    return
                grant = server.grants.pop(str(body.get("code")), None)
                verifier = str(body.get("code_verifier") or "")
                if (
                    grant is None
                    or grant.provider != provider
                    or grant.client_id != body.get("client_id")
                    or grant.redirect_uri != body.get("redirect_uri")
                    or grant.challenge != challenge_of(verifier)
                ):
                    self._send(
                        400, {"error": "invalid_grant", "error_description": "code, verifier or redirect"}
                    )
                    return
                if provider == "openai" and body.get("resource") != "https://api.openai.com/v1":
                    self._send(400, {"error": "invalid_target"})
                    return
                if provider == "anthropic" and body.get("state") != grant.state:
                    self._send(400, {"error": "invalid_grant", "error_description": "state"})
                    return
                self._send(200, server._tokens(provider))

            def _openrouter_key(self, body: dict[str, Any]) -> None:
                server.log.token_requests.append({"_provider": "openrouter", **body})
                grant = server.grants.pop(str(body.get("code")), None)
                verifier = str(body.get("code_verifier") or "")
                if (
                    grant is None
                    or grant.provider != "openrouter"
                    or grant.challenge != challenge_of(verifier)
                ):
                    self._send(400, {"error": {"message": "Invalid code or verifier", "code": 400}})
                    return
                key = f"sk-or-v1-{secrets.token_hex(8)}"
                server.issued["access"].append(key)
                self._send(200, {"key": key, "user_id": "user-1"})

            def _rfc8628_start(self, provider: str, body: dict[str, Any]) -> None:
                server.log.device_starts.append({"_provider": provider, **body})
                device = Device(
                    provider, f"{provider}-dev-{secrets.token_hex(6)}", f"U{secrets.token_hex(3).upper()}"
                )
                device.client_id = str(body.get("client_id"))
                device.approved = server.auto_approve
                server.devices[device.device_code] = device
                # xAI's page must be https (pi refuses another); it is only shown, never fetched
                page = (
                    "https://accounts.x.ai/device"
                    if provider == "xai"
                    else f"{server.base_url}/{provider}/verify"
                )
                self._send(
                    200,
                    {
                        "device_code": device.device_code,
                        "user_code": device.user_code,
                        "verification_uri": page,
                        "verification_uri_complete": f"{page}?user_code={device.user_code}",
                        "interval": server.interval,
                        "expires_in": 600,
                    },
                )

            def _rfc8628_token(self, provider: str, body: dict[str, Any]) -> None:
                if body.get("grant_type") == "refresh_token":
                    self._token(provider, body)
                    return
                device = server.devices.get(str(body.get("device_code")))
                if (
                    device is None
                    or device.provider != provider
                    or body.get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code"
                    or body.get("client_id") != device.client_id
                ):
                    self._send(400, {"error": "invalid_grant"})
                    return
                server.log.device_polls.append(device.user_code)
                device.polls += 1
                if device.expired:
                    self._send(400, {"error": "expired_token"})
                    return
                if server.slow_down_once and device.polls == 1:
                    self._send(400, {"error": "slow_down", "interval": server.interval})
                    return
                if not device.approved:
                    self._send(400, {"error": "authorization_pending"})
                    return
                server.devices.pop(device.device_code)
                if provider == "meta":  # an identity token only: the key mint gives the API key
                    identity = f"meta-identity-{secrets.token_hex(6)}"
                    server.issued["refresh"].append(identity)
                    self._send(200, {"access_token": identity, "token_type": "bearer"})
                    return
                self._send(200, server._tokens(provider))

            def _meta_mint(self) -> None:
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                server.log.key_mints.append(token)
                if server.meta_mint_status != 200 or token not in server.issued["refresh"]:
                    self._send(server.meta_mint_status if server.meta_mint_status != 200 else 401, {})
                    return
                key = f"meta-key-{secrets.token_hex(6)}"
                server.issued["access"].append(key)
                self._send(200, {"api_key": key})

            def _codex_device_start(self, body: dict[str, Any]) -> None:
                user_code = f"CDX-{secrets.token_hex(2).upper()}"
                device = Device(
                    "openai-codex", f"dev-{secrets.token_hex(6)}", user_code, str(body.get("client_id"))
                )
                server.devices[device.device_code] = device
                answer = {"device_auth_id": device.device_code, "user_code": device.user_code}
                self._send(200, {**answer, "interval": str(server.interval)})

            def _codex_device_poll(self, body: dict[str, Any]) -> None:
                device = server.devices.get(str(body.get("device_auth_id")))
                if device is None or device.user_code != body.get("user_code"):
                    self._send(400, {"error": {"code": "invalid_request"}})
                    return
                server.log.device_polls.append(device.user_code)
                if device.expired:
                    self._send(410, {"error": {"code": "expired_token"}})
                    return
                if not device.approved:
                    self._send(403, {"error": {"code": "deviceauth_authorization_pending"}})
                    return
                verifier = secrets.token_urlsafe(32)
                code = f"code-{secrets.token_hex(6)}"
                redirect = f"{server.base_url}/openai/deviceauth/callback"
                server.grants[code] = Grant(
                    "openai-codex", device.client_id, redirect, challenge_of(verifier), None
                )
                server.devices.pop(device.device_code)
                self._send(200, {"authorization_code": code, "code_verifier": verifier})

            def _github_device_start(self, body: dict[str, Any]) -> None:
                user_code = f"GH{secrets.token_hex(2).upper()}-0001"
                device = Device(
                    "github-copilot", f"ghd-{secrets.token_hex(6)}", user_code, str(body.get("client_id"))
                )
                server.devices[device.device_code] = device
                self._send(
                    200,
                    {
                        "device_code": device.device_code,
                        "user_code": device.user_code,
                        "verification_uri": f"{server.base_url}/github/login/device",
                        "interval": server.interval,
                        "expires_in": 900,
                    },
                )

            def _github_device_poll(self, body: dict[str, Any]) -> None:
                device = server.devices.get(str(body.get("device_code")))
                if device is None:
                    self._send(200, {"error": "bad_verification_code"})
                    return
                server.log.device_polls.append(device.user_code)
                device.polls += 1
                if device.expired:
                    self._send(200, {"error": "expired_token", "error_description": "The code expired"})
                    return
                if server.slow_down_once and device.polls == 1:
                    self._send(200, {"error": "slow_down", "interval": server.interval})
                    return
                if not device.approved:
                    self._send(200, {"error": "authorization_pending"})
                    return
                server.devices.pop(device.device_code)
                token = f"gho_{secrets.token_hex(8)}"
                self._send(200, {"access_token": token, "token_type": "bearer", "scope": "read:user"})

        return Handler


@contextmanager
def running_auth_server() -> Iterator[ProviderAuthServer]:
    server = ProviderAuthServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
