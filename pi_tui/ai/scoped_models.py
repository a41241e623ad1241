"""The scoped models: which models Ctrl+P / Shift+Ctrl+P cycle through, and in what order.

Patterns come from ``--models a,b:high`` or the ``enabledModels`` setting, in pi's syntax: an id,
``provider/id``, a fragment (resolved as ``--model`` resolves it) or a glob (``anthropic/*``,
``*sonnet*``), each optionally followed by ``:<thinking level>``. Only models that can be used
here (a key is known) are kept: cycling onto a model that cannot answer would only fail at the
next prompt. The offline demo counts only while no real model is usable (the first run before
any key): once one is, Ctrl+P, ``/model`` and ``/scoped-models`` leave it out, as pi has no such
model; ``--model offline/demo`` (or naming it in a scope) still reaches it. Without any scope,
the cycle is every usable model.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_tui.messages import THINKING_LEVELS

if TYPE_CHECKING:
    from pi_tui.ai.models import ModelRegistry
    from pi_tui.ai.types import Model

GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class ScopedModel:
    """A model of the cycle, with the thinking level its pattern asked for (None: keep)."""

    model: Model
    thinking: str | None = None

    @property
    def key(self) -> str:
        return f"{self.model.provider}/{self.model.id}"


@dataclass(slots=True)
class ScopeResolution:
    models: list[ScopedModel]
    unmatched: list[str]
    """Patterns that named no usable model (said once at start-up)."""


def split_level(pattern: str) -> tuple[str, str | None]:
    """``sonnet:high`` -> (``sonnet``, ``high``); a colon that is not a level stays in the pattern."""
    head, colon, level = pattern.rpartition(":")
    if colon and head and level.lower() in THINKING_LEVELS:
        return head, level.lower()
    return pattern, None


def real_model_usable(registry: ModelRegistry) -> bool:
    """Whether any model other than the offline demo has a key here."""
    return any(provider != "offline" and registry.has_key(provider) for provider in registry.providers())


def usable(registry: ModelRegistry, model: Model) -> bool:
    """A model with a key; the offline demo only while no real model is usable."""
    if model.provider == "offline":
        return not real_model_usable(registry)
    return registry.has_key(model.provider)


def available_models(registry: ModelRegistry) -> list[Model]:
    """What ``/model``, ``/scoped-models`` and Ctrl+P offer: the models with a key, in catalogue
    order; only the offline demo when none has one."""
    keyed = {
        provider for provider in registry.providers() if provider != "offline" and registry.has_key(provider)
    }
    real = [model for model in registry.all() if model.provider in keyed]
    return real or [model for model in registry.all() if model.provider == "offline"]


def resolve_scope(registry: ModelRegistry, patterns: list[str]) -> ScopeResolution:
    """The models the patterns name, in pattern order (a glob adds its matches in catalogue
    order), each model once (its first pattern's level wins)."""
    chosen: dict[str, ScopedModel] = {}
    unmatched: list[str] = []
    for raw in patterns:
        pattern, level = split_level(raw.strip())
        if not pattern:
            continue
        glob = bool(GLOB_CHARACTERS & set(pattern))
        if glob:
            wanted = pattern.lower()
            found = [
                model
                for model in registry.all()
                if fnmatch.fnmatchcase(f"{model.provider}/{model.id}".lower(), wanted)
                or fnmatch.fnmatchcase(model.id.lower(), wanted)
            ]
        else:
            match = registry.find(pattern)
            found = [match.model] if match is not None else []
        # A name (not a glob) reaches the demo as --model does; a glob only what is offered.
        found = [
            model for model in found if usable(registry, model) or (model.provider == "offline" and not glob)
        ]
        if not found:
            unmatched.append(raw)
        for model in found:
            scoped = ScopedModel(model, level)
            chosen.setdefault(scoped.key, scoped)
    return ScopeResolution(list(chosen.values()), unmatched)


def resolve_scoped_models(registry: ModelRegistry, patterns: list[str]) -> list[ScopedModel]:
    return resolve_scope(registry, patterns).models


def cycle_list(registry: ModelRegistry, scoped: list[ScopedModel], current: Model) -> list[ScopedModel]:
    """What Ctrl+P walks: the scope, or every usable model when there is none."""
    if scoped:
        return scoped
    models = [ScopedModel(model) for model in available_models(registry)]
    if not any(item.model.provider == current.provider and item.model.id == current.id for item in models):
        models.insert(0, ScopedModel(current))
    return models


def next_model(cycle: list[ScopedModel], current: Model, step: int) -> ScopedModel | None:
    """The model ``step`` (1 or -1) places after ``current`` in ``cycle``; from outside the cycle,
    forward starts at its first model and backward at its last. None: nowhere to go."""
    if not cycle:
        return None
    keys = [item.key for item in cycle]
    here = f"{current.provider}/{current.id}"
    if here in keys:
        if len(cycle) == 1:
            return None
        return cycle[(keys.index(here) + step) % len(cycle)]
    return cycle[0] if step > 0 else cycle[-1]
