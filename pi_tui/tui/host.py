"""What a slash command (and, later, an extension) may do to the interactive app.

Commands and the navigation flows are written against :class:`CommandHost`, not against the
Textual app class: they say things, start work the user can stop with Escape, switch sessions,
push screens and read the agent. The app implements the protocol with public methods, so a
command never reaches into the app's private state and the app module is the only one that
imports the others (no app -> slash -> app circle).
"""

from __future__ import annotations

from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.worker import Worker

    from pi_tui.commands import CommandRegistry
    from pi_tui.extensions.runner import ExtensionRunner
    from pi_tui.startup import Started
    from pi_tui.tui.keybindings import KeyBindingsLoad
    from pi_tui.tui.settings_rows import SettingsView

ScreenResult = TypeVar("ScreenResult")


class ExtensionCommands(Protocol):
    """The part of :class:`~pi_tui.tui.extension_bridge.ExtensionBridge` commands use (named
    here so this module does not import the bridge, which imports this module)."""

    @property
    def runner(self) -> ExtensionRunner:
        """The extensions' runner (what /reload, /trust and /bug read and reload)."""

    async def run_command(self, name: str, args: str) -> None:
        """Run an extension's registered command ``/name args``."""


class CommandHost(Protocol):
    """The interactive app as commands see it."""

    cwd: str
    agent_dir: Path
    commands: CommandRegistry
    keys: KeyBindingsLoad
    started: Started | None
    agent: Any
    """The :class:`~pi_tui.agent.session.AgentSession` (None only before the agent started)."""
    pi_theme_name: str
    show_thinking: bool

    @property
    def extension_bridge(self) -> ExtensionCommands | None:
        """The extensions of this session (None until the agent has started, or without them)."""

    # --- telling the user -------------------------------------------------------------------------

    def say(
        self,
        text: str,
        level: str = "info",
        title: str | None = None,
        *,
        markdown: bool = False,
        fold: bool = False,
    ) -> None:
        """A message from pi-tui in the chat (never saved in the session); ``markdown`` renders
        ``text`` as markdown; ``fold`` folds long lines at the edge instead of wrapping them."""

    def show_hint(self, text: str, seconds: float = 2.0) -> None:
        """A short line above the editor that goes away by itself."""

    def set_activity(self, text: str | None) -> None:
        """What is going on now (``Summarizing...``), shown until set to None."""

    def settings_view(self) -> SettingsView:
        """The settings and the live theme and thinking level, for /settings to build its rows."""

    def save_setting(self, change: dict[str, Any]) -> None:
        """Write ``change`` (pi's settings.json keys, nested as pi nests them) to the global
        settings file; a file that cannot be written is said, not raised."""

    def refresh_footer(self) -> None:
        """Redraw the footer after the model, thinking level, name or usage changed."""

    async def pick_thinking_level(self) -> None:
        """pi 1.x's thinking selector (``/thinking`` alone opens it, as in pi)."""

    # --- work -------------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """An agent run or cancellable work is going on."""

    def start_work(self, work: Awaitable[Any]) -> Any:
        """Run ``work`` as the agent run: the editor shows it running and Escape stops it."""

    def track_cancellable(self, work: Any) -> None:
        """Escape cancels ``work`` (a future) until it is set back to None."""

    def run_background(self, work: Coroutine[Any, Any, Any], *, group: str) -> Worker[Any]:
        """Work that must not block the command (a prompt screen inside a screen's callback)."""

    # --- sessions and screens ---------------------------------------------------------------------

    async def switch_session(
        self, manager: Any, *, restore_model: bool = True, reason: str = "resume"
    ) -> None:
        """Continue in another session (resumed, branched, new) and draw it; ``reason`` (new,
        resume, fork) is what extensions are told."""

    async def extensions_allow(self, event: str, **fields: Any) -> bool:
        """Whether extensions let ``event`` (``session_before_switch`` / ``_fork``) happen."""

    def set_extension_status(self, key: str, text: str | None) -> None:
        """An extension's status text in the footer (None clears it)."""

    def set_extension_footer(self, text: str | None) -> None:
        """An extension's text in place of the footer (None: the footer again)."""

    def set_extension_widget(self, key: str, lines: Any, placement: str) -> None:
        """An extension's lines above or below the editor (None clears them)."""

    def follow_transcript(self, follow: Any) -> None:
        """Keep showing another agent's transcript as it grows (:mod:`pi_tui.tui.follow`)."""

    def stop_following(self) -> None:
        """Stop following (the user continues the conversation here, or another session opens)."""

    def submit_prompt(self, text: str) -> None:
        """What Enter does with the editor's text: a !command, a /command, or a prompt."""

    def replace_editor_text(self, text: str) -> None:
        """Put ``text`` in the editor in place of what is there."""

    def bind_extension_keys(self, keys: list[str], previous: list[str]) -> list[str]:
        """Bind extensions' keys instead of ``previous``; returns the keys bound."""

    async def show_session(self) -> None:
        """Redraw the chat from the current branch (after moving in the tree)."""

    async def shutdown(self) -> None:
        """Leave the app cleanly."""

    def push_screen(self, screen: Screen[Any], callback: Any = None) -> Any:
        """Show a screen; ``callback`` gets its result."""

    async def push_screen_wait(self, screen: Screen[ScreenResult]) -> ScreenResult:
        """Show a screen and wait for its result."""

    # --- the editor and the chat ------------------------------------------------------------------

    def offer_editor_text(self, text: str) -> None:
        """Put ``text`` in the editor unless the user has already typed something there."""

    def show_label(self, entry_id: str, label: str | None) -> None:
        """A label changed: the chat shows it on the entry's item."""

    def last_answer_text(self) -> str | None:
        """The text of the newest answer in the chat (for /copy)."""

    def set_scoped_models(self, keys: list[str], *, save: bool) -> bool:
        """The Ctrl+P cycle becomes ``keys`` (``provider/id``); ``save`` writes enabledModels.
        True when it was saved."""

    def theme_files(self) -> dict[str, Path]:
        """Every theme on offer (name -> file), as /settings lists them."""

    def copy_to_clipboard(self, text: str) -> None:
        """Put ``text`` on the terminal's clipboard (OSC 52)."""

    # --- reloading (/reload) ----------------------------------------------------------------------

    def reload_keybindings(self) -> list[str]:
        """Read keybindings.json again and bind its keys; returns its problems (one line each)."""

    def switch_theme(self, name: str) -> list[str]:
        """Install the pi theme ``name`` (read from disk again); returns its problems."""

    def set_loaded(self, loaded: list[str]) -> None:
        """What the header lists as loaded (context files, rules) changed."""
