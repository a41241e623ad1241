"""Finding sessions in a list: the rows a session picker shows, the search queries it takes
(words, ``"exact phrases"``, ``re:`` patterns) and its threaded and sorted orders.

Nothing here draws: the resume picker (:mod:`pi_tui.tui.screens.resume`) shows these rows, and
any other front end listing sessions can search and order them the same way. Searching runs over
the session index's texts in memory (:class:`~pi_tui.session.index.TextSearch`), never the files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pi_tui.session.index import TextSearch
from pi_tui.session.info import SessionInfo
from pi_tui.session.listing import list_all_sessions, list_sessions

SORTS = ("threaded", "recent", "name")
"""Ctrl+S cycles them. ``threaded`` (pi's default) nests forks under the session they were
made from; a search always lists flat."""
REGEX_PREFIX = "re:"
REGEX_TIMEOUT = 0.5
"""Seconds one regex search may take over the whole list (a pathological pattern stops there)."""
TITLE_LIMIT = 200
"""Characters of the first message kept for a row's title (the row cuts it to its width)."""


def format_age(moment: datetime, now: datetime) -> str:
    """How long ago, in pi's short style: ``now``, ``5m``, ``3h``, ``2d``, ``3w``, ``4mo``, ``2y``."""
    seconds = (now - moment).total_seconds()
    minutes = int(seconds // 60)
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 24:
        return f"{hours}h"
    days = hours // 24
    if days < 7:
        return f"{days}d"
    if days < 30:
        return f"{days // 7}w"
    if days < 365:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def session_title(info: SessionInfo) -> str:
    """The name, else the first message on one line, else a placeholder: what the row shows."""
    if info.name:
        return info.name
    text = " ".join(info.first_message[: TITLE_LIMIT * 2].split())
    if not text:
        return "(no messages)"
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1] + "…"


LABEL_CHARS = 2_000
"""Characters of the first message searched beside the index text (which starts with it too)."""


@dataclass(slots=True)
class SessionRow:
    """One listed session; its name and first message lower-cased once (search runs on every key).

    The message text is the index's, already lower-cased; it is not copied here, so the picker
    holds each session's text once.
    """

    info: SessionInfo
    label: str

    @classmethod
    def of(cls, info: SessionInfo) -> SessionRow:
        return cls(info, f"{info.name or ''}\n{info.first_message[:LABEL_CHARS]}".lower())

    @property
    def title(self) -> str:
        return session_title(self.info)

    @property
    def parts(self) -> tuple[str, str]:
        """What search looks in: the label and the session's message text."""
        return (self.label, self.info.all_messages_text)


class RowSearch:
    """The rows matching a query, in the order given (see :class:`TextSearch` for the speed)."""

    def __init__(self, rows: list[SessionRow]) -> None:
        self.rows = rows
        self.search = TextSearch([row.parts for row in rows])

    def find(self, query: str) -> list[SessionRow]:
        rows = self.rows
        return [rows[position] for position in self.search.find(query)]


RowsProgress = Callable[[list[SessionRow], int, int], None]
"""The rows known so far (newest first), files read, files to read: while the index is built."""


def read_sessions(
    scope: str,
    folder: Path,
    root: Path | None = None,
    progress: RowsProgress | None = None,
    cwd: str | None = None,
) -> list[SessionRow]:
    """The sessions of ``folder`` (scope ``current``; with the same project's folder in pi's
    agent folder, and only ``cwd``'s sessions of a shared ``--session-dir``) or of every folder
    of pi-tui's and pi's (``all``), newest first.

    A custom ``--session-dir`` folder is not under the sessions root, so "all" adds it. While the
    index reads many files (the first time), ``progress`` gets the rows known so far now and then.
    """

    def rows_of(infos: list[SessionInfo]) -> list[SessionRow]:
        return [SessionRow.of(info) for info in sorted(infos, key=lambda info: info.modified, reverse=True)]

    def report(infos: list[SessionInfo], done: int, total: int) -> None:
        if progress is not None:
            progress(rows_of(infos), done, total)

    if scope == "current":
        infos = list_sessions(folder, report, cwd)
        if cwd is not None:  # this folder's sessions of other agents, in a section after ours
            from pi_tui.transcripts.listing import transcript_infos

            return rows_of(infos) + [SessionRow.of(info) for info in transcript_infos(cwd)]
    else:
        infos = list_all_sessions(root, report)
        known = {info.path.resolve() for info in infos}
        infos += [info for info in list_sessions(folder) if info.path.resolve() not in known]
    return rows_of(infos)


@dataclass(slots=True)
class Query:
    """A search as pi reads it: ``re:<pattern>`` is a regex; ``"exact phrase"`` must appear as
    written (spaces collapsed); every other word must appear somewhere, in any order."""

    words: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    regex: object | None = None
    error: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.words or self.phrases or self.regex is not None or self.error)


def parse_query(text: str) -> Query:
    import regex as re

    stripped = text.strip()
    if stripped.startswith(REGEX_PREFIX):
        pattern = stripped[len(REGEX_PREFIX) :].strip()
        if not pattern:
            return Query(error="Empty regex after re:")
        try:
            return Query(regex=re.compile(pattern, re.IGNORECASE))
        except re.error as error:
            return Query(error=f"Bad regex: {error}")
    words: list[str] = []
    phrases: list[str] = []
    for position, part in enumerate(stripped.split('"')):
        if position % 2:  # inside quotes (an unclosed quote runs to the end)
            phrase = " ".join(part.lower().split())
            if phrase:
                phrases.append(phrase)
        else:
            words.extend(part.lower().split())
    return Query(tuple(words), tuple(phrases))


def match_rows(rows: list[SessionRow], search: RowSearch, query: Query) -> list[SessionRow]:
    """The rows ``query`` finds, in their order. Words go through the index search (fast, narrowing
    as one types); phrases are then checked whole; a regex scans every row once."""
    if query.error:
        return []
    if query.regex is not None:
        import regex as re

        found = []
        pattern = query.regex
        for row in rows:
            try:
                parts = row.parts
                if any(pattern.search(part, timeout=REGEX_TIMEOUT, concurrent=True) for part in parts):  # type: ignore[attr-defined]
                    found.append(row)
            except TimeoutError:
                continue
            except re.error:
                continue
        return found
    words = " ".join((*query.words, *query.phrases))
    candidates = search.find(words)
    if not query.phrases:
        return candidates
    return [row for row in candidates if all(any(p in part for part in row.parts) for p in query.phrases)]


def thread_rows(rows: list[SessionRow]) -> list[tuple[SessionRow, str]]:
    """pi's threaded view: each fork under the session it was made from (``parentSession``),
    newest first at every level, with the tree drawn in front of the title."""
    by_path = {_canonical(row.info.path): row for row in rows}
    children: dict[str, list[SessionRow]] = {}
    roots: list[SessionRow] = []
    for row in rows:
        parent = _canonical_text(row.info.parent_session)
        if parent is not None and parent in by_path and parent != _canonical(row.info.path):
            children.setdefault(parent, []).append(row)
        else:
            roots.append(row)
    out: list[tuple[SessionRow, str]] = []
    seen: set[str] = set()

    def walk(row: SessionRow, depth: int, lines: list[bool], last: bool) -> None:
        key = _canonical(row.info.path)
        if key in seen:  # a loop of parentSession headers: each session is listed once
            return
        seen.add(key)
        prefix = (
            "".join("│  " if more else "   " for more in lines) + ("└─ " if last else "├─ ") if depth else ""
        )
        out.append((row, prefix))
        kids = sorted(children.get(key, []), key=lambda other: other.info.modified, reverse=True)
        for position, kid in enumerate(kids):
            walk(kid, depth + 1, [*lines, not last] if depth else [], position == len(kids) - 1)

    for root in sorted(roots, key=lambda row: row.info.modified, reverse=True):
        walk(root, 0, [], True)
    for row in rows:  # anything a loop kept out of the tree is still listed
        if _canonical(row.info.path) not in seen:
            out.append((row, ""))
    return [item for item in out if not item[0].info.agent] + [item for item in out if item[0].info.agent]


def _canonical(path: Path) -> str:
    return os.path.normcase(os.path.abspath(path))


def _canonical_text(path: str | None) -> str | None:
    return _canonical(Path(path)) if path else None


def sort_rows(rows: list[SessionRow], mode: str) -> list[SessionRow]:
    """``recent`` (and ``threaded`` when flat): newest first; ``name``: by the shown title,
    ignoring case, newest first on ties."""
    by_recent = sorted(rows, key=lambda row: row.info.modified, reverse=True)
    if mode == "name":
        by_recent = sorted(by_recent, key=lambda row: row.title.casefold())
    # other agents' transcripts stay a section of their own, after our sessions
    return [row for row in by_recent if not row.info.agent] + [row for row in by_recent if row.info.agent]
