"""``pi-tui auth login|logout|check|print-api-key|print-bearer-token``: pi 1.x's credential
commands, without starting a session.

``login`` signs in to an account as pi does (Anthropic Claude Pro/Max, ChatGPT Plus/Pro
through Codex, the ChatGPT subscription for ``openai``, GitHub Copilot, OpenRouter, Kimi Code,
xAI, Meta; :mod:`pi_tui.ai.oauth.login`): the authorization URL is printed and opened in a
browser where one can show it, the answer comes to the loopback callback or as the redirect URL
(or code) pasted on stdin, and a device code is printed for the device flows. ``--no-browser``
takes the provider's headless method (Anthropic's copy-code login, Codex's device code), as
pi's does. ``--api-key`` (and every provider without an account sign-in) saves an API key
instead. Radius, which pi signs in to, is refused in one line: its API is not one pi-tui
speaks. Either credential goes to ``<agent dir>/auth.json`` in pi's shape (mode 0600)
through :class:`~pi_tui.config.auth.AuthStore`, so pi uses and refreshes what pi-tui saved and
the other way round.

What the commands print follows pi where scripts read it: ``check`` with a provider prints
``ready``, ``not_ready`` or ``invalid`` and exits 0, 1 or 2 (an expired login that can be renewed
is ready; ``--no-refresh`` checks without renewing); ``print-api-key`` prints an API key alone and
``print-bearer-token`` a login's access token, renewed first when it has less than
``--min-expiry`` left (30 minutes by default). ``check`` without a provider (an error in pi)
lists every provider and where its key comes from, never the key itself.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple

from pi_tui.argparsing import ArgumentsError, OneLineParser

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry

Fail = Callable[..., int]

USAGE = "pi-tui auth login|logout|check|print-api-key|print-bearer-token [PROVIDER] (see pi-tui auth --help)"
ASK_FOR_KEY = "\x00ask"
"""``--api-key`` given without a value: the key is asked (an explicit ``--api-key ""`` is empty)."""
DEFAULT_MIN_EXPIRY_MS = 30 * 60 * 1000
"""print-bearer-token renews a token with less than this left (pi's default)."""


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="pi-tui auth",
        description="Sign in to a subscription or save an API key, remove, check or print credentials.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    login = commands.add_parser(
        "login",
        help="sign in with an account (browser or device code), or save an API key (asked without echo)",
    )
    login.add_argument("provider", metavar="PROVIDER")
    login.add_argument(
        "--api-key",
        nargs="?",
        const=ASK_FOR_KEY,
        default=None,
        metavar="KEY",
        help="save an API key instead of signing in; without KEY it is asked (as pi's --api-key)",
    )
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="open no browser: Anthropic's copy-code login, Codex's device code (over SSH, say)",
    )
    logout = commands.add_parser("logout", help="remove the key or login saved in auth.json (exit 0 if none)")
    logout.add_argument("provider", metavar="PROVIDER")
    for name, text in (
        ("check", "ready / not_ready / invalid (exit 0 / 1 / 2); without a provider: every key's source"),
        ("print-api-key", "print the key requests would use (for scripts)"),
        ("print-bearer-token", "print a subscription login's access token (renewed if it expires soon)"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("provider", nargs="?", metavar="PROVIDER")
        command.add_argument("--provider", dest="provider_flag", metavar="PROVIDER", help="as PROVIDER")
        command.add_argument("--model", metavar="MODEL", help="the provider of this model")
        if name == "check":
            command.add_argument("--json", action="store_true", help="the result as one JSON object")
            command.add_argument("--credentials", action="store_true", help="print the key instead of ready")
            command.add_argument(
                "--no-refresh", action="store_true", help="do not renew an expired login to check it"
            )
        if name == "print-bearer-token":
            command.add_argument(
                "--min-expiry",
                metavar="DURATION",
                help="renew unless the token lasts this long (30m, 1h, 90s, 500ms; default 30m)",
            )
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
    if args.command == "login" and args.no_browser and args.api_key is not None:
        return fail("auth login: --no-browser is not allowed with --api-key")
    try:
        registry = ModelRegistry()
    except ConfigError as error:
        return fail(str(error))
    try:
        if args.command == "login":
            refused = _unsupported(args.provider)
            if refused is not None:
                return fail(f"auth login: {refused}")
            if args.api_key is None and _is_subscription(args.provider):
                return _oauth_login(registry, args.provider.strip().lower(), args.no_browser, fail)
            if args.api_key is not None and _login_only(args.provider):
                return fail(f"auth login: {_login_only(args.provider)}")
            return _login(registry, args.provider, args.api_key, fail)
        if args.command == "logout":
            return _logout(registry, args.provider)
        provider = _provider_asked(registry, args)
        if args.command == "check":
            if provider is None:
                return _check_all(registry)
            return _check(
                registry,
                provider,
                as_json=args.json,
                credentials=args.credentials,
                renew=not args.no_refresh,
            )
        if provider is None:
            return fail(f"auth {args.command} needs a provider: pi-tui auth {args.command} PROVIDER")
        if args.command == "print-bearer-token":
            return _print_bearer_token(registry, _known_provider(registry, provider), args.min_expiry, fail)
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
        raise _UserError(f'Unknown provider "{name}" (known: {known}).')
    return provider


def _login(registry: ModelRegistry, name: str, key: str | None, fail: Fail) -> int:
    """Save a key: ``--api-key KEY``, else asked without echo on a terminal."""
    provider = _known_provider(registry, name)
    if key is not None and key != ASK_FOR_KEY and not key.strip():
        return fail(f"auth login: the key for {provider} is empty: nothing was saved.")
    if key is None or key == ASK_FOR_KEY:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return fail("auth login needs a terminal to ask for the key without echo, or --api-key KEY")
        import getpass

        key = getpass.getpass(f"API key for {provider} (not shown as you type): ", stream=sys.stderr)
        key = key.strip()
        if not key:
            return fail("No key was typed: nothing was saved.")
    from pi_tui.ai.key_origin import url_variables

    env: dict[str, str] = {}
    for variable, label in url_variables(provider):  # Cloudflare: the account (and gateway) id
        if not sys.stdin.isatty():
            value = os.environ.get(variable, "").strip()
            if not value:
                return fail(
                    f"auth login: {provider} needs {variable} ({label}): set it, or run on a terminal"
                )
        else:
            try:
                value = input(f"Enter {label}: ").strip()
            except (EOFError, KeyboardInterrupt):
                return fail("auth login: Login cancelled", 1)
            if not value:
                return fail(f"auth login: the {label} is empty: nothing was saved.")
        env[variable] = value
    store = registry.auth
    replaced = store.kind(provider) if not store.saved_by_pi(provider) else None
    store.set_api_key(provider, key, env)
    what = f" (replacing the saved {replaced} credential)" if replaced else ""
    print(f"Saved an API key for {provider} in {store.path}{what}.")
    return 0


def _logout(registry: ModelRegistry, name: str) -> int:
    """Remove what login saved; nothing saved is no failure (safe to repeat, as pi)."""
    store = registry.auth
    saved = name.strip() in store.providers()  # a credential of a provider models.json dropped
    provider = name.strip() if saved else _known_provider(registry, name)
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
    from pi_tui.ai.key_origin import key_origin, missing_url_variables, no_credentials

    store = registry.auth
    missing = missing_url_variables(registry, provider)
    if missing:  # Cloudflare's account (and gateway) id: no request can be sent without them
        return KeySource(
            False,
            f"needs {' and '.join(missing)} for its URL: set {'it' if len(missing) == 1 else 'them'} "
            f"or run pi-tui auth login {provider}",
        )
    if store.oauth(provider) is not None:
        whose = f"pi's auth.json ({store.beneath})" if store.saved_by_pi(provider) else f"{store.path}"
        return KeySource(True, f"a subscription login saved in {whose}")
    origin = key_origin(registry, provider)
    if origin.layer == "auth.json":
        whose = f"pi's auth.json ({store.beneath})" if origin.by_pi else f"{store.path}"
        return KeySource(True, f"saved in {whose}")
    if origin.layer == "models.json":
        return KeySource(True, f"models.json ({'a !command' if origin.command else 'its apiKey'})")
    if origin.layer == "ambient":
        return KeySource(True, f"ambient credentials ({origin.ambient})")
    if no_credentials(provider) is not None:
        return KeySource(False, str(no_credentials(provider)))
    if origin.env_var is None:
        return KeySource(True, "needs no key")
    if origin.layer == "env":
        return KeySource(True, f"the {origin.env_var} environment variable")
    return KeySource(False, f"no key: set {origin.env_var} or run pi-tui auth login {provider}")


def _resolved(
    registry: ModelRegistry, provider: str, *, renew: bool = True
) -> tuple[str, str | None, str | None]:
    """(status, key, problem): pi's ``ready`` / ``not_ready`` / ``invalid``.

    A saved subscription login comes first, as auth.json does in pi's order: ready when its
    token is valid or was renewed now (without ``renew``, when it has a refresh token at all);
    invalid when the renewal failed.
    """
    from pi_tui.ai.catalogue import PROVIDERS
    from pi_tui.ai.errors import ConfigError

    saved = registry.auth.oauth(provider)
    if saved is not None:
        if not renew:
            return "ready", str(saved["access"]), None
        from pi_tui.ai.oauth.refresh import oauth_auth

        try:
            auth = oauth_auth(registry.auth, provider)
        except ConfigError as error:
            return "invalid", None, str(error)
        if auth is not None:
            return "ready", auth.api_key, None
    if registry.canonical_provider(provider) is None:
        return "not_ready", None, f'unknown provider "{provider}"'
    from pi_tui.ai.key_origin import missing_url_variables

    if missing_url_variables(registry, provider):
        return "not_ready", None, key_source(registry, provider).where
    try:
        key = registry.resolve_api_key(provider)
    except ConfigError as error:
        return "invalid", None, str(error)
    if key:
        return "ready", key, None
    info = PROVIDERS.get(provider)
    if info is not None and not info.keyless and not registry.has_key(provider):  # has_key: ambient too
        return "not_ready", None, key_source(registry, provider).where
    return "ready", None, None  # a local server that needs no key


def _check(
    registry: ModelRegistry, provider: str, *, as_json: bool, credentials: bool, renew: bool = True
) -> int:
    status, key, problem = _resolved(registry, provider, renew=renew)
    if registry.auth.problem:  # not "no key": what was saved cannot be read (pi: invalid)
        status, problem = "invalid", f"cannot read the saved credentials: {registry.auth.problem}"
    if as_json:
        record: dict[str, object] = {"status": status, "provider": provider}
        if status == "ready":
            oauth = registry.auth.oauth(provider) is not None
            record["authType"] = "oauth" if oauth else "api_key" if key else "none"
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
    if registry.auth.oauth(provider) is not None:
        return fail(
            f'Provider "{provider}" is configured with OAuth, not an API key: '
            f"pi-tui auth print-bearer-token {provider} prints its token",
            1,
        )
    status, key, problem = _resolved(registry, provider)
    if key is None:
        reason = problem or "it needs none"
        return fail(f"No usable API key for {provider}: {reason}", 1 if status != "invalid" else 2)
    print(key)
    return 0


# --- subscription logins (OAuth) --------------------------------------------------------------------


def _is_subscription(name: str) -> bool:
    from pi_tui.ai.oauth.login import SUBSCRIPTION_PROVIDERS

    return name.strip().lower() in SUBSCRIPTION_PROVIDERS


def _login_only(name: str) -> str | None:
    """Why ``--api-key`` is refused for a provider that only signs in (OpenAI Codex: a ChatGPT
    login, no key), as pi refuses it; None for the others. A working login is never replaced by
    a key that cannot serve it."""
    from pi_tui.ai.catalogue import PROVIDERS
    from pi_tui.ai.oauth.login import LOGIN_ONLY

    provider = name.strip().lower()
    if provider not in LOGIN_ONLY:
        return None
    info = PROVIDERS.get(provider)
    label = info.name if info is not None and info.name else provider
    return f"{label} has no API key login. Omit --api-key to sign in."


def _unsupported(name: str) -> str | None:
    """Why pi-tui leaves out a sign-in pi has (Radius), or None."""
    from pi_tui.ai.oauth.login import UNSUPPORTED

    return UNSUPPORTED.get(name.strip().lower())


class _PrintedLogin:
    """The sign-in on a shell: the URL or device code printed (stdout: a script or a test reads
    it), a browser opened when one can show it and ``--no-browser`` was not given."""

    def __init__(self, browser: bool) -> None:
        self.browser = browser

    def show_url(self, url: str, instructions: str) -> None:
        from pi_tui.ai.oauth.browser import open_browser
        from pi_tui.text_safety import for_terminal

        opened = self.browser and open_browser(url)
        print("A browser was opened at this URL:" if opened else "Open this URL to sign in:")
        print(for_terminal(url))
        print(instructions, flush=True)

    def show_device_code(self, user_code: str, verification_uri: str) -> None:
        from pi_tui.text_safety import for_terminal

        print(
            f"Open {for_terminal(verification_uri)} and enter the code: {for_terminal(user_code)}", flush=True
        )

    def progress(self, text: str) -> None:
        print(text, flush=True)


def _stdin_lines() -> Callable[[str], Awaitable[str | None]]:
    """The pasted redirect URL or code, read from stdin (a terminal, or a pipe a script fills):
    the first line that is not blank; None at end of input, leaving the browser callback.

    stdin is read with ``os.read`` on a daemon thread: a sign-in finished by the callback exits
    without waiting for a line, and no buffered reader's lock is held at exit.
    """
    import asyncio
    import contextlib
    import os
    import threading

    async def paste(prompt: str) -> str | None:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str | None] = loop.create_future()

        def give(line: str | None) -> None:
            if not answer.done():
                answer.set_result(line)

        def read() -> None:
            pending = b""
            while True:
                try:
                    chunk = os.read(0, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    line: str | None = pending.decode("utf-8", "replace") if pending.strip() else None
                    break
                pending += chunk
                lines = pending.split(b"\n")
                pending = lines.pop()
                found = next((raw for raw in lines if raw.strip()), None)
                if found is not None:
                    line = found.decode("utf-8", "replace")
                    break
            with contextlib.suppress(RuntimeError):  # the sign-in already ended
                loop.call_soon_threadsafe(give, line)

        if sys.stdin is not None and sys.stdin.isatty():
            print(prompt, flush=True)
        threading.Thread(target=read, name="pi-tui-paste", daemon=True).start()
        return await answer

    return paste


def _oauth_login(registry: ModelRegistry, provider: str, no_browser: bool, fail: Fail) -> int:
    """``pi-tui auth login <subscription> [--no-browser]``: sign in and save the login."""
    import asyncio

    from pi_tui.ai.oauth.login import METHODS, enterprise_domain, sign_in
    from pi_tui.ai.oauth.login_errors import LoginError
    from pi_tui.ai.oauth.providers import OAuthConfigError, oauth_provider
    from pi_tui.text_safety import for_terminal

    try:
        facts = oauth_provider(provider)
    except OAuthConfigError as error:
        return fail(str(error))
    assert facts is not None  # every subscription pi-tui signs in to is in the table
    methods = METHODS[provider]
    method = (methods[-1] if no_browser else methods[0]).id
    domain = None
    if provider == "github-copilot" and sys.stdin is not None and sys.stdin.isatty():
        try:
            typed = input("GitHub Enterprise URL/domain (blank for github.com): ")
            domain = enterprise_domain(typed)
        except LoginError as error:
            return fail(f"auth login: {error}")
        except (EOFError, KeyboardInterrupt):
            return fail("auth login: Login cancelled", 1)
    ui = _PrintedLogin(browser=not no_browser)
    paste = _stdin_lines() if method != "device" else None
    try:
        credential = asyncio.run(sign_in(provider, method, ui, paste, enterprise_domain=domain))
    except KeyboardInterrupt:
        return fail("auth login: Login cancelled", 1)
    except LoginError as error:
        return fail(f"auth login: {for_terminal(str(error))}", 1)
    except OAuthConfigError as error:
        return fail(str(error))
    store = registry.auth
    store.set_oauth(provider, credential)
    print(f"Logged in to {facts.name}. Credentials saved to {store.path}")
    return 0


def _min_expiry_ms(text: str | None) -> int | None:
    """``30m`` -> milliseconds (pi's units: ms, s, m, h); None when it is no such duration."""
    import re

    if text is None:
        return DEFAULT_MIN_EXPIRY_MS
    match = re.fullmatch(r"(\d+)(ms|s|m|h)", text.strip(), re.IGNORECASE)
    if match is None:
        return None
    unit = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[match.group(2).lower()]
    return int(match.group(1)) * unit


def _print_bearer_token(registry: ModelRegistry, provider: str, min_expiry: str | None, fail: Fail) -> int:
    """pi's ``print-bearer-token``: the login's access token, renewed first when it has less
    than ``--min-expiry`` left (the renewal written back to auth.json, as every renewal is)."""
    import httpx

    from pi_tui.ai.oauth.providers import OAuthConfigError, oauth_provider
    from pi_tui.ai.oauth.refresh import (
        GRANT_TIMEOUT,
        RenewalFailed,
        auth_of,
        now_ms,
        renew,
        renewal_failed_message,
        short_name,
    )
    from pi_tui.config.auth import AuthFileError, OAuthCredential

    margin = _min_expiry_ms(min_expiry)
    if margin is None:
        return fail("auth print-bearer-token: --min-expiry must use a duration such as 30m or 1h")
    store = registry.auth
    credential = store.oauth(provider)
    try:
        facts = oauth_provider(provider)
    except OAuthConfigError as error:
        return fail(str(error))
    if credential is None or facts is None:
        return fail(f'Provider "{provider}" is not configured with an OAuth bearer token', 1)

    def needs(current: OAuthCredential) -> bool:
        return now_ms() + margin >= float(current["expires"])

    if needs(credential):
        try:
            with httpx.Client(timeout=GRANT_TIMEOUT) as client:
                renewed = store.refresh_oauth(provider, needs, lambda current: renew(facts, current, client))
        except RenewalFailed as failed:
            return fail(renewal_failed_message(facts, failed), 1)
        except (AuthFileError, httpx.HTTPError) as error:
            return fail(
                f"{short_name(facts)} login could not be renewed ({error}): run pi-tui auth login {provider}",
                1,
            )
        if renewed is None:
            return fail(f'Provider "{provider}" is not configured with an OAuth bearer token', 1)
        credential = renewed
    print(auth_of(facts, credential).api_key)
    return 0
