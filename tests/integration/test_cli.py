"""The console entry point, run as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pi_tui import __version__
from pi_tui.session import SessionManager
from tests.support.builders import assistant, user

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pi_tui", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )


def test_version_and_help() -> None:
    for flag in ("--version", "-v"):  # pi's short form too
        result = run(flag)
        assert result.returncode == 0 and result.stdout.strip() == f"pi-tui {__version__}"
    result = run("--help")
    assert result.returncode == 0 and "usage: pi-tui" in result.stdout and "--list-sessions" in result.stdout


def test_unknown_flag_is_a_clear_error() -> None:
    result = run("--frobnicate")
    assert result.returncode == 2 and "unrecognized arguments: --frobnicate" in result.stderr
    assert "Traceback" not in result.stderr


def test_list_sessions(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert "No sessions" in run("--list-sessions", cwd=project).stdout
    manager = SessionManager.create(str(project))
    manager.append_message(user("Fix the failing test"))
    manager.append_message(assistant("done"))
    manager.close()
    result = run("--list-sessions", cwd=project)
    assert result.returncode == 0 and "Fix the failing test" in result.stdout
    assert manager.session_id[:8] in result.stdout


def test_a_closed_pipe_is_not_an_error() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "--list-models"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before anything is written (like `| head -0`)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0 and b"internal error" not in stderr
