"""A GitHub Copilot login lists the models its account may use, as pi lists them.

pi's Copilot login saves the account's model ids as ``availableModelIds`` in auth.json and its
model list keeps only those; a key (``COPILOT_GITHUB_TOKEN``) or an older login without the list
shows the whole catalogue. Models the user added in models.json are theirs and always stay.
"""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.catalogue import CATALOGUE
from pi_tui.ai.models import ModelRegistry
from pi_tui.config.auth import AuthStore

COPILOT = "github-copilot"


def registry(folder: Path, login: dict[str, object] | None, added: tuple[str, ...] = ()) -> ModelRegistry:
    auth = folder / "auth.json"
    if login is not None:
        auth.write_text(json.dumps({COPILOT: login}))
    models = folder / "models.json"
    models.write_text(json.dumps({"providers": {COPILOT: {"models": [{"id": i} for i in added]}}}))
    return ModelRegistry(models, auth=AuthStore(auth))


def copilot_ids(reg: ModelRegistry) -> set[str]:
    return {m.id for m in reg.models if m.provider == COPILOT}


def login(available: object) -> dict[str, object]:
    return {
        "type": "oauth",
        "access": "tid=1",
        "refresh": "gho_x",
        "expires": 4102444800000,
        "availableModelIds": available,
    }


def test_a_login_with_the_accounts_models_lists_only_those(tmp_path: Path) -> None:
    catalogue = list(CATALOGUE[COPILOT])
    assert len(catalogue) > 3
    chosen = catalogue[:2]
    reg = registry(tmp_path, login(chosen), added=("my-own-model",))
    assert copilot_ids(reg) == {*chosen, "my-own-model"}
    assert {m.provider for m in reg.models} > {COPILOT, "anthropic"}  # other providers untouched


def test_without_the_list_every_catalogue_model_stays(tmp_path: Path) -> None:
    catalogue = set(CATALOGUE[COPILOT])
    no_list = {k: v for k, v in login([]).items() if k != "availableModelIds"}
    assert copilot_ids(registry(tmp_path, no_list)) == catalogue
    assert copilot_ids(registry(tmp_path, login("not a list"))) == catalogue
    (tmp_path / "auth.json").unlink()
    assert copilot_ids(registry(tmp_path, None)) == catalogue
