"""``--mode rpc``: drive the agent with JSON lines on stdin, answer with JSON lines on stdout.

The protocol is pi's: every input line is a command ``{"type": ..., "id"?: ...}``; every command
gets exactly one ``{"type": "response", "command", "success", "id"?, "data"?, "error"?}``; every
agent event is written as it happens (``AgentEvent.to_json``). Records are split on ``\\n`` only
(a trailing ``\\r`` is dropped), because JSON strings may legally hold U+2028/U+2029 and generic
line readers would cut there.

Why the structure looks the way it does:

- stdin is read without blocking the event loop, so ``abort`` and ``steer`` arrive while a
  prompt streams; each prompt runs as its own task and the command loop keeps reading.
- Commands that can take a while (``bash``, ``compact``) also run as tasks, so ``abort`` /
  ``abort_bash`` can reach them; everything else is answered inline, in order.
- stdout belongs to the protocol alone: one writer, one flush per record, and ``sys.stdout`` is
  pointed at stderr while the mode runs so a stray ``print`` can never corrupt the stream.
- A bad line (invalid JSON, unknown command, wrong field) is answered with ``success: false``
  and never ends the process. End of input aborts what is running, closes the session file and
  exits 0. SIGTERM, SIGHUP and SIGINT do the same after killing every running command with all
  it started, and exit 128 + the signal (143, 129, 130); see ``exit_signals``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import traceback
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from pydantic import ValidationError

from pi_tui import jsonio
from pi_tui.agent.events import AgentEvent
from pi_tui.agent.history import CompactionFailed, compaction_json
from pi_tui.agent.session import AgentBusyError, AgentSession
from pi_tui.agent.session_ops import Moved, SessionOpError, SessionOps, message_text, user_message_entry
from pi_tui.ai.http import close_shared_client
from pi_tui.ai.thinking import supported_levels
from pi_tui.ai.types import Model
from pi_tui.commands import CommandRegistry
from pi_tui.messages import THINKING_LEVELS, AssistantMessage, BashExecutionMessage, ImageContent, UserMessage
from pi_tui.modes.exit_signals import ExitSignals
from pi_tui.modes.mcp_status import MCP_PATH, close_mcp, mcp_words, rpc_command, rpc_say, run_mcp_command
from pi_tui.modes.rpc_commands_pi1 import pi1_handlers
from pi_tui.modes.rpc_commands_session import session_handlers
from pi_tui.modes.rpc_commands_tree import tree_handlers
from pi_tui.modes.rpc_protocol import (
    ABORT_WAIT,
    NO_DATA,
    BusyError,
    CommandError,
    Deferred,
    FailedError,
    Handler,
    Output,
    log,
    model_json,
    read_lines,
    response_record,
)
from pi_tui.modes.rpc_ui import RpcExtensionUI
from pi_tui.session import SessionManager
from pi_tui.session.entries import MessageEntry
from pi_tui.startup import Started
from pi_tui.tools.bash import kill_running_commands

# --- the server -----------------------------------------------------------------------------


class RpcServer:
    """Executes commands against one AgentSession and reports through one :class:`Output`."""

    def __init__(self, started: Started, output: Output) -> None:
        self.started = started
        self.agent: AgentSession = started.agent
        self.registry = started.registry
        self.output = output
        self.commands = CommandRegistry()
        if self.agent.expander is not None:
            from pi_tui.resources.expander import register_commands

            for problem in register_commands(self.commands, self.agent.expander):
                log(problem)
        options = started.options
        self.mcp_command = options is None or not options.no_mcp
        """``/mcp`` prompts print the MCP status (pi's built-in MCP extension; not under --no-mcp)."""
        if self.mcp_command and self.agent.mcp is not None:
            self.commands.unregister("mcp")  # the TUI's built-in: here it is pi's extension command
            self.commands.register(rpc_command())
        self.extension_ui: RpcExtensionUI | None = None
        """Set when extensions run: their dialogs wait for ``extension_ui_response`` lines."""
        self.stop = asyncio.Event()
        self._prompt_task: asyncio.Task[Any] | None = None
        self.bash_task: asyncio.Task[Any] | None = None
        self._compact_task: asyncio.Task[Any] | None = None
        self.navigate_task: asyncio.Task[Any] | None = None
        """A tree move under way (a branch summary being written): ``abort`` cancels it."""
        self.session_changed: Callable[[str, dict[str, Any]], None] = lambda what, details: None
        """Told after a label, name or tree move (the server tells its clients; rpc: nobody)."""
        self._background: set[asyncio.Task[Any]] = set()
        self._answers: set[asyncio.Task[Any]] = set()
        """Responses still to be written (see :class:`Deferred`)."""
        self._handlers: dict[str, tuple[Handler, bool]] = {
            # name: (handler, runs as its own task)
            "prompt": (self.cmd_prompt, False),
            "steer": (self.cmd_steer, False),
            "follow_up": (self.cmd_follow_up, False),
            "abort": (self.cmd_abort, False),
            "get_state": (self.cmd_get_state, False),
            "get_commands": (self.cmd_get_commands, False),
            "get_messages": (self.cmd_get_messages, False),
            "set_model": (self.cmd_set_model, False),
            "cycle_model": (self.cmd_cycle_model, False),
            "get_available_models": (self.cmd_get_available_models, False),
            "set_thinking_level": (self.cmd_set_thinking_level, False),
            "cycle_thinking_level": (self.cmd_cycle_thinking_level, False),
            "set_auto_compaction": (self.cmd_set_auto_compaction, False),
            "set_steering_mode": (self.cmd_set_steering_mode, False),
            "set_follow_up_mode": (self.cmd_set_follow_up_mode, False),
            "compact": (self.cmd_compact, True),
            "new_session": (self.cmd_new_session, False),
            "switch_session": (self.cmd_switch_session, False),
            "fork": (self.cmd_fork, False),
            "get_fork_messages": (self.cmd_get_fork_messages, False),
            "abort_bash": (self.cmd_abort_bash, False),
            "get_last_assistant_text": (self.cmd_get_last_assistant_text, False),
            "set_session_name": (self.cmd_set_session_name, False),
            **session_handlers(self),
            **pi1_handlers(self),
            **tree_handlers(self),
        }

    # --- the loop ---------------------------------------------------------------------------

    async def serve(self, lines: AsyncIterator[bytes]) -> None:
        """Handle input until it ends or a stop is requested (signal, closed stdout)."""

        async def consume() -> None:
            async for line in lines:
                await self.handle_line(line)
                if self.stop.is_set():
                    break

        reading = asyncio.create_task(consume())
        stopping = asyncio.create_task(self.stop.wait())
        try:
            await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reading, stopping):
                task.cancel()
            await asyncio.gather(reading, stopping, return_exceptions=True)
            if reading.done() and not reading.cancelled() and reading.exception() is not None:
                log(f"reading stdin failed: {reading.exception()}")

    async def handle_line(self, raw: bytes) -> None:
        if not raw.strip():
            return  # blank lines are not commands; answering them would only confuse clients
        try:
            jsonio.check_depth(raw)  # a value nested deeper would be walked recursively later (see jsonio)
            command = orjson.loads(raw)
        except ValueError as error:  # orjson's JSONDecodeError and jsonio's TooDeepError
            self.respond("parse", None, error=f"Failed to parse command: {error}")
            return
        if not isinstance(command, dict):
            self.respond("parse", None, error='Failed to parse command: expected a JSON object with a "type"')
            return
        await self.dispatch(command)

    async def dispatch(self, command: dict[str, Any]) -> None:
        name = command.get("type")
        request_id = command.get("id")
        if name == "extension_ui_response":  # an answer to one of our requests: never answered
            if self.extension_ui is None or not self.extension_ui.answer(command):
                log(f"extension_ui_response for no open dialog (id {request_id!r}): ignored")
            return
        if not isinstance(name, str) or not name:
            self.respond("unknown", request_id, error='Command has no "type" field')
            return
        entry = self._handlers.get(name)
        if entry is None:
            self.respond(name, request_id, error=f"Unknown command: {name}")
            return
        handler, background = entry
        if background:
            task = asyncio.create_task(self._execute(name, request_id, handler, command))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        else:
            await self._execute(name, request_id, handler, command)

    async def _execute(self, name: str, request_id: Any, handler: Handler, command: dict[str, Any]) -> None:
        try:
            data = await handler(command)
            if isinstance(data, Deferred):
                answer = data.answer
                task = asyncio.create_task(self._execute(name, request_id, lambda _command: answer, command))
                self._background.add(task)
                self._answers.add(task)
                task.add_done_callback(self._background.discard)
                task.add_done_callback(self._answers.discard)
                return
        except CommandError as error:
            self.respond(name, request_id, error=str(error))
        except asyncio.CancelledError:
            self.respond(name, request_id, error=f"{name} was cancelled")
            raise
        except Exception as error:  # a bug must cost one command, never the whole session
            log(f"{name} failed:\n{traceback.format_exc()}")
            self.respond(name, request_id, error=f"{name} failed: {type(error).__name__}: {error}")
        else:
            self.respond(name, request_id, data=data)

    def respond(
        self, command: str, request_id: Any, *, data: Any = NO_DATA, error: str | None = None
    ) -> None:
        self.output.send(response_record(command, request_id, data=data, error=error))

    def on_event(self, event: AgentEvent) -> None:
        if event.type in ("message_start", "message_end") and isinstance(
            event.get("message"), BashExecutionMessage
        ):
            return  # as pi 1.x: a user shell command is told by bash_execution_update and its answer
        self.output.send(event.to_json())

    async def shutdown(self) -> None:
        """Abort whatever still runs, then release the session file and the HTTP client."""
        await self.close_session()
        with contextlib.suppress(Exception):
            await close_shared_client()

    async def close_session(self) -> None:
        """Abort whatever still runs and release the session file (the shared HTTP client stays:
        the server mode closes one session of many)."""
        self._abort_all()
        tasks = self._tasks()
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=ABORT_WAIT)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)
        await close_mcp(self.agent.mcp)  # the session's MCP servers stop with it
        with contextlib.suppress(Exception):
            self.agent.manager.close()

    def _tasks(self) -> set[asyncio.Task[Any]]:
        tasks = set(self._background)
        if self._prompt_task is not None and not self._prompt_task.done():
            tasks.add(self._prompt_task)
        return tasks

    # --- state helpers ----------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A prompt is accepted and not finished (its task may not have started yet)."""
        running = self._prompt_task is not None and not self._prompt_task.done()
        return running or self.agent.is_streaming

    @property
    def bash_running(self) -> bool:
        return self.bash_task is not None and not self.bash_task.done()

    @property
    def _compacting(self) -> bool:
        return self._compact_task is not None and not self._compact_task.done()

    @property
    def navigating(self) -> bool:
        return self.navigate_task is not None and not self.navigate_task.done()

    def _abort_prompt(self) -> None:
        """Stop the accepted prompt, whether its run has begun or not.

        A prompt task that has not started yet is cancelled outright: ``AgentSession.abort``
        would be forgotten, because a run clears the abort flag when it begins.
        """
        task = self._prompt_task
        if task is None or task.done():
            return
        if self.agent.is_streaming:
            self.agent.abort()
        else:
            task.cancel()

    def _abort_all(self) -> None:
        """What ``abort`` means: the prompt, a compaction and a user shell command all stop."""
        self._abort_prompt()
        if self._compact_task is not None and not self._compact_task.done():
            self._compact_task.cancel()
        if self.bash_running:
            self.agent.abort()
        if self.navigating:
            assert self.navigate_task is not None
            self.navigate_task.cancel()  # a branch summary being written: the move is dropped

    async def _settle(self) -> None:
        """Abort a running prompt and wait until it has recorded its end.

        Session switches do this first (as pi does), so a run never writes into the session
        that replaced its own.
        """
        task = self._prompt_task
        if task is None or task.done():
            return
        self._abort_prompt()
        _done, pending = await asyncio.wait({task}, timeout=ABORT_WAIT)
        if pending:
            raise BusyError("The running prompt did not stop after abort; try again")

    def ensure_idle_for(self, what: str) -> None:
        """Refuse ``what`` while a shell command, a compaction or a tree move is going."""
        if self.bash_running:
            raise BusyError(f"Cannot {what} while a bash command runs; wait for it or send abort_bash")
        if self._compacting:
            raise BusyError(f"Cannot {what} while compacting; wait for it or send abort")
        if self.navigating:
            raise BusyError(f"Cannot {what} while moving in the tree; wait for it or send abort")

    def session_ops(self) -> SessionOps:
        """The shared session moves (:mod:`pi_tui.agent.session_ops`) on this server's agent."""
        return SessionOps(self.agent, self._adopt, self._extensions_allow)

    async def _adopt(self, manager: SessionManager, reason: str, restore_model: bool, previous: Any) -> None:
        """Make ``manager`` the agent's session (new, switched or forked) and tell extensions;
        ``restore_model`` continues with the session's own model and thinking level when known."""
        self.agent.adopt(manager, self.registry.usable if restore_model else None)
        await self._extensions_moved(reason, previous)

    async def _extensions_allow(self, event: str, **fields: Any) -> bool:
        """False when an extension's ``session_before_*`` handler cancels the move."""
        extensions = self.started.extensions
        if extensions is None or not extensions.runner.wants(event):
            return True
        answer = await extensions.runner.before(event, **fields)
        return not (answer is not None and answer.get("cancel"))

    async def _extensions_moved(self, reason: str, previous: Any) -> None:
        """Tell extensions the session was replaced (``session_shutdown``, ``session_start``)."""
        extensions = self.started.extensions
        if extensions is None:
            return
        target = self.agent.manager.session_file
        await extensions.runner.session_shutdown(reason, str(target) if target else None)
        await extensions.runner.session_start(reason, str(previous) if previous else None)

    # --- prompting --------------------------------------------------------------------------

    @staticmethod
    def _text_and_images(command: dict[str, Any]) -> tuple[str, list[ImageContent]]:
        text = command.get("message")
        if not isinstance(text, str):
            raise CommandError('"message" must be a string')
        raw_images = command.get("images") or []
        if not isinstance(raw_images, list):
            raise CommandError('"images" must be a list of {"type":"image","data","mimeType"} objects')
        try:
            images = [ImageContent.model_validate(item) for item in raw_images]
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise CommandError(f"Invalid image ({where}): {first['msg']}") from None
        return text, images

    async def cmd_prompt(self, command: dict[str, Any]) -> Any:
        text, images = self._text_and_images(command)
        words = mcp_words(text) if self.mcp_command else None
        if words is not None:  # /mcp answers with notify requests, busy or not, and runs no turn
            answer = asyncio.create_task(run_mcp_command(self.agent.mcp, words, rpc_say(self.output.send)))
            self._background.add(answer)
            answer.add_done_callback(self._background.discard)
            return {"disposition": "handled"}
        behavior = command.get("streamingBehavior")
        if behavior not in (None, "steer", "followUp"):
            raise CommandError('"streamingBehavior" must be "steer" or "followUp"')
        if self.busy:
            if behavior is None:
                raise BusyError(
                    'The agent is already running; send the prompt with "streamingBehavior": '
                    '"steer" or "followUp", or use steer / follow_up'
                )
            if behavior == "steer":
                self.agent.steer(text, images)
            else:
                self.agent.follow_up(text, images)
            return {"disposition": "queued"}
        self.ensure_idle_for("prompt")
        # Accepted: the answer (pi 1.x's disposition: started, or handled by an extension) goes
        # out once the agent has decided, before the run's first event.
        decided: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._run_prompt(text, images, decided))
        self._prompt_task = task
        return Deferred(self._disposition(decided, task))

    @staticmethod
    async def _disposition(decided: asyncio.Future[str], task: asyncio.Task[Any]) -> Any:
        # A task cancelled before its first step (an abort sent with the prompt) never runs
        # the prompt, whose own code would have said "handled".
        def settle(_task: asyncio.Task[Any]) -> None:
            if not decided.done():
                decided.set_result("handled")

        task.add_done_callback(settle)
        # Awaited directly: the answer goes out one step after the agent decided, ahead of
        # the run's first event (the agent yields once after deciding).
        return {"disposition": await decided}

    async def _run_prompt(self, text: str, images: list[ImageContent], decided: asyncio.Future[str]) -> None:
        def accepted(disposition: str) -> None:
            if not decided.done():
                decided.set_result(disposition)

        try:
            await self.agent.prompt(text, images, source="rpc", accepted=accepted)
        except AgentBusyError as error:  # only if something else started a run meanwhile
            if not decided.done():
                decided.set_exception(BusyError(str(error)))
            log(f"prompt dropped: {error}")
        except Exception as error:
            if not decided.done():
                decided.set_exception(CommandError(f"prompt failed: {type(error).__name__}: {error}"))
            log(f"the prompt failed:\n{traceback.format_exc()}")
        finally:
            if not decided.done():
                decided.set_result("handled")  # ended without a run and without a word

    async def cmd_steer(self, command: dict[str, Any]) -> Any:
        text, images = self._text_and_images(command)
        self.agent.steer(text, images)
        return {"disposition": "queued"}

    async def cmd_follow_up(self, command: dict[str, Any]) -> Any:
        text, images = self._text_and_images(command)
        self.agent.follow_up(text, images)
        return {"disposition": "queued"}

    async def cmd_abort(self, command: dict[str, Any]) -> Any:
        """Abort and answer once the run has ended, so the next prompt is accepted at once."""
        self._abort_all()
        task = self._prompt_task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=ABORT_WAIT)
        if self._answers:  # the aborted prompt's own answer comes first
            await asyncio.wait(set(self._answers), timeout=ABORT_WAIT)
        return NO_DATA

    # --- state ------------------------------------------------------------------------------

    async def cmd_get_state(self, command: dict[str, Any]) -> Any:
        return self.state_now()

    def state_now(self) -> dict[str, Any]:
        """``get_state``'s answer, built without awaiting (the server's snapshots need that)."""
        state = dict(self.agent.state())
        state["isStreaming"] = self.busy
        state["isCompacting"] = self._compacting
        if state.get("sessionName") is None:
            state.pop("sessionName", None)
        return state

    async def cmd_get_commands(self, command: dict[str, Any]) -> Any:
        # Built-ins are left out on purpose: only the TUI runs them, ``prompt`` would not.
        return {"commands": self.commands.rpc_commands()}

    async def cmd_get_messages(self, command: dict[str, Any]) -> Any:
        return {"messages": [message.to_json_dict() for message in self.agent.messages]}

    # --- model and thinking -----------------------------------------------------------------

    async def cmd_set_model(self, command: dict[str, Any]) -> Any:
        provider, model_id = command.get("provider"), command.get("modelId")
        if not isinstance(provider, str) or not isinstance(model_id, str):
            raise CommandError('set_model needs "provider" and "modelId" strings')
        model = self.registry.get(provider, model_id)
        if model is None:
            raise CommandError(f"Model not found: {provider}/{model_id}")
        self.agent.set_model(model)
        return model_json(model)

    def _keyed_models(self) -> list[Model]:
        return [
            m for m in self.registry.all() if m.provider != "offline" and self.registry.has_key(m.provider)
        ]

    async def cmd_cycle_model(self, command: dict[str, Any]) -> Any:
        candidates = self._keyed_models()
        current = self.agent.model
        position = next(
            (i for i, m in enumerate(candidates) if (m.provider, m.id) == (current.provider, current.id)), -1
        )
        if not candidates:
            raise CommandError("No models with an API key to cycle to")
        if position >= 0 and len(candidates) == 1:
            return None  # pi: null data when there is nothing else to switch to
        model = candidates[(position + 1) % len(candidates)]
        self.agent.set_model(model, source="cycle")
        return {"model": model_json(model), "thinkingLevel": self.agent.thinking_level, "isScoped": False}

    async def cmd_get_available_models(self, command: dict[str, Any]) -> Any:
        return {"models": [model_json(model) for model in self._keyed_models()]}

    async def cmd_set_thinking_level(self, command: dict[str, Any]) -> Any:
        level = command.get("level")
        if not isinstance(level, str) or level not in THINKING_LEVELS:
            raise CommandError(f"Unknown thinking level {level!r}; use one of {', '.join(THINKING_LEVELS)}")
        self.agent.set_thinking_level(level)
        return NO_DATA

    async def cmd_cycle_thinking_level(self, command: dict[str, Any]) -> Any:
        if not self.agent.model.reasoning:
            return None
        levels = list(supported_levels(self.agent.model))  # pi 1.x: the levels this model has
        current = self.agent.thinking_level
        level = levels[(levels.index(current) + 1) % len(levels)] if current in levels else levels[0]
        self.agent.set_thinking_level(level)
        return {"level": level}

    async def cmd_set_auto_compaction(self, command: dict[str, Any]) -> Any:
        enabled = command.get("enabled")
        if not isinstance(enabled, bool):
            raise CommandError('"enabled" must be true or false')
        self.agent.settings.compaction.enabled = enabled
        return NO_DATA

    async def cmd_set_steering_mode(self, command: dict[str, Any]) -> Any:
        return self._set_queue_mode(command, "steeringMode")

    async def cmd_set_follow_up_mode(self, command: dict[str, Any]) -> Any:
        return self._set_queue_mode(command, "followUpMode")

    def _set_queue_mode(self, command: dict[str, Any], key: str) -> Any:
        """As pi: the mode applies from the next turn and is saved in the global settings (a file
        that cannot be written does not fail the command; the mode still applies)."""
        from pi_tui.config.settings import SettingsError, update_global_settings

        mode = command.get("mode")
        if mode not in ("one-at-a-time", "all"):
            raise CommandError('"mode" must be "one-at-a-time" or "all"')
        if key == "steeringMode":
            self.agent.settings.steering_mode = mode
        else:
            self.agent.settings.follow_up_mode = mode
        with contextlib.suppress(OSError, SettingsError):
            update_global_settings({key: mode})
        return NO_DATA

    # --- compaction -------------------------------------------------------------------------

    async def cmd_compact(self, command: dict[str, Any]) -> Any:
        compact = getattr(self.agent, "compact", None)
        if compact is None:
            raise CommandError("Compaction is not available in this version of pi-tui")
        instructions = command.get("customInstructions")
        if instructions is not None and not isinstance(instructions, str):
            raise CommandError('"customInstructions" must be a string')
        if self._compacting:
            raise BusyError("A compaction is already running")
        if self.bash_running:
            raise BusyError("Cannot compact while a bash command runs; wait for it or send abort_bash")
        await self._settle()  # pi aborts a running prompt before compacting
        self._compact_task = asyncio.current_task()
        try:
            result = await compact(instructions)
        except CompactionFailed as error:
            raise FailedError(f"Compaction failed: {error}") from None
        finally:
            self._compact_task = None
        if result is None:
            raise CommandError("Nothing to compact (the session is too small)")
        return compaction_json(result, self.agent.messages)

    # --- sessions ---------------------------------------------------------------------------

    async def cmd_new_session(self, command: dict[str, Any]) -> Any:
        self.ensure_idle_for("start a new session")
        await self._settle()
        moved = await self.session_ops().new_session()
        return {"cancelled": moved.cancelled}

    async def cmd_switch_session(self, command: dict[str, Any]) -> Any:
        path = command.get("sessionPath")
        if not isinstance(path, str) or not path:
            raise CommandError('switch_session needs a "sessionPath"')
        self.ensure_idle_for("switch sessions")
        await self._settle()
        try:
            moved = await self.session_ops().switch_session(path)
        except SessionOpError as error:
            raise CommandError(str(error)) from None
        return {"cancelled": moved.cancelled}

    async def cmd_fork(self, command: dict[str, Any]) -> Any:
        entry_id = command.get("entryId")
        if not isinstance(entry_id, str) or not entry_id:
            raise CommandError('fork needs the "entryId" of a user message')
        entry = user_message_entry(self.agent.manager, entry_id)
        if entry is None:
            raise CommandError(f"Invalid entry ID for forking: {entry_id} is not a user message")
        moved = await self.branch_off("fork", entry.id, "before")
        return {"text": message_text(entry.message), "cancelled": moved.cancelled}

    async def branch_off(self, command: str, entry_id: str, position: str) -> Moved:
        """Go on in a new session file holding the branch up to ``entry_id`` (``position``, as
        :meth:`SessionOps.fork`): rpc ``fork`` and ``clone``, once nothing else runs."""
        self.ensure_idle_for(command)
        await self._settle()
        try:
            return await self.session_ops().fork(entry_id, position)
        except SessionOpError as error:
            raise CommandError(str(error)) from None

    async def cmd_get_fork_messages(self, command: dict[str, Any]) -> Any:
        messages = [
            {"entryId": entry.id, "text": message_text(entry.message)}
            for entry in self.agent.manager.get_branch()
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)
        ]
        return {"messages": messages}

    async def cmd_get_last_assistant_text(self, command: dict[str, Any]) -> Any:
        for message in reversed(self.agent.messages):
            if not isinstance(message, AssistantMessage):
                continue
            if message.stop_reason == "aborted" and not message.content:
                continue  # an abort before any output says nothing; look further back
            text = message_text(message)
            return {"text": text or None}
        return {"text": None}

    async def cmd_set_session_name(self, command: dict[str, Any]) -> Any:
        name = command.get("name")
        if not isinstance(name, str) or not name.strip():
            raise CommandError('set_session_name needs a non-empty "name"')
        self.agent.set_session_name(name)
        return NO_DATA

    # --- shell --------------------------------------------------------------------------------

    async def cmd_abort_bash(self, command: dict[str, Any]) -> Any:
        if self.bash_running and not self.busy:
            self.agent.abort()  # with no run going, this only stops the shell command
        return NO_DATA


def start_extensions_ui(server: RpcServer, started: Started) -> None:
    """Extensions talk to the client (ctx.ui requests, extension_error) and to stderr."""
    setup = started.extensions
    runner = setup.runner
    for line in setup.lines:
        log(line)
    server.extension_ui = RpcExtensionUI(server.output.send)
    runner.ui = server.extension_ui
    runner.report = log

    def extension_error(path: str, event: str, error: str) -> None:
        server.output.send({"type": "extension_error", "extensionPath": path, "event": event, "error": error})

    runner.on_error = extension_error
    runner.changed.append(lambda: register_extension_commands(server, runner))


def register_extension_commands(server: RpcServer, runner: Any) -> None:
    """Extension commands in ``get_commands`` (a prompt of ``/name args`` runs them)."""
    from pi_tui.commands import SlashCommand

    for command in [c for c in server.commands.all() if c.source == "extension" and c.path != MCP_PATH]:
        server.commands.unregister(command.name)  # /mcp stays: pi's built-in MCP extension's
    for command in runner.commands.values():
        loaded = next((e for e in runner.extensions if e.name == command.extension), None)
        path = str(loaded.source.entry) if loaded is not None else None
        with contextlib.suppress(ValueError):
            server.commands.register(
                SlashCommand(
                    command.name, command.description, usage=command.usage, source="extension", path=path
                )
            )


async def run_rpc(started: Started) -> int:
    """Serve the RPC protocol on stdin/stdout until the input ends; returns the exit code."""
    real_stdout = sys.stdout
    server: RpcServer | None = None

    def request_stop() -> None:
        if server is not None:
            server.stop.set()

    output = Output(real_stdout.buffer, on_closed=request_stop)
    server = RpcServer(started, output)
    if started.notice:
        log(started.notice)
    extensions = started.extensions.runner if started.extensions is not None else None
    if extensions is not None:
        start_extensions_ui(server, started)
    started.agent.set_save_listener(log)  # a failed save (disk full): one line on stderr
    unsubscribe = started.agent.subscribe(server.on_event)
    sys.stdout = sys.stderr  # nothing but protocol records may reach the real stdout
    signals = ExitSignals(
        lambda _signum: request_stop(),
        signals=(signal.SIGTERM, signal.SIGINT, signal.SIGHUP),
        last_resort=started.agent.manager.close,
        force_after=ABORT_WAIT + 2.0,
    )
    signals.install()
    stdin = sys.stdin.buffer if sys.stdin is not None else None
    try:
        if extensions is not None:
            await extensions.finish_activation()
            register_extension_commands(server, extensions)
            await extensions.session_start("startup")
        await server.serve(read_lines(stdin))
    finally:
        kill_running_commands()  # whatever ended the input, no command outlives the mode
        if server.extension_ui is not None:
            server.extension_ui.cancel_all()
        if extensions is not None:
            await extensions.session_shutdown("quit")
        await server.shutdown()
        unsubscribe()
        signals.remove()
        sys.stdout = real_stdout
    return signals.exit_code or 0
