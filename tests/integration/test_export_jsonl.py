"""``--export SESSION OUT.jsonl`` and ``/export FILE.jsonl``: the current branch as a straight
session file (a fresh header, every entry re-parented to the one before it); ``--tree`` keeps
the whole tree. (The HTML page has its own tests: tests/browser/.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from pi_tui.session import SessionManager
from pi_tui.tui.transcript import InfoItem
from tests.support.builders import assistant, user
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


def branched(project: Path, folder: Path) -> tuple[Path, list[str]]:
    manager = SessionManager.create(str(project), folder)
    first = manager.append_message(user("first"))
    manager.append_message(assistant("answer one"))
    manager.append_message(user("abandoned"))
    manager.append_message(assistant("abandoned answer"))
    manager.branch(first)
    manager.append_label_change(first, "start")
    manager.append_message(user("second way"))
    manager.append_message(assistant("answer two"))
    ids = manager.get_branch_ids()
    manager.close()
    assert manager.session_file is not None
    return manager.session_file, ids


def said(app: object) -> str:
    """Every info and error line the app has put in the chat."""
    return "\n".join(item.text for item in app.chat.items if isinstance(item, InfoItem))  # type: ignore[attr-defined]


def check_export(path: Path, source: Path, ids: list[str]) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, entries = lines[0], lines[1:]
    original = {raw["id"]: raw for raw in map(json.loads, source.read_text().splitlines()[1:])}
    assert header["type"] == "session" and header["version"] == 3
    assert header["id"] == json.loads(source.read_text().splitlines()[0])["id"]
    assert [entry["id"] for entry in entries] == ids
    assert [entry["parentId"] for entry in entries] == [None, *ids[:-1]]
    for entry in entries:
        assert {**entry, "parentId": original[entry["id"]]["parentId"]} == original[entry["id"]]
    texts = json.dumps(entries)
    assert "second way" in texts and "abandoned" not in texts


def test_export_from_the_command_line(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source, ids = branched(project, tmp_path / "sessions")
    done = subprocess.run(
        [SCRIPT, "--export", str(source), "out/copy.jsonl"], capture_output=True, text=True, cwd=project
    )
    assert done.returncode == 0, done.stderr
    written = project / "out" / "copy.jsonl"
    assert done.stdout.strip() == f"Session exported to: {written}"
    check_export(written, source, ids)
    refused = subprocess.run(
        [SCRIPT, "--export", str(source), "page.txt"], capture_output=True, text=True, cwd=project
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "writes .html or .jsonl files" in refused.stderr
    assert not (project / "page.txt").exists()
    reopened = SessionManager.open(written, read_only=True)  # and pi-tui reads its own copy
    assert [raw["id"] for raw in reopened.iter_raw_entries()] == ids


async def test_export_in_the_app(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source, _ = branched(project, tmp_path / "sessions")
    app = make_app(project, session=str(source), model="offline/demo")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        manager = app.agent.manager
        manager.sync()
        ids = manager.get_branch_ids()  # now with the model change the app recorded
        app.run_slash("export", "mine.jsonl")
        await wait_until(
            pilot, lambda: "Session exported to:" in said(app), "/export's answer", detail=lambda: said(app)
        )
        assert f"Session exported to: {project / 'mine.jsonl'}" in said(app)
        app.run_slash("export", "page.txt")
        await wait_until(
            pilot, lambda: "is neither" in said(app), "/export's answer", detail=lambda: said(app)
        )
        assert "/export writes .html or .jsonl files; page.txt is neither." in said(app)
        app.run_slash("export", "whole.jsonl --tree")
        await wait_until(
            pilot, lambda: "whole.jsonl" in said(app), "/export's answer", detail=lambda: said(app)
        )
        everything = [raw["id"] for raw in manager.iter_raw_entries()]
    check_export(project / "mine.jsonl", source, ids)
    assert not (project / "page.txt").exists()
    whole = [json.loads(line) for line in (project / "whole.jsonl").read_text().splitlines()]
    assert whole[0]["type"] == "session" and [raw["id"] for raw in whole[1:]] == everything
    original = {raw["id"]: raw for raw in map(json.loads, source.read_text().splitlines()[1:])}
    assert all(raw == original[raw["id"]] for raw in whole[1:] if raw["id"] in original)
    assert any(raw["type"] == "label" for raw in whole)  # the tree keeps its labels and branches
    assert SessionManager.open(project / "whole.jsonl", read_only=True).get_label(ids[0]) == "start"
