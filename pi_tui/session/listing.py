"""Finding sessions on disk: the data behind ``-c``, ``-r`` and ``/resume``.

Listing reads files without locking or migrating them, and skips anything that is not a session
file (a broken header, a ``.bak``, a lock file) instead of failing. Lists of sessions come from the
session index (:mod:`pi_tui.session.index`), which reads only files that changed since the last
listing; :func:`session_info` reads one file whole and is what the index must agree with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.config.paths import encode_cwd
from pi_tui.config.pi_folder import same_folder, session_roots, twin_session_folder
from pi_tui.session.errors import SessionFileError
from pi_tui.session.ids import parse_iso
from pi_tui.session.reader import header_of, read_session_file

if TYPE_CHECKING:
    from pi_tui.session.index import Progress


@dataclass(slots=True)
class SessionInfo:
    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session: str | None
    created: datetime
    modified: datetime
    """Time of the last message (file mtime when there is none)."""
    message_count: int
    first_message: str
    """Text of the first user message ("" when there is none)."""
    all_messages_text: str
    """User and assistant text joined, for search in the session picker. From the index it is
    lower-cased, whitespace-collapsed and bounded (see :data:`pi_tui.session.index.HEAD_CHARS`)."""
    agent: str | None = None
    """Another agent's transcript (``claude``, ``codex``, ``gemini``) rather than a pi session."""


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
    for candidate in sorted(candidates, key=_mtime, reverse=True):
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
    from pi_tui.session.index import indexed_sessions  # the index builds on this module

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


def session_info(path: Path) -> SessionInfo | None:
    """Summary of one session file, or None if it is not a readable session."""
    try:
        loaded = read_session_file(path)
    except SessionFileError:
        return None
    header = loaded.header
    name: str | None = None
    first_message = ""
    count = 0
    last_time: datetime | None = None
    texts: list[str] = []
    for raw in loaded.entries:
        kind = raw.get("type")
        if kind == "session_info":
            name = session_name(raw)
        elif kind == "message" and (counted := counted_message(raw)) is not None:
            role, text, moment = counted
            count += 1
            if text:
                texts.append(text)
            if role == "user" and not first_message:
                first_message = text
            if moment is not None:
                last_time = moment
    created = parse_iso(str(header.get("timestamp", ""))) or datetime.fromtimestamp(_mtime(path), UTC)
    return SessionInfo(
        path=path,
        id=str(header.get("id", "")),
        cwd=str(header.get("cwd", "")),
        name=name or loaded.title or None,
        parent_session=header.get("parentSession"),
        created=created,
        modified=last_time or datetime.fromtimestamp(_mtime(path), UTC),
        message_count=count,
        first_message=first_message,
        all_messages_text=" ".join(texts),
    )


def session_name(raw: dict[str, Any]) -> str | None:
    """The name a ``session_info`` entry sets (None: it clears the name)."""
    value = raw.get("name")
    return value.strip() if isinstance(value, str) and value.strip() else None


def counted_message(raw: dict[str, Any]) -> tuple[str, str, datetime | None] | None:
    """``(role, text, time)`` of a ``message`` entry the listing counts (user and assistant
    messages), else None. The one rule shared by :func:`session_info` and the sessions index."""
    message = raw.get("message")
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    if role not in ("user", "assistant"):
        return None
    moment = message_time(message.get("timestamp")) or parse_iso(str(raw.get("timestamp", "")))
    return role, text_of(message.get("content")), moment


def message_time(stamp: Any) -> datetime | None:
    """A message's ``timestamp`` (ms since the epoch), or None when it is not a usable one."""
    if not isinstance(stamp, int | float) or isinstance(stamp, bool):
        return None
    try:
        return datetime.fromtimestamp(stamp / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (block.get("text", "") for block in content if isinstance(block, dict))
        return " ".join(text for text in texts if isinstance(text, str) and text)
    return ""


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _valid_header(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            header = header_of(handle.readline() + handle.readline(), str(path))
    except (OSError, SessionFileError):
        return None
    return header if isinstance(header.get("id"), str) else None
