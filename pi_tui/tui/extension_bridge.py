"""The extensions in the interactive app: the trust question, their UI, commands and keys, and
the session events the app's own actions cause.

The app owns one :class:`ExtensionBridge` once the agent has started. It asks whether to trust
the project folder (its settings, extensions, skills, prompts, SYSTEM.md: before any of it is
read or imported; pi_tui/config/project_trust.py), hands the runner the TUI's
``ctx.ui``, keeps the command registry and the key bindings in step with what extensions
register, and tells them when the session is switched, forked or left.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_tui.commands import SlashCommand
from pi_tui.config.trust_store import TrustError, TrustStore
from pi_tui.tui.extension_ui import TuiExtensionUI

if TYPE_CHECKING:
    from pi_tui.extensions.runner import ExtensionRunner
    from pi_tui.extensions.setup import ExtensionSetup
    from pi_tui.tui.host import CommandHost

TRUST_CHOICES = [
    ("trusted", "Trust this folder: load them now and from now on"),
    ("not-now", "Not now: start without them (ask again next time)"),
    ("never", "Never: do not load them and do not ask again"),
]
TRUST_QUESTION = "This project folder has its own settings and resources. Load them?"


class ExtensionBridge:
    def __init__(self, app: CommandHost, setup: ExtensionSetup) -> None:
        self.app = app
        self.setup = setup
        self.runner: ExtensionRunner = setup.runner
        self._commands: list[str] = []
        self._keys: list[str] = []

    async def start(self) -> None:
        """Show what start-up said, ask about the project's extensions, start them all."""
        runner = self.runner
        runner.ui = TuiExtensionUI(self.app)
        runner.report = lambda line: self.app.say(line, "error")
        runner.run_starter = self.app.start_work
        runner.sessions.switch = self._switch
        for line in self.setup.lines:
            self.app.say(line, "warning")
        trust = self.setup.trust
        if trust is not None and trust.state == "ask":
            await self._ask_trust()
        await runner.finish_activation()
        runner.changed.append(self.refresh)
        self.refresh()
        await runner.session_start("startup")

    async def _ask_trust(self) -> None:
        """One question for everything the folder hands us; on "trust" it is saved and all of
        it loads now (extensions here, the rest as /reload reads it)."""
        from pi_tui.config.paths import agent_dir
        from pi_tui.config.project_trust import protected_resources
        from pi_tui.tui.screens.prompts import ChoiceMenu
        from pi_tui.tui.slash_more import reload_resources

        trust = self.setup.trust
        assert trust is not None
        waiting = self.setup.waiting
        self.setup.waiting = []
        listed = ", ".join(trust.resources)
        # each item by its path from the folder (not all are in .agent), MCP files with the
        # servers trusting starts
        items = ", ".join(protected_resources(trust.cwd, paths=True) or trust.resources)
        files = "\n".join(f"  {source.entry}" for source in waiting)
        code = f"\nExtensions are Python code that runs with your permissions:\n{files}" if waiting else ""
        menu = ChoiceMenu(TRUST_QUESTION, TRUST_CHOICES, message=f"{trust.cwd}: {items}.{code}")
        answered: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def answer_given(value: str | None) -> None:
            if not answered.done():
                answered.set_result(value)

        self.app.push_screen(menu, answer_given)
        answer = await answered
        store = TrustStore(agent_dir())
        try:
            if answer in ("trusted", "never"):
                store.decide(self.setup.project, answer)  # type: ignore[arg-type]
        except TrustError as error:
            self.app.say(str(error), "error")
        if answer == "trusted":
            trust.grant()
            self.runner.load(waiting)
            _done, problems = await reload_resources(self.app, whole=False)
            self.app.say(f"Trusted this folder; loaded the project's {listed}.")
            for problem in problems:
                self.app.say(problem.splitlines()[0], "warning")
        elif answer == "never":
            trust.state, trust.why = "untrusted", f"this folder is marked never to be trusted in {store.path}"
            self.app.say(f"The project's {listed} will not be loaded; {store.path} remembers it.")
        else:
            trust.state, trust.why = "untrusted", "not trusted for now (pi-tui asks again next time)"
            self.app.say(f"Started without the project's {listed}; pi-tui asks again next time.")

    def refresh(self) -> None:
        """Extension commands in the registry (completion, palette, rpc), their keys bound."""
        registry = self.app.commands
        for name in self._commands:
            registry.unregister(name)
        self._commands = []
        for command in self.runner.commands.values():
            loaded = next((e for e in self.runner.extensions if e.name == command.extension), None)
            spec = SlashCommand(
                command.name,
                command.description or f"(from the extension {command.extension})",
                usage=command.usage,
                source="extension",
                path=str(loaded.source.entry) if loaded is not None else None,
            )
            try:
                registry.register(spec)
            except ValueError as error:
                self.app.say(f"extension {command.extension}: {error}", "warning")
                continue
            self._commands.append(command.name)
        self._keys = self.app.bind_extension_keys(list(self.runner.shortcuts), self._keys)

    async def run_command(self, name: str, args: str) -> None:
        command = self.runner.commands.get(name.lower())
        if command is not None:
            await self.runner.run_registered_command(command, args)

    def complete_arguments(self, name: str, typed: str) -> Any:
        """What the command's ``get_argument_completions`` suggests for ``typed`` (None: no
        suggestion, or no such command, or the completer failed: said once)."""
        command = self.runner.commands.get(name.lower())
        if command is None or command.completions is None:
            return None
        try:
            return command.completions(typed)
        except Exception as error:
            self.runner.failed(command.extension, f"the completions of /{command.name}", error)
            return None

    async def run_shortcut(self, key: str) -> None:
        from pi_tui.extensions.context import CommandContext
        from pi_tui.extensions.tool import positional_count

        shortcut = self.runner.shortcuts.get(key)
        if shortcut is None:
            return
        try:
            context = CommandContext(self.runner, shortcut.extension)
            takes_context = positional_count(shortcut.handler) >= 1
            value = shortcut.handler(context) if takes_context else shortcut.handler()
            if asyncio.iscoroutine(value):
                await value
        except Exception as error:
            self.runner.failed(shortcut.extension, f"the key {key}", error)

    async def allow(self, event: str, **fields: Any) -> bool:
        """Ask ``session_before_switch`` / ``_fork`` handlers; False (and said) when one cancels."""
        if not self.runner.wants(event):
            return True
        answer = await self.runner.before(event, **fields)
        if answer is not None and answer.get("cancel"):
            self.app.say("An extension cancelled this.", "warning")
            return False
        return True

    async def _switch(self, manager: Any, reason: str) -> None:
        """An extension moved the session: the app continues there and redraws (and tells the
        extensions, as for its own moves)."""
        await self.app.switch_session(manager, restore_model=reason == "resume", reason=reason)

    async def session_replaced(self, reason: str, previous: str | None, target: str | None) -> None:
        await self.runner.session_shutdown(reason, target)
        await self.runner.session_start(reason, previous)

    async def shutdown(self) -> None:
        await self.runner.session_shutdown("quit")
