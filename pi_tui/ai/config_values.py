"""Resolving ``apiKey`` and header values of models.json and auth.json.

A value is resolved when a request is made, never while loading, so listing models never runs a
command; ``!command`` outputs are cached for the run.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping

from pi_tui.ai.errors import ConfigError

COMMAND_TIMEOUT = 10.0
"""Seconds a ``!command`` key or header may take (a password manager prompt, at most)."""

# pi 1.x's rules (resolve-config-value in pi's dist): a value starting with ``!`` is a shell
# command whose trimmed output is the value; any other value is a template in which ``$NAME`` and
# ``${NAME}`` stand for environment variables, ``$$`` for ``$`` and ``$!`` for ``!``; the rest
# is literal text. A variable that is unset or empty leaves the whole value unresolved.
#
# pi 0.73 read a plain value as the *name* of an environment variable. A plain value that is
# exactly the name of a variable that is set keeps that meaning (such a file is unambiguous),
# with a one-line notice per value and run (:func:`legacy_env_name`, ``ModelRegistry.problems``).

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_command_cache: dict[str, str] = {}
_told_legacy: set[str] = set()
"""Places already given the 0.73 notice in this process (one notice per value and run)."""


def clear_command_cache() -> None:
    """Forget the output of ``!command`` values (they are cached for the life of the process)."""
    _command_cache.clear()
    _told_legacy.clear()


def env_value(name: str, env: Mapping[str, str] | None) -> str | None:
    """``env`` (auth.json's per-provider ``env``) over the process environment; empty is unset."""
    return (env or {}).get(name) or os.environ.get(name) or None


def legacy_env_name(value: str, env: Mapping[str, str] | None = None) -> str | None:
    """The variable a pi 0.73 value names: ``value`` is a bare name (no ``$``) of a set variable."""
    if _ENV_NAME.fullmatch(value) and env_value(value, env) is not None:
        return value
    return None


def _template(value: str, env: Mapping[str, str] | None) -> tuple[str, list[str]]:
    """``value`` with its ``$NAME`` / ``${NAME}`` references filled in, and the names unset."""
    out: list[str] = []
    missing: list[str] = []
    i = 0

    def lookup(name: str) -> None:
        found = env_value(name, env)
        if found is None:
            missing.append(name)
        else:
            out.append(found)

    while i < len(value):
        dollar = value.find("$", i)
        if dollar < 0:
            out.append(value[i:])
            break
        out.append(value[i:dollar])
        after = value[dollar + 1 : dollar + 2]
        if after in ("$", "!"):
            out.append(after)
            i = dollar + 2
        elif after == "{" and (end := value.find("}", dollar + 2)) >= 0:
            name = value[dollar + 2 : end]
            if _ENV_NAME.fullmatch(name):
                lookup(name)
            else:
                out.append(value[dollar : end + 1])
            i = end + 1
        elif after != "{" and (match := _ENV_NAME.match(value, dollar + 1)):
            lookup(match[0])
            i = match.end()
        else:
            out.append("$")
            i = dollar + 1
    return "".join(out), list(dict.fromkeys(missing))


def is_value_configured(value: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``value`` gives a key without running anything: a ``!command`` counts (it runs only
    when a request needs it), a template only when every variable it names is set (pi's check)."""
    if value.startswith("!") or legacy_env_name(value, env):
        return True
    return not _template(value, env)[1]


def value_without_commands(value: str, env: Mapping[str, str] | None = None) -> str | None:
    """What ``value`` resolves to when that needs no command; None for a ``!command`` or an
    unset variable (used to know the credentials to hide, without running anything)."""
    if value.startswith("!"):
        return None
    legacy = legacy_env_name(value, env)
    if legacy is not None:
        return env_value(legacy, env)
    resolved, missing = _template(value, env)
    return None if missing else resolved


def resolve_config_value(
    value: str,
    what: str,
    env: Mapping[str, str] | None = None,
    *,
    legacy_names: bool = True,
    cached: bool = True,
    quote_command: bool = True,
) -> str:
    """``!command`` -> its trimmed output (cached for the run); otherwise ``$NAME`` / ``${NAME}``
    filled in from ``env`` then the process environment; a bare name of a set variable -> its
    value (pi 0.73's form); anything else literally.

    ``what`` names the setting in the one-line :class:`ConfigError` raised when a command fails
    or a variable is unset. MCP values (mcp.json never had pi 0.73's form) pass
    ``legacy_names=False``, so ``"HOME"`` stays the text ``HOME``, and ``cached=False``, so a
    reconnect runs the command again (a token that expired is fetched anew), as pi does, and
    ``quote_command=False``, so the error names the setting and not the command (mcp.json's
    promise is never to show a value, and the command is the value).

    A failing command's error never carries what it printed: its stderr is where a token
    command says what it was doing (``set -x`` traces, a tool quoting its input), so it is where
    a secret would leak. pi shows none of it either.
    """
    if value.startswith("!"):
        command = value[1:]
        if not cached:
            return _run_command(command.strip(), what, quote_command)
        if command not in _command_cache:
            _command_cache[command] = _run_command(command.strip(), what, quote_command)
        return _command_cache[command]
    legacy = legacy_env_name(value, env) if legacy_names else None
    if legacy is not None:
        return env_value(legacy, env) or value
    resolved, missing = _template(value, env)
    if missing:
        names = ", ".join(missing)
        plural = "s" if len(missing) > 1 else ""
        raise ConfigError(f"{what}: environment variable{plural} {names} not set")
    return resolved


def legacy_notice(value: str, where: str, env: Mapping[str, str] | None = None) -> str | None:
    """The one-line notice for a pi 0.73 value at ``where``, the first time it is seen this run."""
    name = legacy_env_name(value, env)
    if name is None or where in _told_legacy:
        return None
    _told_legacy.add(where)
    return (
        f'{where}: "{name}" is read as the environment variable {name} (pi 0.73\'s meaning, '
        f'deprecated): write "${name}", as pi 1.x reads a plain value as the text itself'
    )


def _run_command(command: str, what: str, quote_command: bool = True) -> str:
    """The trimmed stdout of ``command``; a one-line :class:`ConfigError` naming ``what`` (and the
    command when ``quote_command``) otherwise, without the command's stderr or stdout."""
    if not command:
        raise ConfigError(f"{what}: the command after ! is empty")
    said = f"command `{command}`" if quote_command else "the command"
    try:
        done = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # never shown (see resolve_config_value), so never kept
            text=True,
            errors="replace",
            timeout=COMMAND_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{what}: {said} took longer than {COMMAND_TIMEOUT:g} s") from None
    except OSError as error:
        raise ConfigError(f"{what}: {said} could not run: {error.strerror or error}") from None
    if done.returncode != 0:
        raise ConfigError(f"{what}: {said} failed with exit code {done.returncode} (its output is not shown)")
    output = done.stdout.strip()
    if not output:
        raise ConfigError(f"{what}: {said} printed nothing")
    return output
