"""OpenAI Codex (pi's ``openai-codex-responses``): ChatGPT Plus/Pro subscriptions through the
Codex backend.

The wire is the Responses API's (:mod:`pi_tui.ai.openai_responses` builds the input items and
parses the stream); what differs, as pi 1.5.2 sends it over its SSE transport:

- the endpoint: ``{baseUrl}/codex/responses`` (``https://chatgpt.com/backend-api``); a base URL
  that already ends in ``/codex`` or ``/codex/responses`` is used as it is;
- the credential is the ChatGPT login's OAuth access token (pi_tui.ai.oauth keeps and refreshes
  it; it arrives here as ``options.api_key``) as a Bearer token, plus a ``chatgpt-account-id``
  header read from the token itself: it is a JWT whose ``https://api.openai.com/auth`` claim
  holds ``chatgpt_account_id``. A token without it cannot be used: one clear error, no request;
- headers: ``originator: pi`` (the backend expects one on every request), a ``User-Agent``,
  ``OpenAI-Beta: responses=experimental``, and with a session ``session-id`` and
  ``x-client-request-id``; configured headers may override all but the credentials and the
  stream headers;
- the body: the system prompt is ``instructions`` (never an input item; a default when there is
  none), ``store: false``, ``text.verbosity: "low"``, ``include:
  ["reasoning.encrypted_content"]`` always (reasoning travels back in the input),
  ``prompt_cache_key`` = the session id (at most 64 characters), ``tool_choice: "auto"``,
  ``parallel_tool_calls: true``, tools with ``strict: null``, no ``max_output_tokens``; a
  reasoning model always gets ``reasoning``: the level's effort with ``summary: "auto"``, or
  with thinking off its map's ``off`` value (``"none"`` unless the map says otherwise).

Stream: Responses SSE; the backend may end with ``response.done`` (taken as
``response.completed``), and its errors read ``Codex error: ...``.

pi prefers a WebSocket to the same endpoint and compresses SSE bodies with zstd when it can; the
plain SSE request here is what pi itself falls back to.
"""

from __future__ import annotations

import base64
import binascii
import platform
import re
import sys
from typing import Any

import orjson

from pi_tui import __version__
from pi_tui.ai.builder import MessageBuilder
from pi_tui.ai.errors import ProviderError
from pi_tui.ai.openai_responses import RETRYABLE_CODES, ResponsesParser, convert_input
from pi_tui.ai.protocol import HttpRequest
from pi_tui.ai.thinking import provider_value, request_level
from pi_tui.ai.types import Context, Model, StreamOptions

API = "openai-codex-responses"
PROVIDER = "openai-codex"
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
JWT_CLAIM = "https://api.openai.com/auth"
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."
PROMPT_CACHE_KEY_LIMIT = 64
TERMINAL_ALIASES = frozenset({"response.done"})
"""Terminal events of the Codex backend that the Responses parser knows as ``response.completed``."""


class CodexClient:
    api = API

    def build_request(self, model: Model, context: Context, options: StreamOptions) -> HttpRequest:
        token = options.api_key
        if not token:
            raise ProviderError(
                f"No API key for provider {model.provider}: log in with /login {model.provider}"
            )
        account = account_id(token, model.provider)
        session = prompt_cache_key(options.session_id)
        return HttpRequest(
            url=endpoint(model.base_url),
            headers=request_headers(model, options, token, account, session),
            body=request_body(model, context, options, session),
        )

    def http_error(self, error: ProviderError, body: str) -> ProviderError:
        """A usage limit in pi's words; one that cannot lift within a retry is not retried."""
        return usage_limit_error(error, body) or error

    def parser(self, builder: MessageBuilder) -> CodexParser:
        return CodexParser(builder)


# --- credentials --------------------------------------------------------------------------------


def account_id(token: str, provider: str = PROVIDER) -> str:
    """The ChatGPT account id in the access token's claims; ProviderError when it has none
    (``provider`` names the login to renew)."""
    claims = jwt_claims(token)
    auth = claims.get(JWT_CLAIM) if claims is not None else None
    found = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    if not isinstance(found, str) or not found:
        raise ProviderError(
            "The OpenAI Codex access token carries no ChatGPT account id "
            f"(claim {JWT_CLAIM} -> chatgpt_account_id): log in again with /login {provider}"
        )
    return found


def jwt_claims(token: str) -> dict[str, Any] | None:
    """The payload of a JWT (not verified: the backend does that), or None if it is not one."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1].replace("-", "+").replace("_", "/")
    try:
        claims = orjson.loads(base64.b64decode(payload + "=" * (-len(payload) % 4), validate=True))
    except (binascii.Error, ValueError):  # orjson.JSONDecodeError is a ValueError
        return None
    return claims if isinstance(claims, dict) else None


# --- request ----------------------------------------------------------------------------------


def endpoint(base_url: str) -> str:
    base = (base_url.strip() or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return base + "/responses"
    return base + "/codex/responses"


def prompt_cache_key(session_id: str | None) -> str | None:
    """The session id cut to the 64 characters OpenAI accepts as a cache key."""
    return session_id[:PROMPT_CACHE_KEY_LIMIT] if session_id else None


def user_agent() -> str:
    return f"pi-tui/{__version__} ({sys.platform}; python/{platform.python_version()}; {platform.machine()})"


def request_headers(
    model: Model, options: StreamOptions, token: str, account: str, session: str | None
) -> dict[str, str]:
    """Defaults, then models.json's and the request's headers, then what Codex needs (header
    names in lower case, so an override replaces a default whatever its spelling)."""
    headers: dict[str, str] = {"originator": "pi", "user-agent": user_agent()}
    for source in (model.headers, options.headers):
        headers.update((name.lower(), value) for name, value in source.items())
    headers["authorization"] = f"Bearer {token}"
    headers["chatgpt-account-id"] = account
    headers["openai-beta"] = "responses=experimental"
    headers["accept"] = "text/event-stream"
    headers["content-type"] = "application/json"
    if session:
        headers["session-id"] = session
        headers["x-client-request-id"] = session
    return headers


def request_body(
    model: Model, context: Context, options: StreamOptions, session: str | None
) -> dict[str, Any]:
    without_system = context.model_copy(update={"system_prompt": ""})  # it goes in instructions
    body: dict[str, Any] = {
        "model": model.id,
        "store": False,
        "stream": True,
        "instructions": context.system_prompt or DEFAULT_INSTRUCTIONS,
        "input": convert_input(model, without_system),
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
    }
    if session:
        body["prompt_cache_key"] = session
    body["tool_choice"] = "auto"
    body["parallel_tool_calls"] = True
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": None,
            }
            for tool in context.tools
        ]
    reasoning = reasoning_field(model, options.thinking)
    if reasoning is not None:
        body["reasoning"] = reasoning
    return body


def reasoning_field(model: Model, thinking: str) -> dict[str, Any] | None:
    """The level's effort with a summary; thinking off: the map's ``off`` effort (a null one
    sends nothing), which keeps a reasoning model from thinking at its default."""
    if not model.reasoning:
        return None
    level = request_level(model, thinking)
    if level is not None:
        return {"effort": provider_value(model, level), "summary": "auto"}
    table = model.thinking_level_map or {}
    if "off" in table and table["off"] is None:
        return None
    return {"effort": table.get("off") or "none"}


# --- stream -----------------------------------------------------------------------------------


class CodexParser(ResponsesParser):
    """The Responses parser with the Codex backend's terminal event and error wording."""

    def on_payload(self, event: str, payload: dict[str, Any]) -> None:
        kind = payload.get("type") or event
        if kind == "error":
            raise _codex_error(payload)
        if kind == "response.failed":
            error = (payload.get("response") or {}).get("error") or {}
            message = error.get("message") if isinstance(error, dict) else None
            raise ProviderError(str(message or "Codex response failed"))
        if kind in TERMINAL_ALIASES:
            payload = {**payload, "type": "response.completed"}
        super().on_payload(event, payload)


def _codex_error(payload: dict[str, Any]) -> ProviderError:
    """``{"type": "error", "code", "message"}`` (or the same inside ``error``)."""
    error = payload.get("error")
    nested: dict[str, Any] = error if isinstance(error, dict) else {}
    code = payload.get("code") if isinstance(payload.get("code"), str) else nested.get("code")
    message = payload.get("message") if isinstance(payload.get("message"), str) else nested.get("message")
    text = message or code or orjson.dumps(payload).decode()
    return ProviderError(f"Codex error: {text}", retryable=code in RETRYABLE_CODES)


_LIMIT_CODES = re.compile(r"usage_limit_reached|usage_not_included|rate_limit_exceeded", re.IGNORECASE)
_LASTING_LIMIT_CODES = re.compile(r"usage_limit_reached|usage_not_included", re.IGNORECASE)
_LASTING_LIMIT_TEXT = re.compile(
    r"GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance"
    r"|insufficient_quota|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)
"""What pi 1.5.2 treats as a limit a retry cannot get past (a plan's quota, billing)."""


def usage_limit_error(error: ProviderError, body: str, now: float | None = None) -> ProviderError | None:
    """The ChatGPT usage limit in pi's words ("You have hit your ChatGPT usage limit (plus plan).
    Try again in ~42 min."), from an HTTP 429 or a limit code in the body; None for other errors.

    A subscription's limit lasts until ``resets_at`` (hours, often), so a usage limit and a
    quota or billing refusal are final; a plain rate limit is retried as any 429."""
    import time

    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    nested = data.get("error") if isinstance(data, dict) else None
    detail: dict[str, Any] = nested if isinstance(nested, dict) else {}
    code = str(detail.get("code") or detail.get("type") or "")
    if error.status != 429 and not _LIMIT_CODES.search(code):
        return None
    plan_type = detail.get("plan_type")
    plan = f" ({plan_type.lower()} plan)" if isinstance(plan_type, str) and plan_type else ""
    when = ""
    resets_at = detail.get("resets_at")
    if isinstance(resets_at, int | float) and not isinstance(resets_at, bool):
        minutes = max(0, round((resets_at - (time.time() if now is None else now)) / 60))
        when = f" Try again in ~{minutes} min."
    lasting = bool(_LASTING_LIMIT_CODES.search(code) or _LASTING_LIMIT_TEXT.search(body))
    return ProviderError(
        f"You have hit your ChatGPT usage limit{plan}.{when}",
        status=error.status,
        retryable=error.retryable and not lasting,
        retry_after=error.retry_after,
    )


CLIENT = CodexClient()
