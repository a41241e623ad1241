"""The HTML export lists each turn's changed files: a real ``pi-tui -p`` run against the loopback
model server writes, edits, renames and deletes files (one of them named like markup), then
``pi-tui --export`` writes the page, read from the session file alone (no git). The page's tree
data carries each turn's changes by the assistant message whose tools made them, and in
headless Chromium the turn shows "Files changed: ..." as text, the markup-named path included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.test_cli_agent import SCRIPT, configure, entries, pi_tui, session_files
from tests.support.browser import chromium, console_errors, open_page
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec

BASE = ("--provider", "test", "--model", "m")
HOSTILE = "<img src=x onerror=window.__pwned=1>.txt"


def run(project: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return pi_tui(*BASE, *words, cwd=project, timeout=120)


def page_tree(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="pi-tree">(.*?)</script>', html, re.S)
    assert found is not None
    tree: dict[str, Any] = json.loads(found.group(1))
    return tree


def files_line(changes: list[dict[str, str]]) -> str:
    parts = [
        f"{c['status']} {c['from']} -> {c['path']}" if "from" in c else f"{c['status']} {c['path']}"
        for c in changes
    ]
    return "Files changed: " + ", ".join(parts)


def test_export_lists_each_turns_changed_files(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "old.txt").write_text("to be renamed\n")
    (project / "gone.txt").write_text("to be deleted\n")
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(
            Scripted(
                tool_calls=[
                    ToolCallSpec("write", {"path": "app.py", "content": "print('one')\n"}),
                    ToolCallSpec("write", {"path": HOSTILE, "content": "x\n"}),
                ]
            ),
            Scripted(
                tool_calls=[
                    ToolCallSpec("edit", {"path": "app.py", "edits": [{"oldText": "one", "newText": "two"}]}),
                    ToolCallSpec("bash", {"command": "rm gone.txt; mv old.txt new.txt"}),
                ]
            ),
            Scripted(text="done"),
        )
        done = run(project, "-p", "go")
    assert done.returncode == 0, done.stderr
    (session,) = session_files(agent_dir)
    found = [
        e for e in entries(session) if e.get("type") == "custom" and e.get("customType") == "pi-tui.files"
    ]
    assert len(found) == 2
    first, second = (entry["data"] for entry in found)
    assert sorted(c["path"] for c in first["changes"]) == [HOSTILE, "app.py"]
    assert sorted((c["status"], c["path"], c.get("from")) for c in second["changes"]) == [
        ("D", "gone.txt", None),
        ("M", "app.py", None),
        ("R", "new.txt", "old.txt"),
    ]

    out = tmp_path / "page.html"
    # the export reads the session file alone: no store, no git on PATH
    env = {**os.environ, "PATH": str(Path(SCRIPT).parent)}
    exported = subprocess.run(
        [SCRIPT, "--export", str(session), str(out)], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert exported.returncode == 0, exported.stderr
    html = out.read_text()
    assert HOSTILE not in html and "<img" not in html  # the path travels as data, '<' escaped
    files = page_tree(html)["files"]
    assert files == {
        first["turn"]: {
            "changes": [
                [c["status"], c["path"], *([c["from"]] if "from" in c else [])] for c in first["changes"]
            ],
            "skipped": [],
        },
        second["turn"]: {
            "changes": [
                [c["status"], c["path"], *([c["from"]] if "from" in c else [])] for c in second["changes"]
            ],
            "skipped": [],
        },
    }

    with chromium() as browser:
        open_page(browser, out)
        shown = browser.execute_script(
            """return [...document.querySelectorAll('#conversation section')].map(section => ({
                 id: section.dataset.entryId,
                 files: [...section.querySelectorAll('.files-changed')].map(node => node.textContent)}))
               .filter(section => section.files.length)"""
        )
        assert shown == [
            {"id": first["turn"], "files": [files_line(first["changes"])]},
            {"id": second["turn"], "files": [files_line(second["changes"])]},
        ]
        assert "R old.txt -> new.txt" in shown[1]["files"][0]
        assert browser.execute_script("return window.__pwned === undefined")
        assert browser.execute_script("return document.querySelectorAll('img').length") == 0
        assert console_errors(browser) == []
