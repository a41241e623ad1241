"""Write pi-tui's built-in catalogue (``pi_tui/ai/data/catalogue.json``) from an installed pi.

pi publishes its catalogue in its npm package: ``@earendil-works/pi-ai``'s
``dist/models.generated.js`` exports ``MODELS`` (provider -> model id -> model), the same
package's ``dist/env-api-keys.js`` knows each provider's key variables, and
``@earendil-works/pi-coding-agent``'s ``dist/core/model-resolver.js`` names each provider's
default model. Those are facts pi-tui must agree with, so they are read, not copied by hand: this
script has ``node`` import the three modules and print them as JSON, keeps the facts pi-tui uses,
and writes them in a stable order (the same pi gives the same bytes; a test checks it).

Usage: ``python scripts/generate_catalogue.py [PI_AI_PACKAGE_DIR] [--node NODE] [--output FILE]``
(default package: the one the pi-interop tests install,
``~/.cache/pi-tui-tests/pi-1.5.2/node_modules/@earendil-works/pi-ai``; default node: ``node`` on
PATH when it is >= 22.19, pi 1.5.2's minimum, else the tests' ``node-22``).

The file: ``{"format": 1, "source": {"package", "version"}, "providers": {name: provider}}``.
A provider holds what most of its models share (``api``, ``baseUrl``, ``headers``, ``compat``:
the settings every model of that ``api`` has), its key variables (``envVars`` in pi's order,
``apiKeyEnvVar`` the one holding a plain API key), ``defaultModel``, and ``models``: each model
lists only where it differs from its provider (``compat``: added to the provider's when the model
has the provider's ``api``). Providers come in pi's order of preference (the order of
``defaultModelPerProvider``, which pi walks to pick a model), then the others by name; models by
id. One model per line, so a new pi release reads as a short diff.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "pi_tui" / "ai" / "data" / "catalogue.json"
CACHE = Path.home() / ".cache" / "pi-tui-tests"
DEFAULT_PACKAGE = CACHE / "pi-1.5.2" / "node_modules" / "@earendil-works" / "pi-ai"
MIN_NODE = (22, 19)
FORMAT = 1

MODEL_FIELDS = (
    "id",
    "name",
    "api",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
    "headers",
    "compat",
    "thinkingLevelMap",
)
"""What pi-tui keeps of a pi model (``inputLimits``, ``promptCache``, radius's ``lab`` and the
like are not used here)."""

# Prints {"version", "models", "envVars", "defaults", "names"} for the package folder given as argv[1].
# The key variables come from findEnvKeys with an environment in which every variable is set:
# it answers the provider's whole list, in pi's order.
NODE_SCRIPT = r"""
const [pkg, agent] = process.argv.slice(1);
const { pathToFileURL } = await import("node:url");
const { readFileSync } = await import("node:fs");
const url = (dir, file) => pathToFileURL(`${dir}/${file}`).href;
const { MODELS } = await import(url(pkg, "dist/models.generated.js"));
const { findEnvKeys } = await import(url(pkg, "dist/env-api-keys.js"));
const { defaultModelPerProvider } = await import(url(agent, "dist/core/model-resolver.js"));
const { builtinProviders } = await import(url(pkg, "dist/providers/all.js"));
const names = Object.fromEntries(builtinProviders().map((provider) => [provider.id, provider.name]));
const everything = new Proxy({}, { get: (_, name) => (typeof name === "string" ? "set" : undefined) });
const envVars = {};
for (const provider of Object.keys(MODELS)) envVars[provider] = findEnvKeys(provider, everything) ?? [];
const version = JSON.parse(readFileSync(`${pkg}/package.json`, "utf8")).version;
const defaults = defaultModelPerProvider;
process.stdout.write(JSON.stringify({ version, models: MODELS, envVars, defaults, names }));
"""


class GenerateError(Exception):
    """Something the user can fix (a missing package, node too old): one line, exit 2."""


def node_version(node: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    major, _, rest = done.stdout.strip().lstrip("v").partition(".")
    minor = rest.partition(".")[0]
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def find_node() -> str:
    """``node`` on PATH when new enough for pi 1.5.2 (its coding agent imports need it), else
    the one the pi-interop tests install (tests/support/real_pi.py)."""
    system = shutil.which("node")
    found = node_version(system) if system else None
    if system and found is not None and found >= MIN_NODE:
        return system
    cached = CACHE / "node-22" / "node_modules" / ".bin" / "node"
    if cached.exists():
        return str(cached)
    wanted = ".".join(map(str, MIN_NODE))
    raise GenerateError(f"node >= {wanted} is needed (found {found or 'none'} on PATH); pass --node")


def read_pi(package: Path, node: str) -> dict[str, Any]:
    """What pi knows, as JSON, from the pi-ai package at ``package`` (the coding agent is its
    sibling in the same ``node_modules/@earendil-works``)."""
    if not (package / "dist" / "models.generated.js").is_file():
        raise GenerateError(f"{package}: not pi's pi-ai package (no dist/models.generated.js)")
    agent = package.parent / "pi-coding-agent"
    if not (agent / "dist" / "core" / "model-resolver.js").is_file():
        raise GenerateError(f"{agent}: pi's coding agent is not installed next to pi-ai")
    done = subprocess.run(
        [node, "--input-type=module", "-e", NODE_SCRIPT, str(package), str(agent)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},  # no key variable of ours may leak into what pi reports
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise GenerateError(f"node could not read pi's catalogue: {last}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _most_common(values: list[str]) -> str:
    """The most frequent value; ties to the smallest, so the answer never depends on order."""
    counts = Counter(values)
    return min(counts, key=lambda value: (-counts[value], value))


def _shared_compat(models: list[dict[str, Any]]) -> dict[str, Any]:
    """The compat settings every one of ``models`` has with the same value."""
    if not models:
        return {}
    first = models[0].get("compat") or {}
    return {
        key: value
        for key, value in first.items()
        if all(key in (m.get("compat") or {}) and m["compat"][key] == value for m in models)
    }


def _model_entry(model: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
    """The model's facts, without what its provider already says."""
    entry: dict[str, Any] = {}
    for field in MODEL_FIELDS:
        if field not in model:
            continue
        value = model[field]
        if field == "name" and value == model["id"]:
            continue
        if field in ("api", "baseUrl") and value == provider[field]:
            continue
        if field == "headers" and value == provider.get("headers"):
            continue
        if field == "reasoning" and value is False:
            continue
        if field == "input" and value == ["text"]:
            continue
        if field == "compat":
            inherited = provider.get("compat", {}) if model["api"] == provider["api"] else {}
            value = {key: item for key, item in value.items() if key not in inherited}
            if not value:
                continue
        entry[field] = value
    if "headers" not in model and "headers" in provider:
        entry["headers"] = {}  # the provider's headers are not this model's
    return entry


def build(pi: dict[str, Any]) -> dict[str, Any]:
    """The catalogue document from what :func:`read_pi` printed."""
    defaults: dict[str, str] = pi["defaults"]
    names = sorted(
        pi["models"],
        key=lambda name: (name not in defaults, list(defaults).index(name) if name in defaults else 0, name),
    )
    providers: dict[str, Any] = {}
    for name in names:
        models = sorted(pi["models"][name].values(), key=lambda model: model["id"])
        provider: dict[str, Any] = {}
        display = pi.get("names", {}).get(name)
        if isinstance(display, str) and display and display != name:
            provider["name"] = display  # what pi's lists call it ("DeepSeek", "Amazon Bedrock")
        provider |= {
            "api": _most_common([m["api"] for m in models]) if models else "",
            "baseUrl": _most_common([m["baseUrl"] for m in models]) if models else "",
        }
        headers = (
            _most_common([json.dumps(m.get("headers"), sort_keys=True) for m in models]) if models else "null"
        )
        if json.loads(headers) is not None:
            provider["headers"] = json.loads(headers)
        compat = _shared_compat([m for m in models if m["api"] == provider["api"]])
        if compat:
            provider["compat"] = compat
        env_vars: list[str] = pi["envVars"].get(name, [])
        if env_vars:
            provider["envVars"] = env_vars
            provider["apiKeyEnvVar"] = next((v for v in env_vars if v.endswith("_API_KEY")), env_vars[0])
        default = defaults.get(name)
        if default is not None and any(m["id"] == default for m in models):
            provider["defaultModel"] = default
        provider["models"] = [_model_entry(model, provider) for model in models]
        providers[name] = provider
    return {
        "format": FORMAT,
        "source": {"package": "@earendil-works/pi-ai", "version": pi["version"]},
        "providers": providers,
    }


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def render(document: dict[str, Any]) -> str:
    """Compact JSON, one provider header and one model per line (keys sorted in each)."""
    lines = [
        "{",
        f'"format":{document["format"]},',
        f'"source":{_compact(document["source"])},',
        '"providers":{',
    ]
    providers = list(document["providers"].items())
    for position, (name, provider) in enumerate(providers):
        head = {key: value for key, value in provider.items() if key != "models"}
        lines.append(f'{_compact(name)}:{_compact(head)[:-1]},"models":[')
        models = provider["models"]
        lines.extend(_compact(model) + ("," if i < len(models) - 1 else "") for i, model in enumerate(models))
        lines.append("]}" + ("," if position < len(providers) - 1 else ""))
    lines.extend(["}", "}"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", type=Path, default=DEFAULT_PACKAGE, help="pi-ai package folder")
    parser.add_argument("--node", help="the node binary to run (default: see above)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write (- for stdout)")
    args = parser.parse_args(argv)
    try:
        text = render(build(read_pi(args.package.expanduser(), args.node or find_node())))
    except GenerateError as error:
        print(f"generate_catalogue: {error}", file=sys.stderr)
        return 2
    if str(args.output) == "-":
        sys.stdout.write(text)
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        document = json.loads(text)
        count = sum(len(p["models"]) for p in document["providers"].values())
        version = document["source"]["version"]
        print(f"{args.output}: {len(document['providers'])} providers, {count} models (pi-ai {version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
