"""Shared fixtures: an isolated agent dir for every test, and the pi session data; the
``requires`` marker (tests/support/requires.py); and a guard that no test reads the sibling
``shared`` folder (every fixture is vendored in tests/data, so a fresh clone passes alone)."""

from __future__ import annotations

import compileall
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.secrets import active as active_secrets
from tests.support import requires

DATA = Path(__file__).parent / "data"
PI_SESSIONS = DATA / "pi-sessions"
REPO = Path(__file__).resolve().parent.parent
#: The steering folder beside the repository: present on this machine and CI's, absent in a
#: fresh clone, so a test that reads it passes here and fails for everyone else.
OUTSIDE = str(REPO.parent / "shared")
_AUDITED = frozenset({"open", "os.listdir", "os.scandir"})
_outside_reads: list[str] = []


class ReadOutsideTheRepository(PermissionError):
    """A test opened a file of the sibling ``shared`` folder instead of its copy in tests/data."""


def _no_reads_outside(event: str, args: tuple[object, ...]) -> None:
    """Audit hook: refuse (and remember) any open or listing under :data:`OUTSIDE`. It runs on
    every audited event of the process, so it returns at once for all but the three above and
    for paths that do not even mention ``shared``."""
    if event not in _AUDITED or not args:
        return
    path = args[0]
    if not isinstance(path, (str, bytes, os.PathLike)):
        return  # a file descriptor, or None
    text = os.fsdecode(path)
    if "shared" not in text:
        return
    full = os.path.realpath(text)
    if full == OUTSIDE or full.startswith(OUTSIDE + os.sep):
        _outside_reads.append(full)
        raise ReadOutsideTheRepository(f"tests must not read {full}: vendor it into tests/data")


sys.addaudithook(_no_reads_outside)


@pytest.fixture(autouse=True)
def reads_stay_in_the_repository() -> Iterator[None]:
    """Fail a test that touched the sibling ``shared`` folder, even if it caught the error."""
    _outside_reads.clear()
    yield
    if _outside_reads:
        pytest.fail(f"the test read outside the repository: {sorted(set(_outside_reads))}")


def pytest_configure(config: pytest.Config) -> None:
    """Standard input is ``/dev/null`` for the tests and every pi-tui they start: pi-tui reads
    a piped stdin to its end (pi 1.x), and whatever ran pytest may hold a pipe open forever.
    A test that pipes text in gives the child its own stdin.

    ``COLUMNS`` and ``LINES`` go too: pytest-xdist's workers run with 80x24 in them, and every
    pi-tui a test starts in a 120x40 tmux pane would believe them (Python's terminal size reads
    them first) and draw an 80x24 app in the corner."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)
    if "PYTEST_XDIST_WORKER" not in os.environ:
        # Byte-compile the package once, before the workers start: in a fresh clone the first
        # pi-tui every worker starts would otherwise compile all of it at the same moment.
        compileall.compile_dir(str(REPO / "pi_tui"), quiet=1)
    config.addinivalue_line(
        "markers",
        f"{requires.MARKER}(*tools): the tools the test needs (skips without them, fails under CI)",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The ``requires`` marker: a missing tool skips here and fails under CI."""
    requires.check_marker(item)


@pytest.fixture(autouse=True)
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own ``PI_CODING_AGENT_DIR`` and cache folder (the sessions index);
    nothing touches the real home."""
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    monkeypatch.setenv("PI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    # pi's folder (read beneath ours) is an empty one of the test's, never the real ~/.pi/agent.
    monkeypatch.setenv("PI_TUI_PI_AGENT_DIR", str(tmp_path / "pi-agent"))
    return folder


@pytest.fixture(autouse=True)
def no_secrets_left_behind() -> Iterator[None]:
    """The process-wide secrets a test's start-up installed are gone before the next test."""
    yield
    active_secrets.install(None)
