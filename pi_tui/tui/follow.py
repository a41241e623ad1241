"""Opening another agent's transcript in the app, and following it while that agent writes.

The transcript is imported (what it gained since the last time) and its session is shown from
a read-only manager: the importer, not the app, appends to the file while following. The
source is watched (watchfiles: inotify, FSEvents, ...; a write wakes the app within tens of
milliseconds) and polled once a second as well (size and modification time: a system without a
watch, a missed event); when it grew, the import appends the new turns and the chat is drawn again.
A prompt typed meanwhile asks first: continuing here stops following and opens the session for
writing, so the conversation goes on in pi-tui.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0
NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


@dataclass(slots=True)
class Follow:
    source: Path
    session: Path
    agent: str
    seen: tuple[int, float] = (0, 0.0)
    busy: bool = field(default=False)

    @property
    def name(self) -> str:
        return NAMES.get(self.agent, self.agent)

    def changed(self) -> bool:
        """Whether the source has another size or time than at the last look."""
        try:
            info = self.source.stat()
        except OSError:
            return False
        now = (info.st_size, info.st_mtime)
        if now == self.seen:
            return False
        self.seen = now
        return True


WATCH_STEP_MS = 30
"""How often the watch thread looks for changes; a single write wakes the app within ~2 steps."""
WATCH_DEBOUNCE_MS = 150
"""Longest a stream of writes is gathered before the app is woken (it then reads them all)."""
WATCH_TIMEOUT_MS = 1000
"""The watch thread comes back this often even without changes, so a forgotten watch cannot
hold the event loop's shutdown for long."""


class FileWatch:
    """A watch (watchfiles: inotify on Linux, FSEvents on macOS, ...) on the folder of one file
    whose changes to that file call ``wake`` on the event loop. The folder, not the file, is
    watched so that a transcript replaced by a rename is still seen. :meth:`start` returns None
    when there is nothing to watch: the poll alone then follows the file."""

    def __init__(self, path: Path, wake: Callable[[], None]) -> None:
        self.path = path
        self.wake = wake
        self.ready = asyncio.Event()
        """Set once the watch is registered: a write after this wakes it."""
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    @classmethod
    def start(cls, path: Path, wake: Callable[[], None]) -> FileWatch | None:
        path = Path(os.path.abspath(path))
        if not path.parent.is_dir():
            return None
        return cls(path, wake)

    async def _run(self) -> None:
        from watchfiles import awatch  # imported when a transcript is followed, not at start-up

        target = str(self.path)
        changes = awatch(
            self.path.parent,
            watch_filter=lambda _change, changed: changed == target,
            stop_event=self._stop,
            recursive=False,
            step=WATCH_STEP_MS,
            debounce=WATCH_DEBOUNCE_MS,
            rust_timeout=WATCH_TIMEOUT_MS,
        )
        pending = asyncio.ensure_future(anext(changes))
        # One turn of the loop runs ``pending`` up to its wait in a worker thread; by then the
        # watch is registered (watchfiles sets it up before that wait) and writes are caught.
        await asyncio.sleep(0)
        self.ready.set()
        try:
            while True:
                await pending
                if self._stop.is_set():
                    return
                self.wake()
                pending = asyncio.ensure_future(anext(changes))
        except StopAsyncIteration:
            return
        except (OSError, RuntimeError) as error:  # no watch after all (limits, a vanished folder)
            logger.debug("watching %s failed: %s", self.path, error)

    def close(self) -> None:
        """Stop watching; no ``wake`` comes after this (the thread ends within one step)."""
        self._stop.set()

    async def closed(self) -> None:
        """Wait until the watch thread has ended."""
        await self._task


async def open_transcript(app: CommandHost, source: Path) -> None:
    """Import ``source`` into this folder's sessions, show it read-only and follow it."""
    from pi_tui.config.paths import session_dir_for_cwd
    from pi_tui.session import SessionError, SessionManager
    from pi_tui.transcripts.importer import TranscriptImportError, import_summary, import_transcript

    folder = app.agent.manager.session_dir or session_dir_for_cwd(app.cwd)
    follow = Follow(source, source, "")
    follow.changed()  # looked at before the import: a line written meanwhile is caught next time
    try:
        result = await asyncio.to_thread(import_transcript, source, app.cwd, Path(folder), app.agent_dir)
        manager = await asyncio.to_thread(SessionManager.open, result.session, read_only=True)
    except (TranscriptImportError, SessionError, OSError) as error:
        app.say(str(error), "error")
        return
    follow.session, follow.agent = result.session, result.converted.agent
    await app.switch_session(manager)
    app.follow_transcript(follow)
    app.say(
        f"{follow.name} transcript {source.name}: {import_summary(result)}. Following it: new turns "
        "appear as they are written. Send a message to continue the conversation here."
    )


async def catch_up(app: CommandHost, follow: Follow) -> int:
    """Import what the source gained and redraw; returns the entries added."""
    from pi_tui.session import SessionError, SessionManager
    from pi_tui.transcripts.importer import TranscriptImportError, import_transcript

    if follow.busy or not follow.changed():
        return 0
    follow.busy = True
    try:
        folder = follow.session.parent
        result = await asyncio.to_thread(import_transcript, follow.source, app.cwd, folder, app.agent_dir)
        if result.added == 0:
            return 0
        if result.session != follow.session:  # the source was replaced: its new session
            follow.session = result.session
        manager = await asyncio.to_thread(SessionManager.open, follow.session, read_only=True)
        app.agent.replace_manager(manager)
        await app.show_session()
        return result.added
    except (TranscriptImportError, SessionError, OSError) as error:
        app.say(f"Stopped following {follow.source.name}: {error}", "warning")
        app.stop_following()
        return 0
    finally:
        follow.busy = False


async def continue_here(app: CommandHost, follow: Follow, text: str) -> None:
    """After the user's yes: stop following, open the session for writing, send ``text``."""
    from pi_tui.session import SessionError, SessionManager
    from pi_tui.tui.screens.prompts import ConfirmPrompt

    question = f"Continue this {follow.name} conversation here? pi-tui stops following it. y/n"
    if not await app.push_screen_wait(ConfirmPrompt(question)):
        app.replace_editor_text(text)
        return
    app.stop_following()
    try:
        manager: Any = await asyncio.to_thread(SessionManager.open, follow.session)
    except (SessionError, OSError) as error:
        app.say(str(error), "error")
        return
    await app.switch_session(manager)
    app.submit_prompt(text)
