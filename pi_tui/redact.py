"""Keeping credentials out of what pi-tui prints and logs.

A crash log or an error line may quote a request, an exception or an environment: any of them can
hold an API key or a header value from models.json. Text that leaves the process for a file or
another program goes through :func:`redact_secrets` first, which hides

- the values of environment variables whose names say they are secret (``*_API_KEY``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*AUTH*``), wherever they appear;
- any extra values the caller knows are secret (resolved API keys and header values);
- the API keys saved by ``/login`` in ``<agent dir>/auth.json``;
- the usual shapes of credentials even when we do not know them: ``Bearer ...``, ``sk-...``,
  ``x-api-key: ...`` style header lines. What follows ``Bearer`` or such a header name is left
  alone when it is an ordinary word (letters only, lower case or capitalised): ``header
  "Authorization": environment variable X not set`` is an error to read, and no credential is
  spelled that way (keys mix cases and digits).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
"""Shorter values are left alone: hiding every "1" or "on" would garble the text, not protect it."""

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL", re.IGNORECASE)
_SHAPES = (
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"\b(sk-)[A-Za-z0-9_-]{6,}"),
    re.compile(
        r"(?i)((?:x-api-key|api[-_]?key|authorization|x-goog-api-key)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"
    ),
)


_WORD = re.compile(r"[A-Za-z][a-z]*")
"""An ordinary word: a credential shape followed by one is prose, not a secret."""


def _hide_shape(match: re.Match[str]) -> str:
    """The name part of a credential shape kept and its value hidden, unless the shape names the
    credential (``Bearer``, a header) and the value is a word (a sentence's full stop or colon
    after it does not make it a secret). ``sk-`` is itself the sign of a key: always hidden."""
    value = match.group(0)[len(match.group(1)) :]
    if match.group(1) != "sk-" and _WORD.fullmatch(value.rstrip(".:;!?")):
        return match.group(0)
    return match.group(1) + REDACTED


def secret_env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment variables whose names say they hold a secret."""
    environ = os.environ if environ is None else environ
    return [
        value
        for name, value in environ.items()
        if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH
    ]


def saved_key_values() -> list[str]:
    """The API keys saved in auth.json (read when something is redacted: errors and crashes are
    rare, and a key saved a moment ago by /login must be covered too)."""
    from pi_tui.config.auth import AuthStore, auth_file
    from pi_tui.config.paths import agent_dir
    from pi_tui.config.pi_folder import pi_file

    try:
        store = AuthStore(auth_file(agent_dir()), pi_file("auth.json"))
    except Exception:  # redaction runs while reporting a failure: it must never fail itself
        return []
    return [key for provider in store.providers() if (key := store.api_key(provider))]


def redact_secrets(text: str, known: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret it holds replaced by ``[redacted]`` (see the module)."""
    candidates = (*known, *secret_env_values(environ), *saved_key_values())
    values = {value for value in candidates if len(value) >= MIN_SECRET_LENGTH}
    for value in sorted(values, key=len, reverse=True):  # a key that contains another goes first
        text = text.replace(value, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(_hide_shape, text)
    return text
