"""Finding a session by id through the installed ``pi-tui`` (issue 31, points 10 and 11).

An ``--export x.jsonl`` keeps the session's id, and ``/import`` of that file (as in pi) copies it
into the session folder unchanged, so two files then share one id. ``--session ID`` refused both
("matches 2 sessions; give more of it") even given the whole id. And ``--list-sessions`` ranked by
the last message's time while ``-c`` continues the file written last (pi's rule), so an imported
copy or a renamed session was continued without being the first row.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_tui.cli import main
from pi_tui.config.paths import session_dir_for_cwd
from tests.e2e.test_tui_tmux import SCRIPT
from tests.support.requires import requires
from tests.support.tmux import TmuxPane
from tests.tui.test_resume import make_session

ROW = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d  (?P<prefix>[0-9a-f-]+) +(pi)? +\d+ msgs  (?P<title>.*)$")


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_TUI_OFFLINE_DELAY": "0"}
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=project, env=env, timeout=60)


@dataclass
class Ran:
    """The fields of a finished ``pi-tui`` run that the checks read."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def in_process(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Ran]:
    """:func:`run` through the installed script's entry point (pi_tui.cli.main) in this process:
    the lookups after the first run of each command are the same code without a start-up of
    1-3 s each on a loaded 2-core CI machine."""
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY", "0")

    def run_here(project: Path, *args: str) -> Ran:
        monkeypatch.chdir(project)
        capfd.readouterr()
        code = main(list(args))
        out, err = capfd.readouterr()
        return Ran(code, out, err)

    return run_here


def header_id(path: Path) -> str:
    with path.open() as handle:
        return str(json.loads(handle.readline())["id"])


def import_in_tui(project: Path, source: Path, tmp_path: Path) -> None:
    """``/import source`` typed into the installed program in a real terminal, confirmed."""
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo"],
        cwd=project,
        env={
            "PI_CODING_AGENT_DIR": os.environ["PI_CODING_AGENT_DIR"],
            "PI_TUI_CACHE_DIR": os.environ["PI_TUI_CACHE_DIR"],
            "PI_TUI_PI_AGENT_DIR": os.environ["PI_TUI_PI_AGENT_DIR"],
        },
        width=110,
        height=30,
    )
    try:
        pane.wait_for(lambda s: "demo • " in s and s, "the footer", 20)
        pane.type(f"/import {source}")
        pane.press("Enter")
        pane.wait_for(lambda s: "Replace current session" in s and s, "the confirmation", 10)
        pane.press("y")
        pane.wait_for(lambda s: "Session imported from" in s and s, "the import", 10)
    finally:
        pane.kill()


@requires("tmux", "pi-tui")
def test_an_exported_and_imported_twin_opens_by_its_id(
    agent_dir: Path, tmp_path: Path, in_process: Callable[..., Ran]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    original = make_session(project, "the original question", "an answer", hours_ago=2)
    session_id = header_id(original)

    exported = run(project, "--export", session_id, "twin.jsonl")
    assert exported.returncode == 0, exported.stderr
    twin = project / "twin.jsonl"
    assert header_id(twin) == session_id  # the export keeps the id, as pi's does

    import_in_tui(project, twin, tmp_path)
    folder = session_dir_for_cwd(str(project))
    copy = folder / "twin.jsonl"
    assert copy.is_file() and header_id(copy) == session_id  # /import keeps it too, as pi's does
    sharing = [path for path in folder.glob("*.jsonl") if header_id(path) == session_id]
    assert sorted(sharing) == sorted([original, copy])
    # The older file was written long before: the copy is the newest, the one -c continues.
    os.utime(original, (time.time() - 3600, time.time() - 3600))
    before = original.read_bytes()

    for reference, runner in ((session_id, run), (session_id[:8], in_process)):
        again = runner(project, "--session", reference, "--model", "offline/demo", "-p", f"again {reference}")
        assert again.returncode == 0, again.stderr
        assert "echo" in again.stdout or again.stdout.strip(), again.stdout
        assert f'"again {reference}"' in copy.read_text(), reference
        assert "2 session files have the id" in again.stderr and str(copy) in again.stderr
        assert "Traceback" not in again.stderr
    assert original.read_bytes() == before
    assert len(list(folder.glob("*.jsonl"))) == 2, "an id started a new session"

    # A file path always opens that very file, whichever is newer.
    older = in_process(project, "--session", str(original), "--model", "offline/demo", "-p", "the old one")
    assert older.returncode == 0, older.stderr
    assert '"the old one"' in original.read_text()
    assert "session files have the id" not in older.stderr

    # --export by the shared id takes the same file as --session.
    out = in_process(project, "--export", session_id, "out.jsonl")
    assert out.returncode == 0, out.stderr
    assert '"the old one"' in (project / "out.jsonl").read_text()  # the file written last

    # --list-sessions lists both files, under one prefix that --session accepts.
    listed = in_process(project, "--list-sessions")
    rows = [ROW.match(line) for line in listed.stdout.splitlines()]
    assert all(rows) and len(rows) == 2, listed.stdout
    assert {row["prefix"] for row in rows if row} == {session_id[:8]}


def test_list_sessions_puts_first_what_c_continues(
    agent_dir: Path, tmp_path: Path, in_process: Callable[..., Ran]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    now = time.time()
    # Last message times: chatty newest. File times: renamed newest (named just now, an entry
    # that is no message), chatty next, quiet oldest.
    quiet = make_session(project, "quiet session", "ok", hours_ago=30)
    renamed = make_session(project, "renamed session", "ok", hours_ago=20, name="renamed later")
    chatty = make_session(project, "chatty session", "ok", hours_ago=1)
    for path, hours in ((quiet, 40), (chatty, 2), (renamed, 0.5)):
        os.utime(path, (now - hours * 3600, now - hours * 3600))

    listed = run(project, "--list-sessions")
    assert listed.returncode == 0, listed.stderr
    rows = [ROW.match(line) for line in listed.stdout.splitlines()]
    assert all(rows) and len(rows) == 3, listed.stdout
    titles = [row["title"] for row in rows if row]
    assert titles == ["renamed later", "chatty session", "quiet session"], listed.stdout

    continued = run(project, "-c", "--model", "offline/demo", "-p", "which one")
    assert continued.returncode == 0, continued.stderr
    assert '"which one"' in renamed.read_text(), "-c continued another session than the first row"

    # Files written in the same second still agree: the first row is still what -c opens.
    same = now - 60
    for path in (quiet, renamed, chatty):
        os.utime(path, (same, same))
    first = ROW.match(in_process(project, "--list-sessions").stdout.splitlines()[0])
    assert first is not None
    assert in_process(project, "-c", "--model", "offline/demo", "-p", "tie breaker").returncode == 0
    opened = [path for path in (quiet, renamed, chatty) if '"tie breaker"' in path.read_text()]
    assert len(opened) == 1 and header_id(opened[0]).startswith(first["prefix"])
