"""Shared fixtures: an isolated agent dir for every test, and the pi session data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.secrets import active as active_secrets

DATA = Path(__file__).parent / "data"
PI_SESSIONS = DATA / "pi-sessions"


def pytest_configure(config: pytest.Config) -> None:
    """Standard input is ``/dev/null`` for the tests and every pi-tui they start: pi-tui reads
    a piped stdin to its end (pi 1.x), and whatever ran pytest may hold a pipe open forever.
    A test that pipes text in gives the child its own stdin."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)


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
