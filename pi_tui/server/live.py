"""One session served over HTTP: an AgentSession, the queue its commands wait in, its numbered
event log, and the runtime state clients see.

The shape follows the chat-engine reference (``../shared/seeds/chat-system-reference.md``): the
session object owns the transcript (the session file, through the agent) and the runtime
state; commands are applied strictly in the order they were posted by one worker task; every
agent event is numbered and kept for replay; a client that connects first gets a snapshot.
Nothing here depends on a client being connected: the agent runs whether anyone watches or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from pi_tui.agent.events import AgentEvent
from pi_tui.messages import AssistantMessage
from pi_tui.modes.rpc_mode import register_extension_commands, start_extensions_ui
from pi_tui.modes.rpc_protocol import ABORT_WAIT, Deferred, Output, response_record
from pi_tui.server.commands import Outcome, SessionCommands
from pi_tui.server.event_log import RING_BYTES, RING_SIZE, EventLog, sse_frame
from pi_tui.startup import Started

RUNTIME_STATES = ("idle", "generating", "executing_tools", "paused", "waiting_user_input", "error")
"""As the reference names them: paused = an extension asks for a confirmation; waiting for user
input = an extension asks for a choice or a text."""
CONFIRM_METHODS = frozenset({"confirm"})
INPUT_METHODS = frozenset({"select", "input", "editor"})


class _EventOutput(Output):
    """rpc mode's writer, pointed at the event log: extension requests and errors become events."""

    def __init__(self, live: LiveSession) -> None:
        super().__init__(sys.stderr.buffer)
        self._live = live

    def send(self, record: dict[str, Any]) -> None:
        self._live.publish_record(record)


@dataclass(slots=True)
class PendingCommand:
    command: dict[str, Any]
    done: asyncio.Future[Outcome] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class LiveSession:
    def __init__(
        self,
        started: Started,
        *,
        read_only_reason: str | None = None,
        ring_size: int | None = None,
        ring_bytes: int | None = None,
    ) -> None:
        self.started = started
        self.agent = started.agent
        self.id = self.agent.manager.session_id
        self.read_only_reason = read_only_reason
        self.log = EventLog(ring_size or RING_SIZE, ring_bytes=ring_bytes or RING_BYTES)
        self.commands = SessionCommands(started, _EventOutput(self), read_only_reason)
        self.commands.session_changed = self._on_session_changed
        self.queue: deque[PendingCommand] = deque()
        self._queue_wake = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._beside: set[asyncio.Task[Any]] = set()
        self.draft: Draft | None = None
        """The assistant message being streamed, rebuilt from the events sent, None between."""
        self.running_tools: dict[str, dict[str, Any]] = {}
        self.dialogs: dict[str, str] = {}
        """Open extension dialogs: request id -> method."""
        self.runtime = "idle"
        self.last_error: str | None = None
        self._watched: set[asyncio.Task[Any]] = set()
        """Run tasks whose end will update the runtime (see :meth:`_update_when_done`)."""
        self.followers = 0
        """Event streams open on this session (the hub never closes a watched session)."""
        self.last_used = time.monotonic()
        self._unsubscribe = self.agent.subscribe(self._on_event)

        def save_problem(line: str) -> None:
            self.publish("notice", {"level": "error", "message": line})

        self.agent.set_save_listener(save_problem)
        self.closed = False

    # --- lifetime ---------------------------------------------------------------------------

    async def start(self) -> None:
        extensions = self.started.extensions.runner if self.started.extensions is not None else None
        if extensions is not None:
            start_extensions_ui(self.commands, self.started)
            await extensions.finish_activation()
            register_extension_commands(self.commands, extensions)
            await extensions.session_start("startup")
        self._worker = asyncio.create_task(self._work(), name=f"session {self.id} commands")

    async def close(self) -> None:
        """Abort what runs, answer what waits, release the session file."""
        if self.closed:
            return
        self.closed = True
        self.commands.abort_all()  # first: a command waiting for a run to stop can then finish
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        while self.queue:
            pending = self.queue.popleft()
            if not pending.done.done():
                pending.done.set_result((503, _closing(pending.command)))
        if self.commands.extension_ui is not None:
            self.commands.extension_ui.cancel_all()
        if self._beside:  # a compaction, a shell command, a branch summary: let them record
            await asyncio.wait(set(self._beside), timeout=ABORT_WAIT)
        extensions = self.started.extensions.runner if self.started.extensions is not None else None
        if extensions is not None:
            with contextlib.suppress(Exception):
                await extensions.session_shutdown("quit")
        await self.commands.close_session()
        self._unsubscribe()
        self.log.close()

    # --- commands ---------------------------------------------------------------------------

    async def submit(self, command: Any) -> Outcome:
        """Queue a command and wait for its outcome. The wait is shielded: a client that goes
        away does not take its command (or the agent's run) with it."""
        self.last_used = time.monotonic()
        refused = self.commands.check(command)
        if refused is not None:
            return refused
        if self.closed:
            return 503, _closing(command)
        pending = PendingCommand(command)
        if command.get("type") == "extension_ui_response":
            # An answer to a dialog a running command waits on: never queued behind it.
            await self._apply(pending)
            return pending.done.result()
        self.queue.append(pending)
        self._queue_wake.set()
        self._publish_queue()
        return await asyncio.shield(pending.done)

    async def _work(self) -> None:
        while True:
            while not self.queue:
                self._queue_wake.clear()
                await self._queue_wake.wait()
            pending = self.queue.popleft()
            self._publish_queue()
            if self.commands.runs_beside_queue(pending.command):
                task = asyncio.create_task(self._apply(pending))
                self._beside.add(task)
                task.add_done_callback(self._beside.discard)
            else:
                await self._apply(pending)

    async def _apply(self, pending: PendingCommand) -> None:
        """Run one command and hand its outcome to whoever posted it, also when it is
        cancelled (``abort`` cancels a compaction; closing cancels everything)."""
        try:
            outcome = await self.commands.execute(pending.command)
        except asyncio.CancelledError:
            self._finish(pending, (409, cancelled_record(pending.command)))
            raise
        if isinstance(outcome, Deferred):  # a prompt answered once the agent decided
            task = asyncio.create_task(self._apply_later(pending, outcome.answer))
            self._beside.add(task)
            task.add_done_callback(self._beside.discard)
            return
        self._finish(pending, outcome)

    async def _apply_later(self, pending: PendingCommand, answer: Awaitable[Outcome]) -> None:
        try:
            outcome = await answer
        except asyncio.CancelledError:
            self._finish(pending, (409, cancelled_record(pending.command)))
            raise
        self._finish(pending, outcome)

    def _finish(self, pending: PendingCommand, outcome: Outcome) -> None:
        self.publish("response", outcome[1])
        self._update_when_done(self.commands.prompt_task)
        if pending.command.get("type") == "extension_ui_response":
            self.dialogs.pop(str(pending.command.get("id")), None)
        self._update_runtime()
        if not pending.done.done():
            pending.done.set_result(outcome)

    # --- events -----------------------------------------------------------------------------

    def publish(self, name: str, data: dict[str, Any]) -> int:
        if "type" not in data:
            data = {"type": name, **data}
        return self.log.publish(name, data)

    def publish_record(self, record: dict[str, Any]) -> None:
        """A record from rpc mode's code (extension UI requests, extension errors)."""
        if record.get("type") == "extension_ui_request" and record.get("method") in (
            CONFIRM_METHODS | INPUT_METHODS
        ):
            self.dialogs[str(record.get("id"))] = str(record.get("method"))
        self.publish(str(record.get("type") or "notice"), record)
        self._update_runtime()

    def _on_event(self, event: AgentEvent) -> None:
        self.last_used = time.monotonic()
        data = event.to_json()
        kind = event.type
        if kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                self.draft = Draft(message)
        elif kind == "message_update":
            if self.draft is not None:
                self.draft.apply(data, event.get("assistantMessageEvent"))
        elif kind == "message_end":
            self.draft = None
            message = event.get("message")
            if isinstance(message, AssistantMessage) and message.stop_reason == "error":
                self.last_error = message.error_message or "The model request failed"
        elif kind == "tool_execution_start":
            self.running_tools[str(data.get("toolCallId"))] = {
                "toolCallId": data.get("toolCallId"),
                "toolName": data.get("toolName"),
                "args": data.get("args"),
            }
        elif kind == "tool_execution_update":
            running = self.running_tools.get(str(data.get("toolCallId")))
            if running is not None:
                running["partialResult"] = data.get("partialResult")
        elif kind == "tool_execution_end":
            self.running_tools.pop(str(data.get("toolCallId")), None)
        elif kind == "agent_start":
            self.last_error = None  # a new run: the last one's error is history
        elif kind == "agent_end":
            self.draft = None
            self.running_tools.clear()
        self.log.publish(kind, data)
        self._update_when_done(self.agent.run_task)  # also a run an extension started
        self._update_runtime()

    def _on_session_changed(self, what: str, details: dict[str, Any]) -> None:
        self.publish("session_update", {"what": what, **details})

    def _publish_queue(self) -> None:
        self.publish("command_queue", {"commands": self.queued_commands()})

    def queued_commands(self) -> list[dict[str, Any]]:
        return [pending.command for pending in self.queue]

    # --- runtime state ----------------------------------------------------------------------

    def runtime_now(self) -> str:
        if self.dialogs:
            return (
                "paused" if any(m in CONFIRM_METHODS for m in self.dialogs.values()) else "waiting_user_input"
            )
        commands = self.commands
        if commands.busy or commands.compacting or commands.navigating:
            return "executing_tools" if self.running_tools else "generating"
        if commands.bash_running:
            return "executing_tools"
        if self.last_error is not None:
            return "error"
        return "idle"

    def _update_when_done(self, task: asyncio.Task[Any] | None) -> None:
        """A run's last event comes before its task ends: look again when it has (once per task)."""
        if task is None or task.done() or task in self._watched:
            return
        self._watched.add(task)
        task.add_done_callback(self._on_task_done)

    def _on_task_done(self, task: asyncio.Task[Any]) -> None:
        self._watched.discard(task)
        self._update_runtime()

    def _update_runtime(self) -> None:
        state = self.runtime_now()
        if state != self.runtime:
            self.runtime = state
            self.publish("runtime_update", {"runtime": state, "error": self.last_error})

    # --- snapshot ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything a client needs to draw the session now; ``seq`` is the last event it
        reflects (the next event a follower gets is ``seq + 1``). Built without awaiting."""
        agent = self.agent
        return {
            "type": "snapshot",
            "seq": self.log.seq,
            "session": self.describe(),
            "runtime": self.runtime_now(),
            "error": self.last_error,
            "state": self.commands.state_now(),
            "messages": [message.to_json_dict() for message in agent.messages],
            "queue": {
                "commands": self.queued_commands(),
                "steering": [_queued_text(item) for item in agent.steering],
                "followUp": [_queued_text(item) for item in agent.follow_ups],
            },
            "draft": {"message": self.draft_message(), "tools": list(self.running_tools.values())},
            "dialogs": [{"id": key, "method": method} for key, method in self.dialogs.items()],
        }

    def draft_message(self) -> dict[str, Any] | None:
        """The assistant message being streamed as it stands now (pi's message JSON), or None."""
        return self.draft.message() if self.draft is not None else None

    def snapshot_frame(self) -> bytes:
        return sse_frame(self.log.seq, "snapshot", self.snapshot())

    def describe(self) -> dict[str, Any]:
        manager = self.agent.manager
        return {
            "id": self.id,
            "path": str(manager.session_file) if manager.session_file else None,
            "cwd": manager.cwd,
            "name": manager.get_session_name(),
            "readOnly": self.read_only_reason is not None,
            "readOnlyReason": self.read_only_reason,
            "notice": self.started.notice,
            "runtime": self.runtime_now(),
            "model": {"provider": self.agent.model.provider, "id": self.agent.model.id},
        }

    def idle_seconds(self, now: float) -> float | None:
        """How long nothing has happened here, or None while the session is in use (it runs,
        waits for a dialog, has commands queued or a client following it)."""
        if self.followers or self.dialogs or self.busy:
            return None
        return now - self.last_used

    @property
    def busy(self) -> bool:
        """Something runs or waits: deleting or closing the session now would cut it off."""
        return bool(self.queue) or self.runtime_now() not in ("idle", "error")


class Draft:
    """The streamed assistant message, rebuilt from the ``message_update`` deltas exactly as a
    client does (so a snapshot holds what the events up to its seq said, no more, no less).

    Text is kept as a list of parts, joined only for a snapshot: appending stays O(1) per
    delta, and the whole reply is held once (events no longer carry the partial message).
    """

    def __init__(self, start: dict[str, Any]) -> None:
        self.base = {key: value for key, value in start.items() if key != "content"}
        self.blocks: list[dict[str, Any]] = []
        self.parts: list[list[str]] = []
        self.calls: dict[int, Any] = {}
        """Tool-call blocks: the stream's own ToolCall (its arguments parsed as far as they go)."""
        for block in start.get("content") or []:
            self._put(len(self.blocks), dict(block))

    def _put(self, index: int, block: dict[str, Any]) -> None:
        while len(self.blocks) <= index:
            self.blocks.append({"type": "text", "text": ""})
            self.parts.append([])
        self.blocks[index] = block
        self.parts[index] = []
        self.calls.pop(index, None)

    def apply(self, data: dict[str, Any], source: Any) -> None:
        usage = data.get("usage")
        if usage is not None:
            self.base["usage"] = usage
        event = data.get("assistantMessageEvent")
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        index = event.get("contentIndex")
        if not isinstance(index, int) or index < 0:
            return
        if kind == "text_start":
            self._put(index, {"type": "text", "text": ""})
        elif kind == "thinking_start":
            self._put(index, {"type": "thinking", "thinking": ""})
        elif kind == "toolcall_start":
            self._put(
                index,
                {"type": "toolCall", "id": event.get("id"), "name": event.get("toolName"), "arguments": {}},
            )
        elif index >= len(self.blocks):
            return
        elif kind in ("text_delta", "thinking_delta"):
            self.parts[index].append(str(event.get("delta") or ""))
        elif kind == "toolcall_delta":
            call = getattr(source, "tool_call", None)
            if call is not None:
                self.calls[index] = call
        elif kind == "text_end":
            self._put(index, {"type": "text", "text": str(event.get("content") or "")})
        elif kind == "thinking_end":
            self._put(index, {"type": "thinking", "thinking": str(event.get("content") or "")})
        elif kind == "toolcall_end" and isinstance(event.get("toolCall"), dict):
            self._put(index, dict(event["toolCall"]))

    def message(self) -> dict[str, Any]:
        content = []
        for index, block in enumerate(self.blocks):
            parts = self.parts[index]
            call = self.calls.get(index)
            if parts:
                field = "thinking" if block.get("type") == "thinking" else "text"
                block = {**block, field: str(block.get(field) or "") + "".join(parts)}
            elif call is not None:
                block = {**block, "arguments": dict(call.arguments)}
            content.append(block)
        return {**self.base, "content": content}


def _queued_text(item: Any) -> str:
    text = getattr(item, "text", None)
    return text if isinstance(text, str) else str(item)


def cancelled_record(command: dict[str, Any]) -> dict[str, Any]:
    name = str(command.get("type"))
    return response_record(name, command.get("id"), error=f"{name} was cancelled")


def _closing(command: Any) -> dict[str, Any]:
    name = command.get("type") if isinstance(command, dict) else "unknown"
    return {"type": "response", "command": name, "success": False, "error": "The session is closing"}
