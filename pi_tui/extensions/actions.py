"""What extensions do to the agent and the session: messages, labels, names, runs they start,
programs they run, and the session's start and end.

A mixin of :class:`~pi_tui.extensions.runner.ExtensionRunner`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pi_tui.extensions.base import AbortSignal, ExecResult, ExtensionError
from pi_tui.extensions.tool import content_blocks
from pi_tui.messages import CustomMessage, ImageContent, TextContent
from pi_tui.secrets.child_env import child_environment

if TYPE_CHECKING:
    from pi_tui.extensions.registrations import RegisteredCommand

log = logging.getLogger(__name__)


class Actions:
    """The acting half of the runner."""

    agent: Any
    commands: dict[str, RegisteredCommand]
    signal: AbortSignal
    run_starter: Callable[[Coroutine[Any, Any, Any]], asyncio.Future[Any]] | None
    shutdown_requested: bool
    _next_turn: list[CustomMessage]
    _runs: set[asyncio.Future[Any]]
    _queue: asyncio.Queue[Any] | None
    report: Callable[[str], None]

    if TYPE_CHECKING:  # provided by ExtensionRunner and the other mixins

        def live_agent(self) -> Any: ...
        async def drain(self) -> None: ...
        async def emit(self, event_type: str, **fields: Any) -> list[Any]: ...

    # --- actions -----------------------------------------------------------------------------------

    def custom_message(self, message: Any) -> CustomMessage:
        """A custom message from what an extension gave (``custom_type``, ``content``...)."""
        from pi_tui.messages import now_ms

        if isinstance(message, CustomMessage):
            return message
        if not isinstance(message, dict):
            raise ExtensionError("a message is a dict with custom_type and content")
        custom_type = message.get("custom_type", message.get("customType"))
        if not isinstance(custom_type, str) or not custom_type:
            raise ExtensionError("a message needs a custom_type (text)")
        content = message.get("content", "")
        body: Any = content if isinstance(content, str) else content_blocks(content)
        return CustomMessage(
            custom_type=custom_type,
            content=body,
            display=message.get("display", True) is not False,
            details=message.get("details"),
            timestamp=now_ms(),
        )

    def send_message(self, extension: str, message: Any, deliver: str, trigger_turn: bool) -> None:
        custom = self.custom_message(message)
        agent = self.live_agent()
        if deliver == "next_turn":
            self._next_turn.append(custom)
        elif agent.is_streaming:
            agent.queue_message(custom, follow_up=deliver == "follow_up")
        elif trigger_turn and _has_loop():
            self._start(agent.run_messages([custom]))
        else:
            agent.record_message(custom)

    def send_user_message(self, content: Any, deliver: str | None) -> None:
        if isinstance(content, str):
            text, images = content, []
        else:
            blocks = content_blocks(content)
            text = "".join(block.text for block in blocks if isinstance(block, TextContent))
            images = [block for block in blocks if isinstance(block, ImageContent)]
        agent = self.live_agent()
        if agent.is_streaming:
            if deliver is None:
                raise ExtensionError("the agent is running: say deliver_as='steer' or 'follow_up'")
            if deliver == "steer":
                agent.steer(text, images)
            else:
                agent.follow_up(text, images)
            return
        if not _has_loop():
            raise ExtensionError(
                "send_user_message needs the running agent (call it from a handler or command)"
            )
        self._start(agent.prompt(text, images, source="extension"))

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.live_agent().manager.append_label_change(entry_id, label)
        self.agent.emit_session_changed("label", entry_id=entry_id, label=label or None)

    def set_session_name(self, name: str) -> None:
        self.live_agent().set_session_name(name)  # also session_info_changed, as pi 1.x

    def command_list(self) -> list[dict[str, Any]]:
        return [
            {"name": command.name, "description": command.description, "extension": command.extension}
            for command in self.commands.values()
        ]

    def request_shutdown(self) -> None:
        self.shutdown_requested = True
        self.agent.emit_session_changed("shutdown")

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        files: str = "keep",
        force: bool = False,
        keep_edited: bool = False,
    ) -> Any:
        from pi_tui.agent.file_restore import FILE_MODES

        mode = next((known for known in FILE_MODES if known == files), None)
        if mode is None:
            raise ExtensionError(f"files must be one of {', '.join(FILE_MODES)}, not {files!r}")
        # refused rather than ignored: an extension believing it forced a restore that never ran
        for name, given in (("force", force), ("keep_edited", keep_edited)):
            if given and mode == "keep":
                raise ExtensionError(f'{name} needs files="restore" or files="only"')
        if force and keep_edited:
            raise ExtensionError(
                "force and keep_edited cannot go together (replace or keep the changed files)"
            )
        result = await self.agent.navigate_tree(
            target_id, summarize=summarize, files=mode, force=force, keep_edited=keep_edited
        )
        if mode != "only":
            self.agent.emit_session_changed("tree")
        return result

    async def undo_file_restore(self) -> Any:
        return await self.live_agent().undo_file_restore()

    def _start(self, work: Coroutine[Any, Any, Any]) -> None:
        if self.run_starter is not None:
            task = self.run_starter(work)
        else:
            task = asyncio.get_running_loop().create_task(work)
        self._runs.add(task)
        task.add_done_callback(self._run_done)

    def _run_done(self, task: asyncio.Future[Any]) -> None:
        self._runs.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            assert error is not None
            log.warning("a run started by an extension failed", exc_info=error)
            self.report(f"a run started by an extension failed: {type(error).__name__}: {error}")

    async def wait_for_idle(self) -> None:
        """Until no run (the user's or an extension's) is going."""
        current = asyncio.current_task()
        while True:
            others = [task for task in self._runs if task is not current]
            if others:
                await asyncio.wait(others)
                continue
            if self.agent.is_streaming and self.agent.run_task is not current:
                await asyncio.sleep(0.02)
                continue
            return

    async def settle(self) -> None:
        """Everything extensions started is done: queued events handled, runs finished."""
        while True:
            await self.drain()
            await self.wait_for_idle()
            if not self._runs and (self._queue is None or self._queue.empty()):
                await self.drain()
                return

    async def exec(
        self, command: str, args: list[str], *, cwd: str | None = None, timeout: float | None = None
    ) -> ExecResult:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd or str(self.agent.cwd),
            env=child_environment(),  # without pi-tui's own credentials (docs/secrets.md)
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        talk = asyncio.ensure_future(process.communicate())
        stop = asyncio.ensure_future(self.signal.wait())
        try:
            done, _ = await asyncio.wait({talk, stop}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            killed = talk not in done
            if killed:
                _kill_group(process.pid)
            stdout, stderr = await talk
        except asyncio.CancelledError:
            _kill_group(process.pid)
            raise
        finally:
            stop.cancel()
        return ExecResult(
            stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), process.returncode, killed
        )

    # --- session lifecycle -----------------------------------------------------------------------

    async def session_start(self, reason: str, previous_session_file: str | None = None) -> None:
        fields: dict[str, Any] = {"reason": reason}
        if previous_session_file is not None:
            fields["previous_session_file"] = previous_session_file
        await self.emit("session_start", **fields)

    async def session_shutdown(self, reason: str = "quit", target_session_file: str | None = None) -> None:
        await self.settle_quietly()
        fields: dict[str, Any] = {"reason": reason}
        if target_session_file is not None:
            fields["target_session_file"] = target_session_file
        await self.emit("session_shutdown", **fields)

    async def settle_quietly(self) -> None:
        try:
            await asyncio.wait_for(self.drain(), timeout=5)
        except TimeoutError:
            log.warning("extension handlers were still busy after 5 s")


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
