"""Which thinking levels a model accepts, and what a level becomes when it does not (pi 1.x).

pi 1.x describes a model's thinking with ``thinkingLevelMap`` (models.json and its catalogue):
for each level, the value the provider receives (``"max"``, ``"xhigh"``...), or ``null`` when
the model does not have that level. A reasoning model without an entry for a level has it,
sent under its own name, except ``xhigh`` and ``max``: those exist only where the map names
them. A level the model lacks becomes the nearest one it has, looking stronger first and then
weaker, so ``max`` on an ordinary reasoning model runs as ``high`` and ``xhigh`` on a model that
has only ``max`` runs as ``max``. The agent applies this when a level is chosen (the session
records what actually runs, as pi does) and every request builder applies it again, so a
caller that passes a raw level still sends what pi would send.
"""

from __future__ import annotations

from collections.abc import Mapping

from pi_tui.ai.types import Model, ThinkingLevel

LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""Weakest first, as pi orders them for clamping."""
OPT_IN_LEVELS = frozenset({"xhigh", "max"})
"""Levels a model has only when its map names them."""

_ADAPTIVE_MAX: dict[str, str | None] = {"max": "max"}
_XHIGH: dict[str, str | None] = {"xhigh": "xhigh"}
_OPUS_47: dict[str, str | None] = {"xhigh": "xhigh", "max": "max"}
BUILTIN_LEVEL_MAPS: dict[tuple[str, str], dict[str, str | None]] = {
    # What pi 1.5.2's catalogue says about the extended levels of the models pi-tui ships.
    ("anthropic", "claude-opus-4-7"): _OPUS_47,
    ("anthropic", "claude-opus-4-6"): _ADAPTIVE_MAX,
    ("anthropic", "claude-sonnet-4-6"): _ADAPTIVE_MAX,
    ("openai", "gpt-5.4"): _XHIGH,
    ("openai", "gpt-5.5"): _XHIGH,
    ("openai", "gpt-5.4-mini"): _XHIGH,
    ("openai", "gpt-5.4-nano"): _XHIGH,
    ("openai", "gpt-5.3-codex"): _XHIGH,
    ("openrouter", "anthropic/claude-opus-4.7"): _OPUS_47,
    ("openrouter", "anthropic/claude-sonnet-4.6"): _ADAPTIVE_MAX,
    ("openrouter", "openai/gpt-5.5"): _XHIGH,
    ("openrouter", "openai/gpt-5.4"): _XHIGH,
    ("openrouter", "deepseek/deepseek-v4-pro"): _XHIGH,
}
"""For a model whose definition has no map (pi-tui's catalogue, or a models.json entry for the
same provider and id): only the ``xhigh`` / ``max`` entries of pi 1.5.2's catalogue, so the
weaker levels keep the behaviour they had with pi 0.73."""
ADAPTIVE_BUILTINS = frozenset(
    {
        ("anthropic", "claude-opus-4-7"),
        ("anthropic", "claude-opus-4-6"),
        ("anthropic", "claude-sonnet-4-6"),
    }
)
"""Catalogue models pi 1.5.2 marks ``forceAdaptiveThinking`` (an effort, not a token budget)."""


def forces_adaptive(model: Model) -> bool | None:
    """pi 1.x's ``compat.forceAdaptiveThinking`` (the catalogue's value for pi's own models);
    None when nothing says either way."""
    flag = model.compat.get("forceAdaptiveThinking")
    if isinstance(flag, bool):
        return flag
    return True if (model.provider, model.id) in ADAPTIVE_BUILTINS else None


def level_map(model: Model) -> Mapping[str, str | None]:
    """The model's own ``thinkingLevelMap``, else the catalogue's for its provider and id."""
    if model.thinking_level_map is not None:
        return model.thinking_level_map
    return BUILTIN_LEVEL_MAPS.get((model.provider, model.id), {})


def supported_levels(model: Model) -> tuple[ThinkingLevel, ...]:
    """The levels ``model`` runs, weakest first (only ``off`` for a model that does not think)."""
    if not model.reasoning:
        return ("off",)
    mapping = level_map(model)
    return tuple(
        level
        for level in LEVELS
        if not (level in mapping and mapping[level] is None)
        and (level not in OPT_IN_LEVELS or level in mapping)
    )


def clamp_level(model: Model, level: str) -> ThinkingLevel:
    """``level`` if ``model`` has it, else the nearest stronger level it has, else the nearest
    weaker one (an unknown level: the weakest it has)."""
    available = supported_levels(model)
    if level in available:
        return level
    if level not in LEVELS:
        return available[0] if available else "off"
    index = LEVELS.index(level)
    for candidate in (*LEVELS[index:], *reversed(LEVELS[:index])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def provider_value(model: Model, level: str) -> str:
    """What the provider receives for a level the model has: its map's text, else the level's
    own name."""
    mapped = level_map(model).get(level)
    return mapped if isinstance(mapped, str) else level


def request_level(model: Model, level: str) -> ThinkingLevel | None:
    """The level a request asks the provider for (clamped), or None when it asks for no
    thinking: the model does not think, the level is off, or nothing but off is left."""
    if not model.reasoning or level == "off":
        return None
    clamped = clamp_level(model, level)
    return None if clamped == "off" else clamped
