"""``pi-tui --session FILE -p`` on every odd file of tests/data/odd-sessions (issue 11).

Before issue 11 each of these made the installed CLI exit 70 with a crash log. Now each must
exit 0, send a request that holds the file's last user text and the new prompt, append the new
turn after the file's leaf, say each problem on stderr as ``file:line: ...``, and leave every
line it read byte for byte as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui import jsonio
from pi_tui.session import SessionManager
from tests.e2e.test_cli_agent import configure, pi_tui
from tests.support.in_process import run_main
from tests.support.model_server import ModelServer, text_reply

ODD = Path(__file__).resolve().parents[1] / "data" / "odd-sessions"
FILES = sorted(ODD.glob("*.jsonl"))
THROUGH_SCRIPT = {FILES[0], *(path for path in FILES if "parent-is-self" in path.name)}
"""Files continued by the installed script (a loop on a self-parent is bounded by its timeout);
the others through its entry point in this process (tests/support/in_process.py), where a crash
is the same exit 70 and the same checks apply, without a start-up of 1-3 s each in CI."""


def copy_for(project: Path, source: Path, folder: Path) -> Path:
    """The file with its header's cwd pointing at ``project`` (the title slot and BOM kept)."""
    data = source.read_bytes()
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    lines = data[len(bom) :].split(b"\n")
    for index, line in enumerate(lines):
        if b'"type":"session"' in line.replace(b" ", b""):
            header = jsonio.loads(line)
            header["cwd"] = str(project)
            lines[index] = jsonio.dumps(header)
            break
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    target.write_bytes(bom + b"\n".join(lines))
    return target


@pytest.mark.parametrize("source", FILES, ids=[path.stem for path in FILES])
def test_every_odd_file_continues_in_print_mode(source: Path, tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    path = copy_for(project, source, tmp_path / "sessions")
    before = path.read_bytes()
    with ModelServer(text_reply("carried on")) as server:
        configure(agent_dir, server)
        args = ("--provider", "test", "--model", "m", "--session", str(path), "-p", "next")
        done = pi_tui(*args, cwd=project) if source in THROUGH_SCRIPT else run_main(args, cwd=project)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "carried on"
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
        for line in done.stderr.splitlines():
            if str(path) in line:
                assert line.startswith(f"{path}:"), line  # every problem names file and line
        messages = server.requests[-1].body["messages"]
    assert messages[-1]["role"] == "user" and json.dumps(messages[-1]["content"]).count("next") == 1
    after = path.read_bytes()
    assert after.startswith(before.rstrip(b"\n"))  # nothing read was rewritten
    reopened = SessionManager.open(path, read_only=True)
    leaf = reopened.get_raw_entry(reopened.get_leaf_id() or "")
    assert leaf is not None and leaf["message"]["role"] == "assistant"
    texts = [
        json.dumps(raw.get("message", {}).get("content"))
        for raw in reopened.iter_raw_entries()
        if raw.get("type") == "message"
    ]
    assert any("carried on" in text for text in texts)
