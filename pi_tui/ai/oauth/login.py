"""Subscription sign-ins as pi has them: the browser with a loopback callback (or the pasted
redirect URL / code), Anthropic's copy-code login, and the device flows (GitHub Copilot, the
OpenAI Codex device code). Each ends with a credential in pi's shape for
:meth:`~pi_tui.config.auth.AuthStore.set_oauth`, so pi refreshes what pi-tui obtained and the
other way round.

The facts (client ids, URLs, ports, scopes) are :mod:`.providers`'; this module is the steps.
It draws nothing: the front end (``pi-tui auth login``, ``/login``) passes a :class:`LoginUI`
that shows the URL or the user code and, where it can, collects a pasted answer. Cancelling
the task that runs :func:`sign_in` (Esc, Ctrl+C) closes the callback server and stops the
polling: both live inside ``try/finally`` blocks and every wait is an ``await``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

import httpx

from pi_tui.ai.oauth.callback import LoopbackCallback, parse_pasted, start_callback
from pi_tui.ai.oauth.device import DevicePoll, poll_device_flow
from pi_tui.ai.oauth.login_errors import LoginCancelled, LoginError
from pi_tui.ai.oauth.providers import OAuthProvider, copilot_urls, oauth_provider

REQUEST_TIMEOUT = 30.0
"""Seconds one request to an authorization server may take (pi's limit)."""
CODEX_DEVICE_SECONDS = 15 * 60
"""How long a Codex device code stays valid (pi's figure; the server does not say)."""
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
"""What pi sends to GitHub's Copilot endpoints (they answer only editors they know)."""
COPILOT_API_VERSION = "2026-06-01"
SUBSCRIPTION_PROVIDERS = ("anthropic", "openai-codex", "github-copilot")
"""The subscriptions pi-tui signs in to, in pi's /login order."""


class LoginUI(Protocol):
    """What a front end shows and asks during a sign-in."""

    def show_url(self, url: str, instructions: str) -> None:
        """The authorization URL to open (already opened in a browser when one could be)."""

    def show_device_code(self, user_code: str, verification_uri: str) -> None:
        """The code to enter at ``verification_uri``."""

    def progress(self, text: str) -> None:
        """A step under way ("Exchanging the code for tokens...")."""


Paste = Callable[[str], Awaitable[str | None]]
"""Ask for the pasted redirect URL or code (the prompt is the argument); None when nothing can
be pasted here (no terminal, stdin closed): the browser callback is then the only way back."""


@dataclass(frozen=True, slots=True)
class Method:
    """One way to sign in to a provider: ``browser``, ``paste`` or ``device``."""

    id: str
    label: str


METHODS: dict[str, tuple[Method, ...]] = {
    "anthropic": (
        Method("browser", "Browser login (default)"),
        Method("paste", "Copy code login (headless)"),
    ),
    "openai-codex": (
        Method("browser", "Browser login (default)"),
        Method("device", "Device code login (headless)"),
    ),
    "github-copilot": (Method("device", "Device code login"),),
}
"""pi's login methods per subscription, default first; ``--no-browser`` takes the last."""


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge): 32 random bytes, base64url without padding, as pi makes them."""
    verifier = _b64url(secrets.token_bytes(32))
    return verifier, _b64url(hashlib.sha256(verifier.encode()).digest())


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _facts(provider: str) -> OAuthProvider:
    facts = oauth_provider(provider)
    if facts is None or provider not in SUBSCRIPTION_PROVIDERS:
        raise LoginError(f"pi-tui has no subscription login for {provider}")
    return facts


async def sign_in(
    provider: str,
    method: str,
    ui: LoginUI,
    paste: Paste | None,
    *,
    enterprise_domain: str | None = None,
) -> dict[str, Any]:
    """Run ``provider``'s ``method`` and return the credential to save (pi's shape).

    Raises :class:`LoginError` (one line) when the provider refuses or answers wrongly, and
    :class:`providers.OAuthConfigError` for a broken endpoint override file.
    """
    facts = _facts(provider)
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT, follow_redirects=False) as client:
        try:
            if provider == "anthropic":
                if method == "paste":
                    return await _anthropic_copy_code(client, facts, ui, paste)
                return await _anthropic_browser(client, facts, ui, paste)
            if provider == "openai-codex":
                if method == "device":
                    return await _codex_device(client, facts, ui)
                return await _codex_browser(client, facts, ui, paste)
            return await _copilot_device(client, facts, ui, enterprise_domain)
        except httpx.HTTPError as error:
            raise LoginError(f"{facts.name}: cannot reach the sign-in server: {_why(error)}") from None


def _why(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "it did not answer in time"
    url = getattr(getattr(error, "request", None), "url", None)
    return f"{type(error).__name__} ({url})" if url is not None else type(error).__name__


# --- waiting for the authorization response --------------------------------------------------


async def _answer(
    callback: LoopbackCallback | None, paste: Paste | None, prompt: str, state: str
) -> tuple[str, str | None]:
    """(code, state) from whichever comes first: the browser's callback or the user's paste.

    A paste with another state is refused (pi: "OAuth state mismatch"); the callback server
    already checked the state of what it accepted.
    """
    waits: dict[asyncio.Task[Any], str] = {}
    if callback is not None:
        waits[asyncio.ensure_future(callback.wait())] = "callback"
    if paste is not None:
        waits[asyncio.ensure_future(paste(prompt))] = "paste"
    if not waits:
        raise LoginError("no browser callback can arrive and nothing can be pasted here")
    try:
        while waits:
            done, _pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                kind = waits.pop(task)
                result = task.result()
                if kind == "callback":
                    return str(result), state
                if result is None:  # nothing can be pasted: the callback alone remains
                    if not waits:
                        raise LoginError("no redirect URL or code was pasted")
                    continue
                if not str(result).strip():
                    raise LoginCancelled("Login cancelled: nothing was pasted")
                pasted = parse_pasted(str(result))
                if pasted.state is not None and pasted.state != state:
                    raise LoginError("OAuth state mismatch: the pasted URL belongs to another sign-in")
                if pasted.code is None:
                    raise LoginError("Missing authorization code in what was pasted")
                return pasted.code, pasted.state or state
        raise LoginError("no authorization response arrived")
    finally:
        for task in waits:
            task.cancel()


BROWSER_PROMPT = "Complete login in your browser, or paste the authorization code / redirect URL here:"


# --- Anthropic ------------------------------------------------------------------------------


def _anthropic_url(facts: OAuthProvider, redirect_uri: str, challenge: str, verifier: str) -> str:
    query = {
        **facts.authorize_params,
        "client_id": facts.client_id,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "scope": facts.scopes,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": verifier,  # pi's Anthropic login sends the verifier as the state
    }
    return f"{facts.authorize_url}?{urlencode(query)}"


async def _anthropic_browser(
    client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI, paste: Paste | None
) -> dict[str, Any]:
    verifier, challenge = pkce_pair()
    port = facts.callback_port or 0
    callback = start_callback(port, facts.callback_path, verifier, "Anthropic", any_port=True)
    try:
        redirect_uri = callback.redirect_uri if callback is not None else facts.redirect_uri
        ui.show_url(
            _anthropic_url(facts, redirect_uri, challenge, verifier),
            "Complete login in your browser. If the browser is on another machine, paste the final "
            "redirect URL here.",
        )
        code, state = await _answer(callback, paste, BROWSER_PROMPT, verifier)
    finally:
        if callback is not None:
            callback.close()
    ui.progress("Exchanging authorization code for tokens...")
    return await _anthropic_exchange(client, facts, code, state or verifier, verifier, redirect_uri)


async def _anthropic_copy_code(
    client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI, paste: Paste | None
) -> dict[str, Any]:
    if paste is None:
        raise LoginError("the copy-code login needs a terminal to paste the code into")
    verifier, challenge = pkce_pair()
    redirect_uri = facts.paste_redirect_uri
    ui.show_url(
        _anthropic_url(facts, redirect_uri, challenge, verifier),
        "Complete login in your browser, then copy the code Anthropic shows and paste it here.",
    )
    code, state = await _answer(None, paste, "Paste the code Anthropic shows after you sign in:", verifier)
    ui.progress("Exchanging authorization code for tokens...")
    return await _anthropic_exchange(client, facts, code, state or verifier, verifier, redirect_uri)


async def _anthropic_exchange(
    client: httpx.AsyncClient,
    facts: OAuthProvider,
    code: str,
    state: str,
    verifier: str,
    redirect_uri: str,
) -> dict[str, Any]:
    body = {
        "grant_type": "authorization_code",
        "client_id": facts.client_id,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    response = await client.post(facts.token_url, json=body, headers={"Accept": "application/json"})
    data = _token_json(response, facts.name)
    return {
        "type": "oauth",
        "refresh": _text(data, "refresh_token", facts.name),
        "access": _text(data, "access_token", facts.name),
        "expires": _now_ms() + int(_number(data, "expires_in", facts.name) * 1000) - facts.expiry_margin_ms,
    }


# --- OpenAI Codex ---------------------------------------------------------------------------


async def _codex_browser(
    client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI, paste: Paste | None
) -> dict[str, Any]:
    verifier, challenge = pkce_pair()
    state = secrets.token_hex(16)
    redirect_uri = facts.redirect_uri
    # OpenAI takes only the registered redirect URI (port 1455, shared with the Codex CLI): when
    # that port is taken, the pasted redirect URL is the only way back.
    port = urlsplit(redirect_uri).port or facts.callback_port or 0
    callback = start_callback(port, facts.callback_path, state, "OpenAI", any_port=False)
    query = {
        "response_type": "code",
        "client_id": facts.client_id,
        "redirect_uri": redirect_uri,
        "scope": facts.scopes,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        **facts.authorize_params,
    }
    try:
        ui.show_url(
            f"{facts.authorize_url}?{urlencode(query)}",
            "Complete login in your browser. If the browser is on another machine, paste the final "
            "redirect URL here.",
        )
        code, _state = await _answer(callback, paste, BROWSER_PROMPT, state)
    finally:
        if callback is not None:
            callback.close()
    ui.progress("Exchanging authorization code for tokens...")
    return await _codex_exchange(client, facts, code, verifier, redirect_uri)


async def _codex_exchange(
    client: httpx.AsyncClient, facts: OAuthProvider, code: str, verifier: str, redirect_uri: str
) -> dict[str, Any]:
    form = {
        "grant_type": "authorization_code",
        "client_id": facts.client_id,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
    }
    response = await client.post(facts.token_url, data=form)
    data = _token_json(response, "OpenAI Codex")
    access = _text(data, "access_token", "OpenAI Codex")
    account = codex_account_id(access)
    if account is None:
        raise LoginError("OpenAI Codex: the access token names no ChatGPT account")
    return {
        "type": "oauth",
        "access": access,
        "refresh": _text(data, "refresh_token", "OpenAI Codex"),
        "expires": _now_ms()
        + int(_number(data, "expires_in", "OpenAI Codex") * 1000)
        - facts.expiry_margin_ms,
        "accountId": account,
    }


def codex_account_id(access_token: str) -> str | None:
    """The ChatGPT account id in the access token's claims (pi stores it as ``accountId``)."""
    parts = access_token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    auth = payload.get("https://api.openai.com/auth") if isinstance(payload, dict) else None
    account = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    return account if isinstance(account, str) and account else None


async def _codex_device(client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI) -> dict[str, Any]:
    response = await client.post(facts.device_code_url, json={"client_id": facts.client_id})
    if response.status_code == 404:
        raise LoginError(
            "OpenAI Codex device code login is not enabled for this server; use the browser login"
        )
    if not response.is_success:
        raise LoginError(f"OpenAI Codex device code request failed (HTTP {response.status_code})")
    data = _json_object(response, "OpenAI Codex")
    device_id, user_code = data.get("device_auth_id"), data.get("user_code")
    interval = _interval(data.get("interval"))
    if not isinstance(device_id, str) or not isinstance(user_code, str) or not device_id or interval is None:
        raise LoginError("OpenAI Codex: the device code answer lacks its id, code or interval")
    ui.show_device_code(user_code, facts.verification_url)

    async def poll() -> DevicePoll:
        answer = await client.post(
            facts.device_token_url, json={"device_auth_id": device_id, "user_code": user_code}
        )
        if answer.is_success:
            body = _json_object(answer, "OpenAI Codex")
            code, verifier = body.get("authorization_code"), body.get("code_verifier")
            if not isinstance(code, str) or not isinstance(verifier, str) or not code or not verifier:
                return DevicePoll("failed", message="OpenAI Codex: the device answer lacks its code")
            return DevicePoll("complete", value=(code, verifier))
        if answer.status_code in (403, 404):
            return DevicePoll("pending")
        error = _error_code(answer)
        if error == "deviceauth_authorization_pending":
            return DevicePoll("pending")
        if error == "slow_down":
            return DevicePoll("slow_down")
        return DevicePoll(
            "failed", message=f"OpenAI Codex device login failed (HTTP {answer.status_code}{_colon(error)})"
        )

    code, verifier = await poll_device_flow(poll, interval, CODEX_DEVICE_SECONDS, wait_first=False)
    ui.progress("Exchanging authorization code for tokens...")
    redirect = facts.extra.get("deviceRedirectUri", "")
    return await _codex_exchange(client, facts, code, verifier, redirect)


# --- GitHub Copilot -------------------------------------------------------------------------


def enterprise_domain(text: str) -> str | None:
    """The host of a GitHub Enterprise URL or domain as typed; None for blank (github.com).
    Raises :class:`LoginError` for something that is no host."""
    value = text.strip()
    if not value:
        return None
    parts = urlsplit(value if "://" in value else f"https://{value}")
    try:
        host = parts.hostname
        _ = parts.port
    except ValueError:
        host = None
    if not host or any(ch.isspace() for ch in value):
        raise LoginError(f"not a GitHub Enterprise URL or domain: {value}")
    return host


async def _copilot_device(
    client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI, domain: str | None
) -> dict[str, Any]:
    urls = copilot_urls(facts, domain)
    headers = {"Accept": "application/json", "User-Agent": COPILOT_HEADERS["User-Agent"]}
    response = await client.post(
        urls["deviceCodeUrl"], data={"client_id": facts.client_id, "scope": facts.scopes}, headers=headers
    )
    if not response.is_success:
        raise LoginError(f"GitHub device code request failed (HTTP {response.status_code})")
    data = _json_object(response, "GitHub")
    device_code, user_code = data.get("device_code"), data.get("user_code")
    verification, expires_in = data.get("verification_uri"), data.get("expires_in")
    interval = _interval(data.get("interval", 5))
    if not (
        isinstance(device_code, str)
        and isinstance(user_code, str)
        and isinstance(verification, str)
        and isinstance(expires_in, (int, float))
        and interval is not None
    ):
        raise LoginError("GitHub: the device code answer lacks its code, URL or expiry")
    if urlsplit(verification).scheme not in ("http", "https"):
        raise LoginError("GitHub: the device code answer names a verification page that is not a web URL")
    ui.show_device_code(user_code, verification)
    form = {
        "client_id": facts.client_id,
        "device_code": device_code,
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
    }

    async def poll() -> DevicePoll:
        answer = await client.post(urls["accessTokenUrl"], data=form, headers=headers)
        if not answer.is_success:
            return DevicePoll("failed", message=f"GitHub device login failed (HTTP {answer.status_code})")
        body = _json_object(answer, "GitHub")
        token = body.get("access_token")
        if isinstance(token, str) and token:
            return DevicePoll("complete", value=token)
        error = body.get("error")
        if error == "authorization_pending":
            return DevicePoll("pending")
        if error == "slow_down":
            return DevicePoll("slow_down", interval=_interval(body.get("interval")))
        if error == "expired_token":
            return DevicePoll("failed", message="The GitHub device code expired: run the login again")
        if error == "access_denied":
            return DevicePoll("failed", message="GitHub login was denied")
        description = body.get("error_description")
        why = f"{error}: {description}" if isinstance(description, str) and description else str(error)
        return DevicePoll("failed", message=f"GitHub device login failed: {why}")

    github_token: str = await poll_device_flow(poll, interval, float(expires_in), wait_first=True)
    ui.progress("Getting a Copilot token...")
    credential = await copilot_token(client, urls["copilotTokenUrl"], github_token, domain)
    models = await _copilot_models(client, facts, credential["access"], domain)
    if models:
        credential["availableModelIds"] = models
    return credential


async def copilot_token(
    client: httpx.AsyncClient, url: str, github_token: str, domain: str | None
) -> dict[str, Any]:
    """The Copilot token the GitHub token gives, as pi stores it (the GitHub token as
    ``refresh``, the Copilot token as ``access``)."""
    headers = {"Accept": "application/json", "Authorization": f"Bearer {github_token}", **COPILOT_HEADERS}
    response = await client.get(url, headers=headers)
    if response.status_code in (401, 403):
        raise LoginError("GitHub Copilot refused the token: does this account have Copilot?")
    if not response.is_success:
        raise LoginError(f"GitHub Copilot token request failed (HTTP {response.status_code})")
    data = _json_object(response, "GitHub Copilot")
    token, expires_at = data.get("token"), data.get("expires_at")
    if not isinstance(token, str) or not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
        raise LoginError("GitHub Copilot: the token answer lacks its token or expiry")
    credential: dict[str, Any] = {
        "type": "oauth",
        "refresh": github_token,
        "access": token,
        "expires": int(expires_at * 1000) - 5 * 60 * 1000,
    }
    if domain:
        credential["enterpriseUrl"] = domain
    return credential


def copilot_base_url(token: str, domain: str | None) -> str:
    """The Copilot API the token is for: its ``proxy-ep`` (``proxy.X`` -> ``api.X``), else the
    Enterprise or individual default (pi's rule)."""
    for part in token.split(";"):
        name, _, value = part.partition("=")
        if name.strip() == "proxy-ep" and value.strip():
            host = value.strip()
            return f"https://{'api.' + host[len('proxy.') :] if host.startswith('proxy.') else host}"
    return f"https://copilot-api.{domain}" if domain else "https://api.individual.githubcopilot.com"


async def _copilot_models(
    client: httpx.AsyncClient, facts: OAuthProvider, token: str, domain: str | None
) -> list[str]:
    """The models this account may use (pi keeps them as ``availableModelIds`` to narrow the
    list); empty when GitHub does not say, and then every Copilot model stays listed."""
    base = facts.extra.get("copilotApiUrl") or copilot_base_url(token, domain)
    headers = {
        "Accept": "application/json",
        "Authorization": f"Bearer {token}",
        **COPILOT_HEADERS,
        "X-GitHub-Api-Version": COPILOT_API_VERSION,
    }
    try:
        response = await client.get(f"{base.rstrip('/')}/models", headers=headers, timeout=5.0)
        data = response.json() if response.is_success else None
    except (httpx.HTTPError, ValueError):
        return []
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    found = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        supports = (item.get("capabilities") or {}).get("supports") or {}
        policy = (item.get("policy") or {}).get("state")
        if isinstance(supports, dict) and supports.get("tool_calls") is False:
            continue
        if item.get("model_picker_enabled") is True and policy != "disabled":
            found.append(item["id"])
    return found


# --- answers --------------------------------------------------------------------------------


def _json_object(response: httpx.Response, who: str) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        raise LoginError(f"{who}: the sign-in server answered with something that is not JSON") from None
    if not isinstance(data, dict):
        raise LoginError(f"{who}: the sign-in server answered with something that is not a JSON object")
    return data


def _token_json(response: httpx.Response, who: str) -> dict[str, Any]:
    if not response.is_success:
        error = _error_code(response)
        raise LoginError(f"{who}: the token exchange failed (HTTP {response.status_code}{_colon(error)})")
    return _json_object(response, who)


def _error_code(response: httpx.Response) -> str | None:
    """The OAuth ``error`` of an answer (a string, or OpenAI's ``{"error": {"code": ...}}``)."""
    try:
        data = response.json()
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        error = error.get("code")
    return error if isinstance(error, str) and error else None


def _colon(error: str | None) -> str:
    return f": {error}" if error else ""


def _text(data: dict[str, Any], name: str, who: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise LoginError(f"{who}: the token answer has no {name}")
    return value


def _number(data: dict[str, Any], name: str, who: str) -> float:
    value = data.get(name)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise LoginError(f"{who}: the token answer has no {name}")
    return float(value)


def _interval(value: object) -> float | None:
    """A poll interval in seconds: a number or a numeric string (Codex sends ``"5"``)."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
        return None
    return float(value)
