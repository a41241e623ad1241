"""API kind -> client. Each client module registers one object with ``build_request``/``parser``."""

from __future__ import annotations

import importlib

from pi_tui.ai.errors import ConfigError
from pi_tui.ai.protocol import ApiClient

_MODULES = {
    "anthropic-messages": "pi_tui.ai.anthropic",
    "openai-completions": "pi_tui.ai.openai_completions",
    "openai-responses": "pi_tui.ai.openai_responses",
    "azure-openai-responses": "pi_tui.ai.azure",
    "google-generative-ai": "pi_tui.ai.google",
    "google-vertex": "pi_tui.ai.google_vertex",
    "bedrock-converse-stream": "pi_tui.ai.bedrock",
    "mistral-conversations": "pi_tui.ai.mistral_conversations",
    "openai-codex-responses": "pi_tui.ai.openai_codex",
}


def get_client(api: str) -> ApiClient:
    module_name = _MODULES.get(api)
    if module_name is None:
        raise ConfigError(f"Unknown API kind {api!r}; known: {', '.join(_MODULES)}")
    return importlib.import_module(module_name).CLIENT  # type: ignore[no-any-return]
