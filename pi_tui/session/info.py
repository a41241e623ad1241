"""What the session picker knows of one session file, and reading one file whole for it.

:class:`SessionInfo` is one row of a session list; :func:`session_info` reads a file whole, and
the session index (:mod:`pi_tui.session.index`) must give the same answers through
:func:`counted_message` and :func:`session_name`, the rules both use. Lists of sessions
(:mod:`pi_tui.session.listing`) build on the index, which builds on this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_tui.session.errors import SessionFileError
from pi_tui.session.ids import parse_iso
from pi_tui.session.reader import read_session_file


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
    created = parse_iso(str(header.get("timestamp", ""))) or datetime.fromtimestamp(file_mtime(path), UTC)
    return SessionInfo(
        path=path,
        id=str(header.get("id", "")),
        cwd=str(header.get("cwd", "")),
        name=name or loaded.title or None,
        parent_session=header.get("parentSession"),
        created=created,
        modified=last_time or datetime.fromtimestamp(file_mtime(path), UTC),
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


def file_mtime(path: Path) -> float:
    """The file's modification time (0 when it cannot be read: it sorts last)."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def recency_key(path: Path) -> tuple[float, str]:
    """How recent a session file is, the one order ``-c``, ``--list-sessions`` and an id several
    files share all follow: the file's modification time (pi's ``-c`` rule; an imported copy is
    new even though its messages are old), then the path, so files written in the same instant
    still rank the same way everywhere."""
    return file_mtime(path), str(path)
