"""pi's ``models.json`` beneath ours (see :mod:`pi_tui.config.pi_folder`).

Ours wins provider by provider and, inside a provider both files name, field by field and model
by model: our ``models`` replace pi's of the same id and add the others, ``modelOverrides`` merge
by model id, and every other field ours sets replaces pi's. A pi-only provider is used as pi
wrote it.

pi's file is the user's other program's, not ours to judge strictly: a file pi-tui cannot read,
or a provider it cannot use (an API kind pi-tui does not speak, say), is left out with one line
in :attr:`ModelRegistry.problems <pi_tui.ai.models.ModelRegistry.problems>` instead of stopping
pi-tui. Our own file stays strict.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pi_tui.ai.errors import ConfigError
from pi_tui.ai.models_file import ModelConfig, ModelsFile, ProviderConfig, read_models_file


def layer_models(beneath: ModelsFile, ours: ModelsFile) -> ModelsFile:
    """``ours`` over ``beneath``, as the module says; pi's providers keep their order."""
    providers = dict(beneath.providers)
    for name, top in ours.providers.items():
        below = providers.get(name)
        providers[name] = top if below is None else layer_provider(below, top)
    return ModelsFile(providers=providers)


def layer_provider(below: ProviderConfig, top: ProviderConfig) -> ProviderConfig:
    """One provider named in both files: ``top``'s fields over ``below``'s."""
    changes = {name: getattr(top, name) for name in top.model_fields_set}
    changes.update(top.model_extra or {})
    if top.models is not None and below.models is not None:
        changes["models"] = _layer_model_list(below.models, top.models)
    if top.model_overrides is not None and below.model_overrides is not None:
        changes["model_overrides"] = {**below.model_overrides, **top.model_overrides}
    return below.model_copy(update=changes)


def _layer_model_list(below: list[ModelConfig], top: list[ModelConfig]) -> list[ModelConfig]:
    """pi's models in pi's order with ours in place of the same ids, then ours that are new."""
    ours = {model.id: model for model in top}
    layered = [ours.pop(model.id, model) for model in below]
    return layered + [model for model in top if model.id in ours]


def with_pi_models(
    merge: Callable[[ModelsFile], object], ours: ModelsFile, path: Path
) -> tuple[ModelsFile, list[str]]:
    """``ours`` layered over the usable part of pi's file at ``path``, and what was left out.

    ``merge`` is the registry's merge of a configuration into the catalogue; it raises
    :class:`ConfigError` for a configuration it cannot use, which is how a provider of pi's
    is found unusable. A problem with ``ours`` is raised as before (it is pi-tui's own file to fix).
    """
    try:
        beneath = read_models_file(path)
    except ConfigError as error:
        return ours, [f"{error} (pi's models are not used)"]
    if not beneath.providers:
        return ours, []
    layered = layer_models(beneath, ours)
    try:
        merge(layered)
        return layered, []
    except ConfigError:
        merge(ours)  # ours alone fails too: that is the error to show
    usable: dict[str, ProviderConfig] = {}
    problems: list[str] = []
    for name, provider in beneath.providers.items():
        try:
            merge(layer_models(ModelsFile(providers={name: provider}), ours))
        except ConfigError as error:
            why = str(error).split(": ", 1)[-1]
            problems.append(f"{path}: provider {name} is left out: {why}")
            continue
        usable[name] = provider
    return layer_models(ModelsFile(providers=usable), ours), problems
