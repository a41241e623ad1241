"""The benchmarks run where pytest is not installed: every tests/support module they import
must import without it (pytest is loaded lazily, only by what a test calls)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def modules_the_benchmarks_import() -> list[str]:
    found: set[str] = set()
    for script in sorted((REPO / "benchmarks").glob("*.py")):
        found |= set(re.findall(r"^\s*from (tests\.[\w.]+) import", script.read_text(), re.MULTILINE))
    return sorted(found)


def test_the_benchmarks_import_only_support_modules() -> None:
    assert modules_the_benchmarks_import(), "the scan found nothing: its pattern is out of date"
    assert all(name.startswith("tests.support.") for name in modules_the_benchmarks_import())


def test_those_modules_import_without_pytest() -> None:
    names = modules_the_benchmarks_import()
    # ``sys.modules[name] = None`` makes ``import name`` raise ImportError, as if not installed.
    code = "import sys\nsys.modules['pytest'] = None\n" + "".join(f"import {name}\n" for name in names)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
