"""Opening another agent's transcript in the app, and following it while that agent writes.

The transcript is imported (what it gained since the last time) and its session is shown from
a read-only manager: the importer, not the app, appends to the file while following. The
source is watched (Linux inotify, through the C library: a write wakes the app at once) and
polled once a second as well (size and modification time: other systems, a replaced file, a
missed event); when it grew, the import appends the new turns and the chat is drawn again.
A prompt typed meanwhile asks first: continuing here stops following and opens the session for
writing, so the conversation goes on in pi-tui.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost

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


_WATCHED = (
    0x2 | 0x4 | 0x8 | 0x400 | 0x800
)  # IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_DELETE_SELF, IN_MOVE_SELF
_NONBLOCK_CLOEXEC = os.O_NONBLOCK | 0o2000000


class FileWatch:
    """An inotify watch on one file whose events call ``wake`` on the event loop. :meth:`start`
    returns None where inotify is not available: the poll alone then follows the file."""

    def __init__(self, descriptor: int, loop: asyncio.AbstractEventLoop, wake: Callable[[], None]) -> None:
        self.descriptor = descriptor
        self.loop = loop
        self.wake = wake
        loop.add_reader(descriptor, self._events)

    @classmethod
    def start(cls, path: Path, wake: Callable[[], None]) -> FileWatch | None:
        name = ctypes.util.find_library("c")
        if name is None:
            return None
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            descriptor = libc.inotify_init1(_NONBLOCK_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if descriptor < 0:
            return None
        if libc.inotify_add_watch(descriptor, os.fsencode(path), _WATCHED) < 0:
            os.close(descriptor)
            return None
        return cls(descriptor, asyncio.get_running_loop(), wake)

    def _events(self) -> None:
        with contextlib.suppress(OSError):  # drain: what changed is read from the file itself
            while os.read(self.descriptor, 65536):
                pass
        self.wake()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.loop.remove_reader(self.descriptor)
            os.close(self.descriptor)


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
