"""Which models exist, how to reach them, and which one to use.

:class:`ModelRegistry` is the built-in catalogue (:mod:`pi_tui.ai.catalogue`) merged with
``<agent dir>/models.json`` (pi's format, read unchanged by :mod:`pi_tui.ai.models_file`:
providers add or override, ``models`` upsert by id, ``modelOverrides`` patch built-ins,
provider-level ``baseUrl`` / ``compat`` / ``headers`` apply to the provider's models), with pi's
file beneath ours (:mod:`pi_tui.ai.models_beneath`). Also pattern matching for ``--model``, API
key and header resolution, and the choice of the default model.

``apiKey`` and header values may be a literal, a ``$VAR`` template, or ``!command``
(:mod:`pi_tui.ai.config_values`). They are resolved when a request is made
(:meth:`ModelRegistry.request_options`), never while loading, so listing models never runs a
command. ``Model.headers`` therefore holds the *configured* values; the resolved ones travel in
``StreamOptions.headers``, which the API clients apply on top.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from pydantic import ValidationError

from pi_tui.ai.catalogue import (
    API_KEY_ENV_VARS,
    ENV_VARS,
    KNOWN_APIS,
    PROVIDERS,
    ambient_credentials,
    builtin_models,
    fill_base_url,
    unspoken_api_message,
)
from pi_tui.ai.config_values import env_value, is_value_configured, legacy_notice, resolve_config_value
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.models_beneath import with_pi_models
from pi_tui.ai.models_file import (
    ModelConfig,
    ModelsFile,
    ProviderConfig,
    field_path,
    json_terms,
    read_models_file,
)
from pi_tui.ai.oauth.copilot import COPILOT_PROVIDER as COPILOT
from pi_tui.ai.offline import DEMO_MODEL
from pi_tui.ai.types import API_KINDS, Model, ModelCost, StreamOptions, ThinkingLevel
from pi_tui.config.auth import AuthStore, auth_file
from pi_tui.config.paths import agent_dir
from pi_tui.config.pi_folder import pi_file

if TYPE_CHECKING:
    from pi_tui.ai.oauth.refresh import OAuthAuth

BEARER_ENV_VARS = frozenset({"ANTHROPIC_AUTH_TOKEN"})
"""Variables whose value pi sends as ``Authorization: Bearer``, not as the provider's API key."""
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


class ModelMatch(NamedTuple):
    model: Model
    thinking: ThinkingLevel | None
    """The ``:<level>`` suffix of the pattern, when there was one."""


@dataclass(slots=True)
class ModelChoice:
    """The model to start with, and why (for the UI's startup notice)."""

    model: Model
    thinking: ThinkingLevel | None = None
    source: Literal["cli", "settings", "key", "offline"] = "offline"
    warning: str | None = None


class ModelRegistry:
    """The catalogue merged with models.json; loading raises :class:`ConfigError` when broken."""

    def __init__(self, path: Path | str | None = None, auth: AuthStore | None = None) -> None:
        self.path = Path(path) if path is not None else agent_dir() / "models.json"
        self.beneath = pi_file("models.json") if path is None else None
        """pi's models.json, read beneath ours (pi_tui/ai/models_beneath.py); None: not read."""
        self.problems: list[str] = []
        """What of pi's models.json was left out at the last reload (one line each)."""
        self.auth = auth if auth is not None else AuthStore(auth_file(self.path.parent), self.beneath_auth())
        """Keys saved by /login (auth.json next to models.json; pi's beneath), checked after
        ``--api-key``."""
        self.config = ModelsFile()
        self.models: list[Model] = []
        self.code_providers: dict[str, ProviderConfig] = {}
        """Providers added by extensions (``pi.register_provider``), on top of models.json."""
        self.reload()

    def reload(self) -> None:
        """Read models.json again (pi re-reads it whenever the model picker opens)."""
        config = read_models_file(self.path)
        if self.code_providers:
            config = ModelsFile(providers={**config.providers, **self.code_providers})
        problems: list[str] = []
        if self.beneath is not None:
            config, problems = with_pi_models(self._merge, config, self.beneath)
        self.models = self._for_the_account(self._with_urls_filled(self._merge(config)), config)
        self.config = config
        self.problems = [*problems, *self._legacy_notices(config)]

    def beneath_auth(self) -> Path | None:
        """pi's auth.json when pi's models.json is read beneath ours (its keys fill in ours)."""
        return self.beneath.with_name("auth.json") if self.beneath is not None else None

    def add_provider(self, name: str, config: dict[str, Any]) -> None:
        """A provider given as a models.json entry from code; a bad one is a :class:`ConfigError`
        worded as for models.json."""
        try:
            provider = ProviderConfig.model_validate(config)
        except ValidationError as error:
            problem = error.errors()[0]
            where = field_path(("providers", name, *problem["loc"]))
            raise ConfigError(f"provider {name}: {where}: {json_terms(problem['msg'])}") from None
        previous = self.code_providers.get(name)
        self.code_providers[name] = provider
        try:
            self.reload()
        except ConfigError as error:
            if previous is None:
                self.code_providers.pop(name)
            else:
                self.code_providers[name] = previous
            why = str(error).split(": ", 1)[-1]
            raise ConfigError(f"provider {name}: {why}") from None

    # --- building -----------------------------------------------------------------------------

    def _merge(self, config: ModelsFile) -> list[Model]:
        models = builtin_models()
        for name, provider in config.providers.items():
            self._check_api(provider.api, f"providers.{name}.api")
            if name in PROVIDERS:
                models = [self._override(m, provider) if m.provider == name else m for m in models]
        for name, provider in config.providers.items():
            for position, entry in enumerate(provider.models or []):
                custom = self._custom_model(name, provider, entry, f"providers.{name}.models[{position}]")
                index = next(
                    (i for i, m in enumerate(models) if m.provider == name and m.id == custom.id), None
                )
                if index is None:
                    models.append(custom)
                else:
                    models[index] = custom
        return models

    def _for_the_account(self, models: list[Model], config: ModelsFile) -> list[Model]:
        """A GitHub Copilot login's built-in models narrowed to the ones its account may use
        (``availableModelIds``, saved by the login as pi saves it), as pi lists them; models the
        user added in models.json stay. Without that list (a key, an older login): all of them."""
        login = self.auth.oauth(COPILOT)
        available = login.get("availableModelIds") if login is not None else None
        if not isinstance(available, list) or not all(isinstance(i, str) for i in available):
            return models
        allowed = set(available)
        configured = config.providers.get(COPILOT)
        added = {entry.id for entry in (configured.models or [])} if configured is not None else set()
        return [m for m in models if m.provider != COPILOT or m.id in allowed or m.id in added]

    def _with_urls_filled(self, models: list[Model]) -> list[Model]:
        """Base URLs naming variables (Cloudflare's ``{CLOUDFLARE_ACCOUNT_ID}``) filled from the
        provider's auth.json ``env``, else the process environment, where they are set; the others
        keep their placeholder, which :meth:`request_options` names when the model is used."""
        filled: list[Model] = []
        for model in models:
            if "{" in model.base_url:
                try:
                    url = fill_base_url(model, self.auth.env(model.provider))
                except ConfigError:
                    url = model.base_url
                if url != model.base_url:
                    model = model.model_copy(update={"base_url": url})
            filled.append(model)
        return filled

    def _override(self, model: Model, provider: ProviderConfig) -> Model:
        """Provider-level settings and ``modelOverrides`` applied to a built-in model."""
        changes: dict[str, Any] = {
            "compat": {**model.compat, **(provider.compat or {})},
            "headers": {**model.headers, **(provider.headers or {})},
        }
        if provider.base_url:
            changes["base_url"] = provider.base_url
        if provider.auth_header is not None:
            changes["auth_header"] = provider.auth_header
        patch = (provider.model_overrides or {}).get(model.id)
        if patch is not None:
            for field_name in ("name", "reasoning", "input", "context_window", "max_tokens"):
                value = getattr(patch, field_name)
                if value is not None:
                    changes[field_name] = value
            if patch.cost is not None:
                given = patch.cost.model_dump(exclude_none=True)
                changes["cost"] = model.cost.model_copy(update=given)
            changes["headers"] = {**changes["headers"], **(patch.headers or {})}
            changes["compat"] = {**changes["compat"], **(patch.compat or {})}
        return model.model_copy(update=changes, deep=True)

    def _custom_model(
        self, provider_name: str, provider: ProviderConfig, entry: ModelConfig, where: str
    ) -> Model:
        builtin = PROVIDERS.get(provider_name)
        api = entry.api or provider.api or (builtin.api if builtin else None)
        if not api:  # a built-in provider without models (pi's typesafe) has no kind either
            raise ConfigError(
                f'{self.path}: {where}.api: no API kind; set "api" on the provider or the model '
                f"(one of {', '.join(API_KINDS)})"
            )
        self._check_api(entry.api, f"{where}.api")
        base_url = entry.base_url or provider.base_url or (builtin.base_url if builtin else None)
        if not base_url and api != "offline":
            raise ConfigError(
                f"{self.path}: providers.{provider_name}.baseUrl: required because provider "
                f'"{provider_name}" defines models and has no built-in URL'
            )
        cost = entry.cost.model_dump(exclude_none=True) if entry.cost else {}
        try:
            return self._make_model(provider_name, provider, entry, api, base_url or "", cost)
        except ValidationError as error:  # an unknown key colliding with a field, say
            problem = error.errors()[0]
            raise ConfigError(
                f"{self.path}: {where}.{field_path(problem['loc'])}: {json_terms(problem['msg'])}"
            ) from None

    @staticmethod
    def _make_model(
        provider_name: str,
        provider: ProviderConfig,
        entry: ModelConfig,
        api: str,
        base_url: str,
        cost: dict[str, Any],
    ) -> Model:
        builtin = PROVIDERS.get(provider_name)
        return Model.model_validate(
            {
                **(entry.model_extra or {}),
                "id": entry.id,
                "name": entry.name or entry.id,
                "api": api,
                "provider": provider_name,
                "baseUrl": base_url,
                "reasoning": bool(entry.reasoning),
                "input": entry.input or ["text"],
                "contextWindow": entry.context_window or 128_000,
                "maxTokens": entry.max_tokens or 16_384,
                "cost": ModelCost(**cost),
                "headers": {**(provider.headers or {}), **(entry.headers or {})},
                "compat": {
                    **(builtin.compat if builtin else {}),
                    **(provider.compat or {}),
                    **(entry.compat or {}),
                },
                "authHeader": provider.auth_header,
            }
        )

    def _check_api(self, api: str | None, where: str) -> None:
        if api is not None and api not in KNOWN_APIS:
            known = ", ".join(kind for kind in KNOWN_APIS if kind != "offline")
            raise ConfigError(f"{self.path}: {where}: unknown API kind {api!r} (known: {known})")

    # --- looking up -----------------------------------------------------------------------------

    def all(self) -> list[Model]:
        return list(self.models)

    def providers(self) -> list[str]:
        """Provider names in catalogue order, then models.json's own providers."""
        return list(dict.fromkeys(model.provider for model in self.models))

    def get(self, provider: str, model_id: str) -> Model | None:
        """The model with exactly this provider and id (case-insensitive)."""
        provider, model_id = provider.lower(), model_id.lower()
        for model in self.models:
            if model.provider.lower() == provider and model.id.lower() == model_id:
                return model
        return None

    def usable(self, provider: str, model_id: str) -> Model | None:
        """:meth:`get`, when the model can be used here (its provider needs no credentials or
        has some): a resumed session keeps its own model only then, as at startup and in pi,
        instead of switching to a model every request of which would fail for want of a key."""
        model = self.get(provider, model_id)
        if model is None or (self.needs_key(model.provider) and not self.has_key(model.provider)):
            return None
        return model

    def canonical_provider(self, name: str) -> str | None:
        lowered = name.strip().lower()
        return next((p for p in self.providers() if p.lower() == lowered), None)

    def provider_default(self, provider: str) -> Model | None:
        """pi's default model of the provider when it has it, else the provider's first model."""
        info = PROVIDERS.get(provider)
        wanted = info.default_model if info is not None else None
        first = None
        for model in self.models:
            if model.provider == provider:
                if wanted is None or model.id == wanted:
                    return model
                first = first or model
        return first

    def find(self, pattern: str, provider: str | None = None) -> ModelMatch | None:
        """The model ``pattern`` names, as ``--model`` understands it.

        ``pattern`` is an id, ``provider/id``, or a fragment of an id or name, optionally followed
        by ``:<thinking level>``. Exact matches win; among fragment matches an id that starts with
        the fragment beats one that contains it after a separator, then anywhere, then a match on
        the name; ties go to a provider with a key, then an alias over a dated snapshot, then the
        highest id (usually the newest version).
        """
        pattern = pattern.strip()
        candidates = self.models
        if provider is not None:
            canonical = self.canonical_provider(provider)
            if canonical is None:
                return None
            candidates = [m for m in self.models if m.provider == canonical]
            if pattern.lower().startswith(canonical.lower() + "/"):
                pattern = pattern[len(canonical) + 1 :]
        if not pattern:
            return None
        return self._parse_pattern(pattern, candidates)

    def resolve(self, pattern: str, provider: str | None = None) -> ModelMatch:
        """Like :meth:`find`, but a clear :class:`ConfigError` when nothing matches."""
        if provider is not None and self.canonical_provider(provider) is None:
            raise ConfigError(f'Unknown provider "{provider}". Use --list-models to see the known ones.')
        match = self.find(pattern, provider)
        if match is None:
            shown = f"{provider}/{pattern}" if provider else pattern
            raise ConfigError(f'Model "{shown}" not found. Use --list-models to see the available models.')
        return match

    def _parse_pattern(self, pattern: str, candidates: list[Model]) -> ModelMatch | None:
        model = self._match(pattern, candidates)
        if model is not None:
            return ModelMatch(model, None)
        head, colon, level = pattern.rpartition(":")
        if colon and head and level.lower() in THINKING_LEVELS:
            inner = self._parse_pattern(head, candidates)
            if inner is not None:
                return ModelMatch(inner.model, cast(ThinkingLevel, level.lower()))
        return None

    def _match(self, pattern: str, candidates: list[Model]) -> Model | None:
        lowered = pattern.lower()
        for model in candidates:
            if f"{model.provider}/{model.id}".lower() == lowered:
                return model
        prefix, slash, rest = pattern.partition("/")
        if slash and rest:
            canonical = self.canonical_provider(prefix)
            if canonical is not None:
                scoped = [m for m in candidates if m.provider == canonical]
                found = self._match_in(rest, scoped)
                if found is not None:
                    return found
        return self._match_in(pattern, candidates)

    def _match_in(self, pattern: str, candidates: list[Model]) -> Model | None:
        lowered = pattern.lower()
        exact = [m for m in candidates if m.id.lower() == lowered]
        if exact:
            return min(exact, key=lambda m: self._availability(m.provider))
        boundary = re.compile(r"(?:^|[-/._:])" + re.escape(lowered))
        ranked: list[tuple[int, Model]] = []
        for model in candidates:
            model_id = model.id.lower()
            if model_id.startswith(lowered):
                tier = 0
            elif boundary.search(model_id):
                tier = 1
            elif lowered in model_id:
                tier = 2
            elif lowered in model.name.lower():
                tier = 3
            else:
                continue
            ranked.append((tier, model))
        if not ranked:
            return None
        ranked.sort(key=lambda item: _collation_key(item[1].id), reverse=True)  # stable: ties keep
        availability = {p: self._availability(p) for p in {model.provider for _, model in ranked}}
        ranked.sort(key=lambda item: (item[0], availability[item[1].provider], _is_dated(item[1].id)))
        return ranked[0][1]  # catalogue order, so the same id on several providers goes to pi's first

    def _availability(self, provider: str) -> int:
        """Ranking among equal matches: a provider with a key, then one that just needs a key,
        then local servers nobody configured (their catalogue entries are only examples)."""
        if self.has_key(provider):
            return 0
        info = PROVIDERS.get(provider)
        return 2 if info is not None and info.keyless else 1

    def list_models(self, search: str | None = None) -> list[Model]:
        """Models for ``--list-models [SEARCH]``: every word of ``search`` must appear somewhere
        in ``provider/id`` or the name (case-insensitive)."""
        words = (search or "").lower().split()
        return [
            model
            for model in self.models
            if all(word in f"{model.provider}/{model.id} {model.name}".lower() for word in words)
        ]

    # --- keys and request options ---------------------------------------------------------------

    def has_key(self, provider: str) -> bool:
        """Whether a key is configured (auth.json, models.json ``apiKey`` or one of the provider's
        variables), without running any ``!command``: a ``$VAR`` value counts only when the
        variable is set. Ambient credentials count (AWS for Bedrock, Google's ADC for Vertex, as
        pi judges them), and so does a saved subscription login (expired or not: it is renewed
        when used). Keyless providers (Ollama, offline) count only with a configured key."""
        env = self.auth.env(provider)
        if self.auth.api_key(provider) or self.auth.oauth(provider) is not None:
            return True
        configured = self.config.providers.get(provider)
        if configured is not None and configured.api_key:
            return is_value_configured(configured.api_key, env)
        names = API_KEY_ENV_VARS.get(provider, ())
        return any(env_value(name, env) for name in names) or ambient_credentials(provider, env)

    def needs_key(self, provider: str) -> bool:
        """Whether a request without a key is refused up front: a built-in provider that is not
        keyless and whose credentials cannot be ambient (Bedrock's AWS ones, Vertex's ADC are
        found by their clients). models.json's own providers may need none."""
        info = PROVIDERS.get(provider)
        return info is not None and not info.keyless and info.ambient_auth is None

    def resolve_api_key(self, provider: str, cli_key: str | None = None) -> str | None:
        """``--api-key``, else a key saved by /login in auth.json, else models.json ``apiKey``
        (both: ``!command`` / ``$VAR`` template / literal), else the provider's env var; ``None``
        when there is none. auth.json comes right after ``--api-key`` as in pi; its ``env`` for
        the provider wins over the process environment."""
        if cli_key:
            return cli_key
        login = self.oauth_auth(provider)  # a subscription login saved by pi or /login
        if login is not None:
            return login.api_key
        env = self.auth.env(provider)
        saved = self.auth.api_key(provider)
        if saved:
            return resolve_config_value(saved, f"{self.auth.path}: {provider}.key", env)
        configured = self.config.providers.get(provider)
        if configured is not None and configured.api_key:
            return resolve_config_value(configured.api_key, f"{self.path}: providers.{provider}.apiKey", env)
        found = self._env_key(provider, env)
        return found[1] if found else None

    def _env_key(self, provider: str, env: dict[str, str]) -> tuple[str, str] | None:
        """(variable, value): the first of the provider's variables that is set, in pi's order
        (Anthropic: ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_OAUTH_TOKEN``, ``ANTHROPIC_API_KEY``)."""
        single = ENV_VARS.get(provider)
        for name in API_KEY_ENV_VARS.get(provider) or ((single,) if single else ()):
            value = env_value(name, env)
            if value:
                return name, value
        return None

    def _from_env_bearer(self, provider: str, key: str) -> bool:
        """``key`` came from a variable pi sends as ``Authorization: Bearer`` rather than as the
        provider's API key (``ANTHROPIC_AUTH_TOKEN``: a gateway's or proxy's token)."""
        configured = self.config.providers.get(provider)
        if self.auth.api_key(provider) or (configured is not None and configured.api_key):
            return False
        found = self._env_key(provider, self.auth.env(provider))
        return found is not None and found[0] in BEARER_ENV_VARS and found[1] == key

    def oauth_auth(self, provider: str) -> OAuthAuth | None:
        """``provider``'s subscription login (auth.json ``"type": "oauth"``) ready for a request:
        renewed first when it is about to expire, as pi does (pi_tui/ai/oauth/refresh.py); None
        without one. A failed renewal is a :class:`ConfigError` (no silent fall back to another
        key: pi's stored credential owns the provider too)."""
        from pi_tui.ai.oauth.refresh import oauth_auth

        return oauth_auth(self.auth, provider)

    def resolve_headers(self, model: Model) -> dict[str, str]:
        """The model's configured headers with every value resolved like ``apiKey``."""
        env = self.auth.env(model.provider)
        return {
            name: resolve_config_value(value, f"{self.path}: header {name!r} of {model.label}", env)
            for name, value in model.headers.items()
        }

    def _legacy_notices(self, config: ModelsFile) -> list[str]:
        """One line per value still written in pi 0.73's form (a bare variable name), once a run."""
        places: list[tuple[str, str, str]] = []
        for provider in self.auth.providers():
            key = self.auth.api_key(provider)
            if key:
                places.append((key, f"{self.auth.path}: {provider}.key", provider))
        for name, provider_config in config.providers.items():
            if provider_config.api_key:
                places.append((provider_config.api_key, f"{self.path}: providers.{name}.apiKey", name))
            for header, value in (provider_config.headers or {}).items():
                places.append((value, f"{self.path}: providers.{name}.headers.{header}", name))
            for position, entry in enumerate(provider_config.models or []):
                for header, value in (entry.headers or {}).items():
                    where = f"{self.path}: providers.{name}.models[{position}].headers.{header}"
                    places.append((value, where, name))
            for model_id, patch in (provider_config.model_overrides or {}).items():
                for header, value in (patch.headers or {}).items():
                    where = f"{self.path}: providers.{name}.modelOverrides.{model_id}.headers.{header}"
                    places.append((value, where, name))
        notices = (legacy_notice(value, where, self.auth.env(name)) for value, where, name in places)
        return [notice for notice in notices if notice]

    def request_options(
        self,
        model: Model,
        options: StreamOptions | None = None,
        *,
        cli_key: str | None = None,
        require_key: bool = True,
    ) -> StreamOptions:
        """``options`` completed with the key and resolved headers this model's requests need.

        Raises :class:`ConfigError` (one line saying where a key can come from) when the provider
        needs a key and none is configured, unless ``require_key`` is false.
        """
        result = (options or StreamOptions()).model_copy(deep=True)
        unspoken = unspoken_api_message(model)  # radius's pi-messages: listed, not spoken
        if unspoken is not None:
            raise ConfigError(unspoken)
        given = result.api_key or cli_key  # the request's own key, --api-key: first, as in pi
        login = None if given else self.oauth_auth(model.provider)
        key = result.api_key or (login.api_key if login else self.resolve_api_key(model.provider, cli_key))
        if key is None and require_key and self.needs_key(model.provider):
            raise ConfigError(self.missing_key_message(model.provider))
        result.api_key = key
        result.provider_env = {**self.auth.env(model.provider), **result.provider_env}
        filled = fill_base_url(model, result.provider_env)  # {CLOUDFLARE_ACCOUNT_ID} unset: say so
        if filled != model.base_url:
            result.base_url = filled  # as the variables are now (an env set since the last load)
        if model.provider == "azure":
            from pi_tui.ai import azure

            azure.base_url(model, result.provider_env)  # no endpoint: say so now, in one line
        if model.api == "google-vertex" and require_key:
            from pi_tui.ai import google_vertex

            google_vertex.check(result)  # no project, location or credentials: say so now
        if model.api == "bedrock-converse-stream" and require_key:
            from pi_tui.ai import bedrock

            bedrock.check(model, result)  # no AWS credentials: say so now, in one line
        headers = {**(login.headers if login else {}), **self.resolve_headers(model)}
        if login is not None and login.base_url:
            result.base_url = login.base_url  # Copilot: the API host its token names
        if model.auth_header is True and key:
            headers["Authorization"] = f"Bearer {key}"
        elif key and not given and not login and self._from_env_bearer(model.provider, key):
            headers["Authorization"] = f"Bearer {key}"
            result.api_key = None  # not the API key header (nor an Anthropic subscription request)
        result.headers = {**headers, **result.headers}
        return result

    def missing_key_message(self, provider: str) -> str:
        from pi_tui.ai.oauth.providers import oauth_provider_ids

        env_var = ENV_VARS.get(provider)
        where = f"set {env_var}, " if env_var else ""
        login = (
            f"log in with /login {provider}" if provider in oauth_provider_ids() else "save one with /login"
        )
        login += f" (pi-tui auth login {provider} from a shell)"
        return (
            f'No API key for provider "{provider}": {where}pass --api-key, {login}, '
            f'or set "apiKey" for it in {self.path}'
        )

    # --- choosing the model to start with -------------------------------------------------------

    def default_model(
        self,
        settings: Any = None,
        cli_provider: str | None = None,
        cli_model: str | None = None,
    ) -> ModelChoice:
        """``--provider``/``--model``; else settings ``defaultProvider``/``defaultModel``; else the
        default model of the first provider with a key; else ``offline/demo``.

        A bad ``--provider``/``--model`` is a :class:`ConfigError` (the user asked for it); a
        stale default in settings only becomes a warning on the choice.
        """
        if cli_provider or cli_model:
            return self._from_cli(cli_provider, cli_model)
        warning = None
        default_provider = getattr(settings, "default_provider", None)
        default_id = getattr(settings, "default_model", None)
        if default_provider or default_id:
            match = self._from_settings(default_provider, default_id)
            if match is not None:
                return ModelChoice(match.model, match.thinking, "settings")
            shown = "/".join(part for part in (default_provider, default_id) if part)
            warning = f'The default model "{shown}" from settings is not known; choosing another.'
        for provider in self.providers():
            if provider != "offline" and self.has_key(provider):
                model = self.provider_default(provider)
                if model is not None:
                    return ModelChoice(model, None, "key", warning)
        return ModelChoice(self.offline_model(), None, "offline", warning)

    def offline_model(self) -> Model:
        return self.get("offline", "demo") or DEMO_MODEL.model_copy(deep=True)

    def _from_settings(self, provider: str | None, model_id: str | None) -> ModelMatch | None:
        if provider and self.canonical_provider(provider) is None:
            return None
        if provider and not model_id:
            model = self.provider_default(self.canonical_provider(provider) or provider)
            return ModelMatch(model, None) if model is not None else None
        if provider and model_id:
            exact = self.get(provider, model_id)
            if exact is not None:
                return ModelMatch(exact, None)
        return self.find(model_id or "", provider)

    def _from_cli(self, cli_provider: str | None, cli_model: str | None) -> ModelChoice:
        provider = None
        if cli_provider:
            provider = self.canonical_provider(cli_provider)
            if provider is None:
                raise ConfigError(
                    f'Unknown provider "{cli_provider}". Use --list-models to see the known ones.'
                )
        if not cli_model:
            model = self.provider_default(provider or "")
            if model is None:
                raise ConfigError(f'Provider "{provider}" has no models.')
            return ModelChoice(model, None, "cli")
        match = self.find(cli_model, provider)
        if match is not None:
            return ModelChoice(match.model, match.thinking, "cli")
        inferred = provider
        pattern = cli_model.strip()
        if inferred is None and "/" in pattern:
            inferred = self.canonical_provider(pattern.split("/", 1)[0])
            if inferred is not None:
                pattern = pattern.split("/", 1)[1]
        if inferred is None:
            raise ConfigError(
                f'Model "{cli_model}" not found. Use --list-models to see the available models.'
            )
        return self._custom_id(inferred, pattern)

    def _custom_id(self, provider: str, pattern: str) -> ModelChoice:
        """An id the catalogue does not know, on a known provider: reuse the provider's default
        model's settings under that id (new models work before the catalogue knows them)."""
        if pattern.lower().startswith(provider.lower() + "/"):
            pattern = pattern[len(provider) + 1 :]
        thinking = None
        head, colon, level = pattern.rpartition(":")
        if colon and head and level.lower() in THINKING_LEVELS:
            pattern, thinking = head, level.lower()
        base = self.provider_default(provider)
        if base is None or not pattern:
            raise ConfigError(f'Model "{provider}/{pattern}" not found. Use --list-models to see the models.')
        model = base.model_copy(update={"id": pattern, "name": pattern}, deep=True)
        warning = f'Model "{pattern}" is not in the catalogue of provider "{provider}"; using it as given.'
        return ModelChoice(model, cast("ThinkingLevel | None", thinking), "cli", warning)


def _collation_key(model_id: str) -> tuple[tuple[int, str], ...]:
    """Ids ordered as pi orders them (JavaScript's ``localeCompare``): punctuation before digits
    before letters, case aside. By plain code points OpenRouter's ``~anthropic/...-latest``
    aliases would be the "highest" id of every fragment they contain."""
    return tuple((2 if char.isalpha() else 1 if char.isdigit() else 0, char.lower()) for char in model_id)


def _is_dated(model_id: str) -> bool:
    """Snapshot ids end in ``-YYYYMMDD``; aliases (and ``-latest``) are preferred over them."""
    return bool(re.search(r"-\d{8}$", model_id))
