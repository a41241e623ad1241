"""Session files are private and never written through a link or by two writers (issue 11).

- lock, torn and session files are opened without following a symbolic link: one line, exit 2,
  and the linked file is untouched;
- the lock is re-checked after ``flock``: a process that opened the lock file just before its
  holder removed it cannot become a second writer (the racy order is replayed exactly);
- a read-only session file, an unwritable ``--session-dir`` and another user's session are one
  line and exit 2 at start, in print mode and in the TUI. Tests run as root, which ignores file
  modes: the CLI runs under ``setpriv`` without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH (so the
  modes apply to it as to anyone); without setpriv the failure is injected at ``os.open``;
- new files are 0600 in 0700 folders; existing files and folders keep their mode.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.session import SessionError, SessionLockedError, SessionManager, store
from pi_tui.session.store import SessionLock
from pi_tui.start_options import StartOptions
from pi_tui.tui.app import PiApp
from tests.support.builders import assistant, user
from tests.support.requires import requires
from tests.support.waiting import async_wait_until

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("PI_TUI_OFFLINE_DELAY", "0")
SETPRIV = shutil.which("setpriv")
AS_ROOT = os.geteuid() == 0


def cli(*args: str, cwd: Path, drop_root_powers: bool = False) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if drop_root_powers and AS_ROOT:
        assert SETPRIV is not None
        prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search", "--"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "pi_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def one_line_exit_2(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    [line] = result.stderr.splitlines()
    return line


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def saved_session(project: Path, folder: Path, *, torn: bool = False) -> Path:
    manager = SessionManager.create(str(project), folder)
    manager.append_message(user("first question"))
    manager.append_message(assistant("first answer"))
    manager.close()
    path = manager.session_file
    assert path is not None
    if torn:
        with path.open("ab") as out:
            out.write(b'{"type":"message","id":"cut')
    return path


def important_file(tmp_path: Path) -> Path:
    path = tmp_path / "important"
    path.write_text("precious data\n")
    return path


# --- symbolic links ------------------------------------------------------------------------------


def test_a_linked_lock_file_is_refused_in_print_mode(project: Path, tmp_path: Path) -> None:
    path = saved_session(project, tmp_path / "sessions")
    important = important_file(tmp_path)
    lock = path.with_name(path.name + ".lock")
    lock.symlink_to(important)
    line = one_line_exit_2(cli("--session", str(path), "--model", "offline/demo", "-p", "hi", cwd=project))
    assert line == f"pi-tui: Refusing to write {lock}: it is a symbolic link " + (
        "(remove it, or open the file it points to)"
    )
    assert important.read_text() == "precious data\n"  # today: truncated to the pid
    assert lock.is_symlink()


def test_a_linked_torn_file_is_refused(project: Path, tmp_path: Path) -> None:
    path = saved_session(project, tmp_path / "sessions", torn=True)
    before = path.read_bytes()
    important = important_file(tmp_path)
    torn = path.with_name(path.name + ".torn")
    torn.symlink_to(important)
    line = one_line_exit_2(cli("--session", str(path), "--model", "offline/demo", "-p", "hi", cwd=project))
    assert line.startswith(f"pi-tui: Refusing to write {torn}: it is a symbolic link")
    assert important.read_text() == "precious data\n"  # today: the torn tail is appended to it
    assert path.read_bytes() == before

    # A link created after the open is refused by O_NOFOLLOW itself.
    torn.unlink()
    manager = SessionManager.open(path)
    torn.symlink_to(important)
    with pytest.raises(SessionError, match="symbolic link"):
        manager.flush()  # nothing pending: flush writes nothing, so force the tail repair
        manager._writer.append([])  # type: ignore[union-attr]
    manager.close()
    assert important.read_text() == "precious data\n"


def test_a_link_planted_at_a_new_session_file_is_refused(project: Path, tmp_path: Path) -> None:
    important = important_file(tmp_path)
    manager = SessionManager.create(str(project), tmp_path / "sessions")
    assert manager.session_file is not None
    manager.session_file.parent.mkdir(parents=True)
    manager.session_file.symlink_to(important)
    said: list[str] = []
    manager.save_listener = said.append
    manager.append_message(user("question"))
    manager.append_message(assistant("answer"))  # the file appears now: refused, kept in memory
    assert len(said) == 1 and "it is a symbolic link" in said[0]
    manager.close()
    assert important.read_text() == "precious data\n"


async def test_the_tui_start_refuses_a_linked_lock_file(project: Path, tmp_path: Path) -> None:
    path = saved_session(project, tmp_path / "sessions")
    important = important_file(tmp_path)
    path.with_name(path.name + ".lock").symlink_to(important)
    app = PiApp(start_options=StartOptions(cwd=str(project), session=str(path)), cwd=str(project))
    async with app.run_test(size=(100, 30)):
        await async_wait_until(lambda: not app.is_running, "the app to end on the refused session file")
    assert app.return_code == 2 and not app.ready
    assert important.read_text() == "precious data\n"


# --- the lock ------------------------------------------------------------------------------------


def test_no_two_writers_when_the_lock_file_is_removed_between_open_and_flock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holds the lock; B opens the lock file; A releases (removing it); C creates and locks a
    new one; only then does B flock its descriptor of the old, removed file. Before the re-check
    B got that lock too and both B and C wrote the session."""
    session = tmp_path / "s.jsonl"
    a, b, c = SessionLock(session), SessionLock(session), SessionLock(session)
    a.acquire()
    real_flock = store.fcntl.flock
    replayed: list[int] = []

    def flock(fd: int, operation: int) -> None:
        if not replayed:  # B's first flock: let A release and C lock in between
            replayed.append(fd)
            a.release()
            c.acquire()
        real_flock(fd, operation)

    monkeypatch.setattr(store.fcntl, "flock", flock)
    with pytest.raises(SessionLockedError, match=f"process {os.getpid()}"):
        b.acquire()
    assert replayed and c.held and not b.held
    monkeypatch.setattr(store.fcntl, "flock", real_flock)
    c.release()
    assert not session.with_name("s.jsonl.lock").exists()  # removed on release, as before
    b.acquire()  # and free again afterwards
    b.release()


def test_the_lock_holder_is_alone_across_processes(project: Path, tmp_path: Path) -> None:
    path = saved_session(project, tmp_path / "sessions")
    holder = SessionManager.open(path)
    result = cli("--session", str(path), "--model", "offline/demo", "-p", "hi", cwd=project)
    line = one_line_exit_2(result)
    assert f"is being written by process {os.getpid()}" in line
    holder.close()


# --- modes -----------------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_new_files_are_private_and_existing_ones_keep_their_mode(
    project: Path, tmp_path: Path, agent_dir: Path
) -> None:
    old_umask = os.umask(0o022)
    try:
        result = cli("--model", "offline/demo", "-p", "hi", cwd=project)
        assert result.returncode == 0, result.stderr
        sessions_root = agent_dir / "sessions"
        [folder] = list(sessions_root.iterdir())
        [path] = list(folder.glob("*.jsonl"))
        assert (mode(sessions_root), mode(folder), mode(path)) == (0o700, 0o700, 0o600)

        lock = SessionLock(path)
        lock.acquire()
        assert mode(lock.path) == 0o600
        lock.release()

        path.chmod(0o644)
        folder.chmod(0o755)
        result = cli("-c", "--model", "offline/demo", "-p", "again", cwd=project)
        assert result.returncode == 0, result.stderr
        assert (mode(folder), mode(path)) == (0o755, 0o644)
        assert len(path.read_bytes().splitlines()) > 3

        # A torn tail moved aside: the .torn file is private too.
        with path.open("ab") as out:
            out.write(b'{"type":"mess')
        result = cli("-c", "--model", "offline/demo", "-p", "third", cwd=project)
        assert result.returncode == 0, result.stderr
        assert mode(path.with_name(path.name + ".torn")) == 0o600

        # A migrated (rewritten) file keeps its mode too.
        old = folder / "old.jsonl"
        old.write_text(
            json.dumps(
                {"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00Z", "cwd": str(project)}
            )
            + "\n"
            + json.dumps(
                {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": user("q").to_json_dict()}
            )
            + "\n"
        )
        old.chmod(0o640)
        SessionManager.open(old).close()
        assert json.loads(old.read_text().splitlines()[0]).get("version") == 3
        assert mode(old) == 0o640
    finally:
        os.umask(old_umask)


# --- files that cannot be written -----------------------------------------------------------------

# Root reads any file, so as root these drop root's powers with setpriv (see the injected
# variants below for what runs without it).
needs_real_permissions = requires("setpriv") if AS_ROOT else requires()


@needs_real_permissions
def test_a_read_only_session_file_is_one_line_and_exit_2(project: Path, tmp_path: Path) -> None:
    path = saved_session(project, tmp_path / "sessions")
    path.chmod(0o444)
    before = path.read_bytes()
    line = one_line_exit_2(
        cli("--session", str(path), "--model", "offline/demo", "-p", "hi", cwd=project, drop_root_powers=True)
    )
    assert line == f"pi-tui: Cannot write session file {path}: Permission denied"
    assert path.read_bytes() == before
    assert not path.with_name(path.name + ".lock").exists()


@needs_real_permissions
def test_an_unwritable_session_dir_is_one_line_and_exit_2(project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    folder.chmod(0o555)
    line = one_line_exit_2(
        cli(
            "--session-dir",
            str(folder),
            "--model",
            "offline/demo",
            "-p",
            "hi",
            cwd=project,
            drop_root_powers=True,
        )
    )
    assert line == f"pi-tui: Cannot create session files in {folder}: Permission denied"
    # and a folder that cannot even be created
    inner = folder / "more" / "sessions"
    line = one_line_exit_2(
        cli(
            "--session-dir",
            str(inner),
            "--model",
            "offline/demo",
            "-p",
            "hi",
            cwd=project,
            drop_root_powers=True,
        )
    )
    # (a missing parent is refused before anything is tried: almost always a typo)
    assert line == f"pi-tui: --session-dir {inner}: its parent folder {folder / 'more'} does not exist"
    line = one_line_exit_2(
        cli(
            "--session-dir",
            str(folder / "more"),
            "--model",
            "offline/demo",
            "-p",
            "hi",
            cwd=project,
            drop_root_powers=True,
        )
    )
    assert line == f"pi-tui: Cannot create session folder {folder / 'more'}: Permission denied"


@needs_real_permissions
def test_another_users_session_is_one_line_and_exit_2(project: Path, tmp_path: Path) -> None:
    path = saved_session(project, tmp_path / "sessions")
    if AS_ROOT:
        os.chown(path, 65534, 65534)  # nobody's; the folder stays ours, so only the file refuses
        path.chmod(0o644)
    else:
        pytest.skip("cannot give a file to another user without root")
    line = one_line_exit_2(
        cli("--session", str(path), "--model", "offline/demo", "-p", "hi", cwd=project, drop_root_powers=True)
    )
    assert line == f"pi-tui: Cannot write session file {path}: Permission denied"


def deny_writes_to(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """The injected variant: ``os.open`` of anything at ``target`` (or under it) for writing
    fails with EACCES, as for a file the user may not write."""
    real_open = os.open

    def fake_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        text = os.fspath(path)  # type: ignore[arg-type]
        writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writing and (text == str(target) or text.startswith(str(target) + os.sep)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), text)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", fake_open)


def test_print_mode_injected_read_only_file_and_session_dir(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pi_tui.cli import main

    path = saved_session(project, tmp_path / "sessions")
    monkeypatch.chdir(project)
    with monkeypatch.context() as patch:
        deny_writes_to(patch, path)
        assert main(["--session", str(path), "--model", "offline/demo", "-p", "hi"]) == 2
    assert capsys.readouterr().err == f"pi-tui: Cannot write session file {path}: Permission denied\n"
    folder = tmp_path / "other-sessions"
    folder.mkdir()
    with monkeypatch.context() as patch:
        deny_writes_to(patch, folder)
        assert main(["--session-dir", str(folder), "--model", "offline/demo", "-p", "hi"]) == 2
    assert capsys.readouterr().err == f"pi-tui: Cannot create session files in {folder}: Permission denied\n"


@pytest.mark.parametrize("case", ["read-only file", "unwritable session dir"])
async def test_the_tui_start_says_one_line_and_exits_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    path = saved_session(project, tmp_path / "sessions")
    if case == "read-only file":
        deny_writes_to(monkeypatch, path)
        options = StartOptions(cwd=str(project), session=str(path))
        expected = f"pi-tui: Cannot write session file {path}: Permission denied"
    else:
        folder = tmp_path / "locked"
        folder.mkdir()
        deny_writes_to(monkeypatch, folder)
        options = StartOptions(cwd=str(project), session_dir=str(folder))
        expected = f"pi-tui: Cannot create session files in {folder}: Permission denied"
    exits: list[tuple[object, ...]] = []
    app = PiApp(start_options=options, cwd=str(project))
    real_exit = app.exit
    monkeypatch.setattr(app, "exit", lambda *args: (exits.append(args), real_exit(*args)))
    async with app.run_test(size=(100, 30)):
        await async_wait_until(lambda: not app.is_running, "the app to end on the refused session file")
    assert app.return_code == 2 and not app.ready
    assert exits == [(None, 2, expected)]
