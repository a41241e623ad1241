"""What the user chooses in the running app: /settings changes, the scoped models and Ctrl+P's
cycle through them, and the thinking level picker.

Each choice is applied to the agent at once and, where pi saves it, written to the global
settings.json (a file that cannot be written is said, never raised). The app owns one
:class:`SettingsControl` and keeps only the thin methods commands reach
(:class:`~pi_tui.tui.host.CommandHost`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pi_tui.tui.host import CommandHost
from pi_tui.tui.keybindings import display_key
from pi_tui.view.theme import theme_choices

if TYPE_CHECKING:
    from pi_tui.config.settings import Settings
    from pi_tui.tui.settings_rows import SettingsView


class SettingsHost(CommandHost, Protocol):
    """The app as the settings see it: a command host that also lays out the screen."""

    def apply_screen_settings(self, settings: Settings) -> None:
        """Apply the settings that shape the screen (header, editor padding, completion)."""


def save_default_model(host: CommandHost, model: Any) -> None:
    """pi 1.x's "save as default" (Ctrl+S in the model picker): ``defaultProvider`` and
    ``defaultModel`` in the global settings.json, so new sessions and the next start begin on
    ``model``. With a scope for Ctrl+P (--models, enabledModels or /scoped-models), the model
    joins it, and joins ``enabledModels`` when that setting is what made the scope, so the saved
    default is never one the cycle cannot reach. Switching alone (Enter, Ctrl+P, ``/model name``)
    saves nothing, as in pi 1.x."""
    from pi_tui.ai.scoped_models import ScopedModel

    settings = host.agent.settings
    settings.default_provider = model.provider
    settings.default_model = model.id
    changes: dict[str, Any] = {"defaultProvider": model.provider, "defaultModel": model.id}
    started = host.started
    key = f"{model.provider}/{model.id}"
    if started is not None and started.scoped_models and key not in {s.key for s in started.scoped_models}:
        started.scoped_models = [*started.scoped_models, ScopedModel(model)]
        enabled = settings.enabled_models or []
        if enabled and key.lower() not in {pattern.lower() for pattern in enabled}:
            settings.enabled_models = [*enabled, key]
            changes["enabledModels"] = settings.enabled_models
    host.save_setting(changes)
    host.say(f"Default model: {key}")


class SettingsControl:
    """Applies and saves the app's settings, models and thinking level."""

    def __init__(self, host: SettingsHost) -> None:
        self.host = host

    def view(self) -> SettingsView:
        """What /settings shows: the settings, the live theme and thinking level."""
        from pi_tui.ai.thinking import supported_levels
        from pi_tui.tui.settings_rows import SettingsView

        host = self.host
        agent = host.agent
        levels = supported_levels(agent.model)
        themes = theme_choices(host.theme_files())
        return SettingsView(
            agent.settings, host.pi_theme_name, themes, agent.thinking_level, levels, not host.show_thinking
        )

    def changed(self, message: Any) -> None:
        """Apply a /settings change now, save it in pi's keys, redraw the rows."""
        from pi_tui.tui.settings_rows import SettingValueError, apply_to_settings, build_rows, parse_change

        host = self.host
        try:
            change = parse_change(message.id, message.value)
        except SettingValueError as error:
            message.screen.show_problem(str(error))
            return
        if change.id == "thinking" and change.value == host.agent.thinking_level:
            return  # as pi: the same level is neither recorded nor saved as the default
        if change.id == "theme":
            for problem in host.switch_theme(change.value):
                host.say(problem, "warning")
        elif change.id == "thinking":
            host.agent.set_thinking_level(change.value)
        elif change.id == "hide-thinking":
            host.show_thinking = not change.value
        apply_to_settings(host.agent.settings, change)
        if change.id == "secrets":
            self.reinstall_secrets()
        host.apply_screen_settings(host.agent.settings)
        self.save(change.saved)
        message.screen.show_rows(build_rows(self.view()))

    def reinstall_secrets(self) -> None:
        """Gather the secrets again (a setting, secrets.yml or a key changed); problems are said."""
        from pi_tui.startup import install_secrets

        started = self.host.started
        if started is None or started.options is None:
            return
        for problem in install_secrets(self.host.agent.settings, started.options, started.registry):
            self.host.say(problem, "warning")

    def save(self, change: dict[str, Any]) -> None:
        """Write a change (pi's keys) to the global settings.json; a failure is said, not raised."""
        from pi_tui.config.settings import SettingsError, update_global_settings

        try:
            update_global_settings(change)
        except (OSError, SettingsError) as error:
            self.host.say(f"Applied, but could not save the setting: {error}", "warning")

    def set_scoped_models(self, keys: list[str], *, save: bool) -> bool:
        """The Ctrl+P cycle becomes ``keys``; ``save`` writes enabledModels (True when saved)."""
        from pi_tui.ai.scoped_models import resolve_scoped_models
        from pi_tui.config.settings import SettingsError, update_global_settings

        started = self.host.started
        assert started is not None
        levels = {item.key: item.thinking for item in started.scoped_models}
        scoped = resolve_scoped_models(started.registry, keys)
        started.scoped_models = [type(item)(item.model, levels.get(item.key)) for item in scoped]
        if not save:
            return False
        patterns = [
            f"{item.key}:{item.thinking}" if item.thinking else item.key for item in started.scoped_models
        ]
        try:
            update_global_settings({"enabledModels": patterns or None})
        except (OSError, SettingsError) as error:
            self.host.say(f"Could not save enabledModels: {error}", "warning")
            return False
        self.host.agent.settings.enabled_models = patterns or None
        return True

    def cycle_model(self, step: int) -> None:
        """Ctrl+P / Shift+Ctrl+P: the next model of the scope (--models, enabledModels, or every
        usable model), with the thinking level its pattern gave."""
        from pi_tui.ai.scoped_models import cycle_list, next_model

        host = self.host
        agent, started = host.agent, host.started
        if agent is None or started is None:
            return
        if host.busy:
            host.show_hint("Wait for the reply to finish (or press Esc) before switching models.")
            return
        cycle = cycle_list(started.registry, started.scoped_models, agent.model)
        chosen = next_model(cycle, agent.model, step)
        if chosen is None:
            host.show_hint("Only one model to cycle through: add more with --models or /scoped-models.", 4)
            return
        agent.set_model(chosen.model, source="cycle")
        level = chosen.thinking
        if level is not None and (level == "off" or chosen.model.reasoning):
            agent.set_thinking_level(level)
        host.refresh_footer()
        thinking = f" (thinking {agent.thinking_level})" if chosen.model.reasoning else ""
        host.show_hint(f"Model: {chosen.model.provider}/{chosen.model.id}{thinking}", 3)

    async def pick_thinking_level(self) -> None:
        """pi 1.x's thinking selector: Enter uses the level for this session, the
        ``app.thinking.save`` key (Ctrl+S) also saves it as ``defaultThinkingLevel``."""
        from pi_tui.ai.thinking import supported_levels
        from pi_tui.tui.screens.thinking_picker import ThinkingPicker

        host = self.host
        agent = host.agent
        if agent is None:
            return
        save_keys = host.keys.bindings.get("thinking_save", ())
        picker = ThinkingPicker(
            list(supported_levels(agent.model)),
            agent.thinking_level,
            agent.settings.default_thinking_level,
            display_key(save_keys[0]) if save_keys else "(unbound)",
        )
        chosen = await host.push_screen_wait(picker)
        if chosen is None:
            return
        level, save = chosen
        agent.set_thinking_level(level)
        if save:
            agent.settings.default_thinking_level = level
            self.save({"defaultThinkingLevel": level})
        host.refresh_footer()
        host.show_hint(f"Default thinking level: {level}" if save else f"Thinking level: {level}", 3)
