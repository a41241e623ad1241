"""A loopback Amazon Bedrock runtime for tests: ``POST /model/{modelId}/converse-stream``.

Real HTTP on 127.0.0.1 in a background thread (so in-process clients and ``pi-tui``
subprocesses alike can use it). Each request is checked the way AWS checks it:

- with ``keys`` set, the ``Authorization`` header must be a SigV4 signature that this server
  recomputes on its own (a separate, minimal implementation, so a mistake in
  ``pi_tui/ai/aws_sigv4.py`` cannot agree with itself) over the raw path, the signed headers as
  received and the body bytes as received, for service ``bedrock`` and the expected region;
- with ``bearer`` set, ``Authorization`` must be ``Bearer <bearer>``.

A request that fails the check gets HTTP 403 with a JSON ``{"message"}`` as AWS answers. The
others get the next reply from the queue: event-stream bytes (:func:`script_bytes` turns a JSON
script of ConverseStream events from tests/data/bedrock/ into them), or an
:class:`HttpError`. Every request is recorded in ``server.requests``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from pi_tui.ai.aws_eventstream import encode_event, encode_exception

DATA = Path(__file__).resolve().parents[1] / "data" / "bedrock"
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)"
    r"/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$"
)


def script_bytes(events: list[dict[str, Any]]) -> bytes:
    """A script (``[{"event": name, "payload": {...}} | {"exception": type, "message": text}]``)
    as the event-stream bytes Bedrock sends."""
    out = b""
    for entry in events:
        if "exception" in entry:
            out += encode_exception(entry["exception"], entry.get("message", ""))
        else:
            out += encode_event(entry["event"], entry["payload"])
    return out


def load_script(name: str) -> bytes:
    return script_bytes(json.loads((DATA / name).read_text(encoding="utf-8"))["events"])


@dataclass
class HttpError:
    status: int
    message: str
    error_type: str = "ValidationException"


@dataclass
class Keys:
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None
    region: str = "us-east-1"


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: bytes
    auth_ok: bool
    auth_problem: str = ""

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def verify_sigv4(
    method: str, path: str, headers: dict[str, str], body: bytes, keys: Keys, service: str = "bedrock"
) -> str:
    """'' when the request's SigV4 signature is right for ``keys`` and ``service``; else what is
    wrong."""
    match = _AUTH.match(headers.get("authorization", ""))
    if match is None:
        return f"not a SigV4 Authorization header: {headers.get('authorization', '')[:60]!r}"
    if match["key"] != keys.access_key_id:
        return f"wrong access key id {match['key']}"
    if match["region"] != keys.region or match["service"] != service:
        return f"wrong scope {match['region']}/{match['service']}"
    stamp = headers.get("x-amz-date", "")
    if not stamp.startswith(match["date"]):
        return "x-amz-date does not match the credential scope"
    signed = match["signed"].split(";")
    for required in ("host", "x-amz-date", *(["x-amz-security-token"] if keys.session_token else [])):
        if required not in signed:
            return f"{required} is not signed"
    if keys.session_token and headers.get("x-amz-security-token") != keys.session_token:
        return "wrong session token"
    canonical_headers = "".join(f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed)
    canonical = "\n".join(
        [
            method,
            quote(path, safe="/-_.~"),  # the path as sent, encoded once more
            "",
            canonical_headers,
            match["signed"],
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{match['date']}/{keys.region}/{service}/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = ("AWS4" + keys.secret_access_key).encode()
    for part in (match["date"], keys.region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return "" if hmac.compare_digest(expected, match["signature"]) else "signature mismatch"


@dataclass
class BedrockServer:
    replies: list[bytes | HttpError] = field(default_factory=list)
    keys: Keys | None = None
    bearer: str | None = None
    chunk: int = 7
    """Bytes written at a time, so frames arrive split."""
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> BedrockServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def _check(self, path: str, headers: dict[str, str], body: bytes) -> str:
        if self.bearer is not None:
            expected = f"Bearer {self.bearer}"
            return "" if headers.get("authorization") == expected else "wrong bearer token"
        if self.keys is not None:
            return verify_sigv4("POST", path, headers, body, self.keys)
        return ""

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length)
        headers = {name.lower(): value for name, value in handler.headers.items()}
        path = handler.path
        problem = self._check(path, headers, body)
        with self._lock:
            self.requests.append(Recorded(path, headers, body, not problem, problem))
            reply: bytes | HttpError
            if problem:
                reply = HttpError(403, f"The request signature we calculated does not match: {problem}")
                reply.error_type = "AccessDeniedException"
            elif not re.fullmatch(r"/model/[^/]+/converse-stream", path):
                reply = HttpError(404, f"No such operation: {path}", "UnknownOperationException")
            else:
                reply = self.replies.pop(0) if self.replies else HttpError(500, "no scripted reply")
        if isinstance(reply, HttpError):
            data = json.dumps({"message": reply.message}).encode()
            handler.send_response(reply.status)
            handler.send_header("content-type", "application/json")
            handler.send_header("x-amzn-errortype", reply.error_type)
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        handler.send_response(200)
        handler.send_header("content-type", "application/vnd.amazon.eventstream")
        handler.send_header("content-length", str(len(reply)))
        handler.end_headers()
        for piece in _pieces(reply, self.chunk):
            handler.wfile.write(piece)
            handler.wfile.flush()


def _pieces(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


@dataclass
class FakeSts:
    """A loopback AWS STS (``AWS_ENDPOINT_URL_STS``): ``AssumeRole`` must be signed with
    ``source`` (service ``sts``); ``AssumeRoleWithWebIdentity`` must carry ``web_token``. Both
    answer with ``grants`` as STS's XML, or ``AccessDenied`` as STS's error XML."""

    grants: Keys
    source: Keys | None = None
    web_token: str | None = None
    calls: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeSts:
        sts = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, text = sts._answer(self.path, headers, body)
                data = text.encode()
                self.send_response(status)
                self.send_header("content-type", "text/xml")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str]:
        form = dict(parse_qsl(body.decode()))
        self.calls.append(form)
        action = form.get("Action", "")
        problem = ""
        if action == "AssumeRole":
            problem = (
                "no source keys"
                if self.source is None
                else verify_sigv4("POST", path, headers, body, self.source, "sts")
            )
        elif action == "AssumeRoleWithWebIdentity":
            problem = "" if form.get("WebIdentityToken") == self.web_token else "wrong web identity token"
        else:
            problem = f"unknown action {action}"
        if problem:
            return 403, (
                '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
                f"<Code>AccessDenied</Code><Message>{problem}</Message></Error>"
                "<RequestId>0000</RequestId></ErrorResponse>"
            )
        keys = self.grants
        return 200, (
            f'<{action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><{action}Result>'
            f"<Credentials><AccessKeyId>{keys.access_key_id}</AccessKeyId>"
            f"<SecretAccessKey>{keys.secret_access_key}</SecretAccessKey>"
            f"<SessionToken>{keys.session_token or ''}</SessionToken>"
            "<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>"
            f"<AssumedRoleUser><Arn>{form.get('RoleArn', '')}/x</Arn></AssumedRoleUser>"
            f"</{action}Result></{action}Response>"
        )


@dataclass
class FakeSsoPortal:
    """A loopback AWS SSO portal (``AWS_ENDPOINT_URL_SSO``): ``GET /federation/credentials``
    with the right ``x-amz-sso_bearer_token`` answers ``grants`` as ``roleCredentials``; anything
    else is 401."""

    grants: Keys
    token: str
    calls: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeSsoPortal:
        portal = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                portal.calls.append(dict(parse_qsl(query)))
                ok = (
                    path == "/federation/credentials"
                    and self.headers.get("x-amz-sso_bearer_token") == portal.token
                )
                keys = portal.grants
                answer: dict[str, Any] = (
                    {
                        "roleCredentials": {
                            "accessKeyId": keys.access_key_id,
                            "secretAccessKey": keys.secret_access_key,
                            "sessionToken": keys.session_token,
                            "expiration": 4070908800000,
                        }
                    }
                    if ok
                    else {"message": "Session token not found or invalid"}
                )
                data = json.dumps(answer).encode()
                self.send_response(200 if ok else 401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
