"""One ACP session: an AgentSession (the same one the TUI drives) and what the client sees of it.

Events from the agent are turned into ``session/update`` payloads (:mod:`pi_tui.acp.updates`)
and sent in order by one sender task, so a prompt's answer goes out only after every update of
its turn (:meth:`AcpSession.flush`). A prompt runs as a task ``session/cancel`` can stop: the
agent aborts the stream and the running tool, records what happened, and the prompt answers
``cancelled``.

The session is a pi session file like any other: the TUI resumes it, pi opens it. Tree moves
(``/tree``, ``/label``, ``/branch`` typed in the editor's prompt box, or the ``_pi/*`` extension
methods) go through the same code as rpc mode's (:mod:`pi_tui.modes.rpc_commands_tree`) and the
TUI's (:mod:`pi_tui.agent.session_ops`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from pi_tui.acp.client_tools import ClientAccess, client_tools
from pi_tui.acp.history import branch_messages, replay
from pi_tui.acp.options import SessionChoices, SessionTools, config_options, modes_state
from pi_tui.acp.ui import AcpExtensionUI, PermissionState, confirm_tool
from pi_tui.acp.updates import FileTexts, LiveUpdates, Update, message_chunk, thought_chunk
from pi_tui.agent.events import AgentEvent
from pi_tui.agent.session import AgentSession
from pi_tui.agent.session_ops import Moved, SessionOpError, SessionOps
from pi_tui.modes.mcp_status import close_mcp
from pi_tui.modes.rpc_protocol import ABORT_WAIT, BusyError, CommandError, Output
from pi_tui.session import SessionManager
from pi_tui.startup import Started

CLIENT_MCP_WAIT = 30.0
"""Seconds the editor's MCP servers have to start before one that has not is reported."""
REFUSAL = re.compile(r"\((?:stop_reason: )?(?:refusal|sensitive|content_filter)\)")
"""How the providers word a reply the model refused (pi-tui records those as errors)."""


def stop_reason(message: Any, cancelled: bool) -> str:
    """ACP's stop reason for a run that ended with ``message`` (None: no run, e.g. a command)."""
    if cancelled:
        return "cancelled"
    reason = getattr(message, "stop_reason", None)
    if reason == "aborted":
        return "cancelled"
    if reason == "length":
        return "max_tokens"
    if reason == "error" and REFUSAL.search(getattr(message, "error_message", None) or ""):
        return "refusal"
    return "end_turn"


class AcpSession:
    """One session of the client's; ``id`` is the pi session id it was opened with."""

    def __init__(self, session_id: str, started: Started, conn: Any, client_capabilities: Any) -> None:
        self.id = session_id
        self.started = started
        self.agent: AgentSession = started.agent
        self.conn = conn
        runner = started.extensions.runner if started.extensions is not None else None
        self.tools = SessionTools(started.agent, runner)
        self.choices = SessionChoices(self.tools)
        self.files = FileTexts()
        self.live = LiveUpdates(started.agent.cwd, self.files)
        self.access = ClientAccess.from_capabilities(
            conn, session_id, client_capabilities, self.files, self._show_terminal
        )
        self.permissions = PermissionState(ask=self._ask_permission, say=self.say)
        self.choices.confirm = lambda call_id, name, args: confirm_tool(self.permissions, call_id, name, args)
        self._outbox: asyncio.Queue[Update] = asyncio.Queue()
        self._sender = asyncio.ensure_future(self._send_loop())
        self._run: asyncio.Task[Any] | None = None
        self.navigate_task: asyncio.Task[Any] | None = None
        self.bash_task: asyncio.Task[Any] | None = None
        self.output = Output(sys.stderr.buffer)
        self.session_changed: Callable[[str, dict[str, Any]], None] = self._tell_changed
        self.cancelled = False
        self.cancels = 0
        """``session/cancel`` requests so far (a waiting prompt compares it, see :meth:`turn`)."""
        self._turns = asyncio.Lock()
        self._watchers: set[asyncio.Task[Any]] = set()
        self._unsubscribe = started.agent.subscribe(self._on_event)
        started.agent.set_save_listener(self._save_failed)
        self.closed = False

    # --- lifetime -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Extensions (trusted folders only: startup decided) see the session start; then the
        file and shell tools go through the client where it offered to take them."""
        await self._start_extensions()
        self._use_client_tools()

    def _use_client_tools(self) -> None:
        if not self.access.any:
            return
        self.tools.set_builtins(client_tools(self.tools.builtins(), self.access))
        self.agent.loadout_pool = client_tools(list(self.agent.loadout_pool), self.access)

    async def _start_extensions(self) -> None:
        setup = self.started.extensions
        if setup is None:
            return
        runner = setup.runner
        for line in setup.lines:
            print(f"pi-tui acp: {line}", file=sys.stderr, flush=True)
        runner.ui = AcpExtensionUI(self.permissions)
        runner.report = lambda line: print(f"pi-tui acp: {line}", file=sys.stderr, flush=True)
        await runner.finish_activation()
        await runner.session_start("startup")

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.cancel()
        if self._run is not None:
            await asyncio.wait([self._run], timeout=ABORT_WAIT)
        setup = self.started.extensions
        if setup is not None:
            with contextlib.suppress(Exception):
                await setup.runner.session_shutdown("quit")
        self._unsubscribe()
        for watcher in list(self._watchers):
            watcher.cancel()
        await close_mcp(self.agent.mcp)
        with contextlib.suppress(Exception):
            self.agent.manager.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), 2.0)
        self._sender.cancel()

    # --- what the client sees -----------------------------------------------------------------

    def post(self, update: Update) -> None:
        if not self.closed:
            self._outbox.put_nowait(update)

    def say(self, text: str) -> None:
        """A line for the user, as the agent's thought (it never enters the conversation)."""
        self.post(thought_chunk(text))

    async def flush(self) -> None:
        """Wait until every posted update is written (a prompt answers after its updates)."""
        await self._outbox.join()

    async def _send_loop(self) -> None:
        gone = False
        while True:
            update = await self._outbox.get()
            try:
                if not gone:
                    await self.conn.session_update(session_id=self.id, update=update)
            except ConnectionError:
                gone = True  # the editor went away: the rest is dropped, quietly
            except Exception as error:  # a payload of ours the SDK refused: a bug, said once each
                print(f"pi-tui acp: an update was not sent: {error}", file=sys.stderr, flush=True)
            finally:
                self._outbox.task_done()

    def _on_event(self, event: AgentEvent) -> None:
        if event.type == "tool_execution_start":
            self.permissions.current_call = (event["toolCallId"], event["toolName"], event.get("args"))
        elif event.type == "tool_execution_end":
            self.permissions.current_call = None
        for update in self.live.updates(event):
            self.post(update)
        if event.type == "tool_execution_end":
            self.live.terminals.pop(event["toolCallId"], None)
        if event.type == "thinking_level_changed":
            self.post_options()

    def watch_client_servers(self, mcp: Any, names: list[str]) -> None:
        """Tell the user when an MCP server the editor handed over does not start (a missing
        command, a dead address): the model would otherwise just never find its tools."""

        async def watch() -> None:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + CLIENT_MCP_WAIT
            waiting = set(names)
            while waiting:
                statuses = {status.name: status for status in mcp.statuses()}
                for name in sorted(waiting):
                    status = statuses.get(name)
                    if status is not None and status.state == "connected":
                        waiting.discard(name)
                    elif status is not None and status.state in ("failed", "needs-sign-in", "disconnected"):
                        waiting.discard(name)
                        self._say_server_down(name, status.error or status.state)
                if not waiting:
                    return
                if loop.time() >= deadline:
                    for name in sorted(waiting):
                        self._say_server_down(name, f"no answer within {CLIENT_MCP_WAIT:g} s")
                    return
                await asyncio.sleep(0.2)  # a server's state is the MCP thread's: looked at, not awaited

        self._watchers.add(task := asyncio.ensure_future(watch()))
        task.add_done_callback(self._watchers.discard)

    def _save_failed(self, line: str) -> None:
        """The session file could not be written (a full disk): said where the user looks."""
        print(f"pi-tui acp: {line}", file=sys.stderr, flush=True)
        self.post(message_chunk(f"pi-tui: {line}\n"))

    def _say_server_down(self, name: str, why: str) -> None:
        line = f"the editor's MCP server {name!r} is not available: {why}"
        print(f"pi-tui acp: {line}", file=sys.stderr, flush=True)
        self.post(message_chunk(f"pi-tui: {line}\n"))

    def post_options(self) -> None:
        self.post({"sessionUpdate": "config_option_update", "configOptions": self.options()})

    def _show_terminal(self, call_id: str, terminal_id: str) -> None:
        self.live.terminals[call_id] = terminal_id
        self.post(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "content": [{"type": "terminal", "terminalId": terminal_id}],
            }
        )

    async def _ask_permission(self, call: dict[str, Any], options: list[dict[str, Any]]) -> Any:
        await self.flush()  # the call the question is about is on the client's screen first
        return await self.conn.request_permission(session_id=self.id, tool_call=call, options=options)

    def _tell_changed(self, what: str, details: dict[str, Any]) -> None:
        if what == "name":
            self.post(
                {"sessionUpdate": "session_info_update", "title": self.agent.manager.get_session_name()}
            )

    def options(self) -> list[dict[str, Any]]:
        return config_options(self.agent, self.started.registry, self.choices)

    def modes(self) -> dict[str, Any]:
        return modes_state(self.choices)

    def history(self) -> list[Update]:
        return replay(branch_messages(self.agent.manager.get_branch()), self.agent.cwd)

    # --- prompts ------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._run is not None and not self._run.done()

    @property
    def bash_running(self) -> bool:
        return False

    def ensure_idle_for(self, what: str) -> None:
        if self.busy or (self.navigate_task is not None and not self.navigate_task.done()):
            raise BusyError(f"Cannot {what} while the agent is running; wait for it or cancel")

    async def run_prompt(self, text: str, images: list[Any]) -> str:
        """Run one prompt to its end; the ACP stop reason."""
        self.cancelled = False
        self._run = run = asyncio.ensure_future(self.agent.prompt(text, images, source="acp"))
        message: Any = None
        try:
            message = await run
        except asyncio.CancelledError:
            if not run.cancelled():
                raise  # our own caller went away
        finally:
            self._run = None
        await self.flush()
        reason = stop_reason(message, self.cancelled)
        if reason == "end_turn" and getattr(message, "stop_reason", None) == "error":
            raise PromptFailed(getattr(message, "error_message", None) or "The model request failed")
        return reason

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[bool]:
        """Wait for the prompts before this one (an editor may send the next prompt before the
        cancelled one has answered, or while one runs); True when no cancel came meanwhile,
        False when ``session/cancel`` also cancelled this prompt while it waited."""
        asked_at = self.cancels
        async with self._turns:
            yield self.cancels == asked_at

    def cancel(self) -> None:
        """``session/cancel``: stop the stream and the running tool (the run records it), and
        the prompts waiting behind it."""
        self.cancels += 1
        self.cancelled = True
        if self.busy:
            self.agent.abort()
        if self.navigate_task is not None and not self.navigate_task.done():
            self.navigate_task.cancel()

    # --- session moves ------------------------------------------------------------------------

    def session_ops(self) -> SessionOps:
        return SessionOps(self.agent, self._adopt, self._extensions_allow)

    async def _adopt(self, manager: SessionManager, reason: str, restore_model: bool, previous: Any) -> None:
        self.agent.adopt(manager, self.started.registry.usable if restore_model else None)
        setup = self.started.extensions
        if setup is not None:
            target = self.agent.manager.session_file
            await setup.runner.session_shutdown(reason, str(target) if target else None)
            await setup.runner.session_start(reason, str(previous) if previous else None)

    async def _extensions_allow(self, event: str, **fields: Any) -> bool:
        setup = self.started.extensions
        if setup is None or not setup.runner.wants(event):
            return True
        answer = await setup.runner.before(event, **fields)
        return not (answer is not None and answer.get("cancel"))

    async def branch_off(self, command: str, entry_id: str, position: str) -> Moved:
        self.ensure_idle_for(command)
        try:
            return await self.session_ops().fork(entry_id, position)
        except SessionOpError as error:
            raise CommandError(str(error)) from None


class PromptFailed(Exception):
    """The model request failed (network, provider error): the prompt answers with an error."""
