"""Which project folders the user trusts to run code: ``<agent dir>/trust.json``.

Extensions inside a project (``<cwd>/.agent/extensions``, or listed in the project's settings)
are code someone else may have written: cloning a repository must never be enough to run it.
The interactive mode asks once per folder (trust / not now / never); the answer is kept here, so
"never" is never asked again and "trusted" loads without a question. "Not now" is not saved.

The file is one JSON object: ``{"folders": {"/abs/path": "trusted" | "never"}}``, written
0600 through a temporary file renamed over it (no half-written file, nothing readable by
others). A file that cannot be read counts as "nothing trusted": the safe answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

TRUST_FILE_NAME = "trust.json"
Decision = Literal["trusted", "never"]
DECISIONS: tuple[Decision, ...] = ("trusted", "never")


class TrustError(Exception):
    """trust.json cannot be written; the message is one line naming the file."""


def folder_key(folder: str | Path) -> str:
    """The form a folder is stored under: absolute, symlinks resolved (one project, one key)."""
    return str(Path(folder).expanduser().resolve())


class TrustStore:
    """The saved trust decisions of ``<agent dir>/trust.json``."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = agent_dir / TRUST_FILE_NAME
        self.problem: str | None = None
        """Why the file could not be read (it then counts as trusting nothing)."""

    def _read(self) -> dict[str, Decision]:
        self.problem = None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as error:
            self.problem = f"{self.path}: cannot read: {error.strerror or error}"
            return {}
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError as error:
            self.problem = f"{self.path}: not valid JSON ({error}); no folder is trusted"
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        if not isinstance(folders, dict):
            return {}
        return {str(key): value for key, value in folders.items() if value in DECISIONS}

    def decision(self, folder: str | Path) -> Decision | None:
        """What the user said about ``folder`` (None: never asked, or "not now")."""
        return self._read().get(folder_key(folder))

    def is_trusted(self, folder: str | Path) -> bool:
        return self.decision(folder) == "trusted"

    def decide(self, folder: str | Path, decision: Decision | None) -> None:
        """Save ``decision`` for ``folder`` (None forgets it). Raises :class:`TrustError`."""
        folders = self._read()
        key = folder_key(folder)
        if decision is None:
            folders.pop(key, None)
        else:
            folders[key] = decision
        self._write(json.dumps({"folders": folders}, indent=2, ensure_ascii=False) + "\n")

    def _write(self, text: str) -> None:
        from pi_tui.config.private_files import DIR_MODE, replace_private_file

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
            replace_private_file(self.path, text)
        except OSError as error:
            raise TrustError(f"{self.path}: cannot write: {error.strerror or error}") from None
