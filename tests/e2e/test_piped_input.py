"""pi 1.x off a terminal, through the installed ``pi-tui``: text piped in goes before the first
message, and a redirected stream means print mode (no ``-p`` needed), as in
``git diff | pi-tui "review this" > review.md``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_cli_agent import SCRIPT, configure, session_files
from tests.support.model_server import ModelServer, RecordedRequest, Scripted

BASE = ("--provider", "test", "--model", "m")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "notes.txt").write_text("attached file body\n")
    return root


def piped(text: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args],
        input=text,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )


def user_text(request: RecordedRequest) -> str:
    content = [m for m in request.body["messages"] if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def test_piped_text_goes_before_the_message_without_dash_p(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="looks fine"))
        result = piped("--- a/x.py\n+++ b/x.py\n+print(@notes.txt)\n\n", *BASE, "review this", cwd=project)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "looks fine"
        # trimmed, a blank line before the message; an @word in piped text is no attachment
        assert user_text(server.requests[-1]) == "--- a/x.py\n+++ b/x.py\n+print(@notes.txt)\n\nreview this"
        assert len(session_files(agent_dir)) == 1


def test_piped_text_alone_is_the_prompt_and_attachments_still_work(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="one"), Scripted(text="two"))
        result = piped("what is 2+2?\n", *BASE, cwd=project)
        assert result.returncode == 0, result.stderr
        assert user_text(server.requests[-1]) == "what is 2+2?"
        result = piped("context from a pipe", *BASE, "-p", "@notes.txt", "summarise", cwd=project)
        assert result.returncode == 0, result.stderr
        sent = user_text(server.requests[-1])
        assert sent.startswith("context from a pipe\n\n") and "attached file body" in sent


def test_nothing_piped_and_no_message_is_one_line(agent_dir: Path, project: Path) -> None:
    result = piped("", *BASE, cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        'pi-tui: no message given: pi-tui -p "what to do" (or pipe the text in)'
    ]
