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
import contextlib
import inspect
import logging
import os
import signal
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.agent.hooks import AgentHooks, InputOutcome, StartOutcome
from pi_tui.extensions.api import ExtensionAPI, ExtensionError
from pi_tui.extensions.context import AbortSignal, CommandContext, ExtensionContext, ToolCallContext
from pi_tui.extensions.discovery import ExtensionSource
from pi_tui.extensions.events import BRIDGED_EVENTS, ExtensionEvent, from_bus
from pi_tui.extensions.loader import LoadError, import_extension, unload
from pi_tui.extensions.tool import ExtensionTool, RegisteredTool, content_blocks, positional_count
from pi_tui.extensions.ui import ExtensionUI
from pi_tui.session.messages import CustomMessage, ImageContent, TextContent
from pi_tui.tools.base import ToolContext, ToolResult

log = logging.getLogger(__name__)

EXTENSIONS_LOG = "extensions.log"


@dataclass(slots=True)
class Handler:
    extension: str
    function: Callable[..., Any]
    arity: int


@dataclass(slots=True)
class RegisteredCommand:
    name: str
    """What the user types (``review``, or ``review:2`` when extensions clash over a name)."""
    extension: str
    handler: Callable[..., Any]
    description: str = ""
    usage: str = ""
    completions: Callable[[str], Sequence[str] | None] | None = None
    base: str = ""
    """The name the extension asked for."""


@dataclass(slots=True)
class RegisteredShortcut:
    key: str
    extension: str
    handler: Callable[..., Any]
    description: str = ""


@dataclass(slots=True)
class RegisteredFlag:
    name: str
    extension: str
    description: str
    type: str
    default: Any


@dataclass(slots=True)
class LoadedExtension:
    """One extension that activated, and what it registered (for ``/extensions``)."""

    source: ExtensionSource
    api: ExtensionAPI
    module: Any
    events: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    shortcuts: list[str] = field(default_factory=list)
    renderers: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.source.name


@dataclass(slots=True)
class ExecResult:
    """What ``pi.exec`` ran: its output, exit code and whether it was killed."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool = False


_FAILED = object()


class ExtensionRunner(AgentHooks):
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
        self._runs: set[asyncio.Task[Any]] = set()
        self._pending_activations: list[tuple[LoadedExtension, Any]] = []
        self._unsubscribe: Callable[[], None] = lambda: None
        self.agent: Any = None
        if agent is not None:
            self.bind(agent)

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
            _unregister_tool_renderers(tool_name)
        for registry in (self.tools, self.commands, self.shortcuts, self.flags):
            for key in [key for key, item in registry.items() if item.extension == name]:  # type: ignore[attr-defined]
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

    # --- registration (called by ExtensionAPI) ---------------------------------------------------

    def _loaded(self, extension: str) -> LoadedExtension | None:
        return next((loaded for loaded in self.extensions if loaded.name == extension), None)

    def add_handler(self, extension: str, event: str, function: Callable[..., Any]) -> None:
        if not callable(function):
            raise ExtensionError(f"the handler for {event} is not callable")
        self.handlers.setdefault(event, []).append(Handler(extension, function, positional_count(function)))
        loaded = self._loaded(extension)
        if loaded is not None and event not in loaded.events:
            loaded.events.append(event)

    def add_tool(self, tool: RegisteredTool) -> None:
        previous = self.tools.get(tool.name)
        if previous is not None and previous.extension != tool.extension:
            self.report(f"extension {tool.extension}: tool {tool.name} replaces {previous.extension}'s")
        self.tools[tool.name] = tool
        if tool.render_call is not None or tool.render_result is not None:
            _register_tool_renderers(self, tool)
        loaded = self._loaded(tool.extension)
        if loaded is not None and tool.name not in loaded.tools:
            loaded.tools.append(tool.name)
        self._install_tools()
        self._changed()

    def add_command(
        self,
        extension: str,
        name: str,
        handler: Callable[..., Any],
        description: str,
        usage: str,
        completions: Callable[[str], Sequence[str] | None] | None,
    ) -> None:
        from pi_tui.commands import BUILTIN_COMMANDS

        if not callable(handler):
            raise ExtensionError(f"/{name}: the handler is not callable")
        builtin = {command.name for command in BUILTIN_COMMANDS}
        builtin |= {alias for command in BUILTIN_COMMANDS for alias in command.aliases}
        if name.lower() in builtin:
            raise ExtensionError(f"/{name} is a built-in command; choose another name")
        same = [
            c for c in self.commands.values() if c.base.lower() == name.lower() and c.extension != extension
        ]
        own = [
            c for c in self.commands.values() if c.base.lower() == name.lower() and c.extension == extension
        ]
        for command in own:  # registered again by the same extension: the new one replaces it
            del self.commands[command.name.lower()]
        key = name
        if same:
            # As pi: when extensions clash over a name, each gets a number in load order
            # (/review:1, /review:2) and the bare name is left to prompt templates.
            if len(same) == 1 and same[0].name.lower() == name.lower():
                self._rename_command(same[0], f"{name}:1")
            number = len(same) + 1
            while f"{name}:{number}".lower() in self.commands:
                number += 1
            key = f"{name}:{number}"
        self.commands[key.lower()] = RegisteredCommand(
            key, extension, handler, description, usage, completions, base=name
        )
        loaded = self._loaded(extension)
        if loaded is not None:
            loaded.commands = [c for c in loaded.commands if c.split(":")[0].lower() != name.lower()] + [key]
        self._changed()

    def _rename_command(self, command: RegisteredCommand, new_name: str) -> None:
        del self.commands[command.name.lower()]
        loaded = self._loaded(command.extension)
        if loaded is not None:
            loaded.commands = [new_name if c == command.name else c for c in loaded.commands]
        command.name = new_name
        self.commands[new_name.lower()] = command

    def add_shortcut(self, extension: str, key: str, handler: Callable[..., Any], description: str) -> None:
        if not callable(handler):
            raise ExtensionError(f"shortcut {key}: the handler is not callable")
        self.shortcuts[key] = RegisteredShortcut(key, extension, handler, description)
        loaded = self._loaded(extension)
        if loaded is not None and key not in loaded.shortcuts:
            loaded.shortcuts.append(key)
        self._changed()

    def add_flag(self, extension: str, name: str, description: str, kind: str, default: Any) -> None:
        self.flags[name] = RegisteredFlag(name, extension, description, kind, default)

    def flag_value(self, name: str) -> Any:
        if name in self.flag_values:
            return self.flag_values[name]
        flag = self.flags.get(name)
        return flag.default if flag is not None else None

    def take_flags(self, words: Sequence[str]) -> list[str]:
        """Read extension flags out of ``words`` (the command line's leftovers); the words that
        no extension claimed are returned (the caller says they are unknown)."""
        unknown: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            name, has_value, value = word.removeprefix("--").partition("=")
            flag = self.flags.get(name) if word.startswith("--") else None
            if flag is None:
                unknown.append(word)
            elif flag.type == "boolean":
                self.flag_values[name] = value.lower() not in ("0", "false", "no") if has_value else True
            elif has_value:
                self.flag_values[name] = value
            elif index + 1 < len(words):
                index += 1
                self.flag_values[name] = words[index]
            else:
                unknown.append(word)
            index += 1
        return unknown

    def add_renderer(self, extension: str, custom_type: str, renderer: Callable[..., Any]) -> None:
        from pi_tui.tui.render import register_custom_renderer

        self.renderers[custom_type] = (extension, renderer)
        register_custom_renderer(custom_type, _renderer_adapter(self, extension, renderer))
        loaded = self._loaded(extension)
        if loaded is not None and custom_type not in loaded.renderers:
            loaded.renderers.append(custom_type)
        self._changed()

    def _unregister_renderer(self, custom_type: str) -> None:
        from pi_tui.tui.render import unregister_custom_renderer

        self.renderers.pop(custom_type, None)
        unregister_custom_renderer(custom_type)

    def add_provider(self, extension: str, name: str, config: dict[str, Any]) -> None:
        from pi_tui.ai.errors import ConfigError

        if self.registry is None:
            raise ExtensionError("no model registry here")
        try:
            self.registry.add_provider(name, config)
        except ConfigError as error:
            raise ExtensionError(str(error)) from None

    def _changed(self) -> None:
        for listener in list(self.changed):
            self.call_quietly(listener)

    def call_quietly(self, function: Callable[..., Any], *args: Any) -> None:
        """Call a listener; a failure is logged, never raised."""
        try:
            result = function(*args)
            if inspect.isawaitable(result):
                self._start(_awaited(result))
        except Exception:
            log.warning("an extension listener failed", exc_info=True)

    # --- tools -------------------------------------------------------------------------------------

    def all_tool_names(self) -> list[str]:
        names = [tool.name for tool in self._builtin_tools if tool.name not in self.tools]
        return names + list(self.tools)

    def _all_tools(self) -> list[Any]:
        made = {
            name: ExtensionTool(tool, self._tool_context_maker(tool.extension))
            for name, tool in self.tools.items()
        }
        tools = [made.pop(tool.name, tool) for tool in self._builtin_tools]
        return tools + list(made.values())

    def _tool_context_maker(self, extension: str) -> Callable[[ToolContext], Any]:
        return lambda tool_context: ToolCallContext(self, extension, tool_context)

    def _install_tools(self) -> None:
        if self.agent is None:
            return
        tools = self._all_tools()
        if self._active is not None:
            tools = [tool for tool in tools if tool.name in self._active]
        self.agent.tools = tools

    def set_active_tools(self, names: list[str]) -> None:
        known = set(self.all_tool_names())
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ExtensionError(f"unknown tool(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        self._active = names
        self._install_tools()

    def set_builtin_tools(self, tools: Sequence[Any]) -> None:
        """The mode changed the built-in tools (``/reload``): extension tools stay on top."""
        self._builtin_tools = list(tools)
        self._install_tools()

    def tool_prompt_section(self) -> str:
        """What active extension tools add to the system prompt (their snippet and guidelines)."""
        active = {tool.name for tool in self.agent.tools}
        lines: list[str] = []
        guidelines: list[str] = []
        for tool in self.tools.values():
            if tool.name not in active:
                continue
            if tool.prompt_snippet:
                lines.append(f"- {tool.name}: {tool.prompt_snippet}")
            guidelines += [f"- {line}" for line in tool.prompt_guidelines]
        parts = []
        if lines:
            parts.append("Extension tools:\n" + "\n".join(lines))
        if guidelines:
            parts.append("Extension tool guidelines:\n" + "\n".join(guidelines))
        return "\n\n".join(parts)

    # --- calling handlers ----------------------------------------------------------------------

    def wants(self, event: str) -> bool:
        return bool(self.handlers.get(event))

    def context_for(
        self, extension: str, kind: type[ExtensionContext] = ExtensionContext
    ) -> ExtensionContext:
        return kind(self, extension)

    async def _call(self, handler: Handler, event: ExtensionEvent) -> Any:
        """One handler, its failure reported; :data:`_FAILED` when it raised."""
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
            return _FAILED

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
            if value is not None and value is not _FAILED:
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

    # --- hooks the agent awaits --------------------------------------------------------------------

    async def run_command(self, text: str) -> bool:
        from pi_tui.commands import parse_slash

        parsed = parse_slash(text)
        if parsed is None:
            return False
        name, args = parsed
        command = self.commands.get(name.lower())
        if command is None:
            return False
        await self.run_registered_command(command, args)
        return True

    async def run_registered_command(self, command: RegisteredCommand, args: str) -> None:
        context = CommandContext(self, command.extension)
        try:
            arity = positional_count(command.handler)
            value = command.handler(args) if arity <= 1 else command.handler(args, context)
            if inspect.isawaitable(value):
                await value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.failed(command.extension, f"/{command.name}", error)

    async def input(self, text: str, images: Sequence[ImageContent], source: str) -> InputOutcome:
        outcome = InputOutcome(text, list(images))
        for handler in list(self.handlers.get("input", ())):
            event = ExtensionEvent("input", text=outcome.text, images=list(outcome.images), source=source)
            value = await self._call(handler, event)
            if not isinstance(value, dict):
                continue
            action = value.get("action", "continue")
            if action == "handled":
                outcome.handled = True
                return outcome
            if action == "transform":
                if isinstance(value.get("text"), str):
                    outcome.text = value["text"]
                if value.get("images") is not None:
                    outcome.images = [
                        block for block in content_blocks(value["images"]) if isinstance(block, ImageContent)
                    ]
        return outcome

    async def before_agent_start(
        self, prompt: str, images: Sequence[ImageContent], system_prompt: str
    ) -> StartOutcome:
        outcome = StartOutcome()
        chained = system_prompt
        section = self.tool_prompt_section()
        if section:
            chained = f"{chained}\n\n{section}" if chained else section
            outcome.system_prompt = chained
        for handler in list(self.handlers.get("before_agent_start", ())):
            event = ExtensionEvent(
                "before_agent_start", prompt=prompt, images=list(images), system_prompt=chained
            )
            value = await self._call(handler, event)
            if not isinstance(value, dict):
                continue
            for item in [value.get("message"), *(value.get("messages") or [])]:
                if item is None:
                    continue
                try:
                    outcome.messages.append(self.custom_message(item))
                except (ExtensionError, ValueError, TypeError) as error:
                    self.failed(handler.extension, "before_agent_start", error)
            if isinstance(value.get("system_prompt"), str):
                chained = value["system_prompt"]
                outcome.system_prompt = chained
        return outcome

    def take_next_turn_messages(self) -> list[Any]:
        taken, self._next_turn = self._next_turn, []
        return taken

    async def context(self, messages: list[Any]) -> list[Any]:

        current = messages
        for handler in list(self.handlers.get("context", ())):
            copied = [message.model_copy(deep=True) for message in current]
            value = await self._call(handler, ExtensionEvent("context", messages=copied))
            if isinstance(value, dict) and isinstance(value.get("messages"), list):
                try:
                    current = [typed_message(item) for item in value["messages"]]
                except ValueError as error:
                    self.failed(handler.extension, "context", error)
        return current

    async def before_provider_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        for handler in list(self.handlers.get("before_provider_request", ())):
            value = await self._call(handler, ExtensionEvent("before_provider_request", payload=payload))
            if isinstance(value, dict):
                payload = value
        return payload

    async def after_provider_response(self, status: int, headers: dict[str, str]) -> None:
        await self.emit("after_provider_response", status=status, headers=dict(headers))

    async def tool_call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> str | None:
        for handler in list(self.handlers.get("tool_call", ())):
            event = ExtensionEvent("tool_call", tool_call_id=call_id, tool_name=tool_name, input=arguments)
            value = await self._call(handler, event)
            if value is _FAILED:  # a gate that breaks must not wave the call through
                return f"the extension {handler.extension} failed while checking this call"
            if isinstance(value, dict) and value.get("block"):
                reason = value.get("reason")
                return str(reason) if reason else f"blocked by the extension {handler.extension}"
        return None

    async def tool_result(
        self, call_id: str, tool_name: str, arguments: dict[str, Any], result: ToolResult
    ) -> ToolResult:
        for handler in list(self.handlers.get("tool_result", ())):
            event = ExtensionEvent(
                "tool_result",
                tool_call_id=call_id,
                tool_name=tool_name,
                input=arguments,
                content=list(result.content),
                details=result.details,
                is_error=result.is_error,
            )
            value = await self._call(handler, event)
            if not isinstance(value, dict):
                continue
            try:
                content = content_blocks(value["content"]) if "content" in value else result.content
            except (TypeError, ValueError) as error:
                self.failed(handler.extension, "tool_result", error)
                continue
            result = ToolResult(
                content,
                value.get("details", result.details),
                bool(value.get("is_error", result.is_error)),
            )
        return result

    async def message_end(self, message: Any) -> Any:

        for handler in list(self.handlers.get("message_end", ())):
            value = await self._call(handler, ExtensionEvent("message_end", message=message))
            if not isinstance(value, dict) or value.get("message") is None:
                continue
            try:
                replacement = typed_message(value["message"])
            except ValueError as error:
                self.failed(handler.extension, "message_end", error)
                continue
            if replacement.role != message.role:
                self.failed(
                    handler.extension,
                    "message_end",
                    ExtensionError(f"a {message.role} message cannot become a {replacement.role} message"),
                )
                continue
            message = replacement
        return message

    async def user_bash(self, command: str, exclude_from_context: bool, cwd: str) -> dict[str, Any] | None:
        for handler in list(self.handlers.get("user_bash", ())):
            event = ExtensionEvent(
                "user_bash", command=command, exclude_from_context=exclude_from_context, cwd=cwd
            )
            value = await self._call(handler, event)
            if isinstance(value, dict) and isinstance(value.get("result"), dict):
                return value["result"]
        return None

    async def before(self, event: str, **fields: Any) -> dict[str, Any] | None:
        for handler in list(self.handlers.get(event, ())):
            value = await self._call(handler, ExtensionEvent(event, **fields))
            if isinstance(value, dict) and value:
                return value
        return None

    def aborted(self) -> None:
        self.signal.set()

    def run_started(self) -> None:
        if self.signal.aborted:
            self.signal = AbortSignal()

    # --- actions -----------------------------------------------------------------------------------

    def custom_message(self, message: Any) -> CustomMessage:
        """A custom message from what an extension gave (``custom_type``, ``content``...)."""
        from pi_tui.session.ids import now_ms

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
        self.live_agent().manager.append_session_info(name)
        self.agent.emit_session_changed("name")

    def command_list(self) -> list[dict[str, Any]]:
        return [
            {"name": command.name, "description": command.description, "extension": command.extension}
            for command in self.commands.values()
        ]

    def request_shutdown(self) -> None:
        self.shutdown_requested = True
        self.agent.emit_session_changed("shutdown")

    async def navigate_tree(self, target_id: str, *, summarize: bool = False) -> Any:
        result = await self.agent.navigate_tree(target_id, summarize=summarize)
        self.agent.emit_session_changed("tree")
        return result

    def _start(self, work: Coroutine[Any, Any, Any]) -> None:
        if self.run_starter is not None:
            task = self.run_starter(work)
        else:
            task = asyncio.get_running_loop().create_task(work)
        self._runs.add(task)
        task.add_done_callback(self._run_done)

    def _run_done(self, task: asyncio.Task[Any]) -> None:
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


def typed_message(item: Any) -> Any:
    """A message an extension handed back (a dict, or a typed message it may have changed with
    ``model_copy``, which does not check), validated as one read from a file would be."""
    from pi_tui.session.context import parse_message
    from pi_tui.session.messages import Wire

    if isinstance(item, Wire):
        item = item.model_dump(by_alias=True, exclude_unset=True, warnings=False)
    return parse_message(item)


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _awaited(awaitable: Any) -> None:
    await awaitable


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _write_log(line: str, error: BaseException) -> str:
    from pi_tui.logfiles import append_log

    details = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return append_log(EXTENSIONS_LOG, f"{line}\n{details}")


def _register_tool_renderers(runner: ExtensionRunner, tool: RegisteredTool) -> None:
    """An extension tool's ``render_call(args, expanded)`` and ``render_result(result,
    expanded)`` as the chat's tool cards call them; a failure is reported once."""
    from pi_tui.extensions.events import Record
    from pi_tui.tui.render import register_tool_renderer

    def guarded(function: Callable[..., Any], where: str) -> Callable[..., Any]:
        takes_expanded = positional_count(function) >= 2

        def call(value: Any, expanded: bool) -> Any:
            try:
                return function(value, expanded) if takes_expanded else function(value)
            except Exception as error:
                runner.failed(tool.extension, f"{where} of the tool {tool.name}", error)
                raise

        return call

    render_call = guarded(tool.render_call, "render_call") if tool.render_call else None
    render_result = None
    if tool.render_result is not None:
        drawn = guarded(tool.render_result, "render_result")

        def render_result(item: Any, expanded: bool) -> Any:
            view = Record(text=item.output, details=item.details, is_error=item.status == "error")
            return drawn(view, expanded)

    register_tool_renderer(tool.name, render_call, render_result)


def _unregister_tool_renderers(name: str) -> None:
    from pi_tui.tui.render import unregister_tool_renderer

    unregister_tool_renderer(name)


def _renderer_adapter(
    runner: ExtensionRunner, extension: str, renderer: Callable[..., Any]
) -> Callable[..., Any]:
    """An extension's renderer as the chat calls it: given the custom message's fields, it may
    return a string or Textual content; a failure is reported once and shown in the panel."""
    from textual.content import Content

    def render(item: Any, expanded: bool) -> Content:
        message = ExtensionEvent(
            "custom_message", custom_type=item.custom_type, content=item.text, details=item.details
        )
        try:
            value = renderer(message, expanded)
        except Exception as error:
            runner.failed(extension, f"the renderer of {item.custom_type}", error)
            raise
        if isinstance(value, Content):
            return value
        return Content(str(value))

    return render
