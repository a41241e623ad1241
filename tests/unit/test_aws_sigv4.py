"""SigV4 against AWS's published signing test suite (tests/data/aws_sigv4/README.md names it).

Each ``*.header-signed-request.txt`` is a request as the suite publishes it, signed: the
request line, headers (one of them the expected ``Authorization``) and body. The test signs the
same request (without its Authorization) with the suite's keys, region, service and time, and
must produce that Authorization exactly.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from pi_tui.ai import aws_sigv4
from pi_tui.ai.aws_sigv4 import Credentials

DATA = Path(__file__).resolve().parents[1] / "data" / "aws_sigv4"
CONTEXT = json.loads((DATA / "context.json").read_text())
CASES = sorted(path.name.split(".")[0] for path in DATA.glob("*.header-signed-request.txt"))


def _parse(name: str) -> tuple[str, str, list[tuple[str, str]], str, bytes]:
    """(method, target, headers without Authorization, expected Authorization, body)."""
    raw = (DATA / f"{name}.header-signed-request.txt").read_text(encoding="utf-8")
    head, _, body = raw.partition("\n\n")
    lines = head.split("\n")
    method, rest = lines[0].split(" ", 1)
    target = rest.rsplit(" ", 1)[0]  # the path may hold a space; the protocol never does
    headers: list[tuple[str, str]] = []
    expected = ""
    for line in lines[1:]:
        name_, _, value = line.partition(":")
        if name_.lower() == "authorization":
            expected = value
        else:
            headers.append((name_, value))
    return method, target, headers, expected, body.encode("utf-8")


def _credentials(with_token: bool) -> Credentials:
    creds = CONTEXT["credentials"]
    return Credentials(
        creds["access_key_id"], creds["secret_access_key"], creds["token"] if with_token else None
    )


def test_the_suite_is_there() -> None:
    assert len(CASES) >= 12


@pytest.mark.parametrize("case", CASES)
def test_signature_matches_the_published_vector(case: str) -> None:
    method, target, headers, expected, body = _parse(case)
    with_token = any(name.lower() == "x-amz-security-token" for name, _ in headers)
    signed = aws_sigv4.sign(
        method,
        "https://example.amazonaws.com" + target,
        headers,
        body,
        _credentials(with_token),
        CONTEXT["region"],
        CONTEXT["service"],
        now=datetime.fromisoformat(CONTEXT["timestamp"].replace("Z", "+00:00")),
    )
    assert signed["authorization"] == expected
    assert signed["x-amz-date"] == "20150830T123600Z"
    if with_token:
        assert signed["x-amz-security-token"] == CONTEXT["credentials"]["token"]


def test_canonical_request_and_string_to_sign_match_the_suite() -> None:
    headers = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Host", "example.amazonaws.com"),
        ("Content-Length", "13"),
        ("X-Amz-Date", "20150830T123600Z"),
    ]
    request, signed = aws_sigv4.canonical_request("POST", "/", "", headers, hashlib.sha256(b"").hexdigest())
    assert request == (DATA / "post-x-www-form-urlencoded.header-canonical-request.txt").read_text()
    assert signed == "content-length;content-type;host;x-amz-date"
    to_sign = aws_sigv4.string_to_sign("20150830T123600Z", "20150830/us-east-1/service/aws4_request", request)
    assert to_sign == (DATA / "post-x-www-form-urlencoded.header-string-to-sign.txt").read_text()


def test_an_encoded_model_id_is_encoded_again_in_the_canonical_path() -> None:
    """Bedrock's path carries the model id percent-encoded; SigV4 (not S3) encodes it again."""
    path = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert (
        aws_sigv4.canonical_path(path)
        == "/model/anthropic.claude-sonnet-4-5-20250929-v1%253A0/converse-stream"
    )


def test_the_host_header_keeps_a_non_default_port() -> None:
    assert aws_sigv4.host_header("http://127.0.0.1:8123/x") == "127.0.0.1:8123"
    assert aws_sigv4.host_header("https://bedrock-runtime.us-east-1.amazonaws.com/x") == (
        "bedrock-runtime.us-east-1.amazonaws.com"
    )
