"""Byte-compile pi_tui before a benchmark launches it, as ``pip install .`` does.

An installed pi-tui starts from ``.pyc`` files. A checkout run with ``PYTHONDONTWRITEBYTECODE``
set (as on the CI machines) compiles all of its modules from source at every launch: about
0.12 s that no user pays, counted in every process-launch figure. Benchmarks that start
``pi-tui`` call :func:`compile_pi_tui` first so their figures are those of an install.
"""

from __future__ import annotations

import compileall
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pi_tui"


def compile_pi_tui() -> None:
    """Write the missing or stale ``.pyc`` files of the package (quietly; a no-op when fresh)."""
    compileall.compile_dir(PACKAGE, quiet=1)
