"""Secrets found in the environment and in the project's ``.env`` files: variables whose names
say they hold one.

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
from pathlib import Path

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


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$")
_NOT_DOTENV = (".example", ".sample", ".template", ".dist", ".defaults")


def dotenv_files(folder: Path) -> list[Path]:
    """``.env`` and ``.env.*`` in the project folder (not examples or templates), sorted."""
    try:
        found = [path for path in folder.glob(".env*") if path.is_file()]
    except OSError:
        return []
    return sorted(path for path in found if not path.name.endswith(_NOT_DOTENV))


def parse_dotenv(text: str) -> dict[str, str]:
    """``KEY=value`` lines (``export`` allowed, quotes and trailing comments removed)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _DOTENV_LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        value = match.group(2)
        if value[:1] in "\"'" and len(value) >= 2 and value[-1] == value[0]:
            value = value[1:-1]
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]
        values[match.group(1)] = value
    return values


def dotenv_secrets(folder: Path) -> tuple[dict[str, str], dict[Path, float]]:
    """Secrets of the project's ``.env`` files (as :func:`environment_secrets` judges them),
    and each file's modification time, so a changed file is read again."""
    found: dict[str, str] = {}
    seen: dict[Path, float] = {}
    for path in dotenv_files(folder):
        try:
            seen[path] = path.stat().st_mtime
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for value, name in environment_secrets(parse_dotenv(text)).items():
            found.setdefault(value, f"{path.name} {name}")
    return found, seen
