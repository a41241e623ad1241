"""``pi-tui mcp add|remove`` through the installed script, on real files: what each option
writes (pi's ``mcpServers`` shape, in pi-tui's own files only), replacing and removing without
touching the rest of the file, one line and exit 2 for every mistake, and the real pi 1.5.2
reading what ``add`` wrote (``pi mcp list --json`` lists the entries and reports no error)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import SCRIPT


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def pi_folder(tmp_path: Path) -> Path:
    """pi's agent folder as pi-tui sees it: never written by ``pi-tui mcp``."""
    folder = tmp_path / "pi-agent"
    folder.mkdir(exist_ok=True)
    return folder


def mcp(*args: str, cwd: Path, home: Path, pi_folder: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update({"HOME": str(home), "PI_TUI_PI_AGENT_DIR": str(pi_folder)})
    return subprocess.run(
        [SCRIPT, "mcp", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def servers(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["mcpServers"]


def test_add_writes_pi_entries_to_the_user_file(
    agent_dir: Path, work: Path, home: Path, pi_folder: Path
) -> None:
    run = {"cwd": work, "home": home, "pi_folder": pi_folder}
    stdio = mcp(
        "add", "fs", "--env", "ROOT=${HOME}/data", "--env", "MODE=a=b", "--cwd", "~/w",
        "--exposure", "direct", "--description", "Files of the project",
        "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "--verbose", ".",
        **run,
    )  # fmt: skip
    assert stdio.returncode == 0, stdio.stderr
    path = agent_dir / "mcp.json"
    assert stdio.stdout.splitlines() == [
        f'Added user MCP server "fs" in {path}; check it with: pi-tui mcp list'
    ]
    assert stdio.stderr == ""
    http = mcp(
        "add", "docs", "--url", "https://docs.example/mcp", "--header", "X-Team=core",
        "--bearer-token-env-var", "DOCS_TOKEN", **run,
    )  # fmt: skip
    oauth = mcp(
        "add", "sentry", "--url", "https://mcp.sentry.dev/mcp", "--oauth-client-id", "cid",
        "--oauth-client-secret", "!pass sentry", "--oauth-callback-port", "8765",
        "--oauth-client-name", "Claude Code", "--oauth-client-registration", "dcr", "--exposure", "codemode",
        **run,
    )  # fmt: skip
    assert (http.returncode, oauth.returncode) == (0, 0), (http.stderr, oauth.stderr)
    assert servers(path) == {
        "fs": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "--verbose", "."],
            "env": {"ROOT": "${HOME}/data", "MODE": "a=b"},
            "cwd": "~/w",
            "exposure": "direct",
            "description": "Files of the project",
        },
        "docs": {
            "url": "https://docs.example/mcp",
            "headers": {"X-Team": "core", "Authorization": "Bearer ${DOCS_TOKEN}"},
        },
        "sentry": {
            "url": "https://mcp.sentry.dev/mcp",
            "oauth": {
                "clientId": "cid",
                "clientSecret": "!pass sentry",
                "callbackPort": 8765,
                "clientName": "Claude Code",
                "clientRegistration": "dcr",
            },
            "exposure": "codemode",
        },
    }
    assert path.read_text().startswith('{\n  "mcpServers": {\n    "fs": {\n      "command": "npx",')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(pi_folder.iterdir()) == []  # pi's folder is pi's


def test_add_replaces_in_place_and_remove_keeps_the_rest(
    agent_dir: Path, work: Path, home: Path, pi_folder: Path
) -> None:
    run = {"cwd": work, "home": home, "pi_folder": pi_folder}
    path = agent_dir / "mcp.json"
    path.write_text(
        json.dumps(
            {"note": "mine", "mcpServers": {"a": {"command": "old"}, "b": {"url": "https://b/mcp"}}}, indent=4
        )
    )
    path.chmod(0o644)
    again = mcp("add", "a", "--", "new", "arg", **run)
    assert again.returncode == 0 and again.stdout.startswith('Replaced user MCP server "a"')
    assert json.loads(path.read_text()) == {
        "note": "mine",
        "mcpServers": {"a": {"command": "new", "args": ["arg"]}, "b": {"url": "https://b/mcp"}},
    }
    assert '\n    "note"' in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o644
    gone = mcp("remove", "a", **run)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.splitlines() == [
        f'Removed user MCP server "a" from {path} (stored OAuth credentials are kept)'
    ]
    assert json.loads(path.read_text()) == {"note": "mine", "mcpServers": {"b": {"url": "https://b/mcp"}}}


def test_local_writes_the_project_file_and_remove_names_the_other_file(
    agent_dir: Path, work: Path, home: Path, pi_folder: Path
) -> None:
    run = {"cwd": work, "home": home, "pi_folder": pi_folder}
    local = mcp("add", "-l", "tools", "--env", "API_KEY=${TOOLS_KEY}", "--", "uvx", "tools-mcp", **run)
    project_file = work / ".agent" / "mcp.json"
    assert local.returncode == 0, local.stderr
    assert local.stdout.splitlines() == [
        f'Added project MCP server "tools" in {project_file} (read once this folder is trusted); '
        "check it with: pi-tui mcp list"
    ]
    assert servers(project_file) == {
        "tools": {"command": "uvx", "args": ["tools-mcp"], "env": {"API_KEY": "${TOOLS_KEY}"}}
    }
    assert not (agent_dir / "mcp.json").exists()
    wrong_file = mcp("remove", "tools", **run)
    assert wrong_file.returncode == 2
    assert wrong_file.stderr.splitlines() == [
        f'pi-tui: mcp remove: no user MCP server "tools" in {agent_dir / "mcp.json"}; '
        f"it is in this project's file (add -l): {project_file}"
    ]
    (pi_folder / "mcp.json").write_text('{"mcpServers": {"pis": {"command": "x"}}}')
    theirs = mcp("remove", "pis", **run)
    assert theirs.returncode == 2 and "which pi-tui reads but does not change" in theirs.stderr
    assert servers(pi_folder / "mcp.json") == {"pis": {"command": "x"}}
    assert mcp("remove", "-l", "tools", **run).returncode == 0
    assert servers(project_file) == {}


MISTAKES: list[tuple[list[str], str]] = [
    (["add", "x"], "give either a command after -- (stdio) or --url URL"),
    (["add", "x", "--url", "https://h/mcp", "--", "cmd"], "give either a command"),
    (["add", "x", "--url", "https://h/mcp", "--env", "A=1"], "--env only applies to stdio servers"),
    (["add", "x", "--url", "https://h/mcp", "--cwd", "d"], "--cwd only applies to stdio servers"),
    (["add", "x", "--header", "A=1", "--", "cmd"], "--header only applies to HTTP servers"),
    (["add", "x", "--oauth-client-id", "c", "--", "cmd"], "--oauth-client-id only applies to HTTP servers"),
    (["add", "bad/name", "--", "cmd"], 'server "bad/name": invalid server name'),
    (["add", "red\x1b[31m\nname", "--", "cmd"], 'server "red\u241b[31m\u240aname": invalid server name'),
    (["add", "x", "--exposure", "visible", "--", "cmd"], "argument --exposure: invalid choice: 'visible'"),
    (["add", "x", "--env", "NOEQUALS", "--", "cmd"], '--env expects KEY=VALUE, got "NOEQUALS"'),
    (["add", "x", "--env", "=v", "--", "cmd"], '--env expects KEY=VALUE, got "=v"'),
    (["add", "x", "--url", "https://h", "--header", "H"], '--header expects KEY=VALUE, got "H"'),
    (
        ["add", "x", "--url", "https://h", "--oauth-callback-port", "80a"],
        "--oauth-callback-port needs a port",
    ),
    (["add", "x", "--url", "https://h", "--oauth-client-registration", "x"], "invalid choice: 'x'"),
    (["add", "x", "--url", "https://h", "--bearer-token-env-var", "a b"], "needs a variable name"),
    (["add", "x", "--url", "ftp://h/mcp"], "url must be an http or https URL"),
    (
        ["add", "x", "--url", "https://h", "--oauth-client-registration", "cimd", "--oauth-client-name", "n"],
        '"cimd" cannot be combined',
    ),
    (["add", "x", "cmd", "-y"], "unrecognized arguments: -y (a stdio server's command goes after --)"),
    (["remove"], "the following arguments are required: server"),
    (["remove", "nothing-here"], 'no user MCP server "nothing-here"'),
    (["frobnicate"], 'mcp: unknown command "frobnicate"'),
]


@pytest.mark.parametrize(("args", "expected"), MISTAKES, ids=[" ".join(case[0]) for case in MISTAKES])
def test_each_mistake_is_one_line_and_exit_2_and_writes_nothing(
    agent_dir: Path,
    work: Path,
    home: Path,
    pi_folder: Path,
    args: list[str],
    expected: str,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if args == MISTAKES[0][0]:  # one through the installed script
        done = mcp(*args, cwd=work, home=home, pi_folder=pi_folder)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:  # the rest through the same entry point in this process (a process each is ~1 s in CI)
        from pi_tui.cli import main

        monkeypatch.chdir(work)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("PI_TUI_PI_AGENT_DIR", str(pi_folder))
        capfd.readouterr()
        code = main(["mcp", *args])
        out, err = capfd.readouterr()
    lines = err.splitlines()
    assert code == 2, (out, err)
    assert len(lines) == 1 and lines[0].startswith("pi-tui: mcp") and expected in lines[0], lines
    assert out == ""
    assert not (agent_dir / "mcp.json").exists() and not (work / ".agent").exists()


def test_a_broken_file_is_left_as_it_is(agent_dir: Path, work: Path, home: Path, pi_folder: Path) -> None:
    path = agent_dir / "mcp.json"
    broken = '{"mcpServers": {"a": {"command": "x"},}}\n'
    path.write_text(broken)
    for args in (["add", "b", "--", "y"], ["remove", "a"]):
        done = mcp(*args, cwd=work, home=home, pi_folder=pi_folder)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            f"pi-tui: mcp {args[0]}: {path}: invalid JSON at line 1 column 39 "
            "(Expecting property name enclosed in double quotes); fix the file first, it was not changed"
        ]
    assert path.read_text() == broken


def test_help_lists_the_commands(work: Path, home: Path, pi_folder: Path) -> None:
    done = mcp(cwd=work, home=home, pi_folder=pi_folder)
    assert done.returncode == 0 and "pi-tui mcp add|remove" in done.stdout
    add_help = mcp("add", "--help", cwd=work, home=home, pi_folder=pi_folder)
    assert add_help.returncode == 0 and "--bearer-token-env-var" in add_help.stdout


@pytest.mark.pi_interop
def test_pi_reads_the_entries_pi_tui_mcp_add_wrote(
    agent_dir: Path, work: Path, home: Path, pi_folder: Path
) -> None:
    from tests.support.real_pi import run_pi

    run = {"cwd": work, "home": home, "pi_folder": pi_folder}
    added = [
        mcp("add", "quick", "--env", "A=${HOME}", "--cwd", ".", "--exposure", "direct", "--description", "d",
            "--", "true", "--flag", **run),
        mcp("add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-A=b",
            "--bearer-token-env-var", "WEB_TOKEN", "--exposure", "hidden", **run),
        mcp("add", "signin", "--url", "http://127.0.0.1:9/mcp", "--oauth-client-id", "cid",
            "--oauth-client-secret", "${SEC}", "--oauth-callback-port", "8765", "--oauth-client-name", "n",
            "--oauth-client-registration", "dcr", "--exposure", "codemode", **run),
    ]  # fmt: skip
    assert [done.returncode for done in added] == [0, 0, 0], [done.stderr for done in added]
    # a hand-written entry pi refuses: proof that pi validates what it reads
    path = agent_dir / "mcp.json"
    document = json.loads(path.read_text())
    document["mcpServers"]["broken"] = {"command": 5}
    path.write_text(json.dumps(document, indent=2))

    done = run_pi(
        ["mcp", "list", "--json"],
        agent_dir=agent_dir,
        cwd=work,
        env={"HOME": str(home), "WEB_TOKEN": "t", "SEC": "s"},
        pi="1.5.2",
    )
    report = json.loads(done.stdout)
    listed = {server["name"]: server for server in report["servers"]}
    assert set(listed) == {"quick", "web", "signin"}, done.stdout
    assert len(report["errors"]) == 1 and '"broken"' in report["errors"][0], report["errors"]
    assert listed["quick"]["transport"] == "true --flag" and listed["quick"]["exposure"] == "direct"
    assert listed["web"]["transport"] == "http://127.0.0.1:9/mcp" and listed["web"]["exposure"] == "hidden"
    assert listed["signin"]["exposure"] == "codemode"
    assert all(server["source"] == str(path) and server["enabled"] for server in listed.values())
