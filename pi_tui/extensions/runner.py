"""The extensions of one pi-tui process: loading them, calling their handlers, doing their
actions on the agent.

Three kinds of calls reach handlers:

- **hooks** the agent awaits at the point they may change something (``tool_call`` may block a
  call, ``context`` may rewrite the messages, ``message_end`` may replace a message...), in load
  order, each seeing what the previous one made (:class:`~pi_tui.agent.hooks.AgentHooks`);
- **notifications** from the agent's event bus (``turn_start``, ``tool_execution_update``...)
  and from the rest of the program (``model_select``...): queued and handled one after the other
  by a worker task, so a slow async handler never holds up the stream. Before a tool call and at
  the end of a run the agent waits for the queue (:meth:`drain`), so a handler has seen everything
  that came before;
- **commands** (``/name args``) and **tools** the model calls.

A handler that raises is reported once (one line naming the extension, its file and the event;
the traceback goes to ``extensions.log``) and is otherwise ignored: an extension never breaks a
turn, the agent or the UI. Only ``tool_call`` fails safe: a failing gate blocks the call.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import traceback
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from pi_tui.agent.hooks import AgentHooks
from pi_tui.config.extension_sources import ExtensionSource
from pi_tui.extensions.actions import Actions
from pi_tui.extensions.api import ExtensionAPI
from pi_tui.extensions.base import AbortSignal, ExtensionError
from pi_tui.extensions.context import ExtensionContext
from pi_tui.extensions.events import BRIDGED_EVENTS, ExtensionEvent, from_bus
from pi_tui.extensions.hook_calls import FAILED, HookCalls
from pi_tui.extensions.loader import LoadError, import_extension, unload
from pi_tui.extensions.registrations import (
    Handler,
    LoadedExtension,
    RegisteredCommand,
    RegisteredFlag,
    RegisteredShortcut,
    Registrations,
)
from pi_tui.extensions.renderers import unregister_tool_renderers
from pi_tui.extensions.tool import RegisteredTool
from pi_tui.extensions.ui import ExtensionUI
from pi_tui.messages import CustomMessage

log = logging.getLogger(__name__)

EXTENSIONS_LOG = "extensions.log"


class ExtensionRunner(Registrations, HookCalls, Actions, AgentHooks):
    """The loaded extensions, bound to one agent (whose session may be replaced)."""

    def __init__(
        self,
        agent: Any = None,
        registry: Any = None,
        *,
        ui: ExtensionUI | None = None,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.registry = registry
        self.ui = ui or ExtensionUI()
        self.report = report or (lambda line: self.ui.notify(line, "error"))
        """Where a failure's one line goes (the TUI's chat, stderr in print mode)."""
        self.on_error: Callable[[str, str, str], None] | None = None
        """``(extension path, event, error)`` for each failure (rpc's ``extension_error``)."""
        self.extensions: list[LoadedExtension] = []
        self.sources: list[ExtensionSource] = []
        """Every source asked for, loaded or not (``/reload`` tries them all again)."""
        self.problems: list[str] = []
        """One line per extension that failed to load, kept for ``/extensions``."""
        self.handlers: dict[str, list[Handler]] = {}
        self.tools: dict[str, RegisteredTool] = {}
        self.commands: dict[str, RegisteredCommand] = {}
        self.shortcuts: dict[str, RegisteredShortcut] = {}
        self.flags: dict[str, RegisteredFlag] = {}
        self.flag_values: dict[str, Any] = {}
        self.renderers: dict[str, tuple[str, Callable[..., Any]]] = {}
        self.channels: dict[str, list[Callable[[Any], Any]]] = {}
        self.mcp_servers: dict[str, tuple[str, Any]] = {}
        self.mcp_choices: Any = None
        self.signal = AbortSignal()
        self.changed: list[Callable[[], None]] = []
        """Called when commands, tools, shortcuts or renderers change (the TUI refreshes)."""
        self.shutdown_requested = False
        from pi_tui.extensions.sessions import SessionControl

        self.sessions = SessionControl(self)
        """New session, fork, switch for command contexts (the TUI replaces its ``switch``)."""
        self.run_starter: Callable[[Coroutine[Any, Any, Any]], asyncio.Future[Any]] | None = None
        """How the mode starts a run an extension asks for (the TUI: as the user's own run, so
        the editor shows it and Escape stops it); None: a plain task."""
        self._builtin_tools: list[Any] = []
        self._active: list[str] | None = None
        self._reported: set[tuple[str, str]] = set()
        self._next_turn: list[CustomMessage] = []
        self._queue: asyncio.Queue[ExtensionEvent] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._runs: set[asyncio.Future[Any]] = set()
        self._pending_activations: list[tuple[LoadedExtension, Any]] = []
        self._unsubscribe: Callable[[], None] = lambda: None
        self.agent: Any = None
        if agent is not None:
            self.bind(agent)

    def _as_runner(self) -> ExtensionRunner:
        """This runner as the mixins hand it to ``ctx`` and renderers (they see it through
        :class:`~pi_tui.extensions.context.ContextRunner`, which the type checker holds this
        class to)."""
        return self

    def live_agent(self) -> Any:
        """The agent, or :class:`ExtensionError` while extensions are still loading."""
        if self.agent is None:
            raise ExtensionError("the session is not open yet: do this in session_start or later")
        return self.agent

    def bind(self, agent: Any) -> None:
        """Work on ``agent`` from now on: its events, its hooks, its tools. Extensions load
        before the agent exists (a provider they register can be the start-up model), so the
        actions that need a session (sending messages, labels) wait for this."""
        self._unsubscribe()
        self.agent = agent
        self._builtin_tools = list(agent.tools)
        self._unsubscribe = agent.subscribe(self._on_bus)
        agent.hooks = self
        self._install_tools()
        self.connect_registered_mcp()  # servers registered while loading join the session's

    # --- loading -------------------------------------------------------------------------------

    def load(self, sources: Sequence[ExtensionSource]) -> None:
        """Import and activate ``sources`` (one line per failure, never an exception)."""
        for source in sources:
            if source not in self.sources:
                self.sources.append(source)
            self._load_one(source)
        self._install_tools()
        self._changed()

    def _load_one(self, source: ExtensionSource) -> None:
        if any(loaded.source.name == source.name for loaded in self.extensions):
            return
        try:
            module = import_extension(source)
        except LoadError as error:
            self._load_failed(source, str(error), None)
            return
        except BaseException as error:  # anything its module does at import time
            if isinstance(error, KeyboardInterrupt):
                raise
            self._load_failed(source, f"import failed: {type(error).__name__}: {error}", error)
            return
        api = ExtensionAPI(self, source.name, str(source.path))
        loaded = LoadedExtension(source, api, module)
        self.extensions.append(loaded)
        try:
            result = module.activate(api)
        except Exception as error:
            self._drop(loaded)
            self._load_failed(source, f"activate failed: {type(error).__name__}: {error}", error)
            return
        if inspect.isawaitable(result):
            self._pending_activations.append((loaded, result))

    def _load_failed(self, source: ExtensionSource, problem: str, error: BaseException | None) -> None:
        line = f"extension {source.name} ({source.entry}): {problem}"
        if error is not None:
            where = _write_log(line, error)
            line = f"{line} (details: {where})"
        self.problems.append(line)
        self.report(line)
        if self.on_error is not None:
            self.on_error(str(source.entry), "load", problem)

    async def finish_activation(self) -> None:
        """Await the ``async def activate`` functions (they need the running loop)."""
        pending, self._pending_activations = self._pending_activations, []
        for loaded, awaitable in pending:
            try:
                await awaitable
            except Exception as error:
                self._drop(loaded)
                self._load_failed(loaded.source, f"activate failed: {type(error).__name__}: {error}", error)
        self._install_tools()
        self._changed()

    def _drop(self, loaded: LoadedExtension) -> None:
        """Forget everything ``loaded`` registered (its activate failed, or /reload)."""
        name = loaded.name
        if loaded in self.extensions:
            self.extensions.remove(loaded)
        for event, handlers in self.handlers.items():
            self.handlers[event] = [handler for handler in handlers if handler.extension != name]
        for tool_name in [key for key, tool in self.tools.items() if tool.extension == name]:
            unregister_tool_renderers(tool_name)
        for registry in (self.tools, self.commands, self.shortcuts, self.flags):
            for key in [key for key, item in registry.items() if item.extension == name]:
                del registry[key]
        for custom_type in [key for key, (owner, _) in self.renderers.items() if owner == name]:
            self._unregister_renderer(custom_type)
        unload(loaded.module)

    async def reload(self) -> None:
        """``/reload``: shut every extension down, import them again from the same sources
        (the ones that failed are tried again: the user may have fixed them)."""
        await self.emit("session_shutdown", reason="reload")
        for loaded in list(self.extensions):
            self._drop(loaded)
        self.problems = []
        self._reported.clear()
        self.load(list(self.sources))
        await self.finish_activation()
        await self.emit("session_start", reason="reload")

    def close(self) -> None:
        self._unsubscribe()
        if self._worker is not None:
            self._worker.cancel()

    # --- calling handlers ----------------------------------------------------------------------

    def wants(self, event: str) -> bool:
        return bool(self.handlers.get(event))

    def context_for(
        self, extension: str, kind: type[ExtensionContext] = ExtensionContext
    ) -> ExtensionContext:
        return kind(self, extension)

    async def _call(self, handler: Handler, event: ExtensionEvent) -> Any:
        """One handler, its failure reported; :data:`FAILED` when it raised."""
        try:
            if handler.arity <= 1:
                value = handler.function(event)
            else:
                value = handler.function(event, ExtensionContext(self, handler.extension))
            if inspect.isawaitable(value):
                value = await value
            return value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.failed(handler.extension, event.type, error)
            return FAILED

    def failed(self, extension: str, where: str, error: BaseException) -> None:
        """Report ``error`` once per (extension, event); the traceback goes to the log."""
        loaded = self._loaded(extension)
        path = str(loaded.source.entry) if loaded is not None else extension
        text = f"{type(error).__name__}: {error}"
        line = f"extension {extension} ({path}) failed in {where}: {text}"
        log_path = _write_log(line, error)
        if self.on_error is not None:
            self.on_error(path, where, text)
        if (extension, where) in self._reported:
            return
        self._reported.add((extension, where))
        self.report(f"{line} (details: {log_path})")

    async def emit(self, event_type: str, **fields: Any) -> list[Any]:
        """Call every handler of ``event_type`` now, in load order; their answers (not None)."""
        handlers = self.handlers.get(event_type)
        if not handlers:
            return []
        event = ExtensionEvent(event_type, **fields)
        answers = []
        for handler in list(handlers):
            value = await self._call(handler, event)
            if value is not None and value is not FAILED:
                answers.append(value)
        return answers

    # --- notifications (queued) ----------------------------------------------------------------

    def _on_bus(self, bus_event: Any) -> None:
        if bus_event.type == "agent_start":
            self.run_started()
        if bus_event.type in BRIDGED_EVENTS and self.handlers.get(bus_event.type):
            self._enqueue(from_bus(bus_event.type, bus_event.data))

    def notify(self, event: str, **fields: Any) -> None:
        if self.handlers.get(event):
            self._enqueue(ExtensionEvent(event, **fields))

    def _enqueue(self, event: ExtensionEvent) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._run_sync_handlers(event)  # no loop (start-up): sync handlers only
            return
        if (
            self._queue is None
            or self._worker is None
            or self._worker.done()
            or self._worker.get_loop() is not loop
        ):
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._work(self._queue), name="pi-tui-extension-events")
        self._queue.put_nowait(event)

    def _run_sync_handlers(self, event: ExtensionEvent) -> None:
        for handler in list(self.handlers.get(event.type, ())):
            if inspect.iscoroutinefunction(handler.function):
                continue
            try:
                args = (event,) if handler.arity <= 1 else (event, ExtensionContext(self, handler.extension))
                handler.function(*args)
            except Exception as error:
                self.failed(handler.extension, event.type, error)

    async def _work(self, queue: asyncio.Queue[ExtensionEvent]) -> None:
        while True:
            event = await queue.get()
            try:
                for handler in list(self.handlers.get(event.type, ())):
                    await self._call(handler, event)
            finally:
                queue.task_done()

    async def drain(self) -> None:
        queue, worker = self._queue, self._worker
        if queue is None or worker is None or worker.done():
            return
        if worker is asyncio.current_task():
            return  # a handler waiting for its own queue would wait forever
        await queue.join()


def _write_log(line: str, error: BaseException) -> str:
    from pi_tui.logfiles import append_log

    details = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return append_log(EXTENSIONS_LOG, f"{line}\n{details}")
