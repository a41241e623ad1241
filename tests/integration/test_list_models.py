"""``pi-tui --list-models [SEARCH]`` (the installed script) answers as pi 1.5.2 does: only the
models the user has credentials for, "No models available" when there are none, sorted by
provider then id, and a fuzzy search (``opus46`` finds ``claude-opus-4-6``). pi-tui listed all
1,647 catalogue models in catalogue order and searched for substrings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pi_tui.ai.model_list import NO_MODELS, fuzzy_filter, fuzzy_score

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


def list_models(agent_dir: Path, cwd: Path, *args: str, **keys: str) -> list[list[str]]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith(("AWS_", "GOOGLE_"))
    }
    env.update(PI_CODING_AGENT_DIR=str(agent_dir), HOME=str(cwd), **keys)
    done = subprocess.run(
        [SCRIPT, "--list-models", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [line.split() for line in done.stdout.splitlines()]


def test_without_credentials_no_model_is_listed(agent_dir: Path, tmp_path: Path) -> None:
    assert list_models(agent_dir, tmp_path) == [NO_MODELS.split()]


def test_only_the_providers_with_credentials_sorted_by_provider_then_id(
    agent_dir: Path, tmp_path: Path
) -> None:
    (agent_dir / "auth.json").write_text(json.dumps({"deepseek": {"type": "api_key", "key": "k"}}))
    rows = list_models(agent_dir, tmp_path, OPENCODE_API_KEY="k")
    assert rows[0][:2] == ["provider", "model"]
    listed = [(row[0], row[1]) for row in rows[1:]]
    # OPENCODE_API_KEY is also OpenCode Go's key, as in pi
    assert {provider for provider, _id in listed} == {"deepseek", "opencode", "opencode-go"}
    providers = [provider for provider, _id in listed]
    assert providers == sorted(providers)
    opencode = [model_id for provider, model_id in listed if provider == "opencode"]
    assert opencode == sorted(opencode, key=str.lower) and len(opencode) > 10


def test_the_search_is_pis_fuzzy_search(agent_dir: Path, tmp_path: Path) -> None:
    rows = list_models(agent_dir, tmp_path, "opus46", ANTHROPIC_API_KEY="k")
    listed = [(row[0], row[1]) for row in rows[1:]]
    assert ("anthropic", "claude-opus-4-6") in listed
    assert all(provider == "anthropic" for provider, _id in listed)
    assert list_models(agent_dir, tmp_path, "zzqq", ANTHROPIC_API_KEY="k") == [
        ["No", "models", "matching", '"zzqq"']
    ]


def test_the_fuzzy_rules() -> None:
    assert fuzzy_score("opus46", "anthropic claude-opus-4-6") is not None
    assert fuzzy_score("46opus", "anthropic claude-opus-4-6") is not None  # letters and digits swapped
    assert fuzzy_score("xyz", "anthropic claude-opus-4-6") is None
    texts = ["openrouter anthropic/claude-sonnet-4", "anthropic claude-opus-4-6", "openai gpt-4o"]
    # the whole word together beats the letters scattered over "openrouter ... sonnet"
    assert fuzzy_filter(texts, "opus", str) == [texts[1], texts[0]]
    assert fuzzy_filter(texts, "anthropic/opus", str)[0] == texts[1]  # "/" splits two words
    assert fuzzy_filter(texts, "", str) == texts
