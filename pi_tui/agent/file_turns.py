"""Recording the project's files around each turn's tool calls, without making the turn wait.

A snapshot (:meth:`FileHistory.snapshot`, ~40 ms of git CPU in a 10,000-file project, more on a
busy machine) runs in a
worker thread while the model streams: the one a turn's tools start from is begun at the turn's
start and only awaited when the reply asks for tools; the one after the tools is begun as they
end and awaited just before the next entry is written (by then the next reply has streamed).
So the checkpoint entry still lands right after the turn's last tool result, and a turn pays
for git only when the model answers faster than git runs.

Failures (no git, a huge folder) are said once, as a ``files_notice`` event, and switch
recording off for the session; the conversation never stops for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.checkpoints.store import CheckpointError, Snapshot
from pi_tui.checkpoints.timeline import CHECKPOINT_TYPE
from pi_tui.messages import ToolCall

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pi_tui.checkpoints.history import FileHistory
    from pi_tui.session.manager import SessionManager


class TurnFiles:
    """The snapshots of one agent's runs (the agent owns one; ``history`` None: off)."""

    def __init__(self, manager: Callable[[], SessionManager], tell: Callable[[str], None]) -> None:
        self._manager = manager
        self._tell = tell
        self.history: FileHistory | None = None
        self._before: asyncio.Future[Snapshot | None] | None = None
        self._pending: tuple[str | None, Snapshot, asyncio.Future[Snapshot | None]] | None = None
        self._failed: str | None = None  # set in the worker thread, said on the loop
        self._named: list[str] = []  # the paths this turn's write/edit calls name
        self._rescan = True  # whether the after-snapshot must look at every file

    @property
    def on(self) -> bool:
        return self.history is not None

    def _start(self, extra: Sequence[str] = (), *, rescan: bool = True) -> asyncio.Future[Snapshot | None]:
        history = self.history
        assert history is not None
        session = self._manager().session_id
        return asyncio.ensure_future(asyncio.to_thread(self._take, history, session, extra, rescan))

    def _take(
        self, history: FileHistory, session: str, extra: Sequence[str], rescan: bool
    ) -> Snapshot | None:
        try:
            return history.snapshot(session, extra, rescan=rescan)
        except CheckpointError as error:
            self._failed = str(error)
            return None
        except Exception as error:  # our bug: the conversation goes on without checkpoints
            log.warning("file checkpoint snapshot failed", exc_info=True)
            self._failed = f"file checkpoints stopped after an unexpected error: {error}"
            return None

    def _check_failed(self) -> None:
        if self._failed is not None:
            message, self._failed = self._failed, None
            self.history = None  # said once; the session goes on without file checkpoints
            self._tell(message)

    def turn_started(self) -> None:
        """A turn begins: start the snapshot its tools would start from (when none is ready)."""
        if self.history is not None and self._before is None:
            self._before = self._start()

    async def before_tools(self, calls: Sequence[ToolCall] = ()) -> Snapshot | None:
        """The files before this turn's tools run (awaits the snapshot begun at the turn start).
        The files ``write`` and ``edit`` name are recorded even when the project ignores them."""
        if self.history is None:
            return None
        if self._before is None:
            self._before = self._start()
        if not self._before.done():
            await asyncio.wait({self._before}, timeout=SLOW_SNAPSHOT_SECONDS)
            if not self._before.done():  # a project the store has not seen: every file is hashed
                self._tell(
                    "Recording the project's files for the first time (file checkpoints); the tools "
                    "start when it is done (--no-checkpoints skips it)"
                )
        before = await self._before
        self._check_failed()
        self._named = named_paths(calls, self.history.store.project) if self.history is not None else []
        # Only write and edit (and tools that change nothing): the paths they name are all that
        # can differ after them, so the after-snapshot need not look at the whole project.
        self._rescan = not calls or any(call.name not in WRITING_TOOLS | READING_TOOLS for call in calls)
        if before is not None and self._named and self.history is not None:
            self._before = self._start(self._named, rescan=False)
            before = await self._before
            self._check_failed()
        return before

    def after_tools(self, turn: str | None, before: Snapshot | None) -> None:
        """The tools are done: start the snapshot after them (written by :meth:`settle`)."""
        if self.history is None or before is None:
            self._before = None
            return
        after = self._start(self._named, rescan=self._rescan)
        self._pending = (turn, before, after)
        self._before = after

    async def settle(self) -> None:
        """Write the last turn's checkpoint entry (before any other entry follows it)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        turn, before, task = pending
        after = await task
        self._check_failed()
        history = self.history
        if after is None or history is None:
            self._before = None
            return
        try:
            session = self._manager().session_id
            data = await asyncio.to_thread(history.turn_entry, session, turn, before, after)
        except CheckpointError as error:
            self._tell(str(error))
            return
        except Exception as error:  # our bug: said, and the turn's entries go on being written
            log.warning("file checkpoint entry failed", exc_info=True)
            self._tell(f"file checkpoint of the last turn not written: {error}")
            return
        if data is not None:
            self._manager().append_custom_entry(CHECKPOINT_TYPE, data)

    async def run_ended(self) -> None:
        """The run is over: write what is pending; the next run starts from a fresh snapshot
        (the user may edit files while no run is going)."""
        await self.settle()
        before, self._before = self._before, None
        if before is not None and not before.done():
            with contextlib.suppress(Exception):
                await before

    def forget(self) -> None:
        """Another session took over (new, switch, fork): nothing pending belongs to it."""
        self._before = None
        self._pending = None


WRITING_TOOLS = frozenset({"write", "edit"})
READING_TOOLS = frozenset({"read", "grep", "find", "ls"})
"""Built-in tools that change no file. Any other (bash, MCP, extensions' tools) may change any
file, so the snapshot after it looks at the whole project."""
SLOW_SNAPSHOT_SECONDS = 1.0
"""A before-snapshot still running after this long is said (the first one in a big project)."""


def named_paths(calls: Sequence[ToolCall], root: Path) -> list[str]:
    """The project-relative paths the ``write`` and ``edit`` calls name (outside the project,
    or into a ``.git`` folder: left out)."""
    found: list[str] = []
    for call in calls:
        if call.name not in WRITING_TOOLS or not isinstance(call.arguments, dict):
            continue
        given = call.arguments.get("path")
        if not isinstance(given, str) or not given or "\0" in given:
            continue
        full = os.path.normpath(os.path.join(root, os.path.expanduser(given)))
        try:
            relative = Path(full).relative_to(root).as_posix()
        except ValueError:
            continue
        if relative in ("", ".") or ".git" in relative.split("/"):
            continue
        found.append(relative)
    return found


def notice_event(emit: Callable[..., Any]) -> Callable[[str], None]:
    """A ``tell`` that emits ``files_notice`` (front ends show it as one line)."""
    return lambda message: emit("files_notice", message=message)
