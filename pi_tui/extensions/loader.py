"""Importing an extension's module, once per load, under a name of its own.

Each extension is imported under ``pi_tui_extension_<name>_<n>`` so two extensions with the same
file name (one global, one project) never share a module, and ``/reload`` imports fresh code
instead of finding the old module in ``sys.modules``. A package's own relative imports work
(``from .helpers import x``), as its folder is the package's search path.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
from types import ModuleType

from pi_tui.config.extension_sources import ExtensionSource

_counter = itertools.count(1)


class LoadError(Exception):
    """The module could not be imported or has no ``activate``; the message is one line."""


def import_extension(source: ExtensionSource) -> ModuleType:
    """Import ``source``'s module (raises :class:`LoadError`, or whatever its code raises)."""
    safe = re.sub(r"\W", "_", source.name)
    module_name = f"pi_tui_extension_{safe}_{next(_counter)}"
    is_package = source.path.suffix != ".py"
    spec = importlib.util.spec_from_file_location(
        module_name, source.entry, submodule_search_locations=[str(source.path)] if is_package else None
    )
    if spec is None or spec.loader is None:
        raise LoadError(f"{source.entry} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    if not callable(getattr(module, "activate", None)):
        unload(module)
        raise LoadError(f"{source.entry} has no activate(pi) function")
    return module


def unload(module: ModuleType) -> None:
    """Forget ``module`` (and its submodules), so the next load imports the files again."""
    prefix = module.__name__ + "."
    for name in [name for name in sys.modules if name == module.__name__ or name.startswith(prefix)]:
        sys.modules.pop(name, None)
