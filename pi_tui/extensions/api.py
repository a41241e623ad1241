"""``pi``: the object an extension's ``activate(pi)`` receives.

Each extension gets its own, so everything it registers and every error it raises is
attributed to it by name. Registration is allowed at any time (in ``activate``, in a handler or
a command); actions act on the agent's current session. The methods mirror pi's extension API
in Python spelling (``register_tool`` for ``registerTool``, ``deliver_as="follow_up"``...); see
``docs/extensions.md`` for the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pi_tui.extensions.base import ExecResult, ExtensionError, Runner
from pi_tui.extensions.events import EVENT_NAMES
from pi_tui.extensions.tool import RegisteredTool, schema_of

__all__ = ["DELIVERY", "EventChannel", "ExecResult", "ExtensionAPI", "ExtensionError"]

DELIVERY = {"steer": "steer", "follow_up": "follow_up", "followUp": "follow_up", "next_turn": "next_turn"}
DELIVERY["nextTurn"] = "next_turn"


class EventChannel:
    """``pi.events``: a small bus extensions share to talk to each other."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on(self, channel: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        """Call ``handler(data)`` for every ``emit(channel, data)``; returns the unsubscriber."""
        listeners = self._runner.channels.setdefault(channel, [])
        listeners.append(handler)
        return lambda: listeners.remove(handler) if handler in listeners else None

    def emit(self, channel: str, data: Any = None) -> None:
        for handler in list(self._runner.channels.get(channel, ())):
            self._runner.call_quietly(handler, data)


class ExtensionAPI:
    """What one extension can register and do."""

    def __init__(self, runner: Runner, name: str, path: str) -> None:
        self._runner = runner
        self.name = name
        """The extension's name (its file or package name)."""
        self.path = path
        self.events = EventChannel(runner)

    # --- events ----------------------------------------------------------------------------------

    def on(self, event: str, handler: Callable[..., Any]) -> None:
        """Call ``handler(event, ctx)`` (or ``handler(event)``), sync or async, on ``event``."""
        if event not in EVENT_NAMES:
            raise ExtensionError(f"unknown event {event!r} (known: {', '.join(sorted(EVENT_NAMES))})")
        self._runner.add_handler(self.name, event, handler)

    # --- registration ----------------------------------------------------------------------------

    def register_tool(
        self,
        name: str,
        *,
        description: str,
        execute: Callable[..., Any],
        parameters: Any = None,
        label: str = "",
        render_call: Callable[..., Any] | None = None,
        render_result: Callable[..., Any] | None = None,
        prompt_snippet: str | None = None,
        prompt_guidelines: Sequence[str] = (),
    ) -> None:
        """A tool the model can call. ``parameters``: a JSON schema dict or a pydantic model."""
        if not isinstance(name, str) or not name.replace("_", "a").replace("-", "a").isalnum():
            raise ExtensionError(f"tool name {name!r}: use letters, digits, _ and -")
        if not callable(execute):
            raise ExtensionError(f"tool {name}: execute must be callable")
        try:
            schema, model = schema_of(parameters)
        except TypeError as error:
            raise ExtensionError(f"tool {name}: {error}") from None
        self._runner.add_tool(
            RegisteredTool(
                name=name,
                description=description,
                parameters=schema,
                execute=execute,
                extension=self.name,
                label=label,
                model=model,
                render_call=render_call,
                render_result=render_result,
                prompt_snippet=prompt_snippet,
                prompt_guidelines=list(prompt_guidelines),
            )
        )

    def register_command(
        self,
        name: str,
        *,
        handler: Callable[..., Any],
        description: str = "",
        usage: str = "",
        get_argument_completions: Callable[[str], Sequence[str] | None] | None = None,
    ) -> None:
        """``/name args`` runs ``handler(args, ctx)`` (sync or async), in every mode."""
        self._runner.add_command(
            self.name, name.removeprefix("/"), handler, description, usage, get_argument_completions
        )

    def register_shortcut(self, key: str, *, handler: Callable[..., Any], description: str = "") -> None:
        """A key in the chat (Textual key names: ``ctrl+shift+k``, ``f5``) runs ``handler(ctx)``."""
        self._runner.add_shortcut(self.name, key, handler, description)

    def register_flag(
        self, name: str, *, description: str = "", type: str = "boolean", default: Any = None
    ) -> None:
        """A ``--name`` command-line flag this extension reads with :meth:`get_flag`."""
        if type not in ("boolean", "string"):
            raise ExtensionError(f"flag --{name}: type is 'boolean' or 'string'")
        self._runner.add_flag(self.name, name.removeprefix("--"), description, type, default)

    def get_flag(self, name: str) -> Any:
        """The value of a flag this extension registered (its default when not given)."""
        return self._runner.flag_value(name.removeprefix("--"))

    def register_message_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        """Draw custom messages of ``custom_type``: ``renderer(message, expanded)`` returns a
        string (shown as text) or a Rich renderable / Textual content."""
        self._runner.add_renderer(self.name, custom_type, renderer)

    def register_provider(self, name: str, config: dict[str, Any]) -> None:
        """A provider as a models.json entry (``baseUrl``, ``api``, ``apiKey``, ``models``...)."""
        self._runner.add_provider(self.name, name, config)

    def register_mcp_server(self, name: str, config: dict[str, Any]) -> None:
        """An MCP server for this session, as an ``mcpServers`` entry of mcp.json (``command``,
        ``args``, ``env``, ``cwd`` or ``url``, ``headers``, ``oauth``; ``exposure``,
        ``toolExposure``, ``description``, ``enabled``, ``timeout``), checked by the same rules
        (:class:`ExtensionError` for an invalid one, or a name another extension registered).
        It connects like a configured server; a server of that name in an mcp.json wins.
        Registering the name again replaces this extension's earlier registration."""
        self._runner.add_mcp_server(self.name, name, config)

    def get_mcp_servers(self) -> list[dict[str, Any]]:
        """The servers extensions registered: ``name``, ``extension``, ``config``."""
        return self._runner.mcp_server_list()

    # --- actions ---------------------------------------------------------------------------------

    def send_message(
        self, message: dict[str, Any], *, deliver_as: str = "steer", trigger_turn: bool = False
    ) -> None:
        """A ``custom_message`` for the model (``custom_type``, ``content``, ``display``,
        ``details``). While the agent runs it is delivered as a steering message (``steer``) or
        when the run would end (``follow_up``); ``next_turn`` waits for the next prompt. When
        the agent is idle it is saved now, and ``trigger_turn`` makes the model answer it."""
        if deliver_as not in DELIVERY:
            raise ExtensionError(f"deliver_as is one of steer, follow_up, next_turn, not {deliver_as!r}")
        self._runner.send_message(self.name, message, DELIVERY[deliver_as], trigger_turn)

    def send_user_message(self, content: Any, *, deliver_as: str | None = None) -> None:
        """A user message, as if typed. While the agent runs, ``deliver_as`` (steer or
        follow_up) says when; when it is idle, a run starts at once."""
        if deliver_as is not None and DELIVERY.get(deliver_as) not in ("steer", "follow_up"):
            raise ExtensionError(f"deliver_as is steer or follow_up, not {deliver_as!r}")
        self._runner.send_user_message(content, DELIVERY.get(deliver_as or ""))

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Save extension state as a ``custom`` entry (never sent to the model); its id.
        json/rpc/server clients hear of it as ``entry_appended``, as in pi 1.x."""
        agent = self._runner.live_agent()
        entry_id: str = agent.manager.append_custom_entry(custom_type, data)
        agent.emit("entry_appended", entry=dict(agent.manager.get_raw_entry(entry_id) or {}))
        return entry_id

    def set_label(self, entry_id: str, label: str | None) -> None:
        """Label an entry (shown in /tree); None or "" clears it."""
        self._runner.set_label(entry_id, label)

    def set_session_name(self, name: str) -> None:
        self._runner.set_session_name(name)

    def get_session_name(self) -> str | None:
        name: str | None = self._runner.live_agent().manager.session_name
        return name

    def get_active_tools(self) -> list[str]:
        return [tool.name for tool in self._runner.live_agent().tools]

    def get_all_tools(self) -> list[str]:
        """The names of the built-in and extension tools (see :meth:`get_all_tool_info` for
        the details, MCP tools included)."""
        return self._runner.all_tool_names()

    def get_all_tool_info(self) -> list[dict[str, Any]]:
        """pi's ``getAllTools()`` metadata: each tool's ``name``, ``description``,
        ``parameters``, ``source`` ("builtin", "extension" or "mcp"), ``exposure`` and, when
        known, ``annotations`` (MCP's readOnlyHint, destructiveHint, idempotentHint,
        openWorldHint as the server declared them; missing ones mean MCP's defaults: not
        read-only, maybe destructive, open world), ``extension``, or ``server`` and ``tool``."""
        return self._runner.all_tool_info()

    def get_tool_info(self, name: str) -> dict[str, Any] | None:
        """:meth:`get_all_tool_info` of the tool called ``name`` (None when there is none), for
        a ``tool_call`` handler deciding whether to ask: ``pi.get_tool_info(event.tool_name)``."""
        return self._runner.tool_info(name)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Only these tools (built-in or registered) are offered to the model from now on."""
        self._runner.set_active_tools(list(names))

    def get_commands(self) -> list[dict[str, Any]]:
        """The commands extensions registered: ``name``, ``description``, ``extension``."""
        return self._runner.command_list()

    def get_thinking_level(self) -> str:
        level: str = self._runner.live_agent().thinking_level
        return level

    def set_thinking_level(self, level: str) -> None:
        self._runner.live_agent().set_thinking_level(level)

    async def exec(
        self, command: str, args: Sequence[str] = (), *, cwd: str | None = None, timeout: float | None = None
    ) -> ExecResult:
        """Run a program (no shell); it is killed when the user aborts or ``timeout`` passes."""
        return await self._runner.exec(command, list(args), cwd=cwd, timeout=timeout)
