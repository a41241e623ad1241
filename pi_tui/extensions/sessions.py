"""What a command's ``ctx`` may do to the session as a whole: start a new one, fork, switch.

The moves are :class:`~pi_tui.agent.session_ops.SessionOps`, the same every front end runs:
each asks the ``session_before_switch`` / ``session_before_fork`` handlers first (one of them
may cancel it), then the new session manager is adopted: by the TUI's ``switch`` (which also
redraws the chat), or here in print and rpc modes, which tell extensions (``session_shutdown``,
``session_start``). Extensions stay loaded across the move, so after ``await
ctx.new_session()`` the same ``ctx`` already reads the new session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.session_ops import Moved, SessionOpError, SessionOps
from pi_tui.extensions.api import ExtensionError

if TYPE_CHECKING:
    from pi_tui.extensions.base import Runner
    from pi_tui.session import SessionManager

Switch = Callable[[Any, str], Awaitable[None]]
"""``(new session manager, reason) -> None``: the mode's way to continue in another session."""


@dataclass(frozen=True, slots=True)
class SessionMove:
    """What ``ctx.new_session()``, ``ctx.fork()`` and ``ctx.switch_session()`` return."""

    cancelled: bool
    session_file: str | None = None
    """The session now in use (None: in memory, or cancelled)."""
    editor_text: str | None = None
    """A fork before a user message gives that message's text back (for the editor)."""

    @classmethod
    def of(cls, moved: Moved) -> SessionMove:
        path = moved.session_file
        return cls(moved.cancelled, str(path) if path else None, moved.editor_text)


class SessionControl:
    """The moves of :mod:`pi_tui.agent.session_ops` on the extensions' live agent."""

    def __init__(self, runner: Runner, switch: Switch | None = None) -> None:
        self.runner = runner
        self.switch: Switch | None = switch
        """The mode's own way to continue (the TUI redraws its chat); None: print and rpc
        modes, where the agent adopts the session here and extensions are told."""

    def _ops(self) -> SessionOps:
        return SessionOps(self.runner.live_agent(), self._adopt, self._allowed)

    async def _adopt(
        self, manager: SessionManager, reason: str, restore_model: bool, previous: Path | None
    ) -> None:
        if self.switch is not None:
            await self.switch(manager, reason)
            return
        agent = self.runner.live_agent()
        registry = self.runner.registry
        agent.adopt(manager, registry.usable if restore_model and registry else None)
        target = manager.session_file
        await self.runner.session_shutdown(reason, str(target) if target else None)
        await self.runner.session_start(reason, str(previous) if previous else None)

    async def _allowed(self, event: str, **fields: Any) -> bool:
        answer = await self.runner.before(event, **fields)
        return not (answer is not None and answer.get("cancel"))

    async def new_session(self, *, setup: Callable[[Any], Any] | None = None) -> SessionMove:
        """A new, empty session in the same folder; ``setup(manager)`` may add entries first."""
        return SessionMove.of(await self._ops().new_session(setup))

    async def fork(self, entry_id: str, *, position: str = "before") -> SessionMove:
        """A new session holding the path up to ``entry_id``: before it (a user message, whose
        text comes back) or through it (``position="at"``, as /clone)."""
        try:
            return SessionMove.of(await self._ops().fork(entry_id, position))
        except SessionOpError as error:
            raise ExtensionError(str(error)) from None

    async def switch_session(self, path: str | Path) -> SessionMove:
        """Continue in the session file ``path`` (as /resume)."""
        try:
            return SessionMove.of(await self._ops().switch_session(path))
        except SessionOpError as error:
            raise ExtensionError(str(error)) from None
