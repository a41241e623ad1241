"""The secrets of this process, and the two places every byte to and from a model passes.

:func:`outbound` is called by the provider stream (``pi_tui/ai/stream.py``) on every request
body just before it goes on the wire: chat turns, compaction and branch summaries, requests
extensions start, every provider. The provider layer does not import this module: the agent
hands it :func:`hide_in_request` through the request options (:func:`hiding_secrets`).
:func:`inbound` is called by the agent on every tool call's arguments before the tool runs. A
process without secrets (tests, or a machine with no key at all) pays one ``None`` check.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pi_tui import jsonio
from pi_tui.secrets.entries import SecretEntry
from pi_tui.secrets.environment import MIN_LENGTH
from pi_tui.secrets.obfuscator import Obfuscator
from pi_tui.secrets.sources import SecretsSetup

if TYPE_CHECKING:
    from pi_tui.ai.types import Model, StreamOptions

_current: Obfuscator | None = None
_setup: SecretsSetup | None = None


def install(setup: SecretsSetup | None) -> None:
    """Use ``setup``'s secrets from now on. Placeholders already handed out keep working: a
    tool call may still carry one the model saw before the settings changed."""
    global _current, _setup
    old = _current
    _setup = setup
    _current = setup.obfuscator if setup is not None else None
    if old is not None and _current is not None and old.key == _current.key:
        _current.adopt_placeholders(old)


def current_setup() -> SecretsSetup | None:
    """What was installed, for ``/secrets``."""
    return _setup


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
    from pi_tui.secrets.sources import with_derived_forms

    added = with_derived_forms({value: SecretEntry("plain", value, source=where) for value in new})
    plain = {**_current.plain, **{form: entry for form, entry in added.items() if form not in _current.plain}}
    old = _current
    _current = Obfuscator(old.key, plain, list(old.patterns), old.user_regexes)
    _current.adopt_placeholders(old)
    if _setup is not None:
        _setup.obfuscator = _current
        _setup.sources[where] = _setup.sources.get(where, 0) + len(new)
        _setup.credentials.update(new)


def refresh() -> None:
    """Gather again when a project .env file or a secrets.yml changed (a few stat calls): the
    model may have just written a new secret into .env."""
    from pi_tui.secrets.sources import changed

    setup = _setup
    if setup is None or not setup.enabled or setup.rebuild is None or setup.cwd is None:
        return
    if changed(setup.watched, setup.cwd):
        install(setup.rebuild())


def outbound(body: Any, payload: bytes) -> bytes:
    """The bytes to send for ``body`` (encoded as ``payload``): unchanged unless a secret is in it."""
    refresh()
    obfuscator = _current
    if obfuscator is None or obfuscator.empty or not obfuscator.might_hide(payload):
        return payload
    obfuscator.begin_request()
    hidden = obfuscator.hide(body)
    _report(obfuscator.take_refusals())
    return payload if hidden is body else jsonio.dumps(hidden)


def hide_in_request(body: Any, payload: bytes, credentials: Sequence[str]) -> bytes:
    """A request's bytes as they may leave: the credentials it carries (a key from a
    ``!command``, a resolved header) join the secrets, then :func:`outbound`."""
    add_credentials(credentials)
    return outbound(body, payload)


def hiding_secrets(resolve: Callable[[Model], StreamOptions]) -> Callable[[Model], StreamOptions]:
    """``resolve`` (a model's request options) with :func:`hide_in_request` as the transformer
    of every request made with them. The agent wraps its options with this, so each of its
    requests (turns, compaction, branch summaries, extensions') hides secrets."""

    def options_for(model: Model) -> StreamOptions:
        options = resolve(model)
        options.transform_payload = hide_in_request
        return options

    return options_for


def _report(refusals: list[tuple[str, str]]) -> None:
    """A secrets.yml regex that ran over its budget: one warning line (on stderr, where start-up
    warnings go), a problem ``/secrets`` lists, and left out when secrets are gathered again."""
    from pi_tui.secrets.sources import REFUSED_REGEXES

    for source, line in refusals:
        print(f"pi-tui: warning: secrets: {line}", file=sys.stderr, flush=True)
        if _setup is not None:
            _setup.problems.append(line)
        REFUSED_REGEXES[source] = line


def inbound(arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool-call arguments with the placeholders this process handed out turned into the values."""
    obfuscator = _current
    if obfuscator is None:
        return arguments
    revealed = obfuscator.reveal(arguments)
    return revealed if isinstance(revealed, dict) else arguments
