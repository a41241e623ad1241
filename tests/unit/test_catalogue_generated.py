"""The built-in catalogue is pi 1.5.2's, read from the real installed pi package (issue 33).

``pi_tui/ai/data/catalogue.json`` is written by ``scripts/generate_catalogue.py`` from pi's npm
package. These tests read that package the way the generator does (``node`` importing
``models.generated.js``, ``env-api-keys.js`` and the coding agent's model resolver) and check:

- every provider and model of pi 1.5.2 is in pi-tui's catalogue, with pi's facts (API kind, base
  URL, context window, output limit, reasoning, input kinds, prices, headers, compat,
  thinking levels), and each provider's key variables and default model are pi's;
- ``pi-tui --list-models`` (the installed script) lists all of pi's models: the coverage figure;
- the generator run on the installed package reproduces the committed file byte for byte, so
  the file is what the script makes (no hand edits) and the script is deterministic.

pi 1.5.2 is installed by tests/support/real_pi.py (CI installs it; a developer's machine
without node skips these, CI fails them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pi_tui.ai.catalogue import CATALOGUE_FILE, KNOWN_APIS, PROVIDERS, builtin_models, catalogue_version
from tests.support.real_pi import node_for, pi_package_dir

pytestmark = pytest.mark.pi_interop

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "scripts" / "generate_catalogue.py"
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
PI = "1.5.2"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_catalogue", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pi_ai_package() -> Path:
    """pi-ai, installed beside the coding agent by npm (``node_modules/@earendil-works``)."""
    return pi_package_dir(PI).parent / "pi-ai"


@cache
def pi_catalogue() -> dict[str, Any]:
    """What pi 1.5.2 itself says, printed by node (the generator's reading, before any shaping)."""
    result: dict[str, Any] = generator().read_pi(pi_ai_package(), node_for(PI))
    return result


def test_every_pi_provider_and_model_is_in_the_catalogue_with_pis_facts() -> None:
    pi = pi_catalogue()
    assert pi["version"] == PI == catalogue_version()
    ours = {model.label: model for model in builtin_models()}
    missing: list[str] = []
    wrong: list[str] = []
    for provider, models in pi["models"].items():
        assert provider in PROVIDERS, provider
        for model_id, fact in models.items():
            model = ours.get(f"{provider}/{model_id}")
            if model is None:
                missing.append(f"{provider}/{model_id}")
                continue
            cost = fact["cost"]
            seen = (
                model.name,
                model.api,
                model.base_url,
                model.reasoning,
                model.input,
                model.context_window,
                model.max_tokens,
                (model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write),
                (model.cost.model_extra or {}).get("tiers"),
                model.headers,
                model.compat,
                model.thinking_level_map,
            )
            expected = (
                fact["name"],
                fact["api"],
                fact["baseUrl"],
                fact["reasoning"],
                fact["input"],
                fact["contextWindow"],
                fact["maxTokens"],
                (cost["input"], cost["output"], cost["cacheRead"], cost["cacheWrite"]),
                cost.get("tiers"),
                fact.get("headers") or {},
                fact.get("compat") or {},
                fact.get("thinkingLevelMap"),
            )
            if seen != expected:
                wrong.append(f"{provider}/{model_id}: {seen} != {expected}")
    count = sum(len(models) for models in pi["models"].values())
    assert (len(pi["models"]), count) == (43, 1643)
    assert missing == [], f"{len(missing)} of pi's {count} models are missing"
    assert wrong == []
    assert {model.api for model in ours.values()} <= set(KNOWN_APIS)


def test_provider_names_are_the_ones_pis_lists_show() -> None:
    names = pi_catalogue()["names"]
    assert len(names) >= 43
    for provider, name in names.items():
        if provider in PROVIDERS:
            assert (PROVIDERS[provider].name or provider) == name, provider
    assert PROVIDERS["deepseek"].name == "DeepSeek"


def test_key_variables_and_default_models_are_pis() -> None:
    pi = pi_catalogue()
    for provider, names in pi["envVars"].items():
        assert PROVIDERS[provider].env_vars == tuple(names), provider
    assert PROVIDERS["anthropic"].env_var == "ANTHROPIC_API_KEY"  # the plain key among its three
    assert PROVIDERS["amazon-bedrock"].env_vars == ()  # ambient AWS credentials only
    assert PROVIDERS["amazon-bedrock"].ambient_auth == "aws"
    assert PROVIDERS["google-vertex"].ambient_auth == "google-adc"
    for provider, default in pi["defaults"].items():
        if provider in pi["models"] and default in pi["models"][provider]:
            assert PROVIDERS[provider].default_model == default, provider


def test_list_models_covers_all_of_pis_catalogue(agent_dir: Path, tmp_path: Path) -> None:
    """The coverage figure of issue 33 (at least 95%): pi's models in ``pi-tui --list-models``.

    Like pi, ``--list-models`` lists only the models the user has credentials for, so this user
    has an API key in auth.json for every one of pi's providers."""
    wanted = {
        (provider, model_id) for provider, models in pi_catalogue()["models"].items() for model_id in models
    }
    keys = {provider: {"type": "api_key", "key": "test-key"} for provider, _model in wanted}
    (agent_dir / "auth.json").write_text(json.dumps(keys))
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith("AWS_")
    }
    env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    done = subprocess.run(
        [SCRIPT, "--list-models"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    listed = {tuple(line.split()[:2]) for line in done.stdout.splitlines()[1:]}
    covered = wanted & listed
    assert len(covered) / len(wanted) == 1.0, sorted(wanted - listed)[:20]


def test_generator_reproduces_the_committed_file() -> None:
    done = subprocess.run(
        [sys.executable, str(GENERATOR), str(pi_ai_package()), "--node", node_for(PI), "--output", "-"],
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == CATALOGUE_FILE.read_bytes()


def test_generator_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(GENERATOR), str(tmp_path), "--node", node_for(PI), "--output", "-"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "models.generated.js" in done.stderr
