"""Account sign-ins as pi has them: the browser with a loopback callback (or the pasted
redirect URL / code) for Anthropic, OpenAI Codex, ChatGPT (``openai``) and OpenRouter;
Anthropic's copy-code login; the device flows of GitHub Copilot and the OpenAI Codex device code
here, and those of Kimi Code, xAI and Meta in :mod:`.login_device`. Each ends with a credential
in pi's shape for :meth:`~pi_tui.config.auth.AuthStore.set_oauth`, so pi refreshes what pi-tui
obtained and the other way round; a token answer is read by :mod:`.tokens`, as a renewal reads it.

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
import math
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

import httpx

from pi_tui.ai.oauth.callback import LoopbackCallback, callback_host, parse_pasted, start_callback
from pi_tui.ai.oauth.device import DevicePoll, poll_device_flow
from pi_tui.ai.oauth.login_device import (
    DEVICE_CODE_GRANT,
    DEVICE_SIGN_INS,
    poll_for_token,
    request_device_code,
)
from pi_tui.ai.oauth.login_errors import LoginCancelled, LoginError
from pi_tui.ai.oauth.providers import OAuthProvider, copilot_urls, oauth_provider
from pi_tui.ai.oauth.tokens import (
    COPILOT_HEADERS,
    TokenAnswerError,
    answer_json,
    copilot_base_url,
    oauth_error,
    token_credential,
    with_chatgpt_grant,
    with_codex_account,
)

REQUEST_TIMEOUT = 30.0
"""Seconds one request to an authorization server may take (pi's limit)."""
CODEX_DEVICE_SECONDS = 15 * 60
"""How long a Codex device code stays valid (pi's figure; the server does not say)."""
COPILOT_API_VERSION = "2026-06-01"
SUBSCRIPTION_PROVIDERS = (
    "openrouter",
    "anthropic",
    "github-copilot",
    "kimi-coding",
    "meta",
    "openai",
    "openai-codex",
    "xai",
)
"""The account sign-ins pi-tui has, in pi 1.5.2's /login order: its preferred provider
(OpenRouter) first, then by the provider's name (Anthropic, GitHub Copilot, Kimi For Coding, Meta,
OpenAI, OpenAI Codex, xAI)."""
LOGIN_ONLY = frozenset({"openai-codex"})
"""Sign-ins whose provider takes no API key (pi has no key login for them): ``--api-key`` and
/login's key rows are refused rather than a key replacing the login."""
NOT_SUBSCRIPTIONS = frozenset({"openrouter"})
"""Sign-ins pi labels an account rather than a subscription (OpenRouter's gives an API key)."""
UNSUPPORTED = {
    "radius": (
        "Radius signs in to pi's own service, whose API (pi-messages) pi-tui does not speak: "
        "use pi for Radius"
    ),
}
"""Sign-ins pi has that pi-tui leaves out, and why (said in one line when one is asked for)."""


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
    "openai": (Method("browser", "Sign in with ChatGPT (browser)"),),
    "openrouter": (Method("browser", "Sign in with OpenRouter (browser)"),),
    "kimi-coding": (Method("device", "Device code login"),),
    "meta": (Method("device", "Device code login"),),
    "xai": (Method("device", "Device code login"),),
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
    if provider in UNSUPPORTED:
        raise LoginError(UNSUPPORTED[provider])
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
            if provider == "github-copilot":
                return await _copilot_device(client, facts, ui, enterprise_domain)
            if provider == "openai":
                return await _chatgpt_browser(client, facts, ui, paste)
            if provider == "openrouter":
                return await _openrouter_browser(client, facts, ui, paste)
            return await DEVICE_SIGN_INS[provider](client, facts, ui)
        except TokenAnswerError as error:
            raise LoginError(f"{facts.name}: the token request failed ({error})") from None
        except httpx.HTTPError as error:
            raise LoginError(f"{facts.name}: cannot reach the sign-in server: {_why(error)}") from None


def _why(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "it did not answer in time"
    url = getattr(getattr(error, "request", None), "url", None)
    return f"{type(error).__name__} ({url})" if url is not None else type(error).__name__


# --- waiting for the authorization response --------------------------------------------------


async def _answer(
    callback: LoopbackCallback | None, paste: Paste | None, prompt: str, state: str | None
) -> tuple[str, str | None, dict[str, str]]:
    """(code, state, every query parameter) from whichever comes first: the browser's callback
    or the user's paste.

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
                    return str(result), state, callback.params if callback is not None else {}
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
                return pasted.code, pasted.state or state, pasted.params
        raise LoginError("no authorization response arrived")
    finally:
        for task in waits:
            task.cancel()


BROWSER_PROMPT = "Complete login in your browser, or paste the authorization code / redirect URL here:"
REMOTE_HINT = (
    "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here."
)


async def _browser_answer(
    ui: LoginUI,
    url: str,
    instructions: str,
    callback: LoopbackCallback | None,
    paste: Paste | None,
    prompt: str,
    state: str | None,
) -> tuple[str, str | None, dict[str, str]]:
    """Show the authorization URL and wait for :func:`_answer`; the callback server is closed
    however the wait ends (an answer, a refusal, Esc)."""
    try:
        ui.show_url(url, instructions)
        return await _answer(callback, paste, prompt, state)
    finally:
        if callback is not None:
            callback.close()


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
    redirect_uri = callback.redirect_uri if callback is not None else facts.redirect_uri
    url = _anthropic_url(facts, redirect_uri, challenge, verifier)
    code, state, _params = await _browser_answer(
        ui, url, REMOTE_HINT, callback, paste, BROWSER_PROMPT, verifier
    )
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
    code, state, _params = await _answer(
        None, paste, "Paste the code Anthropic shows after you sign in:", verifier
    )
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
    return token_credential(answer_json(response), facts.expiry_margin_ms)


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
    url = f"{facts.authorize_url}?{urlencode(query)}"
    code, _state, _params = await _browser_answer(
        ui, url, REMOTE_HINT, callback, paste, BROWSER_PROMPT, state
    )
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
    return with_codex_account(token_credential(answer_json(response), facts.expiry_margin_ms))


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
        error = oauth_error(_json_or_none(answer))
        if error == "deviceauth_authorization_pending":
            return DevicePoll("pending")
        if error == "slow_down":
            return DevicePoll("slow_down")
        detail = f": {error}" if error else ""
        return DevicePoll(
            "failed", message=f"OpenAI Codex device login failed (HTTP {answer.status_code}{detail})"
        )

    code, verifier = await poll_device_flow(poll, interval, CODEX_DEVICE_SECONDS, wait_first=False)
    ui.progress("Exchanging authorization code for tokens...")
    redirect = facts.extra.get("deviceRedirectUri", "")
    return await _codex_exchange(client, facts, code, verifier, redirect)


# --- OpenAI (ChatGPT subscription, ``openai``) -----------------------------------------------

CHATGPT_AGENT_NAME = "Pi"
"""The agent name pi hints to OpenAI's client registration (the consent page shows it)."""


def installation_id() -> str:
    """This installation's id, which OpenAI registers the ChatGPT sign-in's client for: pi's
    ``deviceId`` setting. pi-tui's settings first, then pi's (one installation to OpenAI, so a
    pi user signing in here is not a second agent host), else a new UUID saved in pi-tui's."""
    from pi_tui.config.paths import global_settings_path
    from pi_tui.config.pi_folder import pi_file
    from pi_tui.config.settings import update_global_settings

    for path in (global_settings_path(), pi_file("settings.json")):
        found = _device_id_in(path)
        if found is not None:
            return found
    created = str(uuid.uuid4())
    update_global_settings({"deviceId": created})
    return created


def _device_id_in(path: Path | None) -> str | None:
    """The settings file's ``deviceId`` when it is a UUID (pi requires one), else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError):
        return None
    value = data.get("deviceId") if isinstance(data, dict) else None
    try:
        return str(uuid.UUID(value)) if isinstance(value, str) else None
    except ValueError:
        return None


async def _chatgpt_browser(
    client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI, paste: Paste | None
) -> dict[str, Any]:
    """Sign in with ChatGPT: OpenAI registers a client for this installation at the authorize
    step and names it (``client_id``) on the redirect, which only ``127.0.0.1:1455`` receives."""
    host_id = f"urn:uuid:{installation_id().lower()}"
    verifier, challenge = pkce_pair()
    state, nonce = _b64url(secrets.token_bytes(32)), _b64url(secrets.token_bytes(32))
    redirect_uri = facts.redirect_uri
    port = urlsplit(redirect_uri).port or facts.callback_port or 0
    callback = start_callback(
        port,
        facts.callback_path,
        state,
        "ChatGPT",
        any_port=False,
        redirect_host="127.0.0.1",
        required=("client_id",),  # the issued client; without it the sign-in cannot be renewed
    )
    if callback is None:
        raise LoginError(
            f"Port {port} is in use, probably by an unfinished login in another pi session or the "
            "Codex CLI: cancel that login and try again"
        )
    query = {
        "client_id": facts.client_id,
        "agent_name_hint": CHATGPT_AGENT_NAME,
        "ext_agent_host_id": host_id,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "resource": facts.extra.get("resource", ""),
        "scope": facts.scopes,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "nonce": nonce,
    }
    code, _state, params = await _browser_answer(
        ui,
        f"{facts.authorize_url}?{urlencode(query)}",
        "Complete sign-in in your browser. If the callback does not complete, paste the final "
        "redirect URL here.",
        callback,
        paste,
        "Complete login in your browser, or paste the final redirect URL here:",
        state,
    )
    issued = params.get("client_id", "").strip()
    if not issued:
        raise LoginError("OpenAI named no issued client id: paste the full redirect URL from the browser")
    ui.progress("Exchanging authorization code for tokens...")
    form = {
        "grant_type": "authorization_code",
        "client_id": issued,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
        "resource": facts.extra.get("resource", ""),
    }
    data = answer_json(await client.post(facts.token_url, data=form, headers={"Accept": "application/json"}))
    id_token = data.get("id_token")
    if not isinstance(id_token, str) or not id_token.strip():
        raise TokenAnswerError("the answer has no id_token")
    return with_chatgpt_grant(token_credential(data, facts.expiry_margin_ms), data, issued)


# --- OpenRouter -------------------------------------------------------------------------------

NEVER_EXPIRES_MS = 2**53 - 1
"""JavaScript's largest safe integer: pi's ``expires`` for OpenRouter's key, which does not expire."""


async def _openrouter_browser(
    client: httpx.AsyncClient, facts: OAuthProvider, ui: LoginUI, paste: Paste | None
) -> dict[str, Any]:
    """OpenRouter's PKCE sign-in gives a lasting API key, kept as the login's ``access``. It
    sends no ``state``: the callback path ends in a random id so a stray request cannot finish it."""
    verifier, challenge = pkce_pair()
    path = f"{facts.callback_path.rstrip('/')}/{uuid.uuid4()}"
    callback = start_callback(0, path, None, "OpenRouter", any_port=False, redirect_host=callback_host())
    if callback is None:
        raise LoginError("OpenRouter: no loopback port is free for the sign-in's callback")
    query = {
        "callback_url": callback.redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    ui.progress(f"Listening for OpenRouter OAuth callback on {callback.redirect_uri}")
    url = f"{facts.authorize_url}?{urlencode(query)}"
    code, _state, _params = await _browser_answer(ui, url, REMOTE_HINT, callback, paste, BROWSER_PROMPT, None)
    ui.progress("Exchanging authorization code for an API key...")
    body = {"code": code, "code_verifier": verifier, "code_challenge_method": "S256"}
    response = await client.post(facts.token_url, json=body, headers={"Accept": "application/json"})
    data = _json_or_none(response)
    if not response.is_success:
        raise LoginError(f"OpenRouter OAuth key exchange failed (HTTP {response.status_code}{_detail(data)})")
    key = data.get("key") if isinstance(data, dict) else None
    if not isinstance(key, str) or not key:
        raise LoginError('OpenRouter OAuth response carries no "key"')
    return {"type": "oauth", "access": key, "refresh": "", "expires": NEVER_EXPIRES_MS}


def _detail(data: object) -> str:
    """OpenRouter's reason for a refusal, in pi's order of fields; short and printable only."""
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    for value in (
        data.get("error_description"),
        data.get("message"),
        error,
        error.get("message") if isinstance(error, dict) else None,
    ):
        if isinstance(value, str) and value.isprintable() and len(value) < 200:
            return f": {value}"
    return ""


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
    form = {"client_id": facts.client_id, "scope": facts.scopes}
    device = await request_device_code(
        client, urls["deviceCodeUrl"], form, "GitHub", headers=headers, complete_page=False
    )
    if device.expires_in == math.inf:
        raise LoginError("GitHub: the device code answer says no expiry")
    ui.show_device_code(device.user_code, device.page)
    grant = {"client_id": facts.client_id, "device_code": device.device_code, "grant_type": DEVICE_CODE_GRANT}
    answer = await poll_for_token(client, urls["accessTokenUrl"], grant, device, "GitHub", headers=headers)
    github_token = str(answer["access_token"])
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


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


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
