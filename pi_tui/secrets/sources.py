"""Gathering the secrets of a run into one :class:`Obfuscator`.

Always: the credentials pi-tui itself holds (provider keys from the environment, ``--api-key``,
auth.json, models.json ``apiKey`` and header values, literal or named environment variables,
``PI_TUI_SERVE_TOKEN``; values from ``!commands`` are added when a request carries them, see
:mod:`active`). With ``secrets.enabled``: secret-looking environment variables, ``secrets.yml``
entries (global, then the project's), and the built-in patterns not switched off. Every plain
value comes with its base64, reversed, hex and URL-encoded forms (:func:`with_derived_forms`).
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import secrets as random_source
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus

from pi_tui.secrets.entries import SecretEntry, compile_user_regex, load_secret_files
from pi_tui.secrets.environment import MIN_LENGTH, dotenv_secrets, environment_secrets
from pi_tui.secrets.obfuscator import Obfuscator, Pattern
from pi_tui.secrets.patterns import BUILTIN_PATTERNS

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.config.settings import Settings

KEY_FILE = "secrets.key"


@dataclass(slots=True)
class SecretsSetup:
    obfuscator: Obfuscator
    problems: list[str]
    sources: dict[str, int]
    """Where the secrets came from and how many each gave, for ``/secrets``."""
    enabled: bool
    watched: dict[Path, float] = field(default_factory=dict)
    """Files whose change means gathering again (the project's .env files and secrets.yml)."""
    rebuild: Callable[[], SecretsSetup] | None = None
    cwd: Path | None = None
    credentials: set[str] = field(default_factory=set)
    """The credentials pi-tui itself holds (provider keys, ``--api-key``, auth.json, models.json):
    kept out of the environment of every command it runs (:mod:`child_env`)."""


REFUSED_REGEXES: dict[str, str] = {}
"""secrets.yml regexes dropped for running over their budget in this process (source -> the
report), left out when the secrets are gathered again."""


def base64_forms(value: str) -> list[str]:
    """How ``value`` shows inside base64 text (``base64 .env``, a data URL), at each of the three
    offsets it can start at: only the groups of four characters made of its bytes alone, so the
    form does not depend on what surrounds it. Forms under 8 characters are left out."""
    data = value.encode("utf-8", "surrogatepass")
    forms = []
    for pad in range(3):
        padded = b"\0" * pad + data
        whole = len(padded) // 3 * 3
        encoded = base64.b64encode(padded[:whole]).decode("ascii")[4 if pad else 0 :]
        if len(encoded) >= MIN_LENGTH:
            forms.append(encoded)
    return forms


def transformed_forms(value: str) -> list[tuple[str, str]]:
    """``(form, how)`` for the cheap transforms a tool may print a value through: reversed
    (``rev``), hex of its UTF-8 bytes (``xxd -p``, ``.hex()``; lower and upper case) and
    URL-encoded (``%XX``, with ``+`` or ``%20`` for spaces). Forms equal to the value, or under
    8 characters, are left out."""
    data = value.encode("utf-8", "surrogatepass")
    forms = [
        (value[::-1], "reversed"),
        (data.hex(), "hex"),
        (data.hex().upper(), "hex"),
        (quote(value, safe=""), "URL-encoded"),
        (quote_plus(value, safe=""), "URL-encoded"),
    ]
    seen = {value}
    kept = []
    for form, how in forms:
        if form not in seen and len(form) >= MIN_LENGTH:
            seen.add(form)
            kept.append((form, how))
    return kept


def with_derived_forms(plain: dict[str, SecretEntry]) -> dict[str, SecretEntry]:
    """The plain secrets with their base64 and :func:`transformed_forms` (same mode; a
    replacement does not carry over). Each form is a secret of its own: its placeholder stands
    for the form, so a tool call that uses it gets the form back."""
    result = with_base64_forms(plain)
    for value, entry in plain.items():
        for form, how in transformed_forms(value):
            result.setdefault(
                form, SecretEntry("plain", form, entry.mode, None, 0, f"{how} of {entry.source}")
            )
    return result


def with_base64_forms(plain: dict[str, SecretEntry]) -> dict[str, SecretEntry]:
    """The plain secrets and their base64 forms (same mode; a replacement does not carry over)."""
    result = dict(plain)
    for value, entry in plain.items():
        for form in base64_forms(value):
            result.setdefault(
                form, SecretEntry("plain", form, entry.mode, None, 0, f"base64 of {entry.source}")
            )
    return result


def placeholder_key(agent_dir: Path) -> bytes:
    """The HMAC key of the placeholders, made once per agent dir (0600), so a value keeps its
    placeholder across restarts; a random one for this process when it cannot be saved."""
    path = agent_dir / KEY_FILE
    with contextlib.suppress(OSError, ValueError):
        text = path.read_text(encoding="ascii").strip()
        if len(text) == 64:
            return bytes.fromhex(text)
    key = random_source.token_bytes(32)
    with contextlib.suppress(OSError):
        agent_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(key.hex())
    return key


def _looked_up(value: str | None, environ: Mapping[str, str]) -> Iterable[str]:
    """A configured value as a request would send it, when that needs no command (pi 1.x's
    ``$VAR`` / literal rules, pi_tui/ai/models.py; ``!commands`` run only when a request needs
    the key: :func:`active.add_credentials`)."""
    from pi_tui.ai.config_values import value_without_commands

    if not value:
        return []
    resolved = value_without_commands(value, dict(environ))
    return [resolved] if resolved else []


def known_credentials(
    registry: ModelRegistry | None, cli_key: str | None, environ: Mapping[str, str]
) -> dict[str, str]:
    """Value -> where it came from, for every credential pi-tui knows of (>= 8 characters)."""
    from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES

    found: dict[str, str] = {}

    def add(values: Iterable[str], where: str) -> None:
        for value in values:
            if value and len(value) >= MIN_LENGTH:
                found.setdefault(value, where)

    add([cli_key or ""], "--api-key")
    add((environ.get(name, "") for name in sorted(KEY_ENV_VAR_NAMES)), "provider environment variables")
    add([environ.get("PI_TUI_SERVE_TOKEN", "")], "PI_TUI_SERVE_TOKEN")  # whoever has it drives the server
    if registry is not None:
        for provider in registry.auth.providers():
            add(_looked_up(registry.auth.api_key(provider), environ), "auth.json")
        for config in registry.config.providers.values():
            add(_looked_up(config.api_key, environ), "models.json apiKey")
            for value in (config.headers or {}).values():
                add(_looked_up(value, environ), "models.json headers")
    return found


def build_secrets(
    settings: Settings,
    cwd: str,
    agent_dir: Path,
    registry: ModelRegistry | None = None,
    cli_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> SecretsSetup:
    environ = os.environ if environ is None else environ
    plain: dict[str, SecretEntry] = {}
    sources: dict[str, int] = {}
    for value, where in known_credentials(registry, cli_key, environ).items():
        plain[value] = SecretEntry("plain", value, source=where)
        sources[where] = sources.get(where, 0) + 1
    credentials = set(plain)
    problems: list[str] = []
    patterns: list[Pattern] = []
    enabled = settings.secrets.enabled
    user_regexes = False
    if enabled:
        for value, name in environment_secrets(environ).items():
            if value not in plain:
                plain[value] = SecretEntry("plain", value, source=f"env {name}")
                sources["environment variables"] = sources.get("environment variables", 0) + 1
        in_files, watched = dotenv_secrets(Path(cwd))
        for value, where in in_files.items():
            if value not in plain:
                plain[value] = SecretEntry("plain", value, source=where)
                sources[".env files"] = sources.get(".env files", 0) + 1
        for path in (agent_dir / "secrets.yml", Path(cwd) / ".agent" / "secrets.yml"):
            with contextlib.suppress(OSError):
                watched[path] = path.stat().st_mtime
        load = load_secret_files([agent_dir / "secrets.yml", Path(cwd) / ".agent" / "secrets.yml"])
        problems.extend(load.problems)
        for entry in load.entries:
            if entry.kind == "plain":
                plain[entry.content] = entry
            elif entry.content in REFUSED_REGEXES:
                problems.append(REFUSED_REGEXES[entry.content])
                continue
            else:
                compiled = compile_user_regex(entry.content, entry.flags)
                patterns.append(Pattern(entry.source, compiled, entry.mode, entry.replacement, timed=True))
                user_regexes = True
            sources["secrets.yml"] = sources.get("secrets.yml", 0) + 1
        off = set(settings.secrets.disabled_patterns)
        unknown = sorted(off - set(BUILTIN_PATTERNS))
        if unknown:
            problems.append(
                f"secrets.disabledPatterns: unknown pattern {unknown[0]!r} ({', '.join(BUILTIN_PATTERNS)})"
            )
        for name, source in BUILTIN_PATTERNS.items():
            if name not in off:
                patterns.append(Pattern(name, re.compile(source), word_start=True))
                sources["built-in patterns"] = sources.get("built-in patterns", 0) + 1
    else:
        watched = {}
    obfuscator = Obfuscator(placeholder_key(agent_dir), with_derived_forms(plain), patterns, user_regexes)
    setup = SecretsSetup(
        obfuscator, problems, sources, enabled, watched, cwd=Path(cwd), credentials=credentials
    )
    setup.rebuild = lambda: build_secrets(settings, cwd, agent_dir, registry, cli_key, environ)
    return setup


def changed(watched: dict[Path, float], cwd: Path) -> bool:
    """Whether a watched file changed, went away, or a new .env file appeared."""
    from pi_tui.secrets.environment import dotenv_files

    for path, mtime in watched.items():
        try:
            if path.stat().st_mtime != mtime:
                return True
        except OSError:
            return True
    return any(path not in watched for path in dotenv_files(cwd))
