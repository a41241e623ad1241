"""What pi reads out of a provider's token and token answers, and the headers GitHub's Copilot
endpoints want.

Shared by the logins (:mod:`.login`, :mod:`.login_device`) and the renewals (:mod:`.refresh`),
so a sign-in and a renewal read a token answer the same way pi does (the same fields required,
the same margin off ``expires``, the same words when the answer is wrong): a fix to one is a fix
to both. The readers raise :class:`TokenAnswerError` with a few words; each caller says whose
answer it was (a login as a :class:`~.login_errors.LoginError`, a renewal as ``RenewalFailed``).
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx

COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
"""What pi sends to GitHub's Copilot endpoints and API (they answer only editors they know)."""
COPILOT_DEFAULT_API = "https://api.individual.githubcopilot.com"
CODEX_ACCOUNT_CLAIM = "https://api.openai.com/auth"


def codex_account_id(access_token: str) -> str | None:
    """The ChatGPT account id in a Codex access token's claims (pi stores it as ``accountId``);
    None when the token is not a JWT or names no account."""
    parts = access_token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    auth = payload.get(CODEX_ACCOUNT_CLAIM) if isinstance(payload, dict) else None
    account = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    return account if isinstance(account, str) and account else None


def copilot_base_url(token: str, enterprise_domain: str | None) -> str:
    """The Copilot API a Copilot token is for: its ``proxy-ep`` field (``proxy.X`` -> ``api.X``),
    else the Enterprise domain's ``copilot-api`` host, else the individual plan's (pi's rule)."""
    for part in token.split(";"):
        name, _, value = part.partition("=")
        host = value.strip()
        if name.strip() == "proxy-ep" and host:
            return "https://" + ("api." + host.removeprefix("proxy.") if host.startswith("proxy.") else host)
    return f"https://copilot-api.{enterprise_domain}" if enterprise_domain else COPILOT_DEFAULT_API


class TokenAnswerError(ValueError):
    """A token endpoint refused or answered without what pi requires; a few words, no name."""


def oauth_error(data: object) -> str | None:
    """The OAuth ``error`` code of an answer: a string, or OpenAI's ``{"error": {"code"}}``; only
    a short printable one (it is shown on a terminal)."""
    code = data.get("error") if isinstance(data, dict) else None
    if isinstance(code, dict):
        code = code.get("code") or code.get("type")
    return code if isinstance(code, str) and code and code.isprintable() and len(code) < 80 else None


def answer_json(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a successful answer. A refusal is ``HTTP 400: invalid_grant`` (the
    status and the OAuth error code, as pi shows them); anything else is not an answer."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if not response.is_success:
        code = oauth_error(data)
        raise TokenAnswerError(f"HTTP {response.status_code}{': ' + code if code else ''}")
    if not isinstance(data, dict):
        raise TokenAnswerError("the answer is not a JSON object")
    return data


def text_field(data: dict[str, Any], name: str) -> str:
    """A required non-empty string of a token answer."""
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise TokenAnswerError(f"the answer has no {name}")
    return value


def seconds_field(data: dict[str, Any], name: str, default: float | None = None) -> float:
    """A required positive number of seconds (``expires_in``), ``default`` when absent."""
    value = data.get(name, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < float("inf"):
        raise TokenAnswerError(f"the answer has no {name}")
    return float(value)


def token_credential(
    data: dict[str, Any],
    margin_ms: int,
    *,
    previous_refresh: str | None = None,
    default_lifetime: float | None = None,
) -> dict[str, Any]:
    """pi's credential of a token answer: ``refresh``, ``access`` and ``expires`` (now plus
    ``expires_in``, less the provider's ``margin_ms``). ``previous_refresh`` stands in for a
    refresh token the answer leaves out (xAI keeps it when it does not rotate it)."""
    if data.get("refresh_token") is None and previous_refresh is not None:
        data = {**data, "refresh_token": previous_refresh}
    lifetime = seconds_field(data, "expires_in", default_lifetime)
    return {
        "type": "oauth",
        "refresh": text_field(data, "refresh_token"),
        "access": text_field(data, "access_token"),
        "expires": int(time.time() * 1000) + int(lifetime * 1000) - margin_ms,
    }


XAI_DEFAULT_LIFETIME_S = 3600
"""The lifetime pi gives an xAI token whose answer names none."""
CHATGPT_DIRECT_SCOPE = "chatgpt.tokens.use.direct"
"""The scope a ChatGPT sign-in must grant for its token to reach api.openai.com."""


def with_codex_account(credential: dict[str, Any]) -> dict[str, Any]:
    """A Codex credential with the ``accountId`` its access token names (pi refuses one that
    names none, at login and at renewal alike)."""
    account = codex_account_id(str(credential["access"]))
    if account is None:
        raise TokenAnswerError("the access token names no ChatGPT account")
    return {**credential, "accountId": account}


def with_chatgpt_grant(credential: dict[str, Any], data: dict[str, Any], client_id: str) -> dict[str, Any]:
    """A ChatGPT credential with the client id OpenAI issued this sign-in and the scopes it
    granted, which must include :data:`CHATGPT_DIRECT_SCOPE` (pi's check)."""
    scopes = text_field(data, "scope").split()
    if CHATGPT_DIRECT_SCOPE not in scopes:
        raise TokenAnswerError(f"the grant lacks {CHATGPT_DIRECT_SCOPE}")
    return {**credential, "clientId": client_id, "scopes": scopes}


META_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000
"""How long a Meta Model API key lasts (pi's figure; the mint does not say)."""
META_MINT_HEADERS = {
    "Accept": "application/json",
    "Content-Type": "application/json",
    "x-api-version": "1.0.0",
}
"""What pi sends to Meta's key mint besides the identity token."""


def meta_key_credential(response: httpx.Response, identity_token: str) -> dict[str, Any]:
    """pi's Meta credential from the key mint's answer: the identity token as ``refresh`` (it
    cannot be renewed), the minted key as ``access``, valid for a day. 401/403 means the
    identity token is dead: only a new sign-in helps."""
    if response.status_code in (401, 403):
        raise TokenAnswerError(f"Meta ended the session (HTTP {response.status_code})")
    data = answer_json(response)
    key = data.get("api_key")
    if not isinstance(key, str) or not key:
        action = data.get("action_url")
        where = f": complete the setup at {action}" if isinstance(action, str) and _web_url(action) else ""
        raise TokenAnswerError(f"Meta issued no API key{where}")
    return {
        "type": "oauth",
        "refresh": identity_token,
        "access": key,
        "expires": int(time.time() * 1000) + META_KEY_LIFETIME_MS,
    }


def _web_url(text: str) -> bool:
    return text.startswith(("https://", "http://")) and text.isprintable() and " " not in text
