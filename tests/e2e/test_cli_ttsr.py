"""TTSR through the installed console script: discovery, --list-rules, interrupt and -c resume."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_cli_agent import SCRIPT
from tests.support.model_server import ModelServer, Scripted
from tests.support.requires import requires

pytestmark = requires("pi-tui")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / ".agent/rules/no-print.md", "---\ncondition: print\\(\nscope: text\n---\nUse the logger.\n")
    write(root / ".omp/rules/no-print.md", "---\ncondition: console\\.log\n---\nShadowed.\n")
    write(root / ".omp/rules/british.md", "---\nalwaysApply: true\n---\nAnswer in British English.\n")
    write(
        root / ".cursor/rules/react.mdc", "---\ndescription: React style\nglobs: src/**/*.tsx\n---\nHooks.\n"
    )
    write(root / ".github/instructions/py.instructions.md", '---\napplyTo: "**/*.py"\n---\nUse pathlib.\n')
    write(root / ".agent/rules/broken.md", '---\ncondition: "(unclosed"\n---\nBroken.\n')
    return root


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=os.environ.copy()
    )


def test_list_rules_shows_source_bucket_and_drop_reason(agent_dir: Path, repo: Path) -> None:
    result = run("--list-rules", cwd=repo)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line and not line.startswith(" ")]
    lines = {line.split()[0]: line for line in rows if "shadowed by" not in line}
    assert "ttsr" in lines["no-print"] and ".agent/rules/no-print.md" in lines["no-print"]
    assert "always-apply" in lines["british"] and "rulebook" in lines["react"]
    assert "dropped" in lines["py"] and "dropped" in lines["broken"]
    assert (
        "invalid condition" in result.stdout and "no condition, alwaysApply or description" in result.stdout
    )
    assert "shadowed by .agent/rules" in result.stdout
    assert "python-bare-except" in lines and "builtin" in lines["python-bare-except"]


def test_rule_interrupts_through_the_cli_and_resume_keeps_it_quiet(agent_dir: Path, repo: Path) -> None:
    replies = [
        Scripted(text="Debug with print(x) then more words follow here", event_delay=0.03),
        Scripted(text="Use logger.debug(x)."),
        Scripted(text="Fine: print(y)"),
    ]
    with ModelServer(*replies) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        result = run("--provider", "test", "--model", "m", "-p", "how to debug?", cwd=repo)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "Use logger.debug(x).\n"
        system = server.requests[0].body["messages"][0]["content"]
        assert "Answer in British English." in system and "React style" in system  # always-apply, rulebook
        assert "system-interrupt" in json.dumps(server.requests[1].body)
        resumed = run("-c", "-p", "and again?", cwd=repo)
        assert resumed.returncode == 0 and resumed.stdout == "Fine: print(y)\n"
        assert len(server.requests) == 3
