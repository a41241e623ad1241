"""The server's sessions: which are live, and the moves that make, copy or remove one.

A session is known by its pi session id (the header's ``id``), so the id a client keeps stays
good across server restarts: any request naming a session that is not live yet opens it from
disk. Opening takes the file's writer lock, the same lock the TUI and print mode take; a file
another process holds opens read-only, and says so.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.agent.session_ops import delete_session_file, message_text, user_message_entry
from pi_tui.messages import UserMessage
from pi_tui.server.live import LiveSession
from pi_tui.session import SessionError, SessionManager
from pi_tui.session.errors import SessionLockedError
from pi_tui.session.info import SessionInfo
from pi_tui.session.listing import SessionLookupError, list_all_sessions, path_of_session
from pi_tui.start_options import StartOptions


class HubError(Exception):
    """A request about sessions that cannot be met; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class Forked:
    live: LiveSession
    text: str | None = None
    """The forked-at prompt's text (for the editor), as rpc mode's ``fork`` answers."""


class SessionHub:
    def __init__(
        self,
        cwd: str,
        options: StartOptions | None = None,
        ring_size: int | None = None,
        ring_bytes: int | None = None,
    ) -> None:
        self.cwd = cwd
        self.ring_size = ring_size
        self.ring_bytes = ring_bytes
        self.options = options
        """Start options every session is made with (the CLI's, minus the session choice)."""
        self.sessions: dict[str, LiveSession] = {}
        self._opening = asyncio.Lock()

    # --- finding ----------------------------------------------------------------------------

    async def get(self, session_id: str) -> LiveSession:
        """The live session, opening it from disk when it is not live yet (404 when unknown)."""
        live = self.sessions.get(session_id)
        if live is not None:
            live.last_used = time.monotonic()
            return live
        path = await self.find(session_id)
        return await self.open_path(path, key=session_id if "~" in session_id else None)

    async def find(self, session_id: str) -> Path:
        """The file of the session whose id is ``session_id`` (or starts with it, if only one);
        ``<id>~<path tag>`` names one file among copies sharing an id."""
        infos = await asyncio.to_thread(list_all_sessions)
        if "~" in session_id:
            wanted, _, _ = session_id.partition("~")
            for info in infos:
                if info.id == wanted and copy_key(info.id, info.path) == session_id:
                    return info.path
            raise HubError(404, f"No session {session_id}")
        try:
            return path_of_session(infos, session_id)
        except SessionLookupError as error:
            raise HubError(400 if error.ambiguous else 404, str(error)) from None

    async def listing(self, query: str = "") -> list[dict[str, Any]]:
        """Every saved session (the resume index, all folders) and the live ones not saved yet,
        newest first; ``query`` keeps those holding each of its words (in the name, the
        messages, the folder or the id: the resume picker's rule)."""
        from pi_tui.session.index import TextSearch

        infos = await asyncio.to_thread(list_all_sessions)
        live_by_path = {
            str(live.agent.manager.session_file): live
            for live in self.sessions.values()
            if live.agent.manager.session_file is not None
        }
        rows = [_info_row(info, live_by_path.get(str(info.path))) for info in infos]
        counts: dict[str, int] = {}
        for info in infos:
            counts[info.id] = counts.get(info.id, 0) + 1
        for row, info in zip(rows, infos, strict=True):
            live = live_by_path.get(str(info.path))
            if live is not None:
                row["id"] = live.id
            elif counts[info.id] > 1:  # copies of one session: each row names its own file
                row["id"] = copy_key(info.id, info.path)
        texts = [info.all_messages_text.lower() for info in infos]
        seen = {row["id"] for row in rows}
        for live in self.sessions.values():
            if live.id not in seen:
                rows.append(_live_row(live))
                texts.append(" ".join(message_text(m) for m in live.agent.messages).lower())
        if query.strip():
            items = [
                (
                    str(row.get("name") or "").lower(),
                    str(row["firstMessage"]).lower(),
                    text,
                    row["cwd"].lower(),
                    row["id"],
                )
                for row, text in zip(rows, texts, strict=True)
            ]
            rows = [rows[i] for i in TextSearch(items).find(query)]
        rows.sort(key=lambda row: row["modified"] or "", reverse=True)
        return rows

    # --- opening ----------------------------------------------------------------------------

    async def create(self, cwd: str | None = None) -> LiveSession:
        folder = Path(cwd).expanduser() if cwd else Path(self.cwd)
        if not folder.is_dir():
            raise HubError(400, f"No such folder: {folder}")
        folder = folder.resolve()
        from pi_tui.config.session_dir import chosen_session_dir

        flag = self.options.session_dir if self.options is not None else None
        session_dir = chosen_session_dir(str(folder), flag)  # also PI_CODING_AGENT_SESSION_DIR, sessionDir
        try:
            manager = SessionManager.create(str(folder), session_dir)
            manager.check_writable()
        except SessionError as error:
            raise HubError(400, str(error)) from None
        return await self._launch(manager, None)

    async def open_path(self, path: str | Path, key: str | None = None) -> LiveSession:
        """The session of the file ``path``, live (opened now unless it was); ``key`` is the
        ``<id>~<tag>`` it was asked for by, kept as its key."""
        file_path = Path(path).expanduser()
        if not file_path.is_file():
            raise HubError(404, f"Session file not found: {path}")
        file_path = file_path.resolve()
        async with self._opening:
            for live in self.sessions.values():
                if live.agent.manager.session_file == file_path:
                    return live
            reason = None
            try:
                manager = SessionManager.open(file_path)
            except SessionLockedError as error:
                holder = f"pi-tui process {error.pid}" if error.pid else "another pi-tui process"
                reason = f"{holder} is writing it; open it there, or fork it here"
                try:
                    manager = SessionManager.open(file_path, read_only=True)
                except (SessionError, OSError) as again:
                    raise HubError(400, f"Cannot read session {path}: {again}") from None
            except SessionError as error:
                raise HubError(400, str(error)) from None
            except OSError as error:
                raise HubError(400, f"Cannot open session {path}: {error.strerror or error}") from None
            return await self._launch_locked(manager, reason, key)

    async def _launch(self, manager: SessionManager, reason: str | None) -> LiveSession:
        async with self._opening:
            return await self._launch_locked(manager, reason)

    async def _launch_locked(
        self, manager: SessionManager, reason: str | None, key: str | None = None
    ) -> LiveSession:
        from pi_tui.startup import StartupError, start

        cwd = manager.cwd if os.path.isdir(manager.cwd) else self.cwd
        options = _options_for(self.options, cwd)
        try:
            started = start(options, manager=manager)
        except StartupError as error:
            manager.close()
            raise HubError(400, str(error)) from None
        live = LiveSession(
            started, read_only_reason=reason, ring_size=self.ring_size, ring_bytes=self.ring_bytes
        )
        live.id = key if key is not None and key not in self.sessions else self._key_for(live)
        await live.start()
        self.sessions[live.id] = live
        return live

    def _key_for(self, live: LiveSession) -> str:
        """The key a live session is known by: its session id, unless a live session from
        another file already has that id (a copy of a session file), which gets
        ``<id>~<path tag>`` instead. The copy is then its own session: neither hides the other,
        nor opens the other read-only against our own lock."""
        if live.id not in self.sessions:
            return live.id
        path = live.agent.manager.session_file
        return copy_key(live.id, path) if path is not None else f"{live.id}~{id(live):x}"

    # --- copies -----------------------------------------------------------------------------

    async def fork(self, live: LiveSession, entry_id: Any) -> Forked:
        """A new session holding the branch up to (not including) the user message
        ``entry_id``, as pi's fork: the prompt's text comes back for the editor."""
        manager = live.agent.manager
        entry = user_message_entry(manager, entry_id)
        if entry is None:
            raise HubError(400, f'fork needs the "entryId" of a user message; {entry_id!r} is not one')
        try:
            copy = SessionManager.copy_branch(manager, entry.parent_id)
        except SessionError as error:
            raise HubError(500, str(error)) from None
        return Forked(await self._launch(copy, None), message_text(entry.message))

    async def clone(self, live: LiveSession) -> Forked:
        """A new session holding the current branch whole (the leaf included)."""
        manager = live.agent.manager
        try:
            copy = SessionManager.copy_branch(manager, manager.get_leaf_id())
        except SessionError as error:
            raise HubError(500, str(error)) from None
        return Forked(await self._launch(copy, None))

    # --- closing ----------------------------------------------------------------------------

    async def delete(self, session_id: str) -> Path | None:
        """Remove the session's file (and close it if live). Refused while it runs or while
        another process writes it."""
        live = self.sessions.get(session_id)
        if live is not None:
            if live.read_only_reason is not None:
                raise HubError(409, f"Cannot delete: {live.read_only_reason}")
            if live.busy:
                raise HubError(409, "Cannot delete a session while it runs; abort it first")
            path = live.agent.manager.session_file
            await self.close(session_id)
        else:
            path = await self.find(session_id)
        if path is not None:
            try:
                delete_session_file(path, missing_ok=True)  # refused while another process writes it
            except SessionLockedError as error:
                raise HubError(409, f"Cannot delete: {error}") from None
            except (SessionError, OSError) as error:
                raise HubError(500, f"Cannot delete {error}") from None
        return path

    async def close(self, session_id: str) -> None:
        """Close one session. Opening waits meanwhile, so a request for it right now opens the
        file again once it is released, never read-only against our own closing lock."""
        async with self._opening:
            live = self.sessions.pop(session_id, None)
            if live is not None:
                await live.close()

    async def close_idle(self, idle_after: float) -> list[str]:
        """Close the sessions nobody has used for ``idle_after`` seconds (nothing running, no
        client following), so their files are free for the TUI again. Their ids stay good: the
        next request opens them from disk. Returns the ids closed."""
        now = time.monotonic()
        idle = [key for key, live in self.sessions.items() if (live.idle_seconds(now) or 0.0) >= idle_after]
        for key in idle:
            await self.close(key)
        return idle

    async def close_idle_forever(self, idle_after: float) -> None:
        while True:
            await asyncio.sleep(max(0.1, min(30.0, idle_after / 4)))
            await self.close_idle(idle_after)

    async def close_all(self) -> None:
        """The server stops: every session at once (their aborts wait in parallel)."""
        closing = [self.sessions.pop(key) for key in list(self.sessions)]
        await asyncio.gather(*(live.close() for live in closing), return_exceptions=True)


def copy_key(session_id: str, path: str | Path) -> str:
    """The key of one of several files holding the same session id: the id and a tag of the
    file's resolved path (stable across restarts, so a client's key stays good)."""
    import hashlib

    tag = hashlib.sha256(str(Path(path).resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{session_id}~{tag}"


def _options_for(base: StartOptions | None, cwd: str) -> StartOptions:
    if base is None:
        return StartOptions(cwd=cwd)
    import dataclasses

    return dataclasses.replace(
        base, cwd=cwd, session=None, fork=None, continue_recent=False, no_session=False, interactive=False
    )


def _info_row(info: SessionInfo, live: LiveSession | None) -> dict[str, Any]:
    return {
        "id": info.id,
        "path": str(info.path),
        "cwd": info.cwd,
        "name": info.name,
        "parentSession": info.parent_session,
        "created": info.created.isoformat(),
        "modified": info.modified.isoformat(),
        "messageCount": info.message_count,
        "firstMessage": info.first_message,
        "agent": info.agent,
        "live": live is not None,
        "runtime": live.runtime if live is not None else None,
        "readOnly": live is not None and live.read_only_reason is not None,
    }


def _live_row(live: LiveSession) -> dict[str, Any]:
    """A live session with nothing on disk yet (no reply so far)."""
    from datetime import UTC, datetime

    manager = live.agent.manager
    header = manager.get_header()
    stamp = header.timestamp or datetime.now(UTC).isoformat()
    first = next(
        (message_text(m) for m in live.agent.messages if isinstance(m, UserMessage)),
        "",
    )
    return {
        "id": live.id,
        "path": str(manager.session_file) if manager.session_file else None,
        "cwd": manager.cwd,
        "name": manager.get_session_name(),
        "parentSession": header.parent_session,
        "created": stamp,
        "modified": stamp,
        "messageCount": len(live.agent.messages),
        "firstMessage": first,
        "agent": None,
        "live": True,
        "runtime": live.runtime,
        "readOnly": live.read_only_reason is not None,
    }
