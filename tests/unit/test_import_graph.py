"""The shape of the package: no import circle, the provider layer below the session core, the
secrets and the UI, and no module over 800 lines.

Every import counts, wherever it is written: at the top, inside a function (lazy), under ``if
TYPE_CHECKING:``. A lazy import still means one module cannot be understood, tested or moved
without the other, and a type import is still a dependency a reader follows. Importing
``a.b.c`` also runs the ``__init__`` of ``a.b``, so that is an edge too (a package's own modules
are not counted as importing their ``__init__``: Python has run it before them anyway).

The graph is read with ``ast`` from the files; nothing is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pi_tui"
MAX_LINES = 800
PROVIDER_LAYER = "pi_tui.ai"
FORBIDDEN = ("pi_tui.session", "pi_tui.secrets", "pi_tui.tui")
"""What the provider layer may not import: it is handed what it needs (messages from
``pi_tui.messages``, the request transformer through ``StreamOptions``)."""


LAYERS: tuple[tuple[str, ...], ...] = (
    # plain rules and the message models every layer passes around
    (
        "__init__",
        "jsonio",
        "js_semantics",
        "text_safety",
        "gc_control",
        "messages",
        "commands",
        "argparsing",
        "start_options",
    ),
    ("config", "redact", "logfiles"),  # settings
    ("ai",),  # models
    (
        "session",
        "transcripts",
        "compaction",
        "secrets",
        "resources",
        "ttsr",
        "tools",
        "mcp",
        "checkpoints",
    ),  # storage
    ("view",),  # what is drawn, without a UI toolkit
    ("agent",),
    ("extensions", "startup"),
    ("modes", "acp", "html_export", "server", "tui", "cli", "auth_command", "config_command", "__main__"),
)
"""The rows of docs/architecture.md's "Layers", top first: a folder or top-level module imports
only from its own row and the rows above."""


@dataclass(frozen=True, slots=True)
class Edge:
    """One import of ``target`` in ``source``, at ``line`` (the statement as written)."""

    source: str
    target: str
    line: int
    text: str


def modules_of(package: Path) -> dict[str, Path]:
    """Dotted name -> file for every ``.py`` under ``package`` (a package is its ``__init__``)."""
    base = package.parent
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` is, or the nearest package/module above it (``a.b.Class`` -> ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names one import statement brings in (``from x import y`` may name a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        parts = package.split(".")
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def import_edges(package: Path) -> list[Edge]:
    """Every import between modules of ``package``, lazy and ``TYPE_CHECKING`` ones included."""
    modules = modules_of(package)
    edges: list[Edge] = []
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets: set[str] = set()
            names = _imported_names(node, module, is_package)
            if isinstance(node, ast.ImportFrom):
                # ``from a import b``: b may be a submodule (then that is the target) or a name
                # defined in a (then a is); a itself always runs.
                base, *members = names
                targets.update(_known(name, modules) or "" for name in members)
                if (known := _known(base, modules)) is not None:
                    targets.add(known)
            else:
                targets.update(_known(name, modules) or "" for name in names)
            for target in list(targets):
                parent = target.rpartition(".")[0]
                while parent in modules:  # importing a.b.c runs a.b's and a's __init__
                    targets.add(parent)
                    parent = parent.rpartition(".")[0]
            for target in sorted(targets):
                inside_own_package = module == target or module.startswith(target + ".")
                if target and not inside_own_package:
                    edges.append(Edge(module, target, node.lineno, ast.unparse(node)))
    return edges


def strongly_connected(nodes: Iterable[str], edges: Iterable[Edge]) -> list[list[str]]:
    """The groups of modules that import each other round a circle (Tarjan, iterative)."""
    graph: dict[str, list[str]] = {node: [] for node in nodes}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge.target)
        graph.setdefault(edge.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def one_circle(group: list[str], edges: Iterable[Edge]) -> list[Edge]:
    """A shortest way round from the group's first module back to it, edge by edge."""
    members = set(group)
    outgoing: dict[str, list[Edge]] = {}
    for edge in edges:
        if edge.source in members and edge.target in members:
            outgoing.setdefault(edge.source, []).append(edge)
    start = group[0]
    came_by: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for edge in outgoing.get(node, []):
                if edge.target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came_by[path[0].source])
                    return path
                if edge.target not in came_by:
                    came_by[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no circle through {start} in {group}")


def describe(group: list[str], edges: list[Edge], modules: dict[str, Path]) -> str:
    lines = [f"{len(group)} modules import each other: {', '.join(group)}", "  for example:"]
    for edge in one_circle(group, edges):
        where = modules[edge.source].relative_to(ROOT)
        lines.append(f"    {edge.source} -> {edge.target}   ({where}:{edge.line}: {edge.text})")
    return "\n".join(lines)


# --- the checker itself, on small packages made here ---------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def circles_in(package: Path) -> list[list[str]]:
    return strongly_connected(modules_of(package), import_edges(package))


def test_the_checker_sees_lazy_type_only_and_relative_imports(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f() -> None:\n    from pkg import b\n",
            "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
            "pkg/c.py": "import pkg.d\n",
            "pkg/d.py": "x = 1\n",
        },
    )
    assert circles_in(package) == [["pkg.a", "pkg.b"]]


def test_the_checker_counts_a_package_init_run_by_a_submodule_import(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "from pkg.sub.api import API\n",
            "pkg/sub/api.py": "from pkg.low import helper\nAPI = helper\n",
            "pkg/sub/plain.py": "X = 1\n",
            "pkg/low.py": "def helper() -> None:\n    from pkg.sub.plain import X\n",
        },
    )
    edges = import_edges(package)
    assert Edge("pkg.low", "pkg.sub", 2, "from pkg.sub.plain import X") in edges
    assert circles_in(package) == [["pkg.low", "pkg.sub", "pkg.sub.api"]]
    group = circles_in(package)[0]
    assert [edge.source for edge in one_circle(group, edges)] == ["pkg.low", "pkg.sub", "pkg.sub.api"]


def test_the_checker_finds_nothing_in_a_layered_package(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.top import run\n",
            "pkg/top.py": "from pkg import low\nfrom pkg.low import x as run\n",
            "pkg/low.py": "x = 1\n",
        },
    )
    assert circles_in(package) == []


# --- pi_tui ---------------------------------------------------------------------------------------


def test_no_import_circle_in_pi_tui() -> None:
    modules = modules_of(PACKAGE)
    edges = import_edges(PACKAGE)
    groups = strongly_connected(modules, edges)
    report = "\n\n".join(describe(group, edges, modules) for group in groups)
    assert not groups, f"{len(groups)} import circle(s) (lazy and TYPE_CHECKING imports count):\n{report}"


def test_the_provider_layer_imports_no_session_secrets_or_ui() -> None:
    wrong = [
        edge
        for edge in import_edges(PACKAGE)
        if edge.source.startswith(PROVIDER_LAYER + ".")
        and any(edge.target == name or edge.target.startswith(name + ".") for name in FORBIDDEN)
    ]
    lines = sorted({f"{edge.source}:{edge.line}: {edge.text}" for edge in wrong})
    assert not wrong, "pi_tui/ai/ must not import pi_tui.session, .secrets or .tui:\n" + "\n".join(lines)


def _layer_name(module: str) -> str:
    """``pi_tui.session.manager`` -> ``session``; ``pi_tui`` itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_folder_imports_only_its_own_layer_and_the_ones_above() -> None:
    rank = {name: row for row, names in enumerate(LAYERS) for name in names}
    modules = modules_of(PACKAGE)
    unplaced = sorted({_layer_name(module) for module in modules} - rank.keys())
    assert not unplaced, f"folders or modules missing from LAYERS (and docs/architecture.md): {unplaced}"
    upward = sorted(
        {
            f"{edge.source}:{edge.line}: {edge.text}"
            for edge in import_edges(PACKAGE)
            if rank[_layer_name(edge.target)] > rank[_layer_name(edge.source)]
        }
    )
    assert not upward, "imports from a lower layer (see docs/architecture.md, Layers):\n" + "\n".join(upward)


def test_no_module_over_800_lines() -> None:
    sizes = {path: path.read_bytes().count(b"\n") for path in modules_of(PACKAGE).values()}
    large = sorted((lines, str(path.relative_to(ROOT))) for path, lines in sizes.items() if lines > MAX_LINES)
    listing = "\n".join(f"{lines:>6}  {name}" for lines, name in reversed(large))
    assert not large, f"modules over {MAX_LINES} lines (wc -l):\n{listing}"
