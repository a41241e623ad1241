"""``pi-tui auth login|logout|check|print-api-key``: pi 1.x's credential commands, without
starting a session.

pi-tui signs in with API keys only: pi's account sign-in (OAuth, a browser or a device code)
and its bearer tokens have no counterpart, so ``--no-browser`` and ``print-bearer-token`` are
refused with one line saying so. Keys are saved in ``<agent dir>/auth.json`` in pi's shape
(``{"type": "api_key", "key": ...}``, mode 0600) through :class:`~pi_tui.config.auth.AuthStore`,
so pi reads what pi-tui saved and the other way round.

What the commands print follows pi where scripts read it: ``check`` with a provider prints
``ready``, ``not_ready`` or ``invalid`` and exits 0, 1 or 2; ``print-api-key`` prints the key
alone. ``check`` without a provider (an error in pi) lists every provider and where its key
comes from, never the key itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from pi_tui.argparsing import ArgumentsError, OneLineParser

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry

Fail = Callable[..., int]

OAUTH_LINE = "pi-tui saves API keys only: account sign-in (OAuth) and bearer tokens are pi's"
USAGE = "pi-tui auth login|logout|check|print-api-key [PROVIDER] (see pi-tui auth --help)"


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui auth",
        description=f"Save, remove, check or print a provider's API key. {OAUTH_LINE}.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    login = commands.add_parser(
        "login", help="save an API key in auth.json (asked without echo on a terminal)"
    )
    login.add_argument("provider", metavar="PROVIDER")
    login.add_argument(
        "--api-key",
        nargs="?",
        const="",
        default=None,
        metavar="KEY",
        help="the key to save; without KEY it is asked (as pi's --api-key)",
    )
    login.add_argument("--no-browser", action="store_true", help=argparse.SUPPRESS)
    logout = commands.add_parser("logout", help="remove the key saved in auth.json (exit 0 if none)")
    logout.add_argument("provider", metavar="PROVIDER")
    for name, text in (
        ("check", "ready / not_ready / invalid (exit 0 / 1 / 2); without a provider: every key's source"),
        ("print-api-key", "print the key requests would use (for scripts)"),
        ("print-bearer-token", "refused: pi-tui has no OAuth logins, so no bearer token"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("provider", nargs="?", metavar="PROVIDER")
        command.add_argument("--provider", dest="provider_flag", metavar="PROVIDER", help="as PROVIDER")
        command.add_argument("--model", metavar="MODEL", help="the provider of this model")
        if name == "check":
            command.add_argument("--json", action="store_true", help="the result as one JSON object")
            command.add_argument("--credentials", action="store_true", help="print the key instead of ready")
            command.add_argument("--no-refresh", action="store_true", help=argparse.SUPPRESS)
    return parser


class _UserError(Exception):
    """A mistake on the command line; said in one line, exit 2."""


class KeySource(NamedTuple):
    """Where a provider's key comes from, in words, and whether one is there at all."""

    found: bool
    where: str


def run_auth(words: list[str], fail: Fail) -> int:
    from pi_tui.ai.errors import ConfigError
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.config.auth import AuthFileError

    parser = build_parser()
    try:
        args = parser.parse_args(words)
    except ArgumentsError as error:
        return fail(f"auth: {error}")
    if args.command is None:
        return fail(f"auth needs a command: {USAGE}")
    if args.command == "print-bearer-token" or getattr(args, "no_browser", False):
        return fail(f"auth: {OAUTH_LINE}; use an API key (pi-tui auth login PROVIDER)")
    try:
        registry = ModelRegistry()
    except ConfigError as error:
        return fail(str(error))
    try:
        if args.command == "login":
            return _login(registry, args.provider, args.api_key, fail)
        if args.command == "logout":
            return _logout(registry, args.provider)
        provider = _provider_asked(registry, args)
        if args.command == "check":
            if provider is None:
                return _check_all(registry)
            return _check(registry, provider, as_json=args.json, credentials=args.credentials)
        if provider is None:
            return fail("auth print-api-key needs a provider: pi-tui auth print-api-key PROVIDER")
        return _print_key(registry, provider, fail)
    except AuthFileError as error:
        return fail(str(error))
    except _UserError as error:
        return fail(str(error))


def _provider_asked(registry: ModelRegistry, args: object) -> str | None:
    """The provider named by PROVIDER, ``--provider`` or ``--model`` (pi takes the flags)."""
    from pi_tui.ai.errors import ConfigError

    named = getattr(args, "provider", None) or getattr(args, "provider_flag", None)
    model = getattr(args, "model", None)
    if model:
        try:
            match = registry.resolve(model, named)
        except ConfigError as error:
            raise _UserError(str(error)) from None
        return match.model.provider
    if named is None:
        return None
    return registry.canonical_provider(named) or named


def _known_provider(registry: ModelRegistry, name: str) -> str:
    provider = registry.canonical_provider(name)
    if provider is None or provider == "offline":
        known = ", ".join(p for p in registry.providers() if p != "offline")
        raise _UserError(f'Unknown provider "{name}" (known: {known}). {OAUTH_LINE}.')
    return provider


def _login(registry: ModelRegistry, name: str, key: str | None, fail: Fail) -> int:
    """Save a key: ``--api-key KEY``, else asked without echo on a terminal."""
    provider = _known_provider(registry, name)
    if not key:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            asks = "auth login needs a terminal to ask for the key without echo, or --api-key KEY"
            return fail(f"{asks} ({OAUTH_LINE})")
        import getpass

        key = getpass.getpass(f"API key for {provider} (not shown as you type): ", stream=sys.stderr)
        key = key.strip()
        if not key:
            return fail("No key was typed: nothing was saved.")
    store = registry.auth
    replaced = store.kind(provider) if not store.saved_by_pi(provider) else None
    store.set_api_key(provider, key)
    what = f" (replacing the saved {replaced} credential)" if replaced else ""
    print(f"Saved an API key for {provider} in {store.path}{what}.")
    return 0


def _logout(registry: ModelRegistry, name: str) -> int:
    """Remove what login saved; nothing saved is no failure (safe to repeat, as pi)."""
    provider = registry.canonical_provider(name) or name
    store = registry.auth
    tail = "Environment variables and models.json are unchanged."
    if store.remove(provider):
        print(f"Removed the saved credential of {provider} from {store.path}. {tail}")
    elif store.saved_by_pi(provider):
        print(
            f"pi-tui's auth.json has nothing for {provider}; the key it uses is in pi's "
            f"{store.beneath}, which pi-tui never changes (run pi auth logout {provider})."
        )
    else:
        print(f"No saved credential for {provider} in {store.path}. {tail}")
    return 0


def key_source(registry: ModelRegistry, provider: str) -> KeySource:
    """Where requests to ``provider`` take their key from, in resolution order (auth.json, then
    models.json's ``apiKey``, then the environment variable), without running a ``!command``
    or showing the key."""
    from pi_tui.ai.key_origin import key_origin

    origin = key_origin(registry, provider)
    if origin.layer == "auth.json":
        store = registry.auth
        whose = f"pi's auth.json ({store.beneath})" if origin.by_pi else f"{store.path}"
        return KeySource(True, f"saved in {whose}")
    if origin.layer == "models.json":
        return KeySource(True, f"models.json ({'a !command' if origin.command else 'its apiKey'})")
    if origin.env_var is None:
        return KeySource(True, "needs no key")
    if origin.layer == "env":
        return KeySource(True, f"the {origin.env_var} environment variable")
    oauth = " (an OAuth login is saved, which pi-tui cannot use)" if origin.oauth_saved else ""
    return KeySource(False, f"no key: set {origin.env_var} or run pi-tui auth login {provider}{oauth}")


def _resolved(registry: ModelRegistry, provider: str) -> tuple[str, str | None, str | None]:
    """(status, key, problem): pi's ``ready`` / ``not_ready`` / ``invalid``."""
    from pi_tui.ai.catalogue import ENV_VARS
    from pi_tui.ai.errors import ConfigError

    if registry.canonical_provider(provider) is None:
        return "not_ready", None, f'unknown provider "{provider}"'
    try:
        key = registry.resolve_api_key(provider)
    except ConfigError as error:
        return "invalid", None, str(error)
    if key:
        return "ready", key, None
    if provider in ENV_VARS:
        return "not_ready", None, key_source(registry, provider).where
    return "ready", None, None  # a local server that needs no key


def _check(registry: ModelRegistry, provider: str, *, as_json: bool, credentials: bool) -> int:
    status, key, problem = _resolved(registry, provider)
    if as_json:
        record: dict[str, object] = {"status": status, "provider": provider}
        if status == "ready":
            record["authType"] = "api_key" if key else "none"
            record["source"] = key_source(registry, provider).where
            if credentials and key:
                record["apiKey"] = key
        elif problem:
            record["error"] = problem
        print(json.dumps(record))
    elif credentials and key:
        print(key)
    else:
        print(status)
        if status != "ready" and problem:
            print(f"pi-tui: {provider}: {problem}", file=sys.stderr)
    return {"ready": 0, "not_ready": 1}.get(status, 2)


def _check_all(registry: ModelRegistry) -> int:
    """Every provider and where its key comes from (the key itself is never shown)."""
    from pi_tui.text_safety import for_terminal

    rows = []
    for provider in registry.providers():
        if provider == "offline":
            continue
        source = key_source(registry, provider)
        rows.append((provider, "ready" if source.found else "not_ready", source.where))
    width = max((len(row[0]) for row in rows), default=0)
    for provider, status, where in rows:
        line = f"{provider:<{width}}  {status:<9}  {where}"
        print(for_terminal(line) if sys.stdout.isatty() else line)
    if registry.auth.problem:
        print(f"pi-tui: {registry.auth.problem}", file=sys.stderr)
    return 0


def _print_key(registry: ModelRegistry, provider: str, fail: Fail) -> int:
    status, key, problem = _resolved(registry, provider)
    if key is None:
        reason = problem or "it needs none"
        return fail(f"No usable API key for {provider}: {reason}", 1 if status != "invalid" else 2)
    print(key)
    return 0
