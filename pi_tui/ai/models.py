"""Which models exist, how to reach them, and which one to use.

- :data:`PROVIDERS` / :data:`CATALOGUE`: the built-in providers and models, as data tables.
- :class:`ModelRegistry`: the catalogue merged with ``<agent dir>/models.json`` (pi's format,
  read unchanged: providers add or override, ``models`` upsert by id, ``modelOverrides`` patch
  built-ins, provider-level ``baseUrl`` / ``compat`` / ``headers`` apply to the provider's
  models). Also pattern matching for ``--model``, API key and header resolution, and the choice
  of the default model.

``apiKey`` and header values may be a literal, the name of an environment variable, or
``!command``. They are resolved when a request is made (:meth:`ModelRegistry.request_options`),
never while loading, so listing models never runs a command. ``Model.headers`` therefore holds
the *configured* values; the resolved ones travel in ``StreamOptions.headers``, which the API
clients apply on top.

A models.json that cannot be used raises :class:`ConfigError` with one line naming the file and
the problem (line/column for bad JSON, the field path otherwise).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from pi_tui import jsonio
from pi_tui.ai.errors import ConfigError
from pi_tui.ai.offline import DEMO_MODEL
from pi_tui.ai.types import API_KINDS, Model, ModelCost, StreamOptions, ThinkingLevel
from pi_tui.config.auth import AuthStore, auth_file
from pi_tui.config.paths import agent_dir
from pi_tui.config.pi_folder import pi_file

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
KNOWN_APIS: tuple[str, ...] = (*API_KINDS, "azure-openai-responses", "offline")
COMMAND_TIMEOUT = 10.0
"""Seconds a ``!command`` key or header may take (a password manager prompt, at most)."""

# --- the built-in catalogue ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """A built-in provider: how to reach it and where its key comes from."""

    api: str
    base_url: str
    env_var: str | None
    """``None``: no key needed (local servers, the offline demo)."""
    compat: dict[str, Any] = field(default_factory=dict)


_NON_OPENAI = {"supportsStore": False, "supportsDeveloperRole": False}

PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo("anthropic-messages", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "openai": ProviderInfo("openai-responses", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "google": ProviderInfo(
        "google-generative-ai", "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY"
    ),
    "openrouter": ProviderInfo(
        "openai-completions",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        {"thinkingFormat": "openrouter"},  # pi 1.x: reasoning.effort, the form OpenRouter documents
    ),
    "groq": ProviderInfo("openai-completions", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "cerebras": ProviderInfo(
        "openai-completions", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", _NON_OPENAI
    ),
    "xai": ProviderInfo(
        "openai-completions",
        "https://api.x.ai/v1",
        "XAI_API_KEY",
        {**_NON_OPENAI, "supportsReasoningEffort": False},
    ),
    "mistral": ProviderInfo(
        "openai-completions",
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        {**_NON_OPENAI, "maxTokensField": "max_tokens"},
    ),
    "ollama": ProviderInfo(
        "openai-completions",
        "http://localhost:11434/v1",
        None,
        {**_NON_OPENAI, "supportsReasoningEffort": False},
    ),
    # pi 1.x's Azure OpenAI; the endpoint comes from the environment (pi_tui/ai/azure.py).
    "azure": ProviderInfo("azure-openai-responses", "", "AZURE_OPENAI_API_KEY"),
    "offline": ProviderInfo("offline", "", None),
}

ENV_VARS: dict[str, str] = {name: info.env_var for name, info in PROVIDERS.items() if info.env_var}

# Per provider: id, name, reasoning, input, context window, max output,
# $ per million tokens: input, output, cache read, cache write.
# The first model of each provider is its default.
_T, _TI = ("text",), ("text", "image")
CatalogueRow = tuple[str, str, bool, tuple[str, ...], int, int, float, float, float, float]
CATALOGUE: dict[str, tuple[CatalogueRow, ...]] = {
    "anthropic": (
        ("claude-opus-4-7", "Claude Opus 4.7", True, _TI, 1_000_000, 128_000, 5, 25, 0.5, 6.25),
        ("claude-opus-4-6", "Claude Opus 4.6", True, _TI, 1_000_000, 128_000, 5, 25, 0.5, 6.25),
        ("claude-sonnet-4-6", "Claude Sonnet 4.6", True, _TI, 1_000_000, 64_000, 3, 15, 0.3, 3.75),
        ("claude-sonnet-4-5", "Claude Sonnet 4.5", True, _TI, 200_000, 64_000, 3, 15, 0.3, 3.75),
        ("claude-haiku-4-5", "Claude Haiku 4.5", True, _TI, 200_000, 64_000, 1, 5, 0.1, 1.25),
    ),
    "openai": (
        ("gpt-5.4", "GPT-5.4", True, _TI, 272_000, 128_000, 2.5, 15, 0.25, 0),
        ("gpt-5.5", "GPT-5.5", True, _TI, 272_000, 128_000, 5, 30, 0.5, 0),
        ("gpt-5.4-mini", "GPT-5.4 mini", True, _TI, 400_000, 128_000, 0.75, 4.5, 0.075, 0),
        ("gpt-5.4-nano", "GPT-5.4 nano", True, _TI, 400_000, 128_000, 0.2, 1.25, 0.02, 0),
        ("gpt-5.3-codex", "GPT-5.3 Codex", True, _TI, 400_000, 128_000, 1.75, 14, 0.175, 0),
        ("gpt-5", "GPT-5", True, _TI, 400_000, 128_000, 1.25, 10, 0.125, 0),
        ("gpt-5-mini", "GPT-5 mini", True, _TI, 400_000, 128_000, 0.25, 2, 0.025, 0),
        ("gpt-4.1", "GPT-4.1", False, _TI, 1_047_576, 32_768, 2, 8, 0.5, 0),
        ("o3", "o3", True, _TI, 200_000, 100_000, 2, 8, 0.5, 0),
        ("o4-mini", "o4-mini", True, _TI, 200_000, 100_000, 1.1, 4.4, 0.28, 0),
    ),
    "google": (
        ("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", True, _TI, 1_048_576, 65_536, 2, 12, 0.2, 0),
        ("gemini-3-flash-preview", "Gemini 3 Flash Preview", True, _TI, 1_048_576, 65_536, 0.5, 3, 0.05, 0),
        ("gemini-2.5-pro", "Gemini 2.5 Pro", True, _TI, 1_048_576, 65_536, 1.25, 10, 0.125, 0),
        ("gemini-2.5-flash", "Gemini 2.5 Flash", True, _TI, 1_048_576, 65_536, 0.3, 2.5, 0.03, 0),
        ("gemini-2.5-flash-lite", "Gemini 2.5 Flash Lite", True, _TI, 1_048_576, 65_536, 0.1, 0.4, 0.025, 0),
    ),
    "openrouter": (
        ("moonshotai/kimi-k2.6", "Kimi K2.6", True, _TI, 262_144, 16_384, 0.75, 3.5, 0.15, 0),
        ("anthropic/claude-opus-4.7", "Claude Opus 4.7", True, _TI, 1_000_000, 128_000, 5, 25, 0.5, 6.25),
        ("anthropic/claude-sonnet-4.6", "Claude Sonnet 4.6", True, _TI, 1_000_000, 128_000, 3, 15, 0.3, 3.75),
        ("openai/gpt-5.5", "GPT-5.5", True, _TI, 1_050_000, 128_000, 5, 30, 0.5, 0),
        ("openai/gpt-5.4", "GPT-5.4", True, _TI, 1_050_000, 128_000, 2.5, 15, 0.25, 0),
        ("google/gemini-3.1-pro-preview", "Gemini 3.1 Pro", True, _TI, 1_048_576, 65_536, 2, 12, 0.2, 0.375),
        ("z-ai/glm-5.1", "GLM 5.1", True, _T, 202_752, 65_535, 1.05, 3.5, 0.525, 0),
        ("deepseek/deepseek-v4-pro", "DeepSeek V4 Pro", True, _T, 1_048_576, 384_000, 0.435, 0.87, 0.0036, 0),
        ("qwen/qwen3-coder", "Qwen3 Coder 480B A35B", False, _T, 262_144, 65_536, 0.22, 1.8, 0, 0),
    ),
    "groq": (
        ("openai/gpt-oss-120b", "GPT OSS 120B", True, _T, 131_072, 65_536, 0.15, 0.6, 0, 0),
        ("openai/gpt-oss-20b", "GPT OSS 20B", True, _T, 131_072, 65_536, 0.075, 0.3, 0, 0),
        ("moonshotai/kimi-k2-instruct-0905", "Kimi K2 Instruct 0905", False, _T, 262_144, 16_384, 1, 3, 0, 0),
        ("qwen/qwen3-32b", "Qwen3 32B", True, _T, 131_072, 40_960, 0.29, 0.59, 0, 0),
        ("llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", False, _T, 131_072, 32_768, 0.59, 0.79, 0, 0),
    ),
    "cerebras": (
        ("zai-glm-4.7", "Z.AI GLM-4.7", False, _T, 131_072, 40_000, 2.25, 2.75, 0, 0),
        ("gpt-oss-120b", "GPT OSS 120B", True, _T, 131_072, 32_768, 0.25, 0.69, 0, 0),
        (
            "qwen-3-235b-a22b-instruct-2507",
            "Qwen 3 235B Instruct",
            False,
            _T,
            131_000,
            32_000,
            0.6,
            1.2,
            0,
            0,
        ),
    ),
    "xai": (
        ("grok-4.20-0309-reasoning", "Grok 4.20 (reasoning)", True, _TI, 2_000_000, 30_000, 2, 6, 0.2, 0),
        ("grok-4.3", "Grok 4.3", True, _TI, 1_000_000, 30_000, 1.25, 2.5, 0.2, 0),
        ("grok-4-1-fast", "Grok 4.1 Fast", True, _TI, 2_000_000, 30_000, 0.2, 0.5, 0.05, 0),
        ("grok-code-fast-1", "Grok Code Fast 1", True, _T, 256_000, 10_000, 0.2, 1.5, 0.02, 0),
        ("grok-4", "Grok 4", True, _T, 256_000, 64_000, 3, 15, 0.75, 0),
    ),
    "mistral": (
        ("devstral-medium-latest", "Devstral 2", False, _T, 262_144, 262_144, 0.4, 2, 0, 0),
        ("mistral-medium-latest", "Mistral Medium", True, _TI, 262_144, 262_144, 1.5, 7.5, 0, 0),
        ("mistral-large-latest", "Mistral Large", False, _TI, 262_144, 262_144, 0.5, 1.5, 0, 0),
        ("mistral-small-latest", "Mistral Small", True, _TI, 256_000, 256_000, 0.15, 0.6, 0, 0),
        ("codestral-latest", "Codestral", False, _T, 256_000, 4_096, 0.3, 0.9, 0, 0),
        ("magistral-medium-latest", "Magistral Medium", True, _T, 128_000, 16_384, 2, 5, 0, 0),
    ),
    "azure": (
        ("gpt-5.4", "GPT-5.4", True, _TI, 1_050_000, 128_000, 2.5, 15, 0.25, 0),
        ("gpt-5.5", "GPT-5.5", True, _TI, 1_050_000, 128_000, 5, 30, 0.5, 0),
        ("gpt-5.4-mini", "GPT-5.4 mini", True, _TI, 400_000, 128_000, 0.75, 4.5, 0.075, 0),
        ("gpt-5.4-nano", "GPT-5.4 nano", True, _TI, 400_000, 128_000, 0.2, 1.25, 0.02, 0),
        ("gpt-5.3-codex", "GPT-5.3 Codex", True, _TI, 400_000, 128_000, 1.75, 14, 0.175, 0),
        ("gpt-5", "GPT-5", True, _TI, 400_000, 128_000, 1.25, 10, 0.125, 0),
        ("gpt-5-mini", "GPT-5 Mini", True, _TI, 400_000, 128_000, 0.25, 2, 0.025, 0),
        ("gpt-4.1", "GPT-4.1", False, _TI, 1_047_576, 32_768, 2, 8, 0.5, 0),
        ("o3", "o3", True, _TI, 200_000, 100_000, 2, 8, 0.5, 0),
        ("o4-mini", "o4-mini", True, _TI, 200_000, 100_000, 1.1, 4.4, 0.275, 0),
    ),
    "ollama": (
        ("gpt-oss:20b", "gpt-oss 20B (local)", True, _T, 131_072, 32_768, 0, 0, 0, 0),
        ("qwen3-coder:30b", "Qwen3 Coder 30B (local)", False, _T, 262_144, 32_768, 0, 0, 0, 0),
        ("llama3.1:8b", "Llama 3.1 8B (local)", False, _T, 131_072, 16_384, 0, 0, 0, 0),
    ),
}


def builtin_models() -> list[Model]:
    """The catalogue as :class:`Model` objects (fresh copies), the offline demo last."""
    models = []
    for provider, rows in CATALOGUE.items():
        info = PROVIDERS[provider]
        for model_id, name, reasoning, inputs, window, max_out, c_in, c_out, c_read, c_write in rows:
            models.append(
                Model(
                    id=model_id,
                    name=name,
                    api=info.api,
                    provider=provider,
                    base_url=info.base_url,
                    reasoning=reasoning,
                    input=list(inputs),
                    context_window=window,
                    max_tokens=max_out,
                    cost=ModelCost(input=c_in, output=c_out, cache_read=c_read, cache_write=c_write),
                    compat=dict(info.compat),
                )
            )
    models.append(DEMO_MODEL.model_copy(deep=True))
    return models


# --- models.json, as pi writes it ---------------------------------------------------------------


class _Json(BaseModel):
    """camelCase keys as in pi's file; unknown keys kept; no silent type coercion."""

    model_config = ConfigDict(alias_generator=to_camel, extra="allow", strict=True)


class CostConfig(_Json):
    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class ModelOverrideConfig(_Json):
    """``modelOverrides`` entry: patches a built-in model; every field optional."""

    name: str | None = Field(None, min_length=1)
    reasoning: bool | None = None
    input: list[Literal["text", "image"]] | None = None
    context_window: int | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)
    cost: CostConfig | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None


class ModelConfig(ModelOverrideConfig):
    """One entry of a provider's ``models`` list."""

    id: str = Field(min_length=1)
    api: str | None = Field(None, min_length=1)
    base_url: str | None = Field(None, min_length=1)


class ProviderConfig(_Json):
    name: str | None = None
    base_url: str | None = Field(None, min_length=1)
    api_key: str | None = Field(None, min_length=1)
    api: str | None = Field(None, min_length=1)
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    auth_header: bool | None = None
    models: list[ModelConfig] | None = None
    model_overrides: dict[str, ModelOverrideConfig] | None = None


class ModelsFile(_Json):
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)


def read_models_file(path: Path) -> ModelsFile:
    """Parse and validate ``path``; a missing or empty file is an empty configuration."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ModelsFile()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read models file: {error}") from None
    if not text.strip():
        return ModelsFile()
    if jsonio.too_deep(text):
        raise ConfigError(f"{path}: invalid JSON (nested more than {jsonio.MAX_DEPTH} levels deep)")
    try:
        data = json.loads(_strip_comments_and_trailing_commas(text))
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path}, line {error.lineno} column {error.colno}: invalid JSON ({error.msg})"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f'{path}: expected a JSON object with a "providers" object, got {_kind(data)}')
    try:
        return ModelsFile.model_validate(data)
    except ValidationError as error:
        problem = error.errors()[0]
        where = _field_path(problem["loc"])
        got = "" if problem["type"] == "missing" else f", got {_short(problem.get('input'))}"
        raise ConfigError(f"{path}: {where}: {_json_terms(problem['msg'])}{got}") from None


def _strip_comments_and_trailing_commas(text: str) -> str:
    """pi tolerates ``//`` comments and trailing commas; blank them out, keeping every position."""
    chars = list(text)
    in_string = escaped = False
    i = 0
    while i < len(chars):
        char = chars[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "/" and i + 1 < len(chars) and chars[i + 1] == "/":
            while i < len(chars) and chars[i] != "\n":
                chars[i] = " "
                i += 1
            continue
        i += 1
    blanked = "".join(chars)
    return re.sub(r'"(?:\\.|[^"\\])*"|,(?=\s*[}\]])', lambda m: m[0] if m[0] != "," else " ", blanked)


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(top level)"


def _json_terms(message: str) -> str:
    """pydantic speaks Python ("dictionary", "instance of ProviderConfig"); the file is JSON."""
    message = re.sub(r" or instance of \w+", "", message)
    return message.replace("valid dictionary", "JSON object").replace("valid list", "JSON array")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, BaseModel) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


# --- resolving ``apiKey`` / header values -------------------------------------------------------
#
# pi 1.x's rules (resolve-config-value in pi's dist): a value starting with ``!`` is a shell
# command whose trimmed output is the value; any other value is a template in which ``$NAME`` and
# ``${NAME}`` stand for environment variables, ``$$`` for ``$`` and ``$!`` for ``!``; the rest
# is literal text. A variable that is unset or empty leaves the whole value unresolved.
#
# pi 0.73 read a plain value as the *name* of an environment variable. A plain value that is
# exactly the name of a variable that is set keeps that meaning (such a file is unambiguous),
# with a one-line notice per value and run (:func:`legacy_env_name`, ``ModelRegistry.problems``).

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_command_cache: dict[str, str] = {}
_told_legacy: set[str] = set()
"""Places already given the 0.73 notice in this process (one notice per value and run)."""


def clear_command_cache() -> None:
    """Forget the output of ``!command`` values (they are cached for the life of the process)."""
    _command_cache.clear()
    _told_legacy.clear()


def _env_value(name: str, env: Mapping[str, str] | None) -> str | None:
    """``env`` (auth.json's per-provider ``env``) over the process environment; empty is unset."""
    return (env or {}).get(name) or os.environ.get(name) or None


def legacy_env_name(value: str, env: Mapping[str, str] | None = None) -> str | None:
    """The variable a pi 0.73 value names: ``value`` is a bare name (no ``$``) of a set variable."""
    if _ENV_NAME.fullmatch(value) and _env_value(value, env) is not None:
        return value
    return None


def _template(value: str, env: Mapping[str, str] | None) -> tuple[str, list[str]]:
    """``value`` with its ``$NAME`` / ``${NAME}`` references filled in, and the names unset."""
    out: list[str] = []
    missing: list[str] = []
    i = 0

    def lookup(name: str) -> None:
        found = _env_value(name, env)
        if found is None:
            missing.append(name)
        else:
            out.append(found)

    while i < len(value):
        dollar = value.find("$", i)
        if dollar < 0:
            out.append(value[i:])
            break
        out.append(value[i:dollar])
        after = value[dollar + 1 : dollar + 2]
        if after in ("$", "!"):
            out.append(after)
            i = dollar + 2
        elif after == "{" and (end := value.find("}", dollar + 2)) >= 0:
            name = value[dollar + 2 : end]
            if _ENV_NAME.fullmatch(name):
                lookup(name)
            else:
                out.append(value[dollar : end + 1])
            i = end + 1
        elif after != "{" and (match := _ENV_NAME.match(value, dollar + 1)):
            lookup(match[0])
            i = match.end()
        else:
            out.append("$")
            i = dollar + 1
    return "".join(out), list(dict.fromkeys(missing))


def is_value_configured(value: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``value`` gives a key without running anything: a ``!command`` counts (it runs only
    when a request needs it), a template only when every variable it names is set (pi's check)."""
    if value.startswith("!") or legacy_env_name(value, env):
        return True
    return not _template(value, env)[1]


def value_without_commands(value: str, env: Mapping[str, str] | None = None) -> str | None:
    """What ``value`` resolves to when that needs no command; None for a ``!command`` or an
    unset variable (used to know the credentials to hide, without running anything)."""
    if value.startswith("!"):
        return None
    legacy = legacy_env_name(value, env)
    if legacy is not None:
        return _env_value(legacy, env)
    resolved, missing = _template(value, env)
    return None if missing else resolved


def resolve_config_value(value: str, what: str, env: Mapping[str, str] | None = None) -> str:
    """``!command`` -> its trimmed output (cached for the run); otherwise ``$NAME`` / ``${NAME}``
    filled in from ``env`` then the process environment; a bare name of a set variable -> its
    value (pi 0.73's form); anything else literally.

    ``what`` names the setting in the one-line :class:`ConfigError` raised when a command fails
    or a variable is unset.
    """
    if value.startswith("!"):
        command = value[1:]
        if command not in _command_cache:
            _command_cache[command] = _run_command(command.strip(), what)
        return _command_cache[command]
    legacy = legacy_env_name(value, env)
    if legacy is not None:
        return _env_value(legacy, env) or value
    resolved, missing = _template(value, env)
    if missing:
        names = ", ".join(missing)
        plural = "s" if len(missing) > 1 else ""
        raise ConfigError(f"{what}: environment variable{plural} {names} not set")
    return resolved


def legacy_notice(value: str, where: str, env: Mapping[str, str] | None = None) -> str | None:
    """The one-line notice for a pi 0.73 value at ``where``, the first time it is seen this run."""
    name = legacy_env_name(value, env)
    if name is None or where in _told_legacy:
        return None
    _told_legacy.add(where)
    return (
        f'{where}: "{name}" is read as the environment variable {name} (pi 0.73\'s meaning, '
        f'deprecated): write "${name}", as pi 1.x reads a plain value as the text itself'
    )


def _run_command(command: str, what: str) -> str:
    if not command:
        raise ConfigError(f"{what}: the command after ! is empty")
    try:
        done = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=COMMAND_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{what}: command `{command}` took longer than {COMMAND_TIMEOUT:g} s") from None
    except OSError as error:
        raise ConfigError(f"{what}: command `{command}` could not run: {error}") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [""])[-1][:200]
        suffix = f": {detail}" if detail else ""
        raise ConfigError(f"{what}: command `{command}` failed with exit code {done.returncode}{suffix}")
    output = done.stdout.strip()
    if not output:
        raise ConfigError(f"{what}: command `{command}` printed nothing")
    return output


# --- the registry -------------------------------------------------------------------------------


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
            from pi_tui.ai.models_beneath import with_pi_models

            config, problems = with_pi_models(self, config, self.beneath)
        self.models = self._merge(config)
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
            where = _field_path(("providers", name, *problem["loc"]))
            raise ConfigError(f"provider {name}: {where}: {_json_terms(problem['msg'])}") from None
        previous = self.code_providers.get(name)
        self.code_providers[name] = provider
        try:
            self.reload()
        except ConfigError as error:
            if previous is None:
                self.code_providers.pop(name)
            else:
                self.code_providers[name] = previous
            problem = str(error).split(": ", 1)[-1]
            raise ConfigError(f"provider {name}: {problem}") from None

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
        if api is None:
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
                f"{self.path}: {where}.{_field_path(problem['loc'])}: {_json_terms(problem['msg'])}"
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
            raise ConfigError(
                f"{self.path}: {where}: unknown API kind {api!r} (known: {', '.join(API_KINDS)})"
            )

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

    def canonical_provider(self, name: str) -> str | None:
        lowered = name.strip().lower()
        return next((p for p in self.providers() if p.lower() == lowered), None)

    def provider_default(self, provider: str) -> Model | None:
        """The provider's first model (the catalogue lists its flagship first)."""
        return next((m for m in self.models if m.provider == provider), None)

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
        ranked.sort(key=lambda item: item[1].id, reverse=True)
        ranked.sort(key=lambda item: (item[0], self._availability(item[1].provider), _is_dated(item[1].id)))
        return ranked[0][1]

    def _availability(self, provider: str) -> int:
        """Ranking among equal matches: a provider with a key, then one that just needs a key,
        then local servers nobody configured (their catalogue entries are only examples)."""
        if self.has_key(provider):
            return 0
        return 1 if provider in ENV_VARS else 2

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
        """Whether a key is configured (auth.json, models.json ``apiKey`` or the env var), without
        running any ``!command``: a ``$VAR`` value counts only when the variable is set. Keyless
        providers (Ollama, offline) count only with a configured key."""
        env = self.auth.env(provider)
        if self.auth.api_key(provider):
            return True
        configured = self.config.providers.get(provider)
        if configured is not None and configured.api_key:
            return is_value_configured(configured.api_key, env)
        env_var = ENV_VARS.get(provider)
        return bool(env_var and _env_value(env_var, env))

    def resolve_api_key(self, provider: str, cli_key: str | None = None) -> str | None:
        """``--api-key``, else a key saved by /login in auth.json, else models.json ``apiKey``
        (both: ``!command`` / ``$VAR`` template / literal), else the provider's env var; ``None``
        when there is none. auth.json comes right after ``--api-key`` as in pi; its ``env`` for
        the provider wins over the process environment."""
        if cli_key:
            return cli_key
        env = self.auth.env(provider)
        saved = self.auth.api_key(provider)
        if saved:
            return resolve_config_value(saved, f"{self.auth.path}: {provider}.key", env)
        configured = self.config.providers.get(provider)
        if configured is not None and configured.api_key:
            return resolve_config_value(configured.api_key, f"{self.path}: providers.{provider}.apiKey", env)
        env_var = ENV_VARS.get(provider)
        return _env_value(env_var, env) if env_var else None

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
        key = result.api_key or self.resolve_api_key(model.provider, cli_key)
        if key is None and require_key and model.provider in ENV_VARS:
            raise ConfigError(self.missing_key_message(model.provider))
        result.api_key = key
        result.provider_env = {**self.auth.env(model.provider), **result.provider_env}
        if model.provider == "azure":
            from pi_tui.ai import azure

            azure.base_url(model, result.provider_env)  # no endpoint: say so now, in one line
        headers = self.resolve_headers(model)
        if model.auth_header is True and key:
            headers["Authorization"] = f"Bearer {key}"
        result.headers = {**headers, **result.headers}
        return result

    def missing_key_message(self, provider: str) -> str:
        env_var = ENV_VARS.get(provider)
        where = f"set {env_var}, " if env_var else ""
        return (
            f'No API key for provider "{provider}": {where}pass --api-key, save one with /login, '
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


def _is_dated(model_id: str) -> bool:
    """Snapshot ids end in ``-YYYYMMDD``; aliases (and ``-latest``) are preferred over them."""
    return bool(re.search(r"-\d{8}$", model_id))


def format_model_list(models: list[Model]) -> str:
    """The ``--list-models`` table: provider, model, context, max output, thinking, images."""
    header = ("provider", "model", "context", "max-out", "thinking", "images")
    rows = [
        (
            m.provider,
            m.id,
            _tokens(m.context_window),
            _tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
        )
        for m in models
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    )


def _tokens(count: int) -> str:
    if count >= 1_000_000 and count % 1_000_000 == 0:
        return f"{count // 1_000_000}M"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1000:
        return f"{round(count / 1000)}K"
    return str(count)
