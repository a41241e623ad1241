"""``pi-tui mcp list|login|logout`` through the installed script, against real servers: the
FastMCP fault server over stdio (tests/support/mcp_fault_server.py) and the OAuth-protected
loopback server (tests/support/oauth_server.py), with a "browser" that follows the authorization
URL to pi-tui's loopback callback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_agent import SCRIPT
from tests.support.oauth_server import OAuthMcpServer, running_oauth_server
from tests.support.waiting import poll_until

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own and no pi folder (never the real ~/.pi)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("PI_TUI_PI_AGENT_DIR", "")
    monkeypatch.setenv("PI_TUI_LOG_DIR", str(tmp_path / "logs"))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def fault_server(marker: str | None = None, *args: str, **fields: Any) -> dict[str, Any]:
    """An mcp.json entry starting the fault server; ``marker`` is an ``-X`` option of its Python,
    so the process can be found by its command line (Python ignores unknown -X options)."""
    words = ["-X", f"pitui_marker={marker}"] if marker else []
    return {
        "command": sys.executable,
        "args": [*words, "-m", "tests.support.mcp_fault_server", *args],
        "cwd": str(REPO),
        **fields,
    }


def write_config(path: Path, servers: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def mcp(*words: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, "mcp", *words],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=os.environ.copy(),
    )


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (zombies count as gone)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_list_connects_every_server_and_exits_1_for_a_failed_one(
    agent_dir: Path, home: Path, project: Path
) -> None:
    marker = uuid.uuid4().hex
    crash = "import sys; sys.stderr.write('boom \\x1b[31mred\\x1b]0;title\\x07\\n'); sys.exit(3)"
    write_config(
        agent_dir / "mcp.json",
        {
            "fault": fault_server(marker, toolExposure={"echo": "direct", "crash": "hidden"}),
            "broken": {"command": sys.executable, "args": ["-c", crash]},
            "off": {"command": "no-such-program", "enabled": False},
            "remote": {
                "url": "http://127.0.0.1:9/mcp?api_key=querysecret123&page=2",
                "headers": {"Authorization": "Bearer headersecret456"},
            },
        },
    )
    done = mcp("list", cwd=project)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "fault: connected, 11 tools (deferred, user " in out
    assert "  tools: echo [direct], crash [hidden], huge," in out
    assert "  offers resources" in out
    assert "broken: failed (deferred, user " in out
    assert "boom " in out and "\x1b" not in out  # the server's stderr tail, shown as data
    assert "off: disabled" in out and "remote: failed" in out
    assert "querysecret123" not in out and "headersecret456" not in out and "page=2" in out
    assert done.stderr == ""
    # every server was stopped before the command returned
    poll_until(lambda: not processes_with(marker), "the fault server to be gone", timeout=15)

    as_json = mcp("list", "--json", cwd=project)
    assert as_json.returncode == 1
    document = json.loads(as_json.stdout)
    servers = {server["name"]: server for server in document["servers"]}
    assert servers["fault"]["state"] == "connected" and servers["fault"]["type"] == "stdio"
    assert servers["fault"]["toolExposure"] == {"echo": "direct", "crash": "hidden"}
    assert "echo" in servers["fault"]["tools"] and servers["fault"]["resources"] is True
    assert servers["broken"]["state"] == "failed" and "boom" in servers["broken"]["stderr"]
    assert servers["off"] == {**servers["off"], "enabled": False, "state": "disabled", "tools": []}
    assert document["errors"] == []
    assert "headersecret456" not in as_json.stdout and "querysecret123" not in as_json.stdout


def test_list_exits_0_when_all_connect_and_1_for_an_invalid_entry(
    agent_dir: Path, home: Path, project: Path
) -> None:
    write_config(agent_dir / "mcp.json", {"fault": fault_server()})
    good = mcp("list", cwd=project)
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.startswith("fault: connected, 11 tools")

    write_config(
        agent_dir / "mcp.json", {"fault": fault_server(), "old": {"type": "sse", "url": "http://x/sse"}}
    )
    bad = mcp("list", cwd=project)
    assert bad.returncode == 1
    first = bad.stdout.splitlines()[0]
    assert first.startswith("config error: ") and "'old'" in first and "SSE" in first
    assert "fault: connected" in bad.stdout
    assert json.loads(mcp("list", "--json", cwd=project).stdout)["errors"] == [
        first.removeprefix("config error: ")
    ]

    (agent_dir / "mcp.json").unlink()
    none = mcp("list", cwd=project)
    assert none.returncode == 0 and none.stdout.startswith("No MCP servers configured.")
    wrong = mcp("list", "extra", cwd=project)
    assert (
        wrong.returncode == 2
        and wrong.stderr.startswith("pi-tui: mcp list: ")
        and "Traceback" not in wrong.stderr
    )


def test_list_reads_a_project_file_only_in_a_trusted_folder(
    agent_dir: Path, home: Path, project: Path
) -> None:
    ran = project / "SERVER-RAN"
    starter = f"open({str(ran)!r}, 'w').close()"
    write_config(
        project / ".agent" / "mcp.json", {"local": {"command": sys.executable, "args": ["-c", starter]}}
    )
    untrusted = mcp("list", cwd=project)
    assert untrusted.returncode == 0, untrusted.stdout
    assert "local" not in untrusted.stdout.replace(".agent/mcp.json", "")
    assert "ignored: this folder is not trusted" in untrusted.stdout
    assert not ran.exists()

    (agent_dir / "trust.json").write_text(json.dumps({"folders": {str(project.resolve()): "trusted"}}))
    trusted = mcp("list", cwd=project)
    assert trusted.returncode == 1  # the "server" exits at once: it never speaks MCP
    assert "local: failed (deferred, project " in trusted.stdout
    assert ran.exists()


# --- login / logout --------------------------------------------------------------------------


@pytest.fixture
def oauth_server() -> Iterator[OAuthMcpServer]:
    with running_oauth_server() as server:
        yield server


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$BROWSER``: a program that does what a browser does with the authorization URL (follow
    the redirects to pi-tui's loopback callback) and notes the URL it was given."""
    seen = tmp_path / "browser-urls"
    script = tmp_path / "browser.py"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, httpx\n"
        f"open({str(seen)!r}, 'a').write(sys.argv[1] + '\\n')\n"
        "httpx.get(sys.argv[1], follow_redirects=True, timeout=20)\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", f"{script} %s")
    return seen


def test_login_signs_in_through_the_browser_and_logout_deletes_the_tokens(
    agent_dir: Path, home: Path, project: Path, oauth_server: OAuthMcpServer, browser: Path
) -> None:
    write_config(agent_dir / "mcp.json", {"demo": {"url": oauth_server.mcp_url}})
    before = mcp("list", cwd=project)
    assert before.returncode == 1 and "demo: needs sign-in" in before.stdout
    assert "sign in with: pi-tui mcp login demo" in before.stdout

    login = mcp("login", "demo", "--timeout", "60", cwd=project)
    assert login.returncode == 0, login.stdout + login.stderr
    assert 'Sign in to MCP server "demo" in your browser:' in login.stdout
    opened = browser.read_text().split()
    assert len(opened) == 1 and opened[0] in login.stdout and opened[0].startswith(oauth_server.issuer)
    assert login.stdout.rstrip().endswith('Signed in to MCP server "demo" (1 tools).')
    store = agent_dir / "mcp-auth.json"
    assert store.stat().st_mode & 0o777 == 0o600

    after = mcp("list", cwd=project)
    assert after.returncode == 0 and "demo: connected, 1 tool " in after.stdout
    again = mcp("login", "demo", cwd=project)
    assert again.returncode == 0 and "Already signed in" in again.stdout

    logout = mcp("logout", "demo", cwd=project)
    assert logout.returncode == 0 and 'Signed out of MCP server "demo"' in logout.stdout
    assert mcp("list", cwd=project).returncode == 1  # needs sign-in again
    twice = mcp("logout", "demo", cwd=project)
    assert twice.returncode == 0 and "No stored credentials" in twice.stdout


def in_process(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path, *words: str
) -> tuple[int, str, str]:
    """``pi-tui WORDS`` through pi_tui.cli.main in this process: exit code, stdout, stderr."""
    from pi_tui.cli import main

    monkeypatch.chdir(cwd)
    capfd.readouterr()
    try:
        code = main(list(words))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capfd.readouterr()
    return code, out, err


def test_login_and_logout_mistakes_are_one_line_and_exit_2(
    agent_dir: Path,
    home: Path,
    project: Path,
    oauth_server: OAuthMcpServer,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_config(
        agent_dir / "mcp.json",
        {
            "demo": {"url": oauth_server.mcp_url},
            "keyed": {"url": oauth_server.mcp_url, "headers": {"Authorization": "Bearer x"}},
            "local": fault_server(),
        },
    )
    cases = {
        ("login", "nope"): 'no MCP server named "nope"',
        ("login", "keyed"): "does not sign in with OAuth",
        ("login", "local"): "does not sign in with OAuth",
        ("logout", "local"): "does not sign in with OAuth",
        ("login", "demo", "-l"): "not in this folder's .agent/mcp.json; omit -l",
        ("logout", "demo", "--local"): "not in this folder's .agent/mcp.json; omit -l",
        ("login", "demo", "--timeout", "0"): "--timeout must be a positive number",
        ("login",): "the following arguments are required: server",
    }
    # the installed script once, the rest through the same entry point in this process (a
    # process each cost ~2.5 s of a 2-core CI run for what is argument and config checking)
    done = mcp("login", "nope", cwd=project)
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and 'no MCP server named "nope"' in done.stderr
    for words, said in cases.items():
        code, out, err = in_process(capfd, monkeypatch, project, "mcp", *words)
        assert code == 2, (words, out, err)
        assert err.count("\n") == 1 and said in err, (words, err)
        assert out == ""
