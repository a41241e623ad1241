"""Issue 27's "done when" for folders: a HOME holding only pi 1.5.2's ``~/.pi/agent`` (its
models.json and a session it wrote). The installed ``pi-tui`` lists that session and ``-c -p``
continues it with the user's model, in pi's file, saying which file it continues."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.config.paths import encode_cwd
from tests.support.model_server import ModelServer, Scripted

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
PI15 = Path(__file__).resolve().parents[1] / "data" / "pi15-sessions" / "01-print-continue"
SESSION_ID = "01a2182f-adb6-70ed-a012-96055e935ddf"


@pytest.fixture
def pi_user(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, project, session file): only ``~/.pi/agent`` in HOME, as a pi 1.5.2 user has it."""
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    folder = home / ".pi" / "agent" / "sessions" / encode_cwd(str(project))
    folder.mkdir(parents=True)
    session = folder / f"2026-11-26T14-08-27-576Z_{SESSION_ID}.jsonl"
    text = (PI15 / "session.jsonl").read_text(encoding="utf-8")
    session.write_text(text.replace("/home/user/project", str(project)), encoding="utf-8")
    return home, project, session


def run(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and key not in ("PI_CODING_AGENT_DIR", "PI_TUI_PI_AGENT_DIR")
    }
    env["HOME"] = str(home)
    env["PI_TUI_CACHE_DIR"] = str(home / ".cache" / "pi-tui")
    return subprocess.run(
        [SCRIPT, *args], cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_list_and_continue_a_pi_session_with_the_users_model(pi_user: tuple[Path, Path, Path]) -> None:
    home, project, session = pi_user
    with ModelServer(Scripted(text="continued")) as server:
        models = server.models_json(provider="loop", models=[{"id": "m", "name": "Loopback model"}])
        (home / ".pi" / "agent" / "models.json").write_text(json.dumps(models))

        listed = run(home, project, "--list-sessions")
        assert listed.returncode == 0, listed.stderr
        assert f"{SESSION_ID[:8]}  pi" in listed.stdout and "4 msgs" in listed.stdout  # pi's, tagged
        assert "Hello, who are you?" in listed.stdout

        before = session.read_text().splitlines()
        done = run(home, project, "-c", "-p", "next")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "continued"
        assert f"Continuing {session} (pi's folder)" in done.stderr
        assert "offline" not in done.stderr

        request = server.requests[-1].body
        assert request["model"] == "m"  # the session's model, from pi's models.json
        texts = [
            m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in request["messages"]
        ]
        assert "Hello, who are you?" in texts and "echo: What is 2+2?" in texts and texts[-1] == "next"

    after = session.read_text().splitlines()
    assert after[: len(before)] == before  # appended, nothing rewritten
    added = [json.loads(line) for line in after[len(before) :]]
    assert [entry["message"]["role"] for entry in added] == ["user", "assistant"]
    assert added[0]["parentId"] == json.loads(before[-1])["id"]
    assert added[1]["message"]["provider"] == "loop"
    ours = home / ".agent" / "sessions"
    assert not ours.exists() or not any(ours.rglob("*.jsonl"))  # no second copy in our folder
    assert not (home / ".pi" / "agent" / "settings.json").exists()  # pi's folder: only the session grew
