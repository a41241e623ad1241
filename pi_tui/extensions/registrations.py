"""What extensions register: commands, keys, flags, tools, panels, providers; kept by the runner
and mirrored into the places that show them (the agent's tools, the chat's renderers).

A mixin of :class:`~pi_tui.extensions.runner.ExtensionRunner`: it works on the runner's tables.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_tui.config.extension_sources import ExtensionSource
from pi_tui.extensions.api import ExtensionAPI
from pi_tui.extensions.base import ExtensionError
from pi_tui.extensions.context import ContextRunner, ToolCallContext
from pi_tui.extensions.renderers import register_tool_renderers, renderer_adapter
from pi_tui.extensions.tool import ExtensionTool, RegisteredTool, positional_count
from pi_tui.tools.base import ToolContext

log = logging.getLogger(__name__)


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


class Registrations:
    """The registering half of the runner."""

    agent: Any
    registry: Any
    extensions: list[LoadedExtension]
    handlers: dict[str, list[Handler]]
    tools: dict[str, RegisteredTool]
    commands: dict[str, RegisteredCommand]
    shortcuts: dict[str, RegisteredShortcut]
    flags: dict[str, RegisteredFlag]
    flag_values: dict[str, Any]
    renderers: dict[str, tuple[str, Callable[..., Any]]]
    changed: list[Callable[[], None]]
    mcp_servers: dict[str, tuple[str, Any]]
    """Servers extensions registered: name -> (extension, ServerConfig)."""
    mcp_choices: Any
    """The run's :class:`~pi_tui.mcp.attach.McpChoices` (startup sets it; None: the defaults)."""
    _builtin_tools: list[Any]
    _active: list[str] | None
    report: Callable[[str], None]
    """Where a failure's one line goes; set per instance by the mode."""

    if TYPE_CHECKING:  # provided by ExtensionRunner and the other mixins

        def _start(self, work: Coroutine[Any, Any, Any]) -> None: ...
        def failed(self, extension: str, where: str, error: BaseException) -> None: ...
        def _as_runner(self) -> ContextRunner: ...

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
            register_tool_renderers(self._as_runner(), tool)
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
        from pi_tui.view.renderers import register_custom_renderer

        self.renderers[custom_type] = (extension, renderer)
        register_custom_renderer(custom_type, renderer_adapter(self._as_runner(), extension, renderer))
        loaded = self._loaded(extension)
        if loaded is not None and custom_type not in loaded.renderers:
            loaded.renderers.append(custom_type)
        self._changed()

    def _unregister_renderer(self, custom_type: str) -> None:
        from pi_tui.view.renderers import unregister_custom_renderer

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

    def add_mcp_server(self, extension: str, name: str, config: Any) -> None:
        """``pi.register_mcp_server``: checked by mcp.json's rules, connected like a configured
        server (now, or once the session is bound). A file-configured server of the same name
        wins (the manager keeps the file's); another extension's name is refused."""
        from pi_tui.mcp.config import check_entry, namespace, server_from_entry
        from pi_tui.mcp.model import ConfigSource

        problem = check_entry(name, config) if isinstance(name, str) else "the name must be a string"
        if problem is not None:
            raise ExtensionError(f"MCP server {name!r}: {problem}")
        taken = next(
            (
                (other, owner)
                for other, (owner, _server) in self.mcp_servers.items()
                if namespace(other) == namespace(name) and owner != extension
            ),
            None,
        )
        if taken is not None:
            raise ExtensionError(f"MCP server {name!r}: extension {taken[1]} registered {taken[0]!r} already")
        server = server_from_entry(name, dict(config), ConfigSource("extension", None, extension))
        self.mcp_servers[name] = (extension, server)
        if self.agent is not None:
            self._connect_mcp(extension, server)

    def _connect_mcp(self, extension: str, server: Any) -> None:
        from pi_tui.mcp.attach import ensure_manager

        manager = ensure_manager(self.agent, self.agent.cwd, getattr(self, "mcp_choices", None))
        if manager is None:
            self.report(f"extension {extension}: MCP server {server.name!r} not started: --no-mcp")
            return
        manager.register(server)

    def mcp_server_list(self) -> list[dict[str, Any]]:
        """``pi.get_mcp_servers()``: each registration's ``name``, ``extension`` and ``config``."""
        return [
            {"name": name, "extension": extension, "config": dict(server.raw)}
            for name, (extension, server) in self.mcp_servers.items()
        ]

    def connect_registered_mcp(self) -> None:
        """Connect the servers extensions registered while loading (the agent is bound now)."""
        for extension, server in self.mcp_servers.values():
            self._connect_mcp(extension, server)

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

    def all_tool_info(self) -> list[dict[str, Any]]:
        """Every tool with what a permission extension needs: ``name``, ``description``,
        ``parameters``, ``source`` (builtin, extension or mcp), ``exposure`` and, when known,
        ``annotations`` (the MCP hints: readOnlyHint, destructiveHint, idempotentHint,
        openWorldHint; the resource tools are read-only), ``extension``, ``server``, ``tool``."""
        infos = [_tool_info(tool, "builtin") for tool in self._builtin_tools if tool.name not in self.tools]
        infos += [
            _tool_info(tool, "extension") | {"extension": tool.extension} for tool in self.tools.values()
        ]
        manager = getattr(self.agent, "mcp", None) if self.agent is not None else None
        known = {info["name"] for info in infos}
        for tool in manager.agent_tools() if manager is not None else ():
            if tool.name not in known:
                info = _tool_info(tool, "mcp")
                server = getattr(tool, "server", None)
                if isinstance(server, str):
                    info |= {"server": server, "tool": getattr(tool, "tool", tool.name)}
                infos.append(info)
        return infos

    def tool_info(self, name: str) -> dict[str, Any] | None:
        """:meth:`all_tool_info` of one tool (None when no tool has that name)."""
        return next((info for info in self.all_tool_info() if info["name"] == name), None)

    def _all_tools(self) -> list[Any]:
        made = {
            name: ExtensionTool(tool, self._tool_context_maker(tool.extension))
            for name, tool in self.tools.items()
        }
        tools = [made.pop(tool.name, tool) for tool in self._builtin_tools]
        return tools + list(made.values())

    def _tool_context_maker(self, extension: str) -> Callable[[ToolContext], Any]:
        runner = self._as_runner()
        return lambda tool_context: ToolCallContext(runner, extension, tool_context)

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

    @property
    def builtin_tools(self) -> list[Any]:
        """The built-in tools the mode gave (extension tools are added on top of them)."""
        return list(self._builtin_tools)

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


async def _awaited(awaitable: Any) -> None:
    await awaitable


def _tool_info(tool: Any, source: str) -> dict[str, Any]:
    info: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "source": source,
        "exposure": getattr(tool, "exposure", "direct"),
    }
    annotations = getattr(tool, "annotations", None)
    if annotations:
        info["annotations"] = dict(annotations)
    return info
