"""Google Vertex AI over real loopback HTTP: Application Default Credentials and the API key.

One loopback server (:class:`VertexServer`) plays both of Google's parts: the OAuth token
endpoint the ADC file names (``token_uri``; it checks the refresh-token grant, or verifies the
service account's RS256 JWT with the test's public key) and the Vertex model endpoint, which
accepts only a Bearer token it issued (or the test's API key on the express path), checks the
project and location in the path, and answers with the bodies in tests/data/google_vertex/.
``GOOGLE_VERTEX_BASE_URL`` (the variable Google's SDK reads, and pi with it) sends the requests
there; everything else is the production code path.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pi_tui.ai import google_adc
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.stream import stream_message
from pi_tui.ai.types import Context, Model, StreamOptions, Tool
from pi_tui.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from tests.support.builders import tool_result, user

DATA = Path(__file__).resolve().parents[1] / "data" / "google_vertex"
PROJECT = "pi-tui-test-project"
LOCATION = "europe-west4"
CATALOGUE_BASE = "https://{location}-aiplatform.googleapis.com"


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class VertexServer:
    """Token endpoint + model endpoint on one loopback port."""

    client_id: str = "client-123.apps.googleusercontent.com"
    client_secret: str = "d-FL95Q19q7MQmFpd7hHD0Ty"
    refresh_token: str = "1//0refresh-token-of-the-test"
    public_key: rsa.RSAPublicKey | None = None
    api_key: str = "AIza-test-vertex-key"
    expires_in: int = 3599
    token_delay: float = 0.0
    replies: list[str] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    model_requests: list[Seen] = field(default_factory=list)
    impersonations: list[Seen] = field(default_factory=list)
    issued: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)

    def start(self) -> VertexServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.handle(self, raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    # --- the endpoints --------------------------------------------------------------------

    def handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        path = handler.path
        if path == "/token":
            self.token(handler, raw)
        elif path.startswith("/impersonate/"):
            self.impersonate(handler, raw)
        elif ":streamGenerateContent" in path:
            self.model(handler, raw)
        else:
            self.send(handler, 404, {"error": {"code": 404, "message": f"no route {path}"}})

    def issue(self) -> str:
        token = f"ya29.test-token-{len(self.issued) + 1}"
        self.issued.add(token)
        return token

    def token(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        form = {key: values[0] for key, values in parse_qs(raw.decode()).items()}
        self.token_requests.append(form)
        time.sleep(self.token_delay)  # a slow token endpoint (the server is threaded)
        grant = form.get("grant_type")
        if grant == "refresh_token":
            expected = (self.client_id, self.client_secret, self.refresh_token)
            if (form.get("client_id"), form.get("client_secret"), form.get("refresh_token")) != expected:
                self.send(handler, 400, {"error": "invalid_grant", "error_description": "Bad Request"})
                return
        elif grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            problem = self.check_jwt(form.get("assertion", ""))
            if problem:
                self.errors.append(problem)
                self.send(handler, 400, {"error": "invalid_grant", "error_description": problem})
                return
        else:
            self.send(handler, 400, {"error": "unsupported_grant_type"})
            return
        reply = {"access_token": self.issue(), "expires_in": self.expires_in, "token_type": "Bearer"}
        self.send(handler, 200, reply)

    def check_jwt(self, assertion: str) -> str:
        """'' when the JWT is a service account's, RS256-signed with the test's key."""
        assert self.public_key is not None
        head, claims, signature = assertion.split(".")
        try:
            self.public_key.verify(
                _unb64(signature), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except Exception:
            return "bad signature"
        header, payload = json.loads(_unb64(head)), json.loads(_unb64(claims))
        if header != {"alg": "RS256", "typ": "JWT", "kid": "key-id-1"}:
            return f"bad header {header}"
        if payload["iss"] != "vertex@pi-tui-test-project.iam.gserviceaccount.com":
            return "bad iss"
        if payload["scope"] != "https://www.googleapis.com/auth/cloud-platform":
            return "bad scope"
        if payload["aud"] != f"{self.url}/token" or payload["exp"] - payload["iat"] != 3600:
            return "bad aud or lifetime"
        if abs(payload["iat"] - time.time()) > 60:
            return "bad iat"
        return ""

    def impersonate(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        seen = Seen(handler.path, {k.lower(): v for k, v in handler.headers.items()}, json.loads(raw))
        self.impersonations.append(seen)
        if seen.headers.get("authorization", "").removeprefix("Bearer ") not in self.issued:
            self.send(handler, 401, {"error": {"code": 401, "message": "no source token"}})
            return
        token = f"ya29.impersonated-{len(self.impersonations)}"
        self.issued.add(token)
        self.send(handler, 200, {"accessToken": token, "expireTime": "2099-01-01T00:00:00Z"})

    def model(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        seen = Seen(handler.path, headers, json.loads(raw))
        self.model_requests.append(seen)
        parts = urlsplit(handler.path)
        if parse_qs(parts.query).get("alt") != ["sse"]:
            self.send(handler, 400, {"error": {"code": 400, "message": "alt=sse missing"}})
            return
        key = headers.get("x-goog-api-key")
        if key is not None:
            ok = key == self.api_key and parts.path.startswith("/v1/publishers/google/models/")
            ok = ok and "authorization" not in headers
        else:
            prefix = f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/"
            token = headers.get("authorization", "").removeprefix("Bearer ")
            ok = parts.path.startswith(prefix) and token in self.issued
        if not ok:
            message = "Request had invalid authentication credentials or the wrong resource path."
            self.send(handler, 401, {"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED"}})
            return
        body = (DATA / self.replies.pop(0)).read_bytes()
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    @staticmethod
    def send(handler: BaseHTTPRequestHandler, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture
def server() -> Iterator[VertexServer]:
    google_adc.clear_cache()
    running = VertexServer().start()
    try:
        yield running
    finally:
        running.stop()
        google_adc.clear_cache()


def vertex_model(model_id: str = "gemini-2.5-flash", **fields: Any) -> Model:
    values: dict[str, Any] = {
        "id": model_id,
        "api": "google-vertex",
        "provider": "google-vertex",
        "base_url": CATALOGUE_BASE,
        "reasoning": True,
        "input": ["text", "image"],
        "max_tokens": 65536,
    }
    values.update(fields)
    return Model(**values)


def authorized_user_file(tmp_path: Path, server: VertexServer, **extra: Any) -> Path:
    """An ADC file as ``gcloud auth application-default login`` writes it (plus token_uri)."""
    path = tmp_path / "application_default_credentials.json"
    info = {
        "account": "",
        "client_id": server.client_id,
        "client_secret": server.client_secret,
        "quota_project_id": "quota-project-7",
        "refresh_token": server.refresh_token,
        "type": "authorized_user",
        "universe_domain": "googleapis.com",
        "token_uri": f"{server.url}/token",
        **extra,
    }
    path.write_text(json.dumps(info, indent=2))
    return path


def service_account_file(tmp_path: Path, server: VertexServer) -> Path:
    """A service account key file in the shape the Cloud console downloads."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    server.public_key = key.public_key()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "service-account.json"
    info = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "key-id-1",
        "private_key": pem,
        "client_email": "vertex@pi-tui-test-project.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": f"{server.url}/token",
        "universe_domain": "googleapis.com",
    }
    path.write_text(json.dumps(info))
    return path


def adc_env(server: VertexServer, credentials: Path | None, **extra: str) -> dict[str, str]:
    env = {
        "GOOGLE_CLOUD_PROJECT": PROJECT,
        "GOOGLE_CLOUD_LOCATION": LOCATION,
        "GOOGLE_VERTEX_BASE_URL": server.url,
        **extra,
    }
    if credentials is not None:
        env["GOOGLE_APPLICATION_CREDENTIALS"] = str(credentials)
    return env


def run(
    model: Model, env: dict[str, str], *, context: Context | None = None, **options: Any
) -> AssistantMessage:
    """Stream one reply in a fresh loop; the provider env is auth.json's ``env`` of the provider."""
    values: dict[str, Any] = {"provider_env": env, "max_retries": 0, "thinking": "medium", **options}

    async def main() -> AssistantMessage:
        try:
            stream = stream_message(
                model, context or Context(messages=[user("capital of France?")]), StreamOptions(**values)
            )
            async for _event in stream:
                pass
            return await stream.result()
        finally:
            await close_shared_client()

    return asyncio.run(asyncio.wait_for(main(), 20))


def text_of(message: AssistantMessage) -> str:
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


# --- authorized_user (gcloud's ADC) ----------------------------------------------------------


def test_authorized_user_adc_is_refreshed_once_and_streams_text(server: VertexServer, tmp_path: Path) -> None:
    credentials = authorized_user_file(tmp_path, server)
    server.replies += ["text.sse", "text.sse"]
    env = adc_env(server, credentials)
    first = run(vertex_model(), env)
    assert first.stop_reason == "stop", first.error_message
    assert text_of(first) == "The capital of France is Paris."
    assert first.usage is not None and (first.usage.input, first.usage.output) == (9, 8)
    assert first.response_id == "k2UnacWjB9LrgLUPmI2h0Ac"
    (grant,) = server.token_requests
    assert grant == {
        "grant_type": "refresh_token",
        "client_id": server.client_id,
        "client_secret": server.client_secret,
        "refresh_token": server.refresh_token,
    }
    request = server.model_requests[0]
    assert urlsplit(request.path).path == (
        f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent"
    )
    assert request.headers["authorization"] == "Bearer ya29.test-token-1"
    assert request.headers["x-goog-user-project"] == "quota-project-7"
    assert request.body["contents"] == [{"role": "user", "parts": [{"text": "capital of France?"}]}]
    assert request.body["generationConfig"]["thinkingConfig"]["includeThoughts"] is True
    # the token is cached in memory: the second request asks the token endpoint nothing
    second = run(vertex_model(), env)
    assert text_of(second) == "The capital of France is Paris."
    assert len(server.token_requests) == 1
    assert server.model_requests[1].headers["authorization"] == "Bearer ya29.test-token-1"
    assert "ya29" not in credentials.read_text()  # never written to disk


def test_a_slow_token_endpoint_does_not_hold_up_the_event_loop(server: VertexServer, tmp_path: Path) -> None:
    """The token is fetched in a worker thread (the request's signer), so a UI on the same loop
    keeps drawing while Google's endpoint takes its time."""
    server.token_delay = 1.0
    server.replies.append("text.sse")
    env = adc_env(server, authorized_user_file(tmp_path, server))

    async def main() -> tuple[AssistantMessage, float]:
        loop = asyncio.get_running_loop()
        gaps: list[float] = []

        async def ticker() -> None:
            last = loop.time()
            while True:
                await asyncio.sleep(0.01)
                now = loop.time()
                gaps.append(now - last)
                last = now

        task = loop.create_task(ticker())
        try:
            options = StreamOptions(provider_env=env, max_retries=0)
            stream = stream_message(vertex_model(), Context(messages=[user("capital of France?")]), options)
            async for _event in stream:
                pass
            return await stream.result(), max(gaps)
        finally:
            task.cancel()
            await close_shared_client()

    message, longest = asyncio.run(asyncio.wait_for(main(), 20))
    assert text_of(message) == "The capital of France is Paris.", message.error_message
    assert len(server.token_requests) == 1
    assert longest < 0.5, f"the loop stood still for {longest:.2f} s"


def test_a_token_close_to_expiry_is_fetched_again(server: VertexServer, tmp_path: Path) -> None:
    """Within five minutes of ``expires_in`` the cached token is not used any more."""
    server.expires_in = 200
    server.replies += ["text.sse", "text.sse"]
    env = adc_env(server, authorized_user_file(tmp_path, server))
    run(vertex_model(), env)
    run(vertex_model(), env)
    assert len(server.token_requests) == 2
    tokens = [seen.headers["authorization"] for seen in server.model_requests]
    assert tokens == ["Bearer ya29.test-token-1", "Bearer ya29.test-token-2"]


def test_a_refused_refresh_token_is_one_clear_line(server: VertexServer, tmp_path: Path) -> None:
    credentials = authorized_user_file(tmp_path, server, refresh_token="1//revoked")
    message = run(vertex_model(), adc_env(server, credentials))
    assert message.stop_reason == "error"
    assert message.error_message is not None and "\n" not in message.error_message
    assert "refused the credentials (HTTP 400): invalid_grant" in message.error_message
    assert server.model_requests == []


# --- service_account (a key file) -----------------------------------------------------------


def test_service_account_jwt_grant_and_thinking_with_signature(server: VertexServer, tmp_path: Path) -> None:
    credentials = service_account_file(tmp_path, server)
    server.replies.append("thinking.sse")
    message = run(vertex_model("gemini-2.5-pro"), adc_env(server, credentials))
    assert server.errors == [] and message.stop_reason == "stop", (server.errors, message.error_message)
    (grant,) = server.token_requests
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and isinstance(text, TextContent)
    assert (
        thinking.thinking
        == "**Weighing the numbers**\n\nThe user wants 17 times 23. 17*20 is 340 and 17*3 is 51."
    )
    assert thinking.thinking_signature is not None and thinking.thinking_signature.startswith("oAsoHoCbB5fv")
    assert text.text == "17 \u00d7 23 = 391."
    assert message.usage is not None and (message.usage.input, message.usage.output) == (12, 9 + 125)
    assert server.model_requests[0].headers["authorization"] == "Bearer ya29.test-token-1"
    assert "x-goog-user-project" not in server.model_requests[0].headers


def test_function_call_goes_back_with_its_signature_and_gemini_3s_call_id(
    server: VertexServer, tmp_path: Path
) -> None:
    credentials = authorized_user_file(tmp_path, server)
    server.replies += ["function_call.sse", "text.sse"]
    model = vertex_model("gemini-3-pro-preview")
    tools = [
        Tool(
            name="read",
            description="Read a file",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        )
    ]
    context = Context(messages=[user("read the readme")], tools=tools)
    env = adc_env(server, credentials)
    message = run(model, env, context=context)
    assert message.stop_reason == "toolUse", message.error_message
    (call,) = message.content
    assert isinstance(call, ToolCall) and call.name == "read" and call.arguments == {"path": "README.md"}
    assert call.thought_signature is not None and call.thought_signature.startswith("Y3YPdZB19vcG")
    sent = server.model_requests[0].body
    assert sent["tools"][0]["functionDeclarations"][0]["name"] == "read"
    # the call goes back with its signature, and (Gemini 3, as pi 1.5.2 sends it) the call id
    # pi-tui gave the call Gemini sent without one, on the call and on its response
    context.messages += [message, tool_result(call.id, "# pi-tui")]
    run(model, env, context=context)
    model_turn, result_turn = server.model_requests[1].body["contents"][1:]
    assert model_turn["parts"][0]["thoughtSignature"] == call.thought_signature
    assert model_turn["parts"][0]["functionCall"]["id"] == call.id
    assert result_turn["parts"][0]["functionResponse"] == {
        "name": "read",
        "response": {"output": "# pi-tui"},
        "id": call.id,
    }


# --- impersonation, unsupported kinds ---------------------------------------------------------


def test_impersonated_service_account_uses_the_source_token(server: VertexServer, tmp_path: Path) -> None:
    path = tmp_path / "impersonated.json"
    source = json.loads(authorized_user_file(tmp_path, server).read_text())
    target = "runner@pi-tui-test-project.iam.gserviceaccount.com"
    path.write_text(
        json.dumps(
            {
                "type": "impersonated_service_account",
                "service_account_impersonation_url": f"{server.url}/impersonate/{target}:generateAccessToken",
                "delegates": [],
                "source_credentials": source,
            }
        )
    )
    server.replies.append("text.sse")
    message = run(vertex_model(), adc_env(server, path))
    assert text_of(message) == "The capital of France is Paris.", message.error_message
    (seen,) = server.impersonations
    assert seen.headers["authorization"] == "Bearer ya29.test-token-1"
    assert seen.body == {
        "scope": ["https://www.googleapis.com/auth/cloud-platform"],
        "delegates": [],
        "lifetime": "3600s",
    }
    assert server.model_requests[0].headers["authorization"] == "Bearer ya29.impersonated-1"


def test_external_account_is_refused_in_one_line(server: VertexServer, tmp_path: Path) -> None:
    path = tmp_path / "wif.json"
    path.write_text(json.dumps({"type": "external_account", "audience": "//iam.googleapis.com/x"}))
    message = run(vertex_model(), adc_env(server, path))
    assert message.stop_reason == "error"
    assert message.error_message == (
        f"Google credentials {path} are an external_account (workload identity federation), which "
        "pi-tui does not support: use a service account key file or GOOGLE_CLOUD_API_KEY"
    )
    assert server.model_requests == [] and server.token_requests == []


# --- the API key (express mode) ---------------------------------------------------------------


def test_api_key_goes_to_the_express_endpoint_without_project_or_token(server: VertexServer) -> None:
    server.replies.append("text.sse")
    env = {"GOOGLE_VERTEX_BASE_URL": server.url}  # no project, location or credentials file
    message = run(vertex_model(), env, api_key=server.api_key)
    assert text_of(message) == "The capital of France is Paris.", message.error_message
    (request,) = server.model_requests
    assert (
        urlsplit(request.path).path == "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    )
    assert request.headers["x-goog-api-key"] == server.api_key
    assert "authorization" not in request.headers
    assert server.token_requests == []


# --- missing configuration ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("drop", "line"),
    [
        (
            "GOOGLE_CLOUD_PROJECT",
            "Google Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), "
            "or use an API key (GOOGLE_CLOUD_API_KEY)",
        ),
        (
            "GOOGLE_CLOUD_LOCATION",
            "Google Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION (e.g. us-central1 or global), "
            "or use an API key (GOOGLE_CLOUD_API_KEY)",
        ),
    ],
)
def test_missing_project_or_location_is_one_clear_line(
    server: VertexServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drop: str, line: str
) -> None:
    for name in ("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    env = adc_env(server, authorized_user_file(tmp_path, server))
    del env[drop]
    message = run(vertex_model(), env)
    assert message.stop_reason == "error" and message.error_message == line
    assert server.model_requests == [] and server.token_requests == []


def test_no_credentials_file_names_the_ways_to_get_one(
    server: VertexServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    message = run(vertex_model(), adc_env(server, None))
    assert message.error_message == (
        "Google Vertex AI needs credentials: set GOOGLE_CLOUD_API_KEY, run "
        "`gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS "
        "to a service account key file"
    )
    # gcloud's well-known file is found without the variable
    well_known = tmp_path / ".config" / "gcloud"
    well_known.mkdir(parents=True)
    authorized_user_file(well_known, server)
    server.replies.append("text.sse")
    assert text_of(run(vertex_model(), adc_env(server, None))) == "The capital of France is Paris."


# --- the installed script ---------------------------------------------------------------------


def test_print_mode_with_a_models_json_base_url_override(
    server: VertexServer, tmp_path: Path, agent_dir: Path
) -> None:
    """``pi-tui -p`` on google-vertex with only ``baseUrl`` overridden: the collection URL given
    (it names the project and location) gets the model path, ADC signs it."""
    agent = agent_dir
    collection = f"{server.url}/v1/projects/{PROJECT}/locations/{LOCATION}"
    (agent / "models.json").write_text(json.dumps({"providers": {"google-vertex": {"baseUrl": collection}}}))
    credentials = authorized_user_file(tmp_path, server)
    server.replies.append("text.sse")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GOOGLE_", "GCLOUD_")) and key != "PI_CODING_AGENT_DIR"
    }
    env.update(
        PI_CODING_AGENT_DIR=str(agent),
        HOME=str(tmp_path),
        GOOGLE_APPLICATION_CREDENTIALS=str(credentials),
        GOOGLE_CLOUD_PROJECT=PROJECT,
        GOOGLE_CLOUD_LOCATION=LOCATION,
    )
    done = subprocess.run(
        ["pi-tui", "--provider", "google-vertex", "--model", "gemini-2.5-flash", "-p", "capital of France?"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The capital of France is Paris."
    (request,) = server.model_requests
    assert urlsplit(request.path).path == (
        f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent"
    )
    assert request.headers["authorization"] == "Bearer ya29.test-token-1"


def test_print_mode_with_the_settings_pis_login_saves_in_auth_json(
    server: VertexServer, tmp_path: Path, agent_dir: Path
) -> None:
    """pi's ``/login`` for Vertex ("Service account credentials file" or ADC) saves no key, only
    ``env`` (project, location, credentials file) under ``google-vertex`` in auth.json: with
    nothing in the process environment, pi-tui finds all three there."""
    credentials = service_account_file(tmp_path, server)
    login = {
        "google-vertex": {
            "type": "api_key",
            "env": {
                "GOOGLE_CLOUD_PROJECT": PROJECT,
                "GOOGLE_CLOUD_LOCATION": LOCATION,
                "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
                "GOOGLE_VERTEX_BASE_URL": server.url,
            },
        }
    }
    (agent_dir / "auth.json").write_text(json.dumps(login))
    (agent_dir / "auth.json").chmod(0o600)
    server.replies.append("text.sse")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GOOGLE_", "GCLOUD_"))}
    env.update(PI_CODING_AGENT_DIR=str(agent_dir), HOME=str(tmp_path))
    done = subprocess.run(
        ["pi-tui", "--provider", "google-vertex", "--model", "gemini-2.5-flash", "-p", "capital of France?"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The capital of France is Paris."
    assert server.errors == []
    (grant,) = server.token_requests
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    (request,) = server.model_requests
    assert urlsplit(request.path).path.startswith(f"/v1/projects/{PROJECT}/locations/{LOCATION}/")


def test_print_mode_without_a_location_fails_at_startup_in_one_line(tmp_path: Path, agent_dir: Path) -> None:
    agent = agent_dir
    (tmp_path / "adc.json").write_text(json.dumps({"type": "authorized_user"}))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GOOGLE_", "GCLOUD_"))}
    env.update(
        PI_CODING_AGENT_DIR=str(agent),
        HOME=str(tmp_path),
        GOOGLE_APPLICATION_CREDENTIALS=str(tmp_path / "adc.json"),
        GOOGLE_CLOUD_PROJECT=PROJECT,
    )
    done = subprocess.run(
        ["pi-tui", "--provider", "google-vertex", "--model", "gemini-2.5-flash", "-p", "hi"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "Google Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_token_endpoint_unreachable_says_where(tmp_path: Path) -> None:
    """A dead token endpoint: a one-line error naming it (no traceback, no model request)."""
    google_adc.clear_cache()
    with socket.socket() as sock:  # a port nobody listens on: bind, note, close
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "c",
                "client_secret": "s",
                "refresh_token": "r",
                "token_uri": f"{dead}/token",
            }
        )
    )
    env = {
        "GOOGLE_CLOUD_PROJECT": PROJECT,
        "GOOGLE_CLOUD_LOCATION": LOCATION,
        "GOOGLE_APPLICATION_CREDENTIALS": str(path),
    }
    message = run(vertex_model(), env)
    assert message.error_message == f"Cannot get a Google access token from {dead}/token: ConnectError"
