"""The built-in providers and models, as data tables.

:data:`PROVIDERS` says how each built-in provider is reached and which environment variable
holds its key; :data:`CATALOGUE` lists its models (the first is its default). The registry
(:mod:`pi_tui.ai.models`) starts from :func:`builtin_models` and lays models.json over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_tui.ai.offline import DEMO_MODEL
from pi_tui.ai.types import API_KINDS, Model, ModelCost

KNOWN_APIS: tuple[str, ...] = (*API_KINDS, "azure-openai-responses", "offline")
"""Every ``api`` a provider or model may name (the demo and Azure are not generic kinds)."""


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
