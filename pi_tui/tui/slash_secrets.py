"""``/secrets``: what pi-tui hides from the model in this run (never the values themselves)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.tui.slash_base import CommandSet

if TYPE_CHECKING:
    from pi_tui.secrets.sources import SecretsSetup
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""


def describe_secrets(setup: SecretsSetup | None, disabled: list[str]) -> str:
    """Lines for /secrets: the switch, each source with its count, the patterns, the problems."""
    from pi_tui.secrets.patterns import BUILTIN_PATTERNS

    if setup is None:
        return "Secrets are not set up in this run."
    lines = []
    if setup.enabled:
        lines.append("Hiding secrets: on (settings secrets.enabled).")
    else:
        lines.append(
            "Hiding secrets: off. Only the API keys pi-tui knows are hidden; turn the rest on with "
            '/settings (Hide secrets) or {"secrets": {"enabled": true}} in settings.json.'
        )
    if setup.sources:
        lines.extend(f"  {where}: {count}" for where, count in sorted(setup.sources.items()))
    else:
        lines.append("  nothing to hide")
    if setup.enabled:
        on = [name for name in BUILTIN_PATTERNS if name not in disabled]
        off = [name for name in BUILTIN_PATTERNS if name in disabled]
        lines.append(
            "Built-in patterns: " + (", ".join(on) or "none") + (f" (off: {', '.join(off)})" if off else "")
        )
    lines.append(f"Placeholders the model can use in tool calls this run: {setup.obfuscator.handed_out}")
    lines.extend(f"Problem: {problem}" for problem in setup.problems)
    return "\n".join(lines)


@COMMANDS.command("secrets")
async def secrets(app: CommandHost, args: str) -> None:
    from pi_tui.secrets.active import current_setup

    app.say(describe_secrets(current_setup(), app.agent.settings.secrets.disabled_patterns), title="Secrets")
