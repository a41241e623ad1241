"""``<agent dir>/auth.json``: API keys saved by ``/login``, in the file pi itself reads.

The file is one JSON object keyed by provider id. An API key is stored as
``{"anthropic": {"type": "api_key", "key": "sk-..."}}``; a subscription login (OAuth) as
``{"type": "oauth", "access": ..., "refresh": ..., "expires": <ms since the epoch>, ...}`` with
whatever else the provider needs (Codex's ``accountId``, Copilot's ``enterpriseUrl``). pi-tui
uses those tokens (pi_tui/ai/oauth/) and renews them in the file they came from, even pi's own
auth.json beneath ours: a refresh token is spent when used, so a renewed credential kept only
in our file would leave pi holding a dead one. The key value is resolved like models.json's
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeGuard

AUTH_FILE_NAME = "auth.json"
DIR_MODE = 0o700
REFRESH_LOCK_WAIT = 20.0
"""Seconds a renewal waits for another program's hold on auth.json (pi may be renewing the same
token: a refresh of its own takes up to 15 s); after that pi-tui uses what the file then holds."""

OAuthCredential = dict[str, Any]
"""``{"type": "oauth", "access": str, "refresh": str, "expires": int, ...}`` as pi stores it."""


def is_oauth_credential(value: object) -> TypeGuard[dict[str, Any]]:
    """``value`` is an OAuth credential pi would accept (pi checks exactly these fields)."""
    if not isinstance(value, dict) or value.get("type") != "oauth":
        return False
    expires = value.get("expires")
    return (
        isinstance(value.get("access"), str)
        and isinstance(value.get("refresh"), str)
        and isinstance(expires, (int, float))
        and not isinstance(expires, bool)
        and expires == expires  # not NaN
        and abs(expires) != float("inf")
    )


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

    def oauth(self, provider: str) -> OAuthCredential | None:
        """A copy of ``provider``'s OAuth credential (ours, else pi's); None without a usable one."""
        value = self._view.get(provider)
        return dict(value) if is_oauth_credential(value) else None

    def oauth_file(self, provider: str) -> Path | None:
        """The file ``provider``'s credential is in: where its renewal must be written."""
        if provider in self._data:
            return self.path
        if self.beneath is not None and provider in self._beneath_data:
            return self.beneath
        return None

    # --- changing ---------------------------------------------------------------------------------

    def set_oauth(self, provider: str, credential: OAuthCredential) -> None:
        """Save a login's credential for ``provider`` in pi's shape (``type`` first, other fields
        kept as given), replacing what was saved for it and keeping every other provider."""
        entry = {"type": "oauth", **{k: v for k, v in credential.items() if k != "type"}}
        if not is_oauth_credential(entry):
            raise AuthFileError(
                f"The {provider} login gave no usable credential (access, refresh, expires): "
                "nothing was saved."
            )
        self._change(provider, entry)

    def refresh_oauth(
        self,
        provider: str,
        needs_refresh: Callable[[OAuthCredential], bool],
        refresh: Callable[[OAuthCredential], OAuthCredential],
        wait: float = REFRESH_LOCK_WAIT,
    ) -> OAuthCredential | None:
        """Renew ``provider``'s credential once, under the file's lock, in the file it is in.

        Under pi's ``<file>.lock`` folder the file is read again: when another program renewed
        the credential meanwhile (``needs_refresh`` is now false) its token is used and nothing
        is written. Otherwise ``refresh(current)`` gives the new fields, which are laid over the
        current credential (fields the refresh does not return, such as Copilot's
        ``availableModelIds``, are kept) and written with every other provider unchanged, 0600.
        An exception from ``refresh`` leaves the file untouched and propagates. None when the
        credential is gone (logged out meanwhile).
        """
        target = self.oauth_file(provider)
        if target is None:
            return None
        real = target.resolve()  # pi locks the resolved file, so a symlinked auth.json shares the lock
        with self._locked(real, wait):
            data = self._read(real)
            current = data.get(provider)
            if not is_oauth_credential(current):
                self._remember(target, data)
                return None
            if not needs_refresh(dict(current)):
                self._remember(target, data)
                return dict(current)
            fresh = refresh(dict(current))
            renewed = {**current, **fresh, "type": "oauth"}
            if not is_oauth_credential(renewed):
                raise AuthFileError(
                    f"The {provider} token renewal gave no usable credential: nothing was saved."
                )
            data[provider] = renewed
            try:
                from pi_tui.config.private_files import replace_private_file

                replace_private_file(real, json.dumps(data, indent=2, ensure_ascii=False))
            except OSError as error:
                raise AuthFileError(f"{target}: cannot write: {error.strerror or error}") from None
            self._remember(target, data)
            return dict(renewed)

    def _remember(self, target: Path, data: dict[str, Any]) -> None:
        """Take ``data``, just read from ``target`` under its lock, as what that file holds."""
        if target == self.path:
            self._data = data
        else:
            self._beneath_data = data
        self._refresh_view()

    def set_api_key(self, provider: str, key: str, env: dict[str, str] | None = None) -> None:
        """Save ``key`` for ``provider`` (replacing what was saved for it, keeping the rest);
        ``env``: what its base URL needs (Cloudflare's account id), saved in pi's ``env``."""
        if not key:
            raise AuthFileError("The API key is empty: nothing was saved.")
        credential: dict[str, Any] = {"type": "api_key", "key": key}
        if env:
            credential["env"] = dict(env)
        self._change(provider, credential)

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
    def _locked(self, path: Path | None = None, wait: float | None = None) -> Iterator[None]:
        """Hold pi's ``<file>.lock`` folder while changing the file (see :mod:`lock_folder`)."""
        from pi_tui.config.lock_folder import WAIT_SECONDS, LockBusy, lock_folder

        path = path or self.path
        held = lock_folder(path, WAIT_SECONDS if wait is None else wait)
        try:
            held.__enter__()
        except LockBusy as busy:
            raise AuthFileError(f"{busy}; try again") from None
        except OSError as error:
            raise AuthFileError(f"{path}: cannot lock: {error.strerror or error}") from None
        try:
            yield
        finally:
            held.__exit__(None, None, None)
