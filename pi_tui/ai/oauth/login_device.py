"""The RFC 8628 device sign-ins pi has: Kimi Code, xAI (SuperGrok / X Premium), Meta (Muse), and
the polling GitHub's Copilot sign-in shares with them.

Each asks its authorization server for a device code (a form POST), shows the user code and the
page to enter it at, then polls the token endpoint with the device-code grant until the user has
allowed it (``authorization_pending``, ``slow_down`` with the server's interval, ``expired_token``,
``access_denied``; :func:`~.device.poll_device_flow` keeps the pace). What each does with the
token is pi's (``pi-ai/dist/auth/oauth/kimi-coding.js``, ``xai.js``, ``meta.js``): Kimi and xAI
keep the access and refresh tokens (xAI five minutes short, as pi stores them); Meta's token is
an identity token that buys a day-long Model API key at its key mint, stored as ``refresh`` and
``access`` so the renewal (:mod:`.refresh`) mints the next key the same way.

A verification page is a server's word, opened in a browser and drawn on the terminal: only an
http(s) URL is taken (xAI's only https, as pi checks), and it is drawn as plain text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from pi_tui.ai.oauth.device import DevicePoll, poll_device_flow
from pi_tui.ai.oauth.login_errors import LoginError
from pi_tui.ai.oauth.providers import OAuthProvider
from pi_tui.ai.oauth.tokens import (
    META_MINT_HEADERS,
    XAI_DEFAULT_LIFETIME_S,
    TokenAnswerError,
    meta_key_credential,
    oauth_error,
    token_credential,
)

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
JSON_ACCEPT = {"Accept": "application/json"}
KIMI_DEVICE_SECONDS = 15 * 60
"""How long a Kimi device code lasts when the server does not say (pi's figure)."""


class _Display(Protocol):
    """What a sign-in shows (the :class:`~.login.LoginUI` methods this module calls)."""

    def show_device_code(self, user_code: str, verification_uri: str) -> None: ...

    def progress(self, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class DeviceCode:
    """A device authorization: what to poll with, what to show, how fast and how long."""

    device_code: str
    user_code: str
    page: str
    interval: float | None
    expires_in: float


def positive(value: object) -> float | None:
    """A positive finite number of seconds, else None (pi falls back to its defaults)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 < value < math.inf else None


def web_page(value: object, *, https_only: bool = False) -> str | None:
    """``value`` when it is an http(s) URL with a host (https only for ``https_only``)."""
    if not isinstance(value, str) or not value.isprintable() or any(ch.isspace() for ch in value):
        return None
    parts = urlsplit(value)
    allowed = ("https",) if https_only else ("http", "https")
    return value if parts.scheme in allowed and parts.netloc else None


def json_object(response: httpx.Response) -> dict[str, Any]:
    """The answer's JSON object, or an empty one (an error page, say): its fields are then absent."""
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _refusal(who: str, what: str, response: httpx.Response, data: dict[str, Any]) -> str:
    code = oauth_error(data)
    return f"{who} {what} failed (HTTP {response.status_code}{': ' + code if code else ''})"


async def request_device_code(
    client: httpx.AsyncClient,
    url: str,
    form: dict[str, str],
    who: str,
    *,
    headers: dict[str, str] | None = None,
    complete_page: bool,
    https_only: bool = False,
    default_expiry: float = math.inf,
) -> DeviceCode:
    """Start a device authorization. ``complete_page``: show ``verification_uri_complete`` (the
    page with the code filled in) when the server gives one, as pi does for Kimi, xAI and Meta."""
    response = await client.post(url, data=form, headers=headers or JSON_ACCEPT)
    data = json_object(response)
    if not response.is_success:
        raise LoginError(_refusal(who, "device authorization", response, data))
    device_code, user_code = data.get("device_code"), data.get("user_code")
    plain = web_page(data.get("verification_uri"), https_only=https_only)
    complete = web_page(data.get("verification_uri_complete"), https_only=https_only)
    page = (complete or plain) if complete_page else plain
    if not isinstance(device_code, str) or not device_code or not isinstance(user_code, str) or not user_code:
        raise LoginError(f"{who}: the device code answer lacks its code")
    if page is None:
        raise LoginError(f"{who}: the device code answer names no web page to enter the code at")
    return DeviceCode(
        device_code,
        user_code,
        page,
        positive(data.get("interval")),
        positive(data.get("expires_in")) or default_expiry,
    )


async def poll_for_token(
    client: httpx.AsyncClient,
    url: str,
    form: dict[str, str],
    device: DeviceCode,
    who: str,
    *,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Poll ``url`` with the device-code grant until the user allowed the sign-in; the token
    answer. pi's readings: an answer with an ``access_token`` completes (GitHub answers 200 with
    an ``error`` while waiting), a 5xx ends the sign-in, the error codes say the rest."""

    async def poll() -> DevicePoll:
        response = await client.post(url, data=form, headers=headers or JSON_ACCEPT)
        data = json_object(response)
        token = data.get("access_token")
        if response.is_success and isinstance(token, str) and token:
            return DevicePoll("complete", value=data)
        error = oauth_error(data) if response.status_code < 500 else None
        if error == "authorization_pending":
            return DevicePoll("pending")
        if error == "slow_down":
            return DevicePoll("slow_down", interval=positive(data.get("interval")))
        if error == "expired_token":
            return DevicePoll("failed", message=f"The {who} device code expired: run the login again")
        if error in ("access_denied", "authorization_denied"):
            return DevicePoll("failed", message=f"{who} login was denied")
        return DevicePoll("failed", message=_refusal(who, "device sign-in", response, data))

    answer: dict[str, Any] = await poll_device_flow(poll, device.interval, device.expires_in, wait_first=True)
    return answer


def _grant_form(facts: OAuthProvider, device: DeviceCode) -> dict[str, str]:
    return {"grant_type": DEVICE_CODE_GRANT, "client_id": facts.client_id, "device_code": device.device_code}


async def kimi_sign_in(client: httpx.AsyncClient, facts: OAuthProvider, ui: _Display) -> dict[str, Any]:
    """Kimi Code: the access and refresh tokens, ``expires`` as the server says (no margin)."""
    who = "Kimi Code"
    device = await request_device_code(
        client,
        facts.device_code_url,
        {"client_id": facts.client_id},
        who,
        complete_page=True,
        default_expiry=KIMI_DEVICE_SECONDS,
    )
    ui.show_device_code(device.user_code, device.page)
    data = await poll_for_token(client, facts.token_url, _grant_form(facts, device), device, who)
    return _credential(who, data, facts.expiry_margin_ms)


async def xai_sign_in(client: httpx.AsyncClient, facts: OAuthProvider, ui: _Display) -> dict[str, Any]:
    """xAI: the access and refresh tokens, five minutes short; an https page only."""
    who = "xAI"
    form = {"client_id": facts.client_id, "scope": facts.scopes, "referrer": "pi"}
    device = await request_device_code(
        client, facts.device_code_url, form, who, complete_page=True, https_only=True
    )
    if device.expires_in == math.inf:
        raise LoginError("xAI: the device code answer says no expiry")
    ui.show_device_code(device.user_code, device.page)
    data = await poll_for_token(client, facts.token_url, _grant_form(facts, device), device, who)
    return _credential(who, data, facts.expiry_margin_ms, XAI_DEFAULT_LIFETIME_S)


async def meta_sign_in(client: httpx.AsyncClient, facts: OAuthProvider, ui: _Display) -> dict[str, Any]:
    """Meta: the identity token the device grant gives buys a Model API key at the key mint."""
    who = "Meta"
    device = await request_device_code(
        client, facts.device_code_url, {"client_id": facts.client_id}, who, complete_page=True
    )
    ui.show_device_code(device.user_code, device.page)
    data = await poll_for_token(client, facts.token_url, _grant_form(facts, device), device, who)
    identity = str(data["access_token"])
    ui.progress("Enabling Meta Model API access...")
    mint = facts.extra.get("mintUrl", "")
    response = await client.post(
        mint, content=b"{}", headers={**META_MINT_HEADERS, "Authorization": f"Bearer {identity}"}
    )
    try:
        return meta_key_credential(response, identity)
    except TokenAnswerError as error:
        raise LoginError(f"Meta sign-in failed: {error}") from None


def _credential(
    who: str, data: dict[str, Any], margin_ms: int, default_lifetime: float | None = None
) -> dict[str, Any]:
    try:
        return token_credential(data, margin_ms, default_lifetime=default_lifetime)
    except TokenAnswerError as error:
        raise LoginError(f"{who}: {error}") from None


DEVICE_SIGN_INS = {"kimi-coding": kimi_sign_in, "xai": xai_sign_in, "meta": meta_sign_in}
"""The device sign-ins of this module, by provider."""
