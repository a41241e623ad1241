"""Textual's command palette (Ctrl+P by default): every slash command, every setting by its
label, and a few of the app's actions. Choosing a command runs it as if typed (``/settings
<label>`` for a setting).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.app import App, SystemCommand
from textual.command import Hit, Hits, Provider

if TYPE_CHECKING:
    from pi_tui.commands import CommandRegistry
    from pi_tui.tui.settings_rows import SettingsView


class PaletteHost(Protocol):
    """The app as the palette sees it."""

    commands: CommandRegistry
    agent: Any

    def run_slash(self, name: str, args: str) -> None:
        """Run ``/name args`` as if typed."""

    def settings_view(self) -> SettingsView:
        """The settings and the live theme and thinking level (the rows /settings shows)."""


class SlashProvider(Provider):
    """The palette lists every slash command."""

    async def search(self, query: str) -> Hits:
        app = cast(PaletteHost, self.app)
        matcher = self.matcher(query)
        for command in app.commands.all():
            # the command's name counts fully, its description half ("theme" finds /settings'
            # Theme row before /reload, which merely mentions themes)
            score = max(matcher.match(f"/{command.name}"), matcher.match(command.description) / 2)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(f"/{command.name}"),
                    lambda name=command.name: app.run_slash(name, ""),
                    help=command.description,
                )


class SettingsProvider(Provider):
    """The palette also finds each setting by its label: Enter opens /settings on that row."""

    async def search(self, query: str) -> Hits:
        app = cast(PaletteHost, self.app)
        if app.agent is None:
            return
        from pi_tui.tui.settings_rows import build_rows

        matcher = self.matcher(query)
        for row in build_rows(app.settings_view()):
            score = matcher.match(row.label) * 1.2
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(f"{row.label} (setting)"),
                    lambda label=row.label: app.run_slash("settings", label),
                    help=f"/settings: {row.description}",
                )


SYSTEM_ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Select model", "Choose the model, as /model", "model_picker"),
    ("Cycle thinking level", "The model's next level", "cycle_thinking"),
    (
        "Choose thinking level",
        "Pick a level; the save key (Ctrl+S) keeps it as the default",
        "pick_thinking_level",
    ),
    ("Expand tool output", "Show or fold long output", "toggle_expanded"),
    ("Toggle thinking", "Show or hide thinking", "toggle_thinking"),
)
"""The palette's own entries (title, help, the app's ``action_*``): pi-tui's actions only (the
slash commands come from :class:`SlashProvider`). Textual's (Theme, Keys, Maximize, Screenshot,
Quit) are left out: they bypass pi-tui's themes, squeeze the chat or fail in a terminal app."""


def system_commands(app: App[Any]) -> Iterator[SystemCommand]:
    """:data:`SYSTEM_ACTIONS` as Textual's palette entries, each running the app's action."""
    for title, help_text, action in SYSTEM_ACTIONS:
        yield SystemCommand(title, help_text, getattr(app, f"action_{action}"))
