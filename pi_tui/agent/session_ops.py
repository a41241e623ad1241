"""The moves that replace or remove a whole session, written once for every front end.

New session, switch (resume), fork, clone, import and delete used to be written separately by
the TUI's slash commands, rpc mode, extensions' ``ctx`` and the server hub, and the copies had
drifted (which folder a new session goes to, which cwd it gets, how a failed open is worded).
They live here now, below every front end, the way pi keeps them on its agent session:

- :class:`SessionOps` runs a move on one agent: it asks the extensions' ``session_before_*``
  handlers (through the front end's ``allow``), makes or opens the new session manager and hands
  it to the front end's ``adopt``, which continues in it (rpc and print modes adopt it and tell
  extensions; the TUI also redraws the chat).
- The plain functions do the file work the server and the resume picker need without an agent:
  where a new session goes, which entry a fork starts from, copying a file in for ``/import``,
  deleting a session file nobody writes.

Errors a user caused (a file that is not a session, a locked file, an unknown entry) are
:class:`SessionOpError` with one line of text; each front end words and reports it its own way.
This module imports no front end and no agent code (the agent is described by
:class:`SessionHolder`), so every front end can import it without an import circle.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pi_tui.messages import TextContent, UserMessage
from pi_tui.session import SessionError, SessionManager
from pi_tui.session.entries import MessageEntry
from pi_tui.session.store import SessionLock

FORK_POSITIONS = ("before", "at")
"""``before``: the new session ends just before the entry (a user message, whose text comes
back for the editor); ``at``: it ends with the entry (``/clone`` is a fork at the leaf)."""


class SessionOpError(Exception):
    """A session move that cannot be made; the message is one line for the user."""


class SessionHolder(Protocol):
    """What a move needs of the agent: its current session and its working folder."""

    manager: SessionManager

    @property
    def cwd(self) -> Path: ...


Allow = Callable[..., Awaitable[bool]]
"""``(event, **fields) -> bool``: False when an extension's ``session_before_*`` handler said
no (front ends without extensions answer True)."""

Adopt = Callable[[SessionManager, str, bool, "Path | None"], Awaitable[None]]
"""``(manager, reason, restore_model, previous file) -> None``: the front end continues in
``manager``. ``reason`` is what extensions are told (``new``, ``resume``, ``fork``);
``restore_model`` continues with the session's own model (a resumed session)."""


@dataclass(frozen=True, slots=True)
class Moved:
    """The outcome of a move."""

    cancelled: bool
    session_file: Path | None = None
    """The session now in use (None: in memory, or cancelled)."""
    editor_text: str | None = None
    """A fork before a user message gives that message's text back (for the editor)."""


async def _always(event: str, **fields: Any) -> bool:
    return True


class SessionOps:
    """New, switch, fork and clone for one agent, the same in every front end."""

    def __init__(self, agent: SessionHolder, adopt: Adopt, allow: Allow | None = None) -> None:
        self.agent = agent
        self.adopt = adopt
        self.allow = allow or _always

    def _moved(self, editor_text: str | None = None) -> Moved:
        return Moved(False, self.agent.manager.session_file, editor_text)

    async def new_session(self, setup: Callable[[SessionManager], Any] | None = None) -> Moved:
        """A new, empty session beside the current one; ``setup(manager)`` (sync or async) may
        add entries before the agent continues in it."""
        if not await self.allow("session_before_switch", reason="new"):
            return Moved(True)
        previous = self.agent.manager.session_file
        manager = fresh_manager(self.agent.manager, self.agent.cwd)
        if setup is not None:
            done = setup(manager)
            if inspect.isawaitable(done):
                await done
        await self.adopt(manager, "new", False, previous)
        return self._moved()

    async def switch_session(self, path: str | Path) -> Moved:
        """Continue in the session file ``path`` (``/resume``), with its own model when known."""
        target = Path(path).expanduser()
        if not await self.allow("session_before_switch", reason="resume", target_session_file=str(target)):
            return Moved(True)
        current = self.agent.manager
        previous = current.session_file
        if previous is not None and _same_file(previous, target):
            current.close()  # our own lock would refuse the file: reopening it must work
        manager = await asyncio.to_thread(open_session, target)
        await self.adopt(manager, "resume", True, previous)
        return self._moved()

    async def fork(self, entry_id: str, position: str = "before") -> Moved:
        """Continue in a new session holding the path up to ``entry_id`` (see
        :data:`FORK_POSITIONS`); one before the first entry is an empty session."""
        leaf, text = fork_point(self.agent.manager, entry_id, position)
        if not await self.allow("session_before_fork", entry_id=entry_id, position=position):
            return Moved(True)
        previous = self.agent.manager.session_file
        await self.adopt(branched_manager(self.agent.manager, leaf, self.agent.cwd), "fork", False, previous)
        return self._moved(text)

    async def clone(self) -> Moved:
        """Continue in a new session holding the current path whole (``/clone``)."""
        leaf = self.agent.manager.get_leaf_id()
        if leaf is None:
            raise SessionOpError("Nothing to clone: the session has no entries yet")
        return await self.fork(leaf, "at")

    async def import_session(self, source: Path, folder: Path) -> Moved:
        """Copy the session file ``source`` into ``folder`` (see :func:`import_destination`) and
        continue in the copy, as a resume of it."""
        if not await self.allow("session_before_switch", reason="resume", target_session_file=str(source)):
            return Moved(True)
        previous = self.agent.manager.session_file
        manager = await asyncio.to_thread(import_session_file, source, folder)
        await self.adopt(manager, "resume", True, previous)
        return self._moved()


# --- the file work ------------------------------------------------------------------------------


def message_text(message: Any) -> str:
    """The text blocks of a user/assistant message joined (images and tool calls left out)."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def fresh_manager(current: SessionManager, cwd: str | Path) -> SessionManager:
    """A new session like ``current``: in its session folder (where sessions made from it go),
    or in memory when ``current`` never touches the disk (``--no-session``)."""
    if current.session_file is None:
        return SessionManager.in_memory(str(cwd))
    return SessionManager.create(str(cwd), current.session_dir)


def branched_manager(current: SessionManager, leaf: str | None, cwd: str | Path) -> SessionManager:
    """A session holding root..``leaf`` of ``current`` (``current`` as its parent session); a
    new empty session when ``leaf`` is None (a fork before the first entry).

    A saved session is copied into a new manager and left as it was, so the front end still
    sees which file it leaves (extensions' ``session_start`` names it as the previous one) and
    a copy that cannot be written leaves the agent where it was. An in-memory session has no
    file to keep: its entries are replaced in place.
    """
    if leaf is None:
        return fresh_manager(current, cwd)
    if current.session_file is None:
        current.create_branched_session(leaf)
        return current
    try:
        return SessionManager.copy_branch(current, leaf)
    except SessionError as error:
        raise SessionOpError(str(error)) from None


def user_message_entry(manager: SessionManager, entry_id: Any) -> MessageEntry | None:
    """The entry ``entry_id`` when it is a user message (what rpc and the server fork at)."""
    entry = manager.get_entry(entry_id) if isinstance(entry_id, str) and entry_id else None
    if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
        return entry
    return None


def fork_point(manager: SessionManager, entry_id: str, position: str) -> tuple[str | None, str | None]:
    """Where a fork at ``entry_id`` ends (the new leaf; None: an empty session) and the text it
    gives back for the editor (a fork before a message: that message's text)."""
    if position not in FORK_POSITIONS:
        raise SessionOpError('position is "before" or "at"')
    entry = manager.get_entry(entry_id)
    if entry is None:
        raise SessionOpError(f"no entry {entry_id} in this session")
    if position == "at":
        return entry_id, None
    message = getattr(entry, "message", None)
    text = message_text(message) if message is not None else None
    return entry.parent_id, text


def open_session(path: str | Path) -> SessionManager:
    """Open a session file to continue in it, taking its writer lock."""
    try:
        return SessionManager.open(path)
    except SessionError as error:
        raise SessionOpError(str(error)) from None
    except OSError as error:
        raise SessionOpError(f"Cannot open session {path}: {error.strerror or error}") from None


def delete_session_file(path: Path, *, missing_ok: bool = False) -> None:
    """Delete a session file, unless another process is writing it (its lock says so:
    :class:`~pi_tui.session.errors.SessionLockedError`, which names the process)."""
    lock = SessionLock(path)
    lock.acquire()
    try:
        path.unlink(missing_ok=missing_ok)
    except OSError as error:
        raise OSError(f"{path.name}: {error.strerror or error}") from None
    finally:
        lock.release()


def name_session_file(path: Path, name: str) -> None:
    """Name a session nobody is continuing right now (the picker's rename): a ``session_info``
    entry appended under the file's writer lock."""
    manager = SessionManager.open(path)
    try:
        manager.append_session_info(name)
    finally:
        manager.close()


def import_destination(source: Path, folder: Path) -> tuple[Path, bool]:
    """Where an imported copy of ``source`` goes, and whether a copy is needed.

    The file keeps its name, as in pi. pi overwrites a session of the same name already in the
    folder; pi-tui reuses it only when it is the same file or holds the same bytes, and otherwise
    picks ``NAME-imported-N.jsonl`` so no session is lost to an import.
    """
    target = folder / source.name
    if target.resolve() == source.resolve():
        return target, False
    if not target.exists():
        return target, True
    if target.read_bytes() == source.read_bytes():
        return target, False
    number = 1
    while True:
        candidate = folder / f"{source.stem}-imported-{number}{source.suffix}"
        if not candidate.exists():
            return candidate, True
        number += 1


def copy_into(source: Path, folder: Path) -> tuple[Path, bool]:
    """Copy ``source`` into the session ``folder`` (see :func:`import_destination`); returns the
    file to open and whether it is a new copy (removed again if it cannot be opened)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target, copy = import_destination(source, folder)
    if copy:
        # private like every session file pi-tui makes, and never over a file that appeared
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with source.open("rb") as reading, os.fdopen(os.open(target, flags, 0o600), "wb") as writing:
            shutil.copyfileobj(reading, writing)
    return target, copy


def import_session_file(source: Path, folder: Path) -> SessionManager:
    """Copy ``source`` into ``folder`` and open the copy (a new copy that will not open is
    removed again)."""
    try:
        target, copy = copy_into(source, folder)
    except OSError as error:
        raise SessionOpError(f"cannot copy into {folder}: {error.strerror or error}") from None
    try:
        return SessionManager.open(target, folder)
    except (SessionError, OSError) as error:
        if copy:
            target.unlink(missing_ok=True)
        raise SessionOpError(str(error)) from None


def _same_file(one: Path, other: Path) -> bool:
    return one == other or one.resolve() == other.resolve()
