"""The interactive package has no import circle, counting lazy and TYPE_CHECKING imports, and
its slash commands are gathered in one place instead of registering themselves on import."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import pytest

from pi_tui.tui import slash_registry
from pi_tui.tui.slash_base import CommandSet

ROOT = Path(__file__).resolve().parents[2]
TUI = ROOT / "pi_tui" / "tui"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every pi_tui module ``path`` imports anywhere in its body (functions and TYPE_CHECKING
    blocks included), resolved to the modules that exist."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def _tui_graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in TUI.rglob("*.py")}
    known = set(paths)
    return {name: _imports(path, known) - {name} for name, path in paths.items()}


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = {start}, [start]
    while stack:
        for nxt in graph.get(stack.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def test_no_module_of_the_tui_package_imports_itself_back() -> None:
    graph = _tui_graph()
    circles = sorted(name for name in graph if _reaches(graph, name, name))
    assert circles == []


@pytest.mark.parametrize("module", ["pi_tui.tui.app", "pi_tui.tui.run", "pi_tui.tui.slash_registry"])
def test_no_command_module_imports_the_app_or_the_registry(module: str) -> None:
    graph = _tui_graph()
    command_modules = [
        name for name in graph if name.rpartition(".")[2].startswith("slash") and name != module
    ]
    assert command_modules
    assert [name for name in command_modules if module in graph[name]] == []


def test_every_command_module_is_gathered_and_every_handler_kept() -> None:
    on_disk = {path.stem for path in TUI.glob("slash*.py")} - {"slash_base", "slash_registry"}
    gathered = {module.__name__.rpartition(".")[2] for module in slash_registry.COMMAND_MODULES}
    assert gathered == on_disk
    every = [name for module in slash_registry.COMMAND_MODULES for name in module.COMMANDS.handlers]
    assert sorted(every) == sorted(slash_registry.HANDLERS)
    assert {"quit", "login", "bug", "export", "reload", "secrets"} <= set(slash_registry.HANDLERS)


def test_two_modules_claiming_one_command_is_refused() -> None:
    def module(name: str, commands: CommandSet) -> ModuleType:
        made = ModuleType(name)
        vars(made)["COMMANDS"] = commands
        return made

    async def handler(app: object, args: str) -> None:
        return None

    first, second = CommandSet(), CommandSet()
    first.command("same")(handler)
    second.command("same")(handler)
    with pytest.raises(ValueError, match="/same"):
        slash_registry.gather_handlers((module("a", first), module("b", second)))
    with pytest.raises(ValueError, match="twice"):
        first.command("same")(handler)
