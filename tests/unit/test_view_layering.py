"""What every front end draws lives below the TUI: the view package imports no UI toolkit, and the
export page, the server and extensions reach tree rows, figures, themes and renderers through
it, never through ``pi_tui.tui`` (every import counts: lazy ones and type-only ones too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pi_tui"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` names in an import statement, wherever the statement is."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def offending(folder: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        bad = sorted(
            name
            for name in imported_modules(path)
            if any(name == f or name.startswith(f + ".") for f in forbidden)
        )
        if bad:
            found[str(path.relative_to(PACKAGE.parent))] = bad
    return found


def test_the_view_package_knows_no_ui() -> None:
    assert offending("view", ("pi_tui.tui", "textual")) == {}


@pytest.mark.parametrize("folder", ["html_export", "server", "extensions"])
def test_front_ends_and_extensions_draw_through_the_view_package(folder: str) -> None:
    assert offending(folder, ("pi_tui.tui",)) == {}
