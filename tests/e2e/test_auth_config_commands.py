"""``pi-tui auth login|logout|check|print-api-key`` and ``pi-tui config`` through the installed
script, on real files: auth.json written in pi's shape with mode 0600 (and read by the real pi
1.5.2), the key asked without echo on a real terminal (a pty), where each key comes from, and
one line with exit 2 for each mistake."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import SCRIPT
from tests.support.in_process import Ran, run_main
from tests.support.model_server import ModelServer

KEY = "sk-test-4d1f9a"


@pytest.fixture
def env(agent_dir: Path, tmp_path: Path) -> dict[str, str]:
    """This process's environment without any provider key (the machine's must not count)."""
    return {name: value for name, value in os.environ.items() if not name.endswith("_API_KEY")}


def run(
    *args: str, env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def here(*args: str, env: dict[str, str], cwd: Path) -> Ran:
    """:func:`run` through the script's entry point in this process (tests/support/in_process.py):
    for the repeated runs of a command the installed script has run once already."""
    return run_main(args, env=env, cwd=cwd)


def one_line_error(result: subprocess.CompletedProcess[str] | Ran, *needles: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and all(needle in lines[0] for needle in needles), lines
    assert "Traceback" not in result.stderr


def read_auth(agent_dir: Path) -> dict[str, Any]:
    return json.loads((agent_dir / "auth.json").read_text())


# --- auth ----------------------------------------------------------------------------------------


def test_login_check_print_logout_round_trip(agent_dir: Path, tmp_path: Path, env: dict[str, str]) -> None:
    oauth = {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}
    (agent_dir / "auth.json").write_text(json.dumps({"github-copilot": oauth}))
    saved = run("auth", "login", "openai", "--api-key", KEY, env=env, cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert str(agent_dir / "auth.json") in saved.stdout and KEY not in saved.stdout
    assert read_auth(agent_dir) == {"github-copilot": oauth, "openai": {"type": "api_key", "key": KEY}}
    assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600

    check = run("auth", "check", "openai", env=env, cwd=tmp_path)
    assert (check.returncode, check.stdout) == (0, "ready\n")
    as_json = here("auth", "check", "--provider", "openai", "--json", env=env, cwd=tmp_path)
    record = json.loads(as_json.stdout)
    assert record["status"] == "ready" and record["provider"] == "openai" and "auth.json" in record["source"]
    assert KEY not in as_json.stdout
    printed = run("auth", "print-api-key", "openai", env=env, cwd=tmp_path)
    assert (printed.returncode, printed.stdout) == (0, f"{KEY}\n")

    removed = run("auth", "logout", "openai", env=env, cwd=tmp_path)
    assert removed.returncode == 0 and "Removed" in removed.stdout
    assert read_auth(agent_dir) == {"github-copilot": oauth}  # the rest is kept
    again = here("auth", "logout", "openai", env=env, cwd=tmp_path)
    assert again.returncode == 0 and "No saved credential" in again.stdout
    gone = here("auth", "check", "openai", env=env, cwd=tmp_path)
    assert (gone.returncode, gone.stdout) == (1, "not_ready\n") and "OPENAI_API_KEY" in gone.stderr
    nothing = here("auth", "print-api-key", "openai", env=env, cwd=tmp_path)
    assert nothing.returncode == 1 and nothing.stdout == "" and len(nothing.stderr.splitlines()) == 1


def test_check_lists_where_each_key_comes_from_without_showing_it(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    with ModelServer() as server:
        models = server.models_json(api_key="sk-from-models-json-77")
        models["providers"]["broken"] = {**models["providers"]["test"], "apiKey": "!exit 3"}
        (agent_dir / "models.json").write_text(json.dumps(models))
        run("auth", "login", "anthropic", "--api-key", KEY, env=env, cwd=tmp_path)
        listing = run("auth", "check", env={**env, "GROQ_API_KEY": "gsk-env-55"}, cwd=tmp_path)
        assert listing.returncode == 0, listing.stderr
        rows = {line.split()[0]: line for line in listing.stdout.splitlines()}
        assert "ready" in rows["anthropic"] and str(agent_dir / "auth.json") in rows["anthropic"]
        assert "ready" in rows["groq"] and "GROQ_API_KEY environment variable" in rows["groq"]
        assert "ready" in rows["test"] and "models.json" in rows["test"]
        assert "not_ready" in rows["openai"] and "pi-tui auth login openai" in rows["openai"]
        for secret in (KEY, "gsk-env-55", "sk-from-models-json-77"):
            assert secret not in listing.stdout + listing.stderr
        # A key whose !command fails is pi's "invalid" (exit 2), said in one line on stderr.
        invalid = run("auth", "check", "broken", env=env, cwd=tmp_path)
        assert (invalid.returncode, invalid.stdout) == (2, "invalid\n") and "exit 3" in invalid.stderr


def exit_status(pid: int, within: float) -> int:
    """The child's wait status once it ends; killed (and so failing the test) if it is still
    running after ``within`` seconds, e.g. a pi-tui that started its TUI instead."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def test_login_asks_for_the_key_without_echo_on_a_terminal(
    agent_dir: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    pid, master = pty.fork()
    if pid == 0:  # the child: pi-tui on the pty as its controlling terminal
        os.chdir(tmp_path)
        os.execve(SCRIPT, [SCRIPT, "auth", "login", "mistral"], env)
    seen = b""
    typed = False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if not typed and b"API key for mistral" in seen:
            os.write(master, b"sk-typed-31337\r")
            typed = True
    status = exit_status(pid, within=10)
    os.close(master)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert typed and b"sk-typed-31337" not in seen  # never echoed
    assert b"Saved an API key for mistral" in seen
    assert read_auth(agent_dir)["mistral"] == {"type": "api_key", "key": "sk-typed-31337"}


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["auth", "login", "mistral"], ("needs a terminal", "--api-key KEY")),
        (["auth", "login", "no-such-provider", "--api-key", "x"], ('Unknown provider "no-such-provider"',)),
        (["auth", "login", "anthropic", "--no-browser", "--api-key", "x"], ("not allowed with --api-key",)),
        (["auth", "print-bearer-token", "anthropic", "--min-expiry", "soon"], ("--min-expiry must use",)),
        (["auth", "print-api-key"], ("needs a provider",)),
        (["auth"], ("needs a command",)),
        (["auth", "frob"], ("invalid choice",)),
        (["config", "--frob"], ("config: unrecognized arguments",)),
    ],
)
def test_mistakes_are_one_line(
    agent_dir: Path, tmp_path: Path, env: dict[str, str], args: list[str], needles: tuple[str, ...]
) -> None:
    first = args == ["auth", "login", "mistral"]  # one through the installed script
    one_line_error((run if first else here)(*args, env=env, cwd=tmp_path), *needles)
    assert not (agent_dir / "auth.json").exists()


@pytest.mark.pi_interop
def test_pi_reads_the_key_pi_tui_saved(agent_dir: Path, tmp_path: Path, env: dict[str, str]) -> None:
    from tests.support.real_pi import run_pi

    assert run("auth", "login", "openai", "--api-key", KEY, env=env, cwd=tmp_path).returncode == 0
    printed = run_pi(
        ["auth", "print-api-key", "--provider", "openai"], agent_dir=agent_dir, cwd=tmp_path, pi="1.5.2"
    )
    assert (printed.returncode, printed.stdout.strip()) == (0, KEY), printed.stderr
    assert run("auth", "logout", "openai", env=env, cwd=tmp_path).returncode == 0
    checked = run_pi(["auth", "check", "--provider", "openai"], agent_dir=agent_dir, cwd=tmp_path, pi="1.5.2")
    assert checked.stdout.strip() == "not_ready"


# --- config --------------------------------------------------------------------------------------


def test_config_says_where_each_file_is(agent_dir: Path, tmp_path: Path, env: dict[str, str]) -> None:
    (agent_dir / "settings.json").write_text("{}")
    (agent_dir / "auth.json").write_text("{}")
    (agent_dir / "auth.json").chmod(0o644)
    (agent_dir / "themes").mkdir()
    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "settings.json").write_text("{}")

    listed = run("config", "--json", env=env, cwd=project)
    assert listed.returncode == 0, listed.stderr
    places = {record["name"]: record for record in map(json.loads, listed.stdout.splitlines())}
    assert places["agent dir"] == {**places["agent dir"], "path": str(agent_dir), "state": "folder"}
    assert places["settings"]["state"] == "file" and places["settings"]["path"] == str(
        agent_dir / "settings.json"
    )
    assert places["models"]["state"] == "missing" and places["keybindings"]["state"] == "missing"
    assert places["themes"]["state"] == "folder"
    assert places["auth"]["state"] == "file" and "others can read it" in places["auth"]["note"]
    assert places["trust"]["path"] == str(agent_dir / "trust.json")
    assert places["sessions"]["path"].startswith(str(agent_dir / "sessions"))

    text = here("config", env=env, cwd=project)
    settings_line = next(line for line in text.stdout.splitlines() if line.startswith("settings "))
    assert settings_line.split() == ["settings", "file", str(agent_dir / "settings.json")]

    local = here("config", "-l", env=env, cwd=project)
    lines = {line.split()[0]: line for line in local.stdout.splitlines()}
    assert str(project / ".agent") in lines["project"] and "not trusted" in lines["project"]
    assert lines["settings"].split()[1:] == ["file", str(project / ".agent" / "settings.json")]
    assert lines["SYSTEM.md"].split()[1] == "missing"
