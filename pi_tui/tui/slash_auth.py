"""``/login`` and ``/logout``: subscription logins and API keys, saved in ``<agent dir>/auth.json``.

A newcomer who started on the offline demo signs in without editing a file or the environment.
``/login`` lists pi's account sign-ins first, in pi 1.5.2's order (OpenRouter, then Anthropic
Claude Pro/Max, GitHub Copilot, Kimi Code, Meta, the ChatGPT subscription, ChatGPT Plus/Pro
through Codex, xAI), then the providers an API key is for. ``/login <provider>`` goes straight
to it, asking which when the provider has both (``/login openai``: ChatGPT or an API key); Radius,
which pi signs in to, is refused with its reason. A subscription runs pi's sign-in
(:mod:`pi_tui.ai.oauth.login`) in a dialog (:mod:`pi_tui.tui.screens.login_dialog`): the URL to
open (a browser is opened where one can show it), the redirect URL or code pasted when the
browser is on another machine, or the device code to enter; Esc stops it and closes the callback
server. An API key is pasted as dots. Either is stored in pi's own format
(:mod:`pi_tui.config.auth`), so pi uses it too, and the model registry reads it first, as pi does.

``/logout`` lists what ``/login`` (or ``pi-tui auth login``) saved, logins and keys alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.ai.catalogue import PROVIDERS
from pi_tui.config.auth import AuthFileError
from pi_tui.tui.slash_base import CommandSet, started_parts

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.tui.host import CommandHost

COMMANDS = CommandSet()
"""This module's commands (gathered by :mod:`pi_tui.tui.slash_registry`)."""

_SUBSCRIPTION_PREFIX = "subscription:"


def subscription_name(provider: str) -> str:
    """How pi's /login names a sign-in: its provider's name ("OpenAI", "OpenAI Codex"), the
    [subscription] / [account] label beside it telling it from the provider's API key row."""
    from pi_tui.ai.oauth.providers import PROVIDERS as OAUTH_PROVIDERS

    info = PROVIDERS.get(provider)
    if info is not None and info.name:
        return info.name
    return next((entry.name for entry in OAUTH_PROVIDERS if entry.id == provider), provider)


def subscription_status(registry: ModelRegistry, provider: str) -> str:
    """Whether a login is saved for the subscription, as the /login list shows it; a provider
    that has an API key instead says so, as pi's list does ("• API key configured")."""
    from pi_tui.ai.key_origin import key_origin

    store = registry.auth
    if store.oauth(provider) is None:
        if key_origin(registry, provider).layer != "none":
            return "• API key configured"
        return "• not configured"
    return "✓ logged in (saved by pi)" if store.saved_by_pi(provider) else "✓ logged in"


def provider_name(registry: ModelRegistry, provider: str) -> str:
    """How a provider is named in the lists: pi's name, models.json's ``name``, else its id."""
    configured = registry.config.providers.get(provider)
    if configured is not None and configured.name:
        return configured.name
    info = PROVIDERS.get(provider)
    return info.name if info is not None and info.name else provider  # pi's name, from the catalogue


def key_providers(registry: ModelRegistry) -> list[str]:
    """Providers a saved key is for: built-ins that take one (pi's API-key providers: Bedrock's
    is a bearer token, Vertex's an express-mode key; not OpenAI Codex, a login only), and
    models.json's own providers (local servers such as Ollama and the offline demo need none)."""

    def takes_key(provider: str) -> bool:
        info = PROVIDERS.get(provider)
        return info is None or (not info.keyless and bool(info.env_vars or info.ambient_auth))

    return [provider for provider in registry.providers() if takes_key(provider)]


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
    if origin.layer == "ambient":
        return f"✓ {origin.ambient}"
    if registry.auth.oauth(provider) is not None:
        from pi_tui.ai.oauth.login import NOT_SUBSCRIPTIONS

        return f"• {'account' if provider in NOT_SUBSCRIPTIONS else 'subscription'} configured"
    return "• not configured"


@COMMANDS.command("login")
async def login(app: CommandHost, args: str) -> None:
    from pi_tui.ai.oauth.login import NOT_SUBSCRIPTIONS, SUBSCRIPTION_PROVIDERS, UNSUPPORTED
    from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt

    registry = started_parts(app).registry
    providers = sorted(key_providers(registry), key=lambda p: provider_name(registry, p).lower())
    rows = [
        (
            _SUBSCRIPTION_PREFIX + sid,
            f"{subscription_name(sid)} [{'account' if sid in NOT_SUBSCRIPTIONS else 'subscription'}]  "
            f"{subscription_status(registry, sid)}",
        )
        for sid in SUBSCRIPTION_PROVIDERS
    ]
    rows += [(p, f"{provider_name(registry, p)}  {key_status(registry, p)}") for p in providers]
    wanted = args.strip().lower()
    chosen: str | None
    if wanted in UNSUPPORTED:
        app.say(f"/login {wanted}: {UNSUPPORTED[wanted]}.", "error")
        return
    if wanted:  # /login <provider>: pi's shortcut past the list; which sign-in, when it has two
        matches = [row for row in rows if row[0].removeprefix(_SUBSCRIPTION_PREFIX).lower() == wanted]
        if not matches:
            app.say(f'Unknown provider "{args.strip()}": /login lists the providers.', "error")
            return
        chosen = matches[0][0]
        if len(matches) > 1:
            chosen = await app.push_screen_wait(
                ChoiceMenu(f"Select how to sign in to {provider_name(registry, wanted)}:", matches)
            )
    else:
        chosen = await app.push_screen_wait(
            ChoiceMenu("Select provider to configure:", rows, help_text="↑↓ move · enter choose · esc cancel")
        )
    if chosen is None:
        return
    if chosen.startswith(_SUBSCRIPTION_PREFIX):
        await _sign_in(app, registry, chosen.removeprefix(_SUBSCRIPTION_PREFIX))
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
    from pi_tui.ai.key_origin import url_variables

    env: dict[str, str] = {}
    for variable, label in url_variables(chosen):  # Cloudflare: its account (and gateway) id
        value = await app.push_screen_wait(
            TextPrompt(f"Enter {label}:", help_text=f"enter save · esc cancel · saved as {variable}")
        )
        if value is None:
            return
        if not value.strip():
            app.say(f"Failed to save API key for {name}: the {label} is empty.", "error")
            return
        env[variable] = value.strip()
    try:
        registry.auth.set_api_key(chosen, key, env)
    except AuthFileError as error:
        app.say(f"Failed to save API key for {name}: {error}", "error")
        return
    _saved(app, registry, chosen, f"Saved API key for {name}.")


def _saved(app: CommandHost, registry: ModelRegistry, provider: str, done: str) -> None:
    """Say what was saved; from the offline demo, switch to the provider just configured."""
    current = app.agent.model
    if current.provider == "offline" and not app.busy:
        # The demo model was only there for want of a key: the provider just configured is the
        # one the user wants to talk to (pi likewise picks it when no model was usable).
        model = registry.provider_default(provider)
        if model is not None:
            app.agent.set_model(model)
            done += f" Selected {model.provider}/{model.id}."
    app.say(f"{done} Credentials saved to {registry.auth.path}")
    app.refresh_footer()


async def _sign_in(app: CommandHost, registry: ModelRegistry, provider: str) -> None:
    """Run the subscription's sign-in in its dialog and save the login."""
    import asyncio

    from pi_tui.ai.oauth.login import METHODS, enterprise_domain, sign_in
    from pi_tui.ai.oauth.login_errors import LoginCancelled, LoginError
    from pi_tui.ai.oauth.providers import OAuthConfigError
    from pi_tui.tui.screens.login_dialog import LoginDialog
    from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt

    name = subscription_name(provider)
    methods = METHODS[provider]
    method = methods[0].id
    if len(methods) > 1:
        picked = await app.push_screen_wait(
            ChoiceMenu(f"Select {name} login method:", [(m.id, m.label) for m in methods])
        )
        if picked is None:
            return
        method = picked
    domain = None
    if provider == "github-copilot":
        typed = await app.push_screen_wait(
            TextPrompt("GitHub Enterprise URL/domain (blank for github.com)", placeholder="company.ghe.com")
        )
        if typed is None:
            return
        try:
            domain = enterprise_domain(typed)
        except LoginError as error:
            app.say(f"Login failed: {error}", "error")
            return
    dialog = LoginDialog(f"Login to {name}")
    await app.push_screen(dialog)
    paste = dialog.paste if method != "device" else None
    flow = asyncio.ensure_future(sign_in(provider, method, dialog, paste, enterprise_domain=domain))
    dialog.on_cancel = flow.cancel
    try:
        credential = await flow
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the app is stopping the command itself
        app.say("Login cancelled.", "warning")
        return
    except LoginCancelled:
        app.say("Login cancelled.", "warning")
        return
    except (LoginError, OAuthConfigError) as error:
        app.say(f"Login failed: {error}", "error")
        return
    finally:
        if dialog.is_attached:
            dialog.dismiss(None)
    try:
        registry.auth.set_oauth(provider, credential)
    except AuthFileError as error:
        app.say(f"Login failed: {error}", "error")
        return
    _saved(app, registry, provider, f"Logged in to {name}.")


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
        if store.kind(provider) == "api_key":
            return f"{provider_name(registry, provider)}  • API key"
        return f"{subscription_name(provider)}  • subscription"

    chosen = await app.push_screen_wait(
        ChoiceMenu(
            "Select provider to log out:",
            [(p, label(p)) for p in saved],
            help_text="↑↓ move · enter remove · esc cancel",
        )
    )
    if chosen is None:
        return
    was_key = store.kind(chosen) == "api_key"
    name = provider_name(registry, chosen) if was_key else subscription_name(chosen)
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
    info = PROVIDERS.get(chosen)
    needs_credentials = info is not None and not info.keyless
    if current.provider == chosen and needs_credentials and not registry.has_key(chosen):
        app.say(
            f"{current.provider}/{current.id} has no API key now: /login again or pick another model "
            "with /model.",
            "warning",
        )
    app.refresh_footer()
