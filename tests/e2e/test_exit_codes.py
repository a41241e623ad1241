"""Exit codes that tell the truth, through the installed console script: what the user can fix
is one line on stderr and exit 2, with no crash log; only a bug is 70 with a crash log."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_session_files_security import saved_session
from tests.support.requires import requires, unavailable
from tests.support.small_disk import small_disk
from tests.support.tmux import exit_status

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
SETPRIV = shutil.which("setpriv")
AS_ROOT = os.geteuid() == 0


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a crash log would go (``$XDG_STATE_HOME/pi-tui/log``)."""
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def no_real_disk() -> None:
    """The installed script cannot be handed an injected ENOSPC: it needs a real small disk."""
    unavailable("a real small disk needs root and mount")


def run(*args: str | bytes, cwd: Path, drop_root_powers: bool = False) -> subprocess.CompletedProcess[bytes]:
    prefix: list[str] = []
    if drop_root_powers and AS_ROOT:
        assert SETPRIV is not None, "root without setpriv cannot drop its file powers"
        prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search", "--"]
    return subprocess.run(
        [*prefix, SCRIPT, "--model", "offline/demo", *args], capture_output=True, cwd=cwd, timeout=60
    )


def one_line(result: subprocess.CompletedProcess[bytes], state: Path) -> str:
    stderr = result.stderr.decode()
    assert result.returncode == 2, (result.returncode, stderr)
    assert "Traceback" not in stderr and "internal error" not in stderr
    [line] = stderr.splitlines()
    assert not (state / "pi-tui").exists(), "a user's mistake wrote a crash log"
    return line


def test_a_message_that_is_not_utf8_is_sent_and_said(project: Path, state: Path) -> None:
    """Not a failure (bytes decode as U+FFFD everywhere, issue 11), but the user hears of it."""
    result = run("--no-session", "-p", b"caf\xe9 au lait", cwd=project)
    assert result.returncode == 0, result.stderr
    [line] = result.stderr.decode().splitlines()
    assert line.startswith("pi-tui: the message is not valid UTF-8 (byte 0xe9 at character 4)")
    assert "caf\ufffd au lait" in result.stdout.decode()
    assert not (state / "pi-tui").exists()


def test_a_session_dir_whose_parent_is_missing(project: Path, tmp_path: Path, state: Path) -> None:
    missing = tmp_path / "no" / "such" / "sessions"
    line = one_line(run("--session-dir", str(missing), "-p", "hi", cwd=project), state)
    assert line == f"pi-tui: --session-dir {missing}: its parent folder {missing.parent} does not exist"
    assert not (tmp_path / "no").exists()


@(requires("setpriv") if AS_ROOT else requires())  # root reads anything unless setpriv drops that
def test_an_unwritable_or_foreign_session(project: Path, tmp_path: Path, state: Path) -> None:
    path = saved_session(project, tmp_path / "sessions")
    path.chmod(0o444)
    line = one_line(run("--session", str(path), "-p", "hi", cwd=project, drop_root_powers=True), state)
    assert line == f"pi-tui: Cannot write session file {path}: Permission denied"
    if AS_ROOT:
        os.chown(path, 65534, 65534)
        path.chmod(0o644)
        line = one_line(run("--session", str(path), "-p", "hi", cwd=project, drop_root_powers=True), state)
        assert line == f"pi-tui: Cannot write session file {path}: Permission denied"
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    line = one_line(run("--session-dir", str(folder), "-p", "hi", cwd=project, drop_root_powers=True), state)
    assert line == f"pi-tui: Cannot create session files in {folder}: Permission denied"


def test_a_good_run_is_0(project: Path, state: Path) -> None:
    result = run("--no-session", "-p", "hi", cwd=project)
    assert result.returncode == 0, result.stderr
    assert not (state / "pi-tui").exists()


def test_a_full_disk(project: Path, tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reply is printed; the entries that could not be saved are said lost, exit 2."""
    with small_disk(tmp_path, monkeypatch) as disk:
        if not disk.real:
            no_real_disk()
        sessions = disk.path / "sessions"
        first = run("--session-dir", str(sessions), "-p", "first", cwd=project)
        assert first.returncode == 0, first.stderr
        (path,) = sessions.glob("*.jsonl")
        before = path.read_bytes()
        disk.fill()
        result = run("--session-dir", str(sessions), "-c", "-p", "second " + "x" * 6000, cwd=project)
        stderr = result.stderr.decode()
        assert result.returncode == 2, stderr
        assert "offline demo" in result.stdout.decode()
        assert "No space left on device" in stderr and "Lost on exit" in stderr
        assert "Traceback" not in stderr and not (state / "pi-tui").exists()
        disk.free()
        assert path.read_bytes() == before


def test_print_mode_says_retries_and_silences_on_stderr(agent_dir: Path, project: Path, state: Path) -> None:
    """A 429, then a reply whose server goes quiet for a while: both are said on stderr."""
    import json

    from tests.support.model_server import HttpError, ModelServer, RawStream

    (agent_dir / "settings.json").write_text('{"retry": {"idleTimeoutSeconds": 2}}\n')
    events = (
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"slow answer here"}}]}\n\n'
        b'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    quiet = RawStream(
        events, event_delay=1.4
    )  # silent 1.4 s twice: past the notice (1 s), short of the limit
    limited = HttpError(429, message="Slow down", headers={"Retry-After": "1"})
    with ModelServer(limited, quiet) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        result = subprocess.run(
            [SCRIPT, "--no-session", "--model", "test/m", "-p", "hi"],
            capture_output=True,
            cwd=project,
            timeout=60,
        )
    stderr = result.stderr.decode().splitlines()
    assert result.returncode == 0, stderr
    assert result.stdout.decode() == "slow answer here\n"
    assert stderr[0].startswith("pi-tui: Rate limited by the provider (HTTP 429)")
    assert "retrying in 1 s (attempt 1/3) - Ctrl+C to cancel" in stderr[0]
    assert "pi-tui: no data for 1 s - Ctrl+C to stop" in stderr


def test_the_tui_says_lost_entries_and_exits_2(
    agent_dir: Path, project: Path, tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interactive mode on a disk that fills up: after Ctrl+D the entries it could not save
    are said on the terminal, and the exit code is 2."""
    import shlex

    from tests.support.tmux import TmuxPane

    with small_disk(tmp_path, monkeypatch) as disk:
        if not disk.real:
            no_real_disk()
        sessions = disk.path / "sessions"
        status = tmp_path / "status"
        argv = [SCRIPT, "--model", "offline/demo", "--session-dir", str(sessions)]
        command = f"{shlex.join(argv)}; echo $? > {shlex.quote(str(status))}; sleep 30"
        pane = TmuxPane.start(
            ["sh", "-c", command],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_OFFLINE_DELAY": "0"},
        )
        try:
            pane.wait_for(lambda s: "demo" in s.splitlines()[-1], "the footer", timeout=15)
            pane.type("hello\r")
            pane.wait_for(lambda s: "offline demo" in s, "the first answer", timeout=15)
            disk.fill()
            pane.paste("second " + "x" * 6000)
            pane.wait_for(lambda s: "[paste #1" in s, "the paste in the editor", timeout=15)
            pane.press("Enter")
            pane.wait_for(
                lambda s: "No space left on device" in s, "the save failure in the chat", timeout=15
            )
            pane.press("C-d")
            screen = pane.wait_for(lambda s: "Lost on exit" in s and s, "the lost entries said", timeout=15)
            assert "Traceback" not in screen
            assert exit_status(status) == "2"
        finally:
            pane.kill()
            disk.free()
        assert not (state / "pi-tui").exists()
