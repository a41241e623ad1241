"""``--list-sessions`` prints ids that ``--session`` takes back, through the installed console script.

Sessions made in the same moment have UUIDv7 ids that share their first 13+ characters, so a fixed
8-character id matched many sessions and ``--session`` refused it (issue 14).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.cli import main
from pi_tui.session import SessionManager
from tests.support.builders import assistant, user

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
ROW = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d  (?P<prefix>[0-9a-f-]+) +\d+ msgs  (?P<title>.*)$")


def make_sessions(project: Path, count: int, label: str) -> dict[str, Path]:
    """``count`` saved sessions of ``project``, made back to back (their ids share long prefixes)."""
    made: dict[str, Path] = {}
    for number in range(count):
        manager = SessionManager.create(str(project))
        manager.append_message(user(f"{label} {number}"))
        manager.append_message(assistant("noted"))
        manager.close()
        assert manager.session_file is not None
        made[manager.get_header().id] = manager.session_file
    return made


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_TUI_OFFLINE_DELAY": "0"}
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=project, env=env, timeout=60)


def test_every_listed_prefix_continues_its_own_session(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    ours = make_sessions(project, 15, "ours")
    # Sessions of another folder share the same beginnings; --session looks in this folder first.
    make_sessions(elsewhere, 3, "theirs")

    listed = run(project, "--list-sessions")
    assert listed.returncode == 0, listed.stderr
    rows = [ROW.match(line) for line in listed.stdout.splitlines()]
    assert all(rows), listed.stdout
    prefixes = [row["prefix"] for row in rows if row]
    assert len(prefixes) == 15 and len(set(prefixes)) == 15, prefixes
    assert all(len(prefix) >= 8 for prefix in prefixes)
    assert max(len(prefix) for prefix in prefixes) > 8, "sessions made together should need more than 8"
    owner = {prefix: next(key for key in ours if key.startswith(prefix)) for prefix in prefixes}
    assert sorted(owner.values()) == sorted(ours)
    # Shortest: one character less would match another of this folder's sessions.
    for prefix in prefixes:
        if len(prefix) > 8:
            assert sum(key.startswith(prefix[:-1]) for key in ours) > 1, prefix

    sizes = {key: path.stat().st_size for key, path in ours.items()}
    # The longest prefix through the installed script, the others through the same entry point in
    # this process (a process each was ~3 s of a loaded 2-core CI run for the same lookup).
    longest = max(prefixes, key=len)
    done = run(project, "--session", longest, "--model", "offline/demo", "-p", "again")
    results = {longest: (done.returncode, done.stderr)}
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY", "0")
    monkeypatch.chdir(project)
    for prefix in prefixes:
        if prefix != longest:
            capfd.readouterr()
            code = main(["--session", prefix, "--model", "offline/demo", "-p", "again"])
            results[prefix] = (code, capfd.readouterr().err)
    for prefix, (code, err) in results.items():
        assert code == 0, (prefix, err)
        path = ours[owner[prefix]]
        assert path.stat().st_size > sizes[owner[prefix]], prefix
        assert '"again"' in path.read_text(), prefix
    folder = next(iter(ours.values())).parent
    assert len(list(folder.glob("*.jsonl"))) == 15, "a prefix started a new session instead"
