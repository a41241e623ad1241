"""AWS Signature Version 4 (header signing), with the standard library only.

Why not botocore: one HMAC chain does not justify a 15 MB dependency, and the signature must
cover exactly the bytes the stream runner sends (after extensions and secret hiding changed
them), which only the runner knows.

The steps, as AWS documents them and as its published test suite checks them
(``tests/data/aws_sigv4/``):

1. canonical request: method, the path normalised (``.``/``..`` and empty segments removed, as
   for every service but S3) and URI-encoded once more (so ``%3A`` in a Bedrock model id becomes
   ``%253A``), the query sorted and encoded, the headers lower-cased, trimmed and sorted
   (repeated ones joined by commas), the signed header names, the payload's SHA-256;
2. string to sign: algorithm, time, scope ``date/region/service/aws4_request``, the canonical
   request's SHA-256;
3. signature: HMAC-SHA256 over the string to sign with a key derived from the secret key,
   date, region and service.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote, urlsplit

ALGORITHM = "AWS4-HMAC-SHA256"
_UNRESERVED = "-_.~"


@dataclass(frozen=True, slots=True)
class Credentials:
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None


def uri_encode(text: str) -> str:
    """Every byte but ``A-Za-z0-9-_.~`` as ``%XX`` (upper-case hex)."""
    return quote(text, safe=_UNRESERVED)


def canonical_path(path: str) -> str:
    """The path with dot segments and empty segments removed, each segment encoded again."""
    segments: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    if not segments:
        return "/"
    trailing = "/" if path.endswith("/") else ""
    return "/" + "/".join(uri_encode(segment) for segment in segments) + trailing


def canonical_query(query: str) -> str:
    """Parameters sorted by encoded name, then value; each name and value encoded."""
    pairs: list[tuple[str, str]] = []
    for part in query.split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        pairs.append((uri_encode(unquote(name)), uri_encode(unquote(value))))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def _trimmed(value: str) -> str:
    return " ".join(value.split())


def canonical_headers(headers: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """(the canonical headers block, the signed header names), for every header given."""
    merged: dict[str, list[str]] = {}
    for name, value in headers:
        merged.setdefault(name.lower().strip(), []).append(_trimmed(value))
    names = sorted(merged)
    block = "".join(f"{name}:{','.join(merged[name])}\n" for name in names)
    return block, ";".join(names)


def canonical_request(
    method: str, path: str, query: str, headers: Iterable[tuple[str, str]], payload_hash: str
) -> tuple[str, str]:
    """(the canonical request, the signed header names)."""
    block, signed = canonical_headers(headers)
    text = "\n".join(
        [method.upper(), canonical_path(path), canonical_query(query), block, signed, payload_hash]
    )
    return text, signed


def string_to_sign(amz_date: str, scope: str, request: str) -> str:
    digest = hashlib.sha256(request.encode("utf-8")).hexdigest()
    return f"{ALGORITHM}\n{amz_date}\n{scope}\n{digest}"


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode("utf-8")
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    return key


def amz_date(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def host_header(url: str) -> str:
    """The Host an HTTP client sends for ``url`` (the port only when it is not the default)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    default = 443 if parts.scheme == "https" else 80
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def sign(
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]],
    payload: bytes,
    credentials: Credentials,
    region: str,
    service: str,
    *,
    now: datetime | None = None,
) -> dict[str, str]:
    """The headers to add to the request: ``x-amz-date``, ``x-amz-security-token`` with a
    session token, and ``authorization``. ``headers`` are the other headers to sign (``host``
    is added from the URL when absent); every one of them must be sent unchanged."""
    stamp = amz_date(now)
    added = {"x-amz-date": stamp}
    if credentials.session_token:
        added["x-amz-security-token"] = credentials.session_token
    signed_headers = [(name, value) for name, value in headers if name.lower() not in added]
    if not any(name.lower() == "host" for name, _ in signed_headers):
        signed_headers.append(("host", host_header(url)))
    signed_headers.extend(added.items())
    parts = urlsplit(url)
    request, signed_names = canonical_request(
        method, parts.path or "/", parts.query, signed_headers, hashlib.sha256(payload).hexdigest()
    )
    date = stamp[:8]
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = string_to_sign(stamp, scope, request)
    key = signing_key(credentials.secret_access_key, date, region, service)
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    added["authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={signed_names}, Signature={signature}"
    )
    return added
