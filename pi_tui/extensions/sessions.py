"""What a command's ``ctx`` may do to the session as a whole: start a new one, fork, switch.

Each move asks the ``session_before_switch`` / ``session_before_fork`` handlers first (one of
them may cancel it), then hands the new session manager to ``switch``, which the mode provides:
print and rpc modes adopt it and tell extensions (``session_shutdown``, ``session_start``); the
TUI also redraws the chat. Extensions stay loaded across the move, so after ``await
ctx.new_session()`` the same ``ctx`` already reads the new session.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.extensions.api import ExtensionError

if TYPE_CHECKING:
    from pi_tui.extensions.base import Runner

Switch = Callable[[Any, str], Awaitable[None]]
"""``(new session manager, reason) -> None``: the mode's way to continue in another session."""


@dataclass(frozen=True, slots=True)
class SessionMove:
    cancelled: bool
    session_file: str | None = None
    """The session now in use (None: in memory, or cancelled)."""
    editor_text: str | None = None
    """A fork before a user message gives that message's text back (for the editor)."""


class SessionControl:
    def __init__(self, runner: Runner, switch: Switch | None = None) -> None:
        self.runner = runner
        self.switch = switch or self._adopt

    async def _adopt(self, manager: Any, reason: str) -> None:
        """Print and rpc modes: continue in ``manager``, tell the extensions."""
        agent = self.runner.live_agent()
        previous = agent.manager.session_file
        agent.adopt(
            manager, self.runner.registry.get if reason == "resume" and self.runner.registry else None
        )
        target = manager.session_file
        await self.runner.session_shutdown(reason, str(target) if target else None)
        await self.runner.session_start(reason, str(previous) if previous else None)

    async def _allowed(self, event: str, **fields: Any) -> bool:
        answer = await self.runner.before(event, **fields)
        return not (answer is not None and answer.get("cancel"))

    def _moved(self, editor_text: str | None = None) -> SessionMove:
        path = self.runner.live_agent().manager.session_file
        return SessionMove(False, str(path) if path else None, editor_text)

    async def new_session(self, *, setup: Callable[[Any], Any] | None = None) -> SessionMove:
        """A new, empty session in the same folder; ``setup(manager)`` may add entries first."""
        from pi_tui.session import SessionManager

        if not await self._allowed("session_before_switch", reason="new"):
            return SessionMove(True)
        agent = self.runner.live_agent()
        old = agent.manager
        if old.is_persisted and old.session_file is not None:
            manager = SessionManager.create(str(agent.cwd), old.session_file.parent)
        else:
            manager = SessionManager.in_memory(str(agent.cwd))
        if setup is not None:
            done = setup(manager)
            if inspect.isawaitable(done):
                await done
        await self.switch(manager, "new")
        return self._moved()

    async def fork(self, entry_id: str, *, position: str = "before") -> SessionMove:
        """A new session holding the path up to ``entry_id``: before it (a user message, whose
        text comes back) or through it (``position="at"``, as /clone)."""
        if position not in ("before", "at"):
            raise ExtensionError('position is "before" or "at"')
        agent = self.runner.live_agent()
        manager = agent.manager
        entry = manager.get_entry(entry_id)
        if entry is None:
            raise ExtensionError(f"no entry {entry_id} in this session")
        if not await self._allowed("session_before_fork", entry_id=entry_id, position=position):
            return SessionMove(True)
        text = None
        leaf: str | None = entry_id
        if position == "before":
            leaf = entry.parent_id
            message = getattr(entry, "message", None)
            content = getattr(message, "content", None)
            if isinstance(content, str):
                text = content
            elif content is not None:
                text = "".join(getattr(block, "text", "") for block in content)
        if leaf is None:
            from pi_tui.session import SessionManager

            folder = manager.session_file.parent if manager.session_file is not None else None
            new = (
                SessionManager.create(str(agent.cwd), folder)
                if folder
                else SessionManager.in_memory(str(agent.cwd))
            )
            await self.switch(new, "fork")
        else:
            manager.create_branched_session(leaf)
            await self.switch(manager, "fork")
        return self._moved(text)

    async def switch_session(self, path: str | Path) -> SessionMove:
        """Continue in the session file ``path`` (as /resume)."""
        from pi_tui.session import SessionError, SessionManager

        target = Path(path).expanduser()
        if not await self._allowed("session_before_switch", reason="resume", target_session_file=str(target)):
            return SessionMove(True)
        try:
            manager = await asyncio.to_thread(SessionManager.open, target)
        except (SessionError, OSError) as error:
            raise ExtensionError(str(error)) from None
        await self.switch(manager, "resume")
        return self._moved()
