"""Every built-in slash command, gathered in one place, and how a typed command is run.

The modules listed in :data:`COMMAND_MODULES` each define their commands in a
:class:`~pi_tui.tui.slash_base.CommandSet`; this module is the only one that imports them all,
so adding a command module means adding it here (no registration as a side effect of an
import). The names and descriptions users see live in :mod:`pi_tui.commands`; prompt
templates, skills and extension commands are looked up there too and run without a handler.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from pi_tui.tui import slash, slash_auth, slash_bug, slash_export, slash_mcp, slash_more, slash_secrets
from pi_tui.tui.slash_base import CommandSet, Handler, needs_idle

if TYPE_CHECKING:
    from pi_tui.tui.host import CommandHost

COMMAND_MODULES: tuple[ModuleType, ...] = (
    slash,
    slash_auth,
    slash_bug,
    slash_export,
    slash_mcp,
    slash_more,
    slash_secrets,
)
"""The modules of built-in commands, each with its ``COMMANDS`` set."""


def gather_handlers(modules: tuple[ModuleType, ...]) -> dict[str, Handler]:
    """Name -> handler over every module's ``COMMANDS``; two modules claiming a name is a bug
    found at import, not a command that silently does the other one's job."""
    handlers: dict[str, Handler] = {}
    for module in modules:
        commands = module.COMMANDS
        assert isinstance(commands, CommandSet), f"{module.__name__}.COMMANDS is not a CommandSet"
        for name, handler in commands.handlers.items():
            if name in handlers:
                raise ValueError(f"/{name} is defined in two command modules ({module.__name__})")
            handlers[name] = handler
    return handlers


HANDLERS: dict[str, Handler] = gather_handlers(COMMAND_MODULES)


async def run_command(app: CommandHost, name: str, args: str) -> None:
    """Run ``/name args``: an extension's command through the extensions, a prompt template or
    skill through the agent (which expands it), a built-in through its handler; an unknown name
    gets a suggestion, and a handler's own failure is one line in the chat, never a traceback."""
    spec = app.commands.get(name)
    bridge = app.extension_bridge
    if spec is not None and spec.source == "extension" and bridge is not None:
        await bridge.run_command(spec.name, args)
        return
    if spec is not None and spec.source in ("prompt", "skill"):
        if needs_idle(app, f"running /{spec.name}"):
            app.start_work(app.agent.prompt(f"/{spec.name} {args}".rstrip()))  # the agent expands it
        return
    handler = HANDLERS.get(spec.name) if spec is not None else None
    if spec is None or handler is None:
        suggestion = app.commands.suggest(name)
        hint = f" Did you mean /{suggestion}?" if suggestion else ""
        app.say(f"Unknown command /{name}.{hint} Type / and Tab to see them all.", "error")
        return
    try:
        await handler(app, args.strip())
    except Exception as error:  # a command's own failure is reported, never a traceback
        app.say(f"/{spec.name} failed: {type(error).__name__}: {error}", "error")
