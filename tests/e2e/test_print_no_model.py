"""Print, json and rpc modes with nothing configured, through the installed ``pi-tui``.

pi 1.5.2 with no provider, no key and no auth.json answers ``-p hi`` (and ``--mode json``) with
"No API key found for the selected model" on stderr and exit 1, and never pretends to answer.
pi-tui used to print the offline demo's scripted reply and exit 0, so a CI script "passed".
Now a script gets the demo only by naming it (``--model offline/demo``); otherwise one line on
stderr and exit 2 (a mistake the user fixes; pi's 1), nothing on stdout. The interactive
mode's fallback to the demo is the tmux tests' (tests/e2e/test_typing_ahead.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.requires import requires

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
pytestmark = requires("pi-tui")


@pytest.fixture
def bare(tmp_path: Path, agent_dir: Path) -> dict[str, str]:
    """An environment with no key anywhere: no *_API_KEY, an empty agent folder, a fresh HOME."""
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update(HOME=str(home), PI_TUI_OFFLINE_DELAY="0")
    assert not any(agent_dir.iterdir())
    return env


def run(env: dict[str, str], cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a mode with nothing to talk to ends with (exit 2, nothing answered)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert "No API key found" in line and "--model offline/demo" in line
    assert "offline demo model (`offline/demo`)" not in result.stdout  # the demo's script
    return line


@pytest.mark.parametrize(
    "args",
    [("-p", "hi"), ("--mode", "json", "hi"), ("--mode", "rpc")],
    ids=["print", "json", "rpc"],
)
def test_a_script_with_nothing_configured_is_refused(
    bare: dict[str, str], tmp_path: Path, args: tuple[str, ...]
) -> None:
    command = json.dumps({"type": "prompt", "message": "hi", "id": "1"}) + "\n"
    result = run(bare, tmp_path, *args, stdin=command)
    refused(result)
    assert result.stdout == ""


def test_piped_text_with_nothing_configured_is_refused(bare: dict[str, str], tmp_path: Path) -> None:
    refused(run(bare, tmp_path, stdin="summarise this\n"))


def test_the_demo_answers_a_script_that_names_it(
    bare: dict[str, str], tmp_path: Path, agent_dir: Path
) -> None:
    result = run(bare, tmp_path, "--model", "offline/demo", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "offline demo" in result.stdout
    # Continuing that session in a script without naming the demo again: refused, not the demo.
    again = run(bare, tmp_path, "-c", "-p", "and again")
    refused(again)
    named = run(bare, tmp_path, "-c", "--model", "offline/demo", "-p", "and again")
    assert named.returncode == 0 and "and again" in named.stdout


@pytest.mark.pi_interop
def test_pi_refuses_the_same_script(bare: dict[str, str], tmp_path: Path) -> None:
    """The reference: pi 1.5.2 in the same bare folder answers nothing and fails with "No API
    key found" (exit 1; pi-tui's exit 2 is its code for a mistake the user fixes)."""
    from tests.support.real_pi import run_pi

    pi_agent = tmp_path / "pi-agent-bare"
    pi_agent.mkdir()
    result = run_pi(["-p", "hi"], agent_dir=pi_agent, cwd=tmp_path, env={"HOME": bare["HOME"]}, pi="1.5.2")
    assert result.returncode == 1 and result.stdout == ""
    assert "No API key found" in result.stderr
