"""What every module of built-in slash commands shares: the handler type, the table a module
fills with its commands, and the "wait until the agent is idle" check.

A command module makes one :class:`CommandSet` (``COMMANDS``) and decorates its handlers with
``@COMMANDS.command("name")``; nothing is registered anywhere by importing it. The one place
that gathers the modules and runs a command is :mod:`pi_tui.tui.slash_registry`, so a command
module imports only this module and :class:`~pi_tui.tui.host.CommandHost`, never the app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.startup import Started
    from pi_tui.tui.host import CommandHost

Handler = Callable[["CommandHost", str], Awaitable[None]]
"""A command: a coroutine given the app (as :class:`CommandHost`) and the text after its name."""


class CommandSet:
    """The commands one module defines, by name (the registry merges every module's set)."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}

    def command(self, name: str) -> Callable[[Handler], Handler]:
        """Decorator: ``handler`` answers ``/name`` (a name defined twice in one module is a bug)."""

        def add(handler: Handler) -> Handler:
            if name in self.handlers:
                raise ValueError(f"/{name} is defined twice")
            self.handlers[name] = handler
            return handler

        return add


def started_parts(app: CommandHost) -> Started:
    """What start-up made (registry, settings, options): a command only runs once the agent has
    started (``run_slash`` turns commands away before), so it is there."""
    started = app.started
    assert started is not None, "a command ran before the agent started"
    return started


def needs_idle(app: CommandHost, what: str) -> bool:
    """False (and said) while the agent runs: ``what`` waits for it, or for Escape."""
    if app.busy:
        app.say(f"Wait for the agent to finish (or press Esc) before {what}.", "warning")
        return False
    return True
