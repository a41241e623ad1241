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

What the server saw is in :attr:`log` for the tests to assert on. Nothing sleeps: the device
endpoints answer at once, with an interval the tests choose (``interval``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

ACCOUNT_ID = "acct-test-0001"
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
        self.issued["access"].append(access)
        self.issued["refresh"].append(refresh)
        return {"access_token": access, "refresh_token": refresh, "expires_in": self.expires_in}

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
                if parts.path in ("/anthropic/authorize", "/openai/oauth/authorize"):
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
                redirect = query.get("redirect_uri", "")
                state = query.get("state")
                if server.deny:
                    params = {"error": "access_denied", "error_description": "The user said no"}
                else:
                    code = f"code-{secrets.token_hex(6)}"
                    server.grants[code] = Grant(
                        provider, query.get("client_id", ""), redirect, query.get("code_challenge", ""), state
                    )
                    params = {"code": code}
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
                if provider == "anthropic" and body.get("state") != grant.state:
                    self._send(400, {"error": "invalid_grant", "error_description": "state"})
                    return
                self._send(200, server._tokens(provider))

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
