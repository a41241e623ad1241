"""``<agent dir>/mcp-auth.json``: what MCP sign-ins leave behind (tokens, registered clients).

One JSON object; each entry belongs to a server *name and URL* (``mcp__<name>|<url>``, the key
pi 1.x uses), so two names for one URL (two accounts) sign in separately while the same name and
URL in two mcp.json files share one sign-in. An entry holds what pi's entries hold, under pi's
names: ``serverUrl``, ``clientInformation`` (a client registered through dynamic registration),
``tokens``, ``tokensExpireAt`` (milliseconds) and ``discovery`` (the metadata the refresh needs).

The file holds secrets, so it is written like auth.json (pi_tui/config/auth.py): created 0600
in a 0700 folder through a 0600 temporary file renamed over it, changed under pi's
``<file>.lock`` folder after re-reading it, and never overwritten when it is not a JSON object:
the change fails with one line and the user's file stays as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_tui.mcp.naming import namespace

STORE_NAME = "mcp-auth.json"
DIR_MODE = 0o700
_DEFAULT_PORTS = {"http": 80, "https": 443}


class OAuthError(Exception):
    """Anything MCP OAuth reports to the user: the message is one line, fit to print as it is."""


class OAuthStoreError(OAuthError):
    """mcp-auth.json cannot be read or changed; the message names the file."""


def canonical_url(url: str) -> str:
    """``url`` as pi writes it in keys (a WHATWG URL's text): scheme and host in lower case, no
    default port, ``/`` for an empty path; the same server written two ways shares a key."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    if parts.username is not None:
        credentials = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{credentials}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, parts.fragment))


def store_key(name: str, url: str) -> str:
    """The entry of server ``name`` at ``url``: its namespace (``-`` read as ``_``) and its URL."""
    return f"{namespace(name)}|{canonical_url(url)}"


class OAuthStore:
    """The file, read again whenever it changed on disk (cheap enough for every request)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int] | None = None
        self._data: dict[str, Any] = {}

    # --- reading ----------------------------------------------------------------------------------

    def entry(self, key: str) -> dict[str, Any] | None:
        """The stored state of one server, or None. Raises :class:`OAuthStoreError`."""
        value = self._read_cached().get(key)
        return dict(value) if isinstance(value, dict) else None

    def _read_cached(self) -> dict[str, Any]:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            self._seen, self._data = None, {}
            return {}
        except OSError as error:
            raise OAuthStoreError(f"{self.path}: cannot read: {error.strerror or error}") from None
        seen = (status.st_mtime_ns, status.st_size)
        if seen != self._seen:
            self._data = self._read()
            self._seen = seen
        return self._data

    def _read(self) -> dict[str, Any]:
        from pi_tui.jsonio import parse_object_file

        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            why = getattr(error, "strerror", None) or error
            raise OAuthStoreError(f"{self.path}: cannot read: {why}") from None
        try:
            data = parse_object_file(text, self.path, "expected a JSON object keyed by MCP server")
        except ValueError as error:
            raise OAuthStoreError(f"{error}; fix or delete the file, then sign in again") from None
        return data or {}

    # --- changing ---------------------------------------------------------------------------------

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Replace one server's state (the other entries, whoever wrote them, stay)."""
        self._change(key, entry)

    def remove(self, key: str) -> bool:
        """Forget one server's state; False when nothing was stored for it."""
        return self._change(key, None)

    def _change(self, key: str, entry: dict[str, Any] | None) -> bool:
        from pi_tui.config.lock_folder import LockBusy, lock_folder
        from pi_tui.config.private_files import replace_private_file

        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        except OSError as error:
            raise OAuthStoreError(f"{folder}: cannot create the folder: {error.strerror or error}") from None
        try:
            with lock_folder(self.path):
                current = self._read()  # a broken file raises here, before anything is written
                if entry is None and key not in current:
                    return False
                if entry is None:
                    current.pop(key)
                else:
                    current[key] = entry
                replace_private_file(self.path, json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        except LockBusy as busy:
            raise OAuthStoreError(f"{busy}; try again") from None
        except OSError as error:
            raise OAuthStoreError(f"{self.path}: cannot write: {error.strerror or error}") from None
        self._seen = None
        return True


def refresh_lock_path(store_path: Path, key: str) -> Path:
    """The lock held while one server's tokens are refreshed, so two processes never spend the same
    (rotating) refresh token: the second finds the new tokens instead."""
    import hashlib

    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return store_path.with_name(f"mcp-auth-refresh-{digest}")
