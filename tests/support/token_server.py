"""A loopback token server for the OAuth renewal tests: pi's refresh grants, answered as the
providers answer them (real HTTP on 127.0.0.1, a thread; no mocks).

- ``POST /anthropic/token``: Anthropic's JSON ``refresh_token`` grant;
- ``POST /openai/oauth/token``: OpenAI Codex's form-encoded grant, answered with a JWT access
  token carrying the ChatGPT account id (:data:`ACCOUNT_ID`);
- ``GET /github/copilot_internal/v2/token``: the GitHub token (as a bearer) exchanged for a
  Copilot token naming its API host in ``proxy-ep``;
- ``POST /xai/token``: xAI's form grant without a new refresh token (xAI keeps it);
- ``POST /openai/api/accounts/oauth/token``: ChatGPT's form grant with the issued client id and
  the resource, answered with the direct-use scope;
- ``POST /meta/key``: Meta's key mint, the identity token as a bearer.

:attr:`TokenServer.refuse` makes a provider answer 400 ``invalid_grant`` (401 for Copilot);
every request is in :attr:`TokenServer.seen`. :meth:`TokenServer.endpoints_file` writes the
``PI_TUI_OAUTH_ENDPOINTS`` file that points pi-tui here.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

ACCOUNT_ID = "acct-renewed-0001"
COPILOT_PROXY = "proxy.enterprise.example.test"


def jwt_with_account(account: str, serial: int) -> str:
    """An unsigned JWT whose claims name ``account`` as pi reads it."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": account}, "n": serial}
    return f"{part({'alg': 'none'})}.{part(claims)}.c2ln"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class TokenServer:
    refuse: set[str] = field(default_factory=set)
    seen: list[Seen] = field(default_factory=list)
    issued: int = 0

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner._answer(self, None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
                kind = self.headers.get("content-type", "")
                if kind.startswith("application/json"):
                    body: Any = json.loads(raw)
                else:
                    body = {name: values[0] for name, values in parse_qs(raw).items()}
                owner._answer(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> TokenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def endpoints_file(self, folder: Path, **extra: dict[str, str]) -> Path:
        """The override file pointing Anthropic, Codex, Copilot and xAI at this server."""
        data: dict[str, dict[str, str]] = {
            "anthropic": {"tokenUrl": f"{self.url}/anthropic/token"},
            "openai-codex": {"tokenUrl": f"{self.url}/openai/oauth/token"},
            "github-copilot": {"copilotTokenUrl": f"{self.url}/github/copilot_internal/v2/token"},
            "xai": {"tokenUrl": f"{self.url}/xai/token"},
            "openai": {"tokenUrl": f"{self.url}/openai/api/accounts/oauth/token"},
            "meta": {"mintUrl": f"{self.url}/meta/key"},
        }
        for provider, values in extra.items():
            data.setdefault(provider.replace("_", "-"), {}).update(values)
        path = folder / "oauth-endpoints.json"
        path.write_text(json.dumps(data))
        return path

    def _answer(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        path = handler.path
        self.seen.append(
            Seen(handler.command, path, {k.lower(): v for k, v in handler.headers.items()}, body)
        )
        provider = path.strip("/").split("/")[0]
        self.issued += 1
        n = self.issued
        status, answer = 200, {}
        if provider in self.refuse:
            status = 401 if provider in ("github", "meta") else 400
            answer = {"error": "invalid_grant", "error_description": "Refresh token revoked"}
        elif path == "/anthropic/token":
            answer = {
                "token_type": "Bearer",
                "access_token": f"sk-ant-oat01-renewed-{n}",
                "refresh_token": f"sk-ant-ort01-renewed-{n}",
                "expires_in": 28800,
            }
        elif path == "/openai/oauth/token":
            answer = {
                "access_token": jwt_with_account(ACCOUNT_ID, n),
                "refresh_token": f"rt-renewed-{n}",
                "expires_in": 864000,
                "id_token": "unused",
            }
        elif path == "/openai/api/accounts/oauth/token":
            answer = {
                "access_token": f"chatgpt-renewed-{n}",
                "refresh_token": f"chatgpt-rt-{n}",
                "expires_in": 3600,
                "scope": "openid offline_access resource.invoke chatgpt.tokens.use.direct",
            }
        elif path == "/meta/key":
            answer = {"api_key": f"meta-key-{n}"}
        elif path == "/xai/token":
            answer = {"access_token": f"xai-renewed-{n}", "expires_in": 3600}
        elif path == "/github/copilot_internal/v2/token":
            expires_at = int(time.time()) + 1800
            answer = {
                "token": f"tid=renewed-{n};exp={expires_at};proxy-ep={COPILOT_PROXY}",
                "expires_at": expires_at,
            }
        else:
            status, answer = 404, {"error": "not_found"}
        data = json.dumps(answer).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
