"""File checkpoints recorded by the installed ``pi-tui -p`` around each turn's tools, against the
loopback model server: write, edit and bash (create, change, delete, rename) land as one
``pi-tui.files`` custom entry per turn after its last tool result, with commits that hold the
files exactly as they were, in a shadow store outside the project that leaves its ``.git``
alone; a turn whose tools change nothing writes no entry; ``--no-checkpoints`` records nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.test_cli_agent import configure, entries, pi_tui, session_files
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec

BASE = ("--provider", "test", "--model", "m")


def run(project: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return pi_tui(*BASE, *words, cwd=project, timeout=120)


def git_show(store: Path, commit: str, path: str) -> bytes | None:
    done = subprocess.run(
        ["git", "--git-dir", str(store), "show", f"{commit}:{path}"],
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull},
    )
    return done.stdout if done.returncode == 0 else None


def checkpoints_of(path: Path) -> list[dict[str, Any]]:
    return [e for e in entries(path) if e.get("type") == "custom" and e.get("customType") == "pi-tui.files"]


def test_write_edit_and_bash_are_recorded_per_turn(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "keep.txt").write_text("kept\n")
    (project / "old.txt").write_text("to be renamed\n")
    (project / "gone.txt").write_text("to be deleted\n")
    (project / ".gitignore").write_text("build/\n.env\n*.local\n")
    (project / ".env").write_text("DB=prod\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    user_git = sorted(p.name for p in (project / ".git").iterdir())
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(
            Scripted(
                tool_calls=[
                    ToolCallSpec("write", {"path": "app.py", "content": "print('one')\n"}),
                    # ignored files the agent's write and edit name are recorded all the same
                    ToolCallSpec("edit", {"path": ".env", "edits": [{"oldText": "prod", "newText": "oops"}]}),
                    ToolCallSpec("write", {"path": "notes.local", "content": "mine\n"}),
                ]
            ),
            Scripted(
                tool_calls=[
                    ToolCallSpec("edit", {"path": "app.py", "edits": [{"oldText": "one", "newText": "two"}]}),
                    ToolCallSpec(
                        "bash",
                        {"command": "rm gone.txt; mv old.txt new.txt; mkdir build; echo x > build/out"},
                    ),
                ]
            ),
            Scripted(tool_calls=[ToolCallSpec("read", {"path": "app.py"})]),
            Scripted(text="done"),
        )
        done = run(project, "-p", "go")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    (session,) = session_files(agent_dir)
    found = checkpoints_of(session)
    assert len(found) == 2  # the read-only third turn changed nothing: no entry
    by_id = {e["id"]: e for e in entries(session)}
    for entry in found:  # after the turn's last tool result, naming the turn's assistant message
        assert by_id[entry["parentId"]]["message"]["role"] == "toolResult"
        assert by_id[entry["data"]["turn"]]["message"]["role"] == "assistant"
    first, second = (entry["data"] for entry in found)
    assert sorted((c["status"], c["path"]) for c in first["changes"]) == [
        ("A", "app.py"),
        ("A", "notes.local"),
        ("M", ".env"),
    ]
    assert sorted((c["status"], c["path"], c.get("from")) for c in second["changes"]) == [
        ("D", "gone.txt", None),
        ("M", "app.py", None),
        ("R", "new.txt", "old.txt"),
    ]
    assert first["after"] == second["before"]
    stores = list((agent_dir / "checkpoints").iterdir())
    assert len(stores) == 1 and project not in stores[0].parents
    store = stores[0]
    assert git_show(store, first["before"], "app.py") is None
    assert git_show(store, first["after"], "app.py") == b"print('one')\n"
    assert git_show(store, first["before"], ".env") == b"DB=prod\n"
    assert git_show(store, first["after"], ".env") == b"DB=oops\n"
    assert git_show(store, first["after"], "notes.local") == b"mine\n"
    assert git_show(store, second["after"], "app.py") == b"print('two')\n"
    assert git_show(store, second["before"], "gone.txt") == b"to be deleted\n"
    assert git_show(store, second["after"], "gone.txt") is None
    assert git_show(store, second["after"], "new.txt") == b"to be renamed\n"
    assert git_show(store, second["after"], "build/out") is None  # .gitignore'd
    assert git_show(store, second["after"], "keep.txt") == b"kept\n"
    # the user's repository: untouched (nothing added to its index or objects)
    assert sorted(p.name for p in (project / ".git").iterdir()) == user_git
    assert not (project / ".git" / "index").exists()
    # a process hands its index back: the next session starts warm
    assert (store / "index").is_file() and not list(store.glob("index.*"))


def test_no_checkpoints_records_nothing(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(
            Scripted(tool_calls=[ToolCallSpec("write", {"path": "a.txt", "content": "a"})]),
            Scripted(text="ok"),
        )
        done = run(project, "--no-checkpoints", "-p", "go")
    assert done.returncode == 0, done.stderr
    (session,) = session_files(agent_dir)
    assert checkpoints_of(session) == []
    assert not (agent_dir / "checkpoints").exists()
    assert json.loads(session.read_text().splitlines()[0])["type"] == "session"
