"""The secrets of this process, and the two places every byte to and from a model passes.

:func:`outbound` is called by the provider stream (``pi_tui/ai/stream.py``) on every request
body just before it is encoded for the wire: chat turns, compaction and branch summaries,
requests extensions start, every provider. :func:`inbound` is called by the agent on every
tool call's arguments before the tool runs. A process without secrets (tests, or a machine with
no key at all) pays one ``None`` check.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pi_tui import jsonio
from pi_tui.secrets.entries import SecretEntry
from pi_tui.secrets.environment import MIN_LENGTH
from pi_tui.secrets.obfuscator import Obfuscator

_current: Obfuscator | None = None


def install(obfuscator: Obfuscator | None) -> None:
    global _current
    _current = obfuscator


def current() -> Obfuscator | None:
    return _current


def add_credentials(values: Iterable[str], where: str = "request credentials") -> None:
    """Credentials a request carries (a key from a ``!command``, a resolved header): secrets too.
    The obfuscator is rebuilt only when one is new."""
    global _current
    if _current is None:
        return
    new = {value for value in values if value and len(value) >= MIN_LENGTH and value not in _current.plain}
    if not new:
        return
    plain = dict(_current.plain)
    plain.update((value, SecretEntry("plain", value, source=where)) for value in new)
    _current = Obfuscator(_current.key, plain, list(_current.patterns), _current.user_regexes)


def outbound(body: Any, payload: bytes) -> bytes:
    """The bytes to send for ``body`` (encoded as ``payload``): unchanged unless a secret is in it."""
    obfuscator = _current
    if obfuscator is None or obfuscator.empty or not obfuscator.might_hide(payload):
        return payload
    return jsonio.dumps(obfuscator.hide(body))


def inbound(arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool-call arguments with the placeholders this process handed out turned into the values."""
    obfuscator = _current
    if obfuscator is None:
        return arguments
    revealed = obfuscator.reveal(arguments)
    return revealed if isinstance(revealed, dict) else arguments
