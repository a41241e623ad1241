"""Shared fixtures: an isolated agent dir for every test, and the pi session data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.secrets import active as active_secrets

DATA = Path(__file__).parent / "data"
PI_SESSIONS = DATA / "pi-sessions"


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
