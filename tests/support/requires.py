"""What a test needs from the machine, and one rule for when it is missing.

A developer without tmux, node or Chromium still wants the rest of the suite to run, so a test
whose tool is missing skips there. Under CI (``CI`` set, as every CI runner and ``.ci/run``'s
caller do) it fails instead: a test that skips in CI is a test that does not exist, and
``.ci/run`` installs every tool listed here. ``tests/support/real_pi.py`` and
``tests/support/browser.py`` follow the same rule through :func:`unavailable`.

Use it as a marker (``pytestmark = requires("tmux", "pi-tui")``; ``tests/conftest.py`` checks
it before each test) or call :func:`require_tool` inside a test.

pytest is imported only when a test needs it: the benchmarks import tests/support modules that
use this one (real_pi, browser) and must run where pytest is not installed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import pytest

#: The installed ``pi-tui`` script the end-to-end tests drive (``pip install -e .`` puts it next to
#: this interpreter, which is where it is looked for when it is not on PATH).
PI_TUI = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))

#: How to get each tool a test may ask for (said in the skip or failure).
HOW_TO_GET = {
    "pi-tui": "pip install -e .",
    "tmux": "apt-get install tmux",
    "rg": "apt-get install ripgrep",
    "node": "apt-get install nodejs (node >= 22.19 for pi 1.5.2; see .ci/run)",
    "setpriv": "apt-get install util-linux",
    "mount": "apt-get install mount",
}

MARKER = "requires"


def in_ci() -> bool:
    """True when the ``CI`` environment variable is set to anything but the empty string."""
    return bool(os.environ.get("CI"))


def unavailable(reason: str) -> NoReturn:
    """Skip the running test on a developer's machine, fail it under CI."""
    import pytest

    if in_ci():
        pytest.fail(f"{reason} (CI must provide it: see .ci/run)", pytrace=False)
    pytest.skip(reason)


def tool_path(name: str) -> str | None:
    """Where ``name`` is, or None (``pi-tui`` is the installed script, found as :data:`PI_TUI`)."""
    if name == "pi-tui":
        return PI_TUI if Path(PI_TUI).exists() else None
    return shutil.which(name)


def require_tool(name: str) -> str:
    """The path of ``name``, or skip (fail under CI) saying how to install it."""
    found = tool_path(name)
    if found is None:
        how = HOW_TO_GET.get(name)
        unavailable(f"{name} is not installed" + (f" ({how})" if how else ""))
    return found


def requires(*tools: str) -> pytest.MarkDecorator:
    """A marker: the test needs every one of ``tools`` (checked by ``tests/conftest.py`` at setup,
    so the rule above applies; a plain ``skipif`` could only skip)."""
    import pytest

    marker: pytest.MarkDecorator = pytest.mark.requires(*tools)  # MARKER's name
    return marker


def check_marker(item: pytest.Item) -> None:
    """Apply :func:`require_tool` to every tool named by the item's ``requires`` markers."""
    for mark in item.iter_markers(MARKER):
        for tool in mark.args:
            require_tool(tool)
