"""What pi reads out of a provider's token, and the headers GitHub's Copilot endpoints want.

Shared by the logins (:mod:`.login`) and the renewals (:mod:`.refresh`), so both read a token
the same way pi does (``pi-ai/dist/auth/oauth/openai-codex.js``, ``github-copilot.js``).
"""

from __future__ import annotations

import base64
import json

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
