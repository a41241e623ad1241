"""``<agent dir>/auth.json``: API keys saved by ``/login``, in the file pi itself reads.

The file is one JSON object keyed by provider id. An API key is stored as
``{"anthropic": {"type": "api_key", "key": "sk-..."}}``; pi also keeps OAuth credentials there
(``"type": "oauth"`` with tokens and an expiry), which pi-tui cannot refresh and so never uses,
but always keeps when it rewrites the file. The key value is resolved like models.json's
``apiKey`` (``!command``, ``$VAR`` / ``${VAR}``, else literal; pi_tui/ai/models.py), as pi 1.x
does. pi 1.x's ``env`` object on an API-key credential gives per-provider environment values
that win over the process environment for that provider (its key, headers and endpoint
variables such as ``AZURE_OPENAI_BASE_URL``).

Writes are made for a file holding secrets that another program (pi) shares:

- the file is created with mode 0600 and its folder with 0700, and rewritten through a 0600
  temporary file renamed over it, so no moment exists where the key is readable by others or
  the file is half written;
- every change re-reads the file first and changes only its own provider, so entries pi (or
  another pi-tui) added meanwhile survive; a ``<file>.lock`` folder, the lock convention pi's
  file locking uses, keeps two writers from interleaving;
- a file that is not a JSON object is never overwritten: the change fails with one line saying
  what is wrong, and the user's file stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

AUTH_FILE_NAME = "auth.json"
DIR_MODE = 0o700


class AuthFileError(Exception):
    """auth.json cannot be read or changed; the message is one line naming the file."""


def auth_file(agent_dir: Path) -> Path:
    """Where pi (and pi-tui) keep saved credentials."""
    return agent_dir / AUTH_FILE_NAME


def parse_auth(text: str, path: Path) -> dict[str, Any]:
    """The credentials in ``text``; an empty file has none. Raises :class:`AuthFileError`."""
    from pi_tui.jsonio import parse_object_file

    try:
        return parse_object_file(text, path, "expected a JSON object keyed by provider") or {}
    except ValueError as error:
        raise AuthFileError(str(error)) from None


class AuthStore:
    """The saved credentials, read once and re-read before every change.

    Reading never raises: a broken file leaves the store empty with :attr:`problem` set, so a
    typo in auth.json cannot stop pi-tui from starting with keys from the environment.

    ``beneath`` is pi's auth.json (pi_tui/config/pi_folder.py): its credentials are read for the
    providers ours does not name, and never written; every change goes to ``path``.
    """

    def __init__(self, path: Path, beneath: Path | None = None) -> None:
        self.path = path
        self.beneath = beneath
        self._data: dict[str, Any] = {}
        self._beneath_data: dict[str, Any] = {}
        self._view: dict[str, Any] = {}
        """Ours over pi's, provider by provider: what the reading methods answer from."""
        self.problem: str | None = None
        self.reload()

    def reload(self) -> None:
        """Read the file again (``/reload``, or after another program changed it)."""
        try:
            self._data = self._read()
            self.problem = None
        except AuthFileError as error:
            self._data = {}
            self.problem = str(error)
        try:
            self._beneath_data = self._read(self.beneath) if self.beneath is not None else {}
        except AuthFileError:
            self._beneath_data = {}  # pi's file is pi's to report
        self._refresh_view()

    def _refresh_view(self) -> None:
        self._view = {**self._beneath_data, **self._data}

    def _read(self, path: Path | None = None) -> dict[str, Any]:
        path = path or self.path
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            why = getattr(error, "strerror", None) or error
            raise AuthFileError(f"{path}: cannot read: {why}") from None
        return parse_auth(text, path)

    # --- reading ----------------------------------------------------------------------------------

    def providers(self) -> list[str]:
        """Providers with a saved credential of any kind, in file order (pi's first)."""
        return [name for name, value in self._view.items() if isinstance(value, dict)]

    def saved_by_pi(self, provider: str) -> bool:
        """The credential comes from pi's auth.json (ours has none for ``provider``)."""
        return provider not in self._data and provider in self._beneath_data

    def kind(self, provider: str) -> str | None:
        """``"api_key"``, ``"oauth"`` (or another type pi may add), or None when nothing is saved."""
        value = self._view.get(provider)
        if not isinstance(value, dict):
            return None
        kind = value.get("type")
        return kind if isinstance(kind, str) else None

    def api_key(self, provider: str) -> str | None:
        """The stored ``key`` of an API-key credential, as written (not yet resolved)."""
        value = self._view.get(provider)
        if isinstance(value, dict) and value.get("type") == "api_key":
            key = value.get("key")
            if isinstance(key, str) and key:
                return key
        return None

    def env(self, provider: str) -> dict[str, str]:
        """The credential's ``env`` object (pi 1.x): its string values; empty when there is none."""
        value = self._view.get(provider)
        if not isinstance(value, dict) or value.get("type") != "api_key":
            return {}
        env = value.get("env")
        if not isinstance(env, dict):
            return {}
        return {
            name: entry for name, entry in env.items() if isinstance(name, str) and isinstance(entry, str)
        }

    # --- changing ---------------------------------------------------------------------------------

    def set_api_key(self, provider: str, key: str) -> None:
        """Save ``key`` for ``provider`` (replacing what was saved for it, keeping the rest)."""
        if not key:
            raise AuthFileError("The API key is empty: nothing was saved.")
        self._change(provider, {"type": "api_key", "key": key})

    def remove(self, provider: str) -> bool:
        """Forget ``provider``'s credential; False when none was saved."""
        return self._change(provider, None)

    def _change(self, provider: str, credential: dict[str, Any] | None) -> bool:
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        except OSError as error:
            raise AuthFileError(f"{folder}: cannot create the folder: {error.strerror or error}") from None
        with self._locked():
            current = self._read()  # a broken file raises here, before anything is written
            if credential is None and provider not in current:
                self._data = current
                self._refresh_view()
                return False
            if credential is None:
                current.pop(provider)
            else:
                before = current.get(provider)
                if isinstance(before, dict) and before.get("type") == "api_key" and "env" in before:
                    credential = {**credential, "env": before["env"]}  # a new key keeps pi 1.x's env
                current[provider] = credential
            self._write(json.dumps(current, indent=2, ensure_ascii=False))
            self._data = current
            self._refresh_view()
            self.problem = None
            return True

    def _write(self, text: str) -> None:
        """Replace the file in one step with a 0600 file holding ``text``."""
        from pi_tui.config.private_files import replace_private_file

        try:
            replace_private_file(self.path, text)
        except OSError as error:
            raise AuthFileError(f"{self.path}: cannot write: {error.strerror or error}") from None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold pi's ``<file>.lock`` folder while changing the file (see :mod:`lock_folder`)."""
        from pi_tui.config.lock_folder import LockBusy, lock_folder

        held = lock_folder(self.path)
        try:
            held.__enter__()
        except LockBusy as busy:
            raise AuthFileError(f"{busy}; try again") from None
        except OSError as error:
            raise AuthFileError(f"{self.path}: cannot lock: {error.strerror or error}") from None
        try:
            yield
        finally:
            held.__exit__(None, None, None)
