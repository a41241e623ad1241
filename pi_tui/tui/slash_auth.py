"""``/login`` and ``/logout``: API keys saved in ``<agent dir>/auth.json`` from inside the app.

A newcomer who started on the offline demo adds a key without editing a file or the environment:
pick the provider, paste the key (shown as dots), and the next message goes to that provider. The
key is stored in pi's own format (:mod:`pi_tui.config.auth`), so pi uses it too, and the model
registry reads it before models.json and the environment, as pi does.

pi's subscription logins (Claude Pro/Max, ChatGPT Plus/Pro, GitHub Copilot) are OAuth flows in a
browser with tokens that must be refreshed: pi-tui does not have them and says so when one is
picked, instead of offering a login that cannot work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.ai.catalogue import ENV_VARS, PROVIDERS
from pi_tui.config.auth import AuthFileError
from pi_tui.tui.slash_base import CommandSet, started_parts

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""

DISPLAY_NAMES = {
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "google": "Google Gemini",
    "openrouter": "OpenRouter",
    "groq": "Groq",
    "cerebras": "Cerebras",
    "xai": "xAI",
    "mistral": "Mistral",
    "azure": "Azure OpenAI",
}
"""pi's names for the built-in providers pi-tui knows (what its /login list shows)."""

SUBSCRIPTIONS = (
    ("anthropic", "Anthropic (Claude Pro/Max)"),
    ("openai-codex", "ChatGPT Plus/Pro (Codex Subscription)"),
    ("github-copilot", "GitHub Copilot"),
)
"""pi's OAuth logins, listed so that picking one gets a plain answer rather than silence."""

_SUBSCRIPTION_PREFIX = "subscription:"


def provider_name(registry: ModelRegistry, provider: str) -> str:
    """How a provider is named in the lists: pi's name, models.json's ``name``, else its id."""
    configured = registry.config.providers.get(provider)
    if configured is not None and configured.name:
        return configured.name
    return DISPLAY_NAMES.get(provider, provider)


def key_providers(registry: ModelRegistry) -> list[str]:
    """Providers a saved key is for: built-ins that need one, and models.json's own providers
    (local servers such as Ollama and the offline demo need none)."""
    return [
        provider for provider in registry.providers() if provider in ENV_VARS or provider not in PROVIDERS
    ]


def key_status(registry: ModelRegistry, provider: str) -> str:
    """Where the provider's key comes from now, as the /login list shows it (never the key)."""
    from pi_tui.ai.key_origin import key_origin

    origin = key_origin(registry, provider)
    if origin.layer == "auth.json":
        return "✓ saved by pi" if origin.by_pi else "✓ saved"
    if origin.layer == "models.json":
        return "✓ key in models.json"
    if origin.layer == "env":
        return f"✓ env: {origin.env_var}"
    if origin.oauth_saved:
        return "• subscription saved by pi (not usable here)"
    return "• not configured"


def _subscription_answer(name: str) -> str:
    return (
        f"{name} is a subscription login: pi signs in to it in a browser (OAuth) and keeps "
        "refreshing the token. pi-tui cannot do that. Use an API key instead (pick the provider "
        "in /login), or sign in with pi itself."
    )


@COMMANDS.command("login")
async def login(app: CommandHost, args: str) -> None:
    from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt

    registry = started_parts(app).registry
    providers = sorted(key_providers(registry), key=lambda p: provider_name(registry, p).lower())
    rows = [(p, f"{provider_name(registry, p)}  {key_status(registry, p)}") for p in providers]
    rows += [(_SUBSCRIPTION_PREFIX + sid, f"{name}  • subscription (OAuth)") for sid, name in SUBSCRIPTIONS]
    chosen = await app.push_screen_wait(
        ChoiceMenu("Select provider to configure:", rows, help_text="↑↓ move · enter choose · esc cancel")
    )
    if chosen is None:
        return
    if chosen.startswith(_SUBSCRIPTION_PREFIX):
        name = dict(SUBSCRIPTIONS)[chosen.removeprefix(_SUBSCRIPTION_PREFIX)]
        app.say(_subscription_answer(name), "warning")
        return
    name = provider_name(registry, chosen)
    key = await app.push_screen_wait(
        TextPrompt(
            f"Enter API key for {name}:",
            placeholder="paste the key",
            help_text="enter save · esc cancel · the key is saved to auth.json (0600)",
            password=True,
        )
    )
    if key is None:
        return
    if not key:
        app.say(f"Failed to save API key for {name}: the key is empty.", "error")
        return
    try:
        registry.auth.set_api_key(chosen, key)
    except AuthFileError as error:
        app.say(f"Failed to save API key for {name}: {error}", "error")
        return
    done = f"Saved API key for {name}."
    current = app.agent.model
    if current.provider == "offline" and not app.busy:
        # The demo model was only there for want of a key: the provider just configured is the
        # one the user wants to talk to (pi likewise picks it when no model was usable).
        model = registry.provider_default(chosen)
        if model is not None:
            app.agent.set_model(model)
            done += f" Selected {model.provider}/{model.id}."
    app.say(f"{done} Credentials saved to {registry.auth.path}")
    app.refresh_footer()


@COMMANDS.command("logout")
async def logout(app: CommandHost, args: str) -> None:
    from pi_tui.tui.screens.prompts import ChoiceMenu

    registry = started_parts(app).registry
    store = registry.auth
    store.reload()  # pi (or another pi-tui) may have changed it since
    if store.problem is not None:
        app.say(f"Cannot read saved credentials: {store.problem}", "error")
        return
    # pi's auth.json is read beneath ours but never changed: its credentials are pi's to remove.
    ours = [provider for provider in store.providers() if not store.saved_by_pi(provider)]
    saved = sorted(ours, key=lambda p: provider_name(registry, p).lower())
    if not saved:
        app.say(
            "No saved credentials to remove. /logout removes only what /login saved; environment "
            "variables, models.json and what pi saved in its own folder stay as they are."
        )
        return

    def label(provider: str) -> str:
        kind = "API key" if store.kind(provider) == "api_key" else "subscription (saved by pi)"
        return f"{provider_name(registry, provider)}  • {kind}"

    chosen = await app.push_screen_wait(
        ChoiceMenu(
            "Select provider to log out:",
            [(p, label(p)) for p in saved],
            help_text="↑↓ move · enter remove · esc cancel",
        )
    )
    if chosen is None:
        return
    name = provider_name(registry, chosen)
    was_key = store.kind(chosen) == "api_key"
    try:
        store.remove(chosen)
    except AuthFileError as error:
        app.say(f"Logout failed: {error}", "error")
        return
    if was_key:
        app.say(
            f"Removed the saved API key for {name}. Environment variables and models.json stay as they are."
        )
    else:
        app.say(f"Removed the subscription login for {name} from {store.path}.")
    current = app.agent.model
    if current.provider == chosen and current.provider in ENV_VARS and not registry.has_key(chosen):
        app.say(
            f"{current.provider}/{current.id} has no API key now: /login again or pick another model "
            "with /model.",
            "warning",
        )
    app.refresh_footer()
