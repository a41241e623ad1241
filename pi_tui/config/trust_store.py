"""Which project folders the user trusts: ``<agent dir>/trust.json``, shared with pi.

What a project's ``.agent`` folder holds (settings, extensions, skills, prompts, SYSTEM.md) is
someone else's say: cloning a repository must never be enough to load it
(:mod:`pi_tui.config.project_trust` decides). The interactive mode asks once per folder
(trust / not now / never); the answer is kept here, so "never" is never asked again and
"trusted" loads without a question. "Not now" is not saved.

The file is pi's (1.x): one JSON object mapping an absolute folder to ``true`` (trusted),
``false`` (never) or ``null`` (no decision; pi leaves these behind when it moves a decision to a
parent). pi refuses to start when any value is something else, so nothing else is ever written
here. A decision covers the folder and everything below it; the nearest folder with ``true`` or
``false``, walking up from the project, decides, and ``null`` entries are passed over.

pi-tui's first format, ``{"folders": {"/abs/path": "trusted" | "never"}}``, is still read, and
the next change rewrites the whole file in pi's format. Writes take pi's ``trust.json.lock``
folder, re-read the file, and replace it through a 0600 temporary file (no half-written file,
nothing readable by others), keys sorted as pi writes them. A file that cannot be read counts as
"nothing trusted" (the safe answer) and is never overwritten: the user's file stays as it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_tui import jsonio

TRUST_FILE_NAME = "trust.json"
Decision = Literal["trusted", "never"]
DECISIONS: tuple[Decision, ...] = ("trusted", "never")
_OLD_SECTION = "folders"
"""The one key of pi-tui's first format (absolute folders can never be named this)."""


class TrustError(Exception):
    """trust.json cannot be written; the message is one line naming the file."""


class _Unreadable(Exception):
    """The file exists but is not something we may rewrite (message: why)."""


def folder_key(folder: str | Path) -> str:
    """The form a folder is stored under: absolute, symlinks resolved (one project, one key),
    as pi canonicalises it."""
    return str(Path(folder).expanduser().resolve())


@dataclass(frozen=True)
class TrustEntry:
    """The saved decision that applies to a folder, and the folder it was saved for (the
    project itself or one of its parents)."""

    folder: str
    decision: Decision


def _parse(text: str, path: Path) -> dict[str, bool | None]:
    """The entries of the file's ``text`` in pi's shape, old-format entries converted. Values
    neither format knows are left out (a file pi would refuse still trusts nothing extra)."""
    if not text.strip():
        return {}
    try:
        data = jsonio.loads(text.removeprefix("\ufeff"))
    except ValueError as error:
        raise _Unreadable(f"{path}: not valid JSON ({error}); no folder is trusted") from None
    if not isinstance(data, dict):
        raise _Unreadable(f"{path}: expected a JSON object; no folder is trusted")
    entries: dict[str, bool | None] = {}
    old = data.get(_OLD_SECTION)
    if isinstance(old, dict):
        for key, value in old.items():
            if value in DECISIONS:
                entries[str(key)] = value == "trusted"
    for key, value in data.items():
        if key != _OLD_SECTION and (value is None or isinstance(value, bool)):
            entries[key] = value  # pi's own entry wins over an old one for the same folder
    return entries


class TrustStore:
    """The saved trust decisions of ``<agent dir>/trust.json``."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = agent_dir / TRUST_FILE_NAME
        self.problem: str | None = None
        """Why the file could not be read (it then counts as trusting nothing)."""

    def _load(self) -> dict[str, bool | None]:
        """The entries; raises :class:`_Unreadable` for a file that must not be rewritten."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            raise _Unreadable(f"{self.path}: cannot read: {reason}") from None
        return _parse(text, self.path)

    def _read(self) -> dict[str, bool | None]:
        self.problem = None
        try:
            return self._load()
        except _Unreadable as error:
            self.problem = str(error)
            return {}

    def entry(self, folder: str | Path) -> TrustEntry | None:
        """The decision covering ``folder``: its own, else its nearest parent's (None: none)."""
        entries = self._read()
        current = Path(folder_key(folder))
        while True:
            value = entries.get(str(current))
            if isinstance(value, bool):
                return TrustEntry(str(current), "trusted" if value else "never")
            if current.parent == current:
                return None
            current = current.parent

    def decision(self, folder: str | Path) -> Decision | None:
        """What the user said about ``folder`` or a folder above it (None: never asked, or
        "not now")."""
        found = self.entry(folder)
        return found.decision if found is not None else None

    def is_trusted(self, folder: str | Path) -> bool:
        return self.decision(folder) == "trusted"

    def decide(self, folder: str | Path, decision: Decision | None) -> None:
        """Save ``decision`` for ``folder`` itself (None forgets its own entry; a parent's
        decision then applies again). Raises :class:`TrustError`."""
        from pi_tui.config.lock_folder import LockBusy, lock_folder
        from pi_tui.config.private_files import DIR_MODE

        key = folder_key(folder)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
            with lock_folder(self.path):
                try:
                    entries = self._load()
                except _Unreadable as error:
                    raise TrustError(f"{error}; not changed") from None
                entries.pop(key, None)
                if decision is not None:
                    entries[key] = decision == "trusted"
                self._write(entries)
        except LockBusy as error:
            raise TrustError(f"{error}; try again") from None
        except OSError as error:
            raise TrustError(f"{self.path}: cannot write: {error.strerror or error}") from None
        self.problem = None

    def _write(self, entries: dict[str, bool | None]) -> None:
        """The whole file in pi's shape: keys sorted, two-space indent, a final newline."""
        from pi_tui.config.private_files import replace_private_file

        ordered = {key: entries[key] for key in sorted(entries)}
        replace_private_file(self.path, json.dumps(ordered, indent=2, ensure_ascii=False) + "\n")
