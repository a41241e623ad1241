"""``ctx``: what a handler, a command or a tool can see and do besides the ``pi`` object.

A context is made per call, so it always reads the agent's *current* session (a ``/new`` or
``/resume`` replaces the session manager under the extension). Command handlers get a
:class:`CommandContext`, which can also wait for the agent and move in the tree; tools get a
:class:`ToolCallContext`, which can stream partial output.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pi_tui.extensions.base import AbortSignal, Runner
from pi_tui.tools.base import ToolContext

if TYPE_CHECKING:
    from pi_tui.extensions.sessions import SessionControl
    from pi_tui.extensions.ui import ExtensionUI


class ContextRunner(Runner, Protocol):
    """The runner as a ``ctx`` sees it: also the session moves of command contexts."""

    sessions: SessionControl


class ExtensionContext:
    """The context of an event handler."""

    def __init__(self, runner: ContextRunner, extension: str) -> None:
        self._runner = runner
        self.extension = extension

    @property
    def ui(self) -> ExtensionUI:
        return self._runner.ui.bound(self.extension)

    @property
    def has_ui(self) -> bool:
        return self._runner.ui.has_ui

    @property
    def cwd(self) -> Path:
        folder: Path = self._runner.live_agent().cwd
        return folder

    @property
    def session_manager(self) -> Any:
        """The current session's :class:`~pi_tui.session.manager.SessionManager`."""
        return self._runner.live_agent().manager

    @property
    def model_registry(self) -> Any:
        return self._runner.registry

    @property
    def model(self) -> Any:
        """The model in use (``provider``, ``id``, ``name``, ``context_window``...)."""
        return self._runner.live_agent().model

    @property
    def signal(self) -> AbortSignal:
        """Aborted when the user stops the current run."""
        return self._runner.signal

    def is_idle(self) -> bool:
        return not self._runner.live_agent().is_streaming

    def abort(self) -> None:
        """Stop the running reply and tools, as Escape does."""
        self._runner.live_agent().abort()

    def has_pending_messages(self) -> bool:
        agent = self._runner.live_agent()
        return bool(agent.steering or agent.follow_ups)

    def get_context_usage(self) -> dict[str, Any]:
        """``{"tokens": estimated context tokens, "context_window": the model's window}``."""
        agent = self._runner.live_agent()
        return {"tokens": agent.context_tokens(), "context_window": agent.model.context_window}

    def get_system_prompt(self) -> str:
        """The system prompt of the current run (after ``before_agent_start`` changes)."""
        prompt: str = self._runner.live_agent().current_system_prompt
        return prompt

    async def compact(self, custom_instructions: str | None = None) -> Any:
        """Compact the session now (as ``/compact``); returns the result."""
        return await self._runner.live_agent().compact(custom_instructions)

    def shutdown(self) -> None:
        """Ask pi-tui to quit once the current work is done."""
        self._runner.request_shutdown()


class CommandContext(ExtensionContext):
    """The context of a command handler: it may also wait and move."""

    async def wait_for_idle(self) -> None:
        """Return once the agent has finished its run (at once when it is idle)."""
        await self._runner.wait_for_idle()

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        files: str = "keep",
        force: bool = False,
        keep_edited: bool = False,
    ) -> Any:
        """Move to ``target_id`` as ``/tree`` does (optionally summarising what is left).

        ``files``: ``"keep"`` leaves the project's files alone, ``"restore"`` brings back the
        files of that point too, ``"only"`` those files without moving. The result's ``files``
        says what was written, deleted and kept. Files changed since the session last saw them
        (by hand, by another session) that the restore would replace or delete raise
        ``FileRestoreConflict`` (``.paths``) before anything moves, unless ``force`` (replace
        them; the undo keeps them) or ``keep_edited`` (leave them as they are, restore the rest;
        they are in ``files.kept``). Either with ``files="keep"``, or both at once, raise
        ``ExtensionError``; checkpoints that are off raise ``CheckpointError``."""
        return await self._runner.navigate_tree(
            target_id, summarize=summarize, files=files, force=force, keep_edited=keep_edited
        )

    async def undo_file_restore(self) -> Any:
        """Bring back the files the last restore replaced (again: redo); returns what it did."""
        return await self._runner.undo_file_restore()

    async def new_session(self, *, setup: Any = None) -> Any:
        """Continue in a new, empty session (``setup(manager)`` may add entries first).
        Returns a SessionMove (``cancelled`` when an extension refused)."""
        await self._runner.wait_for_idle()
        return await self._runner.sessions.new_session(setup=setup)

    async def fork(self, entry_id: str, *, position: str = "before") -> Any:
        """Continue in a new session holding the path up to ``entry_id`` (``"before"``: up to
        the user message before it, whose text goes back to the editor; ``"at"``: through it)."""
        await self._runner.wait_for_idle()
        move = await self._runner.sessions.fork(entry_id, position=position)
        if move.editor_text and self.has_ui:
            self._runner.ui.set_editor_text(move.editor_text)
        return move

    async def switch_session(self, path: str) -> Any:
        """Continue in the session file ``path``, as /resume does."""
        await self._runner.wait_for_idle()
        return await self._runner.sessions.switch_session(path)


class ToolCallContext(ExtensionContext):
    """The context of an extension tool's ``execute``."""

    def __init__(self, runner: ContextRunner, extension: str, tool_context: ToolContext) -> None:
        super().__init__(runner, extension)
        self.tool_context = tool_context
        self._loop = asyncio.get_running_loop()

    @property
    def cwd(self) -> Path:
        return self.tool_context.cwd

    def update(self, partial: Any) -> None:
        """Show partial output while the tool runs (a string, or ``{"content": [...]}``).

        Callable from a sync ``execute`` (which runs in a worker thread) as from async code.
        """
        from pi_tui.extensions.tool import to_result

        result = to_result(partial)
        on_update: Callable[[Any], None] = self.tool_context.on_update
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            on_update(result)
        else:
            self._loop.call_soon_threadsafe(on_update, result)
