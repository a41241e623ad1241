"""What a user audit of MCP found, through the installed script with a home, an agent folder and
no pi folder of the test's own: a failing ``!command`` value said without what it printed, the
untrusted-project hint naming what works (``pi-tui mcp list -a``, ``pi-tui mcp login -a``), an
error line keeping its words (``environment`` is not a credential), ``mcp add`` keeping a BOM and
writing a compact file with two spaces, and every line of print mode's start notice prefixed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli_agent import configure, pi_tui
from tests.e2e.test_mcp_list_command import home, mcp, project, write_config
from tests.support.model_server import ModelServer

__all__ = ["home", "project"]  # fixtures shared with the list command's tests

BOM = "\ufeff"


def test_a_failing_command_value_names_server_key_and_exit_code_only(
    agent_dir: Path, home: Path, project: Path
) -> None:
    write_config(
        agent_dir / "mcp.json",
        {"varsfail": {"command": "true", "env": {"PE": "!echo 'tok-5e3a9c1d' >&2; echo oops >&2; exit 3"}}},
    )
    listed = mcp("list", cwd=project)
    assert listed.returncode == 1
    said = 'MCP server "varsfail" env "PE": the command failed with exit code 3 (its output is not shown)'
    assert any(line.endswith(said) for line in listed.stdout.splitlines()), listed.stdout
    for leaked in ("oops", "tok-5e3a9c1d", "echo"):  # neither its stderr nor the command (the value)
        assert leaked not in listed.stdout + listed.stderr


def test_an_unset_variable_in_a_header_is_said_in_plain_words(
    agent_dir: Path, home: Path, project: Path
) -> None:
    added = mcp(
        "add",
        "evtok",
        "--url",
        "http://127.0.0.1:18765/mcp",
        "--bearer-token-env-var",
        "NOPE_TOKEN",
        cwd=project,
    )
    assert added.returncode == 0, added.stderr
    listed = mcp("list", cwd=project)
    assert listed.returncode == 1
    said = 'MCP server "evtok" header "Authorization": environment variable NOPE_TOKEN not set'
    assert any(line.endswith(said) for line in listed.stdout.splitlines()), listed.stdout
    assert "[redacted]" not in listed.stdout


def test_list_and_login_read_an_untrusted_project_with_a_and_the_hint_says_so(
    agent_dir: Path, home: Path, project: Path
) -> None:
    write_config(project / ".agent" / "mcp.json", {"local": {"command": "true"}})
    skipped = mcp("list", cwd=project)
    assert skipped.returncode == 0, skipped.stderr
    assert "local:" not in skipped.stdout
    assert skipped.stdout.splitlines()[-1] == (
        f"{project / '.agent' / 'mcp.json'} ignored: this folder is not trusted (start pi-tui here "
        "and answer its trust question, or run `pi-tui mcp list -a` to read them once)"
    )

    approved = mcp("list", "-a", "--json", cwd=project)
    report = json.loads(approved.stdout)
    assert [(s["name"], s["scope"]) for s in report["servers"]] == [("local", "project")]
    assert report["notes"] == []
    assert approved.returncode == 1  # `true` never speaks MCP: read, started, failed
    assert not (agent_dir / "trust.json").exists()  # -a is for this run only: nothing saved
    assert "local:" not in mcp("list", cwd=project).stdout

    missing = mcp("login", "local", cwd=project)
    assert missing.returncode == 2
    assert "run `pi-tui mcp login -a` to read them once" in missing.stderr
    found = mcp("login", "local", "--approve", cwd=project)
    assert found.returncode == 2
    assert 'MCP server "local" does not sign in with OAuth' in found.stderr
    assert "no MCP server named" not in found.stderr
    assert 'MCP server "local" does not sign in' in mcp("logout", "local", "-a", cwd=project).stderr


def test_add_keeps_a_bom_and_writes_a_one_line_file_with_two_spaces(
    agent_dir: Path, home: Path, project: Path
) -> None:
    path = agent_dir / "mcp.json"
    path.write_text(BOM + '{"mcpServers": {"a": {"command": "x", "args": ["-y"]}}}', encoding="utf-8")
    added = mcp("add", "b", "--", "npx", "b-server", cwd=project)
    assert added.returncode == 0, added.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith(BOM)
    assert json.loads(text.removeprefix(BOM)) == {
        "mcpServers": {"a": {"command": "x", "args": ["-y"]}, "b": {"command": "npx", "args": ["b-server"]}}
    }
    assert text.removeprefix(BOM) == json.dumps(json.loads(text.removeprefix(BOM)), indent=2) + "\n"


@pytest.fixture
def model(agent_dir: Path) -> Iterator[ModelServer]:
    with ModelServer() as server:
        configure(agent_dir, server)
        yield server


def test_print_mode_prefixes_every_line_of_the_start_notice(
    agent_dir: Path, home: Path, project: Path, model: ModelServer
) -> None:
    write_config(agent_dir / "mcp.json", {"bad1": {"command": 5}, "bad2": {"type": "sse", "url": "http://x"}})
    done = pi_tui("--provider", "test", "--model", "m", "--no-session", "-p", "hi", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hi\n"
    lines = done.stderr.splitlines()
    assert any("'bad1'" in line for line in lines) and any("'bad2'" in line for line in lines)
    assert all(line.startswith("pi-tui: ") for line in lines), lines
