"""Finding sessions on disk: the data behind ``-c``, ``-r`` and ``/resume``.

Listing reads files without locking or migrating them, and skips anything that is not a session
file (a broken header, a ``.bak``, a lock file) instead of failing. Lists of sessions come from the
session index (:mod:`pi_tui.session.index`), which reads only files that changed since the last
listing; :func:`pi_tui.session.info.session_info` reads one file whole and is what the index
must agree with. The index (sqlite3) is imported on the first listing, not at start-up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.config.paths import encode_cwd
from pi_tui.config.pi_folder import same_folder, session_roots, twin_session_folder
from pi_tui.session.errors import SessionFileError
from pi_tui.session.info import SessionInfo, recency_key
from pi_tui.session.reader import header_of

if TYPE_CHECKING:
    from pi_tui.session.index import Progress


def session_files(folder: Path) -> list[Path]:
    try:
        return [entry for entry in folder.iterdir() if entry.suffix == ".jsonl" and entry.is_file()]
    except OSError:
        return []


def project_folders(folder: Path) -> list[Path]:
    """``folder`` and, for a project's folder under pi-tui's or pi's sessions root, the same
    project's folder under the other one (pi_tui/config/pi_folder.py): one project, one list."""
    twin = twin_session_folder(folder)
    return [folder] if twin is None else [folder, twin]


def most_recent_session(folder: Path, cwd: str | None = None) -> Path | None:
    """Newest ``*.jsonl`` of the project's folders by modification time whose header is valid
    (and, in a shared folder, whose ``cwd`` is ``cwd``: see :func:`list_sessions`)."""
    wanted = _cwd_filter(folder, cwd)
    candidates = [path for each in project_folders(folder) for path in session_files(each)]
    for candidate in sorted(candidates, key=recency_key, reverse=True):
        header = _valid_header(candidate)
        if header is not None and (wanted is None or _same_cwd(header.get("cwd"), wanted)):
            return candidate
    return None


def list_sessions(
    folder: Path, progress: Progress | None = None, cwd: str | None = None
) -> list[SessionInfo]:
    """The sessions of one project folder (with its twin in pi's or our folder), newest first
    (from the index; ``progress`` as it describes).

    ``cwd`` names the project listed: a folder that is not one of its own (a ``--session-dir``
    several projects share) then lists only the sessions started there, as pi does.
    """
    from pi_tui.session.index import indexed_sessions

    infos = indexed_sessions(project_folders(folder), progress)
    wanted = _cwd_filter(folder, cwd)
    if wanted is not None:
        infos = [info for info in infos if _same_cwd(info.cwd, wanted)]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def list_all_sessions(root: Path | None = None, progress: Progress | None = None) -> list[SessionInfo]:
    """The sessions of every folder under the sessions root (``None``: pi-tui's and pi's),
    newest first (from the index)."""
    from pi_tui.session.index import indexed_sessions

    folders: list[Path] = []
    for base in [root] if root is not None else session_roots():
        try:
            folders += [entry for entry in base.iterdir() if entry.is_dir()]
        except OSError:
            continue
    if not folders:
        return []
    infos = indexed_sessions(folders, progress)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _cwd_filter(folder: Path, cwd: str | None) -> str | None:
    """The absolute ``cwd`` when ``folder`` is not that project's own folder, else None."""
    if cwd is None:
        return None
    wanted = os.path.abspath(cwd)
    name = encode_cwd(wanted)
    if folder.name == name and any(same_folder(folder, root / name) for root in session_roots()):
        return None
    return wanted


def _same_cwd(value: Any, wanted: str) -> bool:
    return isinstance(value, str) and bool(value) and os.path.abspath(value) == wanted


def _valid_header(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            header = header_of(handle.readline() + handle.readline(), str(path))
    except (OSError, SessionFileError):
        return None
    return header if isinstance(header.get("id"), str) else None


class SessionLookupError(LookupError):
    """No session has that id, or an id prefix names several (``ambiguous``)."""

    def __init__(self, message: str, *, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous


def path_of_session(infos: list[SessionInfo], session_id: str) -> Path:
    """The file of the session whose id is ``session_id``, or starts with it when only one
    does (the server and ACP clients name sessions so); :class:`SessionLookupError` otherwise."""
    exact = [info.path for info in infos if info.id == session_id]
    if exact:
        return exact[0]
    prefixed = [info.path for info in infos if session_id and info.id.startswith(session_id)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        raise SessionLookupError(
            f'Session id prefix "{session_id}" matches {len(prefixed)} sessions', ambiguous=True
        )
    raise SessionLookupError(f"No session {session_id}")
