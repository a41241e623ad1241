"""Slash commands and navigation reach the app only through :class:`CommandHost`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from pi_tui.tui.host import CommandHost

ROOT = Path(__file__).resolve().parents[2]
COMMAND_MODULES = (
    "pi_tui/tui/slash.py",
    "pi_tui/tui/navigation.py",
    "pi_tui/tui/slash_auth.py",
    "pi_tui/tui/slash_more.py",
)


def test_command_modules_do_not_import_the_app() -> None:
    code = "import sys, pi_tui.tui.slash, pi_tui.tui.navigation; print('pi_tui.tui.app' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "False"


def _host_members() -> set[str]:
    return {name for name in dir(CommandHost) if not name.startswith("_")} | set(CommandHost.__annotations__)


def test_commands_use_only_the_host_interface() -> None:
    allowed = _host_members()
    for module in COMMAND_MODULES:
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        used = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "app"
        }
        assert used <= allowed, f"{module} uses {sorted(used - allowed)} outside CommandHost"


def test_the_app_has_every_host_member() -> None:
    from pi_tui.tui.app import PiApp

    methods = {name for name in dir(CommandHost) if not name.startswith("_")}
    missing = {name for name in methods if not hasattr(PiApp, name)}
    assert not missing
