"""Secrets found in the environment: variables whose names say they hold one.

A name counts when it ends in ``KEY``, ``SECRET``, ``TOKEN``, ``PASSWORD``, ``PASS``, ``PASSWD``,
``PWD`` (not ``PWD`` itself, the working folder) or ``CREDENTIALS`` (``_KEY``, ``APIKEY``,
``GITHUB_TOKEN``...), or holds ``SECRET`` or ``PASSWORD``; values shorter than 8 characters are
left alone (``DEBUG_TOKEN=1`` is no secret, and short values would match all over the place).
Any variable whose value is a URL with a password (``postgres://user:pw@host/db``) gives its
password, and the whole URL when its name looks like a database URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

MIN_LENGTH = 8
_SECRET_NAME = re.compile(
    r"(?:KEY|SECRET|TOKEN|PASSWORD|PASS|PASSWD|PWD|CREDENTIALS?)$|SECRET|PASSWORD|PRIVATE_KEY", re.I
)
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "KEY", "GPG_TTY", "SSH_AUTH_SOCK"})
_URL_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:([^/\s@]+)@")
_URL_NAME = re.compile(
    r"(?:DATABASE|DB|REDIS|MONGO|AMQP|BROKER|DSN)\w*(?:URL|URI|DSN)$|_URL$|_URI$|DSN$", re.I
)


def looks_secret(name: str) -> bool:
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def environment_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """Value -> the variable it came from, for every secret the environment holds."""
    found: dict[str, str] = {}
    for name, value in environ.items():
        if not value:
            continue
        password = _URL_PASSWORD.match(value)
        if password is not None:
            if len(password.group(1)) >= 4:
                found.setdefault(password.group(1), name)
            if _URL_NAME.search(name):
                found.setdefault(value, name)
            continue
        if len(value) >= MIN_LENGTH and looks_secret(name):
            found.setdefault(value, name)
    return found
