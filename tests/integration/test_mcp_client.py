"""pi-tui's MCP client end to end: the installed ``pi-tui -p`` with an mcp.json, a real MCP server
(tests/support/mcp_fault_server.py over stdio, FastMCP on the official SDK) and the loopback
model server, whose recorded requests show what the model was offered and sent back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec

REPO = Path(__file__).resolve().parents[2]
FAULT = [sys.executable, "-m", "tests.support.mcp_fault_server"]


def fault_entry(*extra: str, **fields: Any) -> dict[str, Any]:
    """An mcp.json entry running the fault server from this checkout."""
    return {"command": FAULT[0], "args": [*FAULT[1:], *extra], "cwd": str(REPO), **fields}


class Run:
    """A tmp agent folder and project, and ``pi-tui -p`` runs in them."""

    def __init__(self, tmp_path: Path, server: ModelServer) -> None:
        self.agent = tmp_path / "agent"
        self.project = tmp_path / "project"
        self.agent.mkdir(exist_ok=True)
        self.project.mkdir()
        self.server = server
        (self.agent / "models.json").write_text(json.dumps(server.models_json()))
        self.env = {
            **os.environ,
            "PI_CODING_AGENT_DIR": str(self.agent),
            "PI_TUI_PI_AGENT_DIR": "",
            "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
            "HOME": str(tmp_path / "home"),
        }

    def servers(self, servers: dict[str, Any], where: Path | None = None) -> None:
        path = where or self.agent / "mcp.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"mcpServers": servers}))

    def pi_tui(self, *args: str, prompt: str = "go", timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pi-tui", "-p", prompt, "--model", "test/m", *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def tool_names(self, index: int) -> list[str]:
        return [tool["function"]["name"] for tool in self.server.requests[index].body.get("tools", [])]

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool results the last request sent back to the model."""
        messages = self.server.requests[-1].body["messages"]
        return [message for message in messages if message["role"] == "tool"]

    def session_results(self) -> list[dict[str, Any]]:
        files = sorted((self.agent / "sessions").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        lines = [json.loads(line) for line in files[-1].read_text().splitlines()]
        return [
            line["message"]
            for line in lines
            if line.get("type") == "message" and line["message"]["role"] == "toolResult"
        ]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with ModelServer() as server:
        yield Run(tmp_path, server)


def call(name: str, **arguments: Any) -> Scripted:
    return Scripted(tool_calls=[ToolCallSpec(name, arguments)])


def test_direct_tools_are_declared_and_called(run: Run) -> None:
    run.servers({"fault": fault_entry(exposure="direct")})
    run.server.queue(call("mcp__fault__echo", message="hi"), Scripted(text="done"))
    done = run.pi_tui()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    declared = run.server.requests[0].body["tools"]
    echo = next(tool["function"] for tool in declared if tool["function"]["name"] == "mcp__fault__echo")
    assert echo["description"] == "Echo the message back."
    assert echo["parameters"]["properties"]["message"]["type"] == "string"
    assert "tool_search" not in run.tool_names(0)  # nothing is deferred
    assert "# MCP servers" not in run.server.requests[0].body["messages"][0]["content"]
    assert run.tool_results()[0]["content"] == "fault echo: hi"
    saved = run.session_results()[0]
    assert saved["toolName"] == "mcp__fault__echo" and saved["details"] == {"server": "fault", "tool": "echo"}


def test_deferred_tools_load_through_tool_search_and_stay_on_the_branch(run: Run) -> None:
    # no exposure: pi's default (codemode) reads as deferred
    run.servers({"fault": fault_entry(description="Faults on request, for tests")})
    run.server.queue(
        call("tool_search", query="echo the message"),
        call("mcp__fault__echo", message="found"),
        Scripted(text="done"),
        Scripted(text="again"),
    )
    assert run.pi_tui().returncode == 0
    first, after_search = run.tool_names(0), run.tool_names(1)
    assert "tool_search" in first and not any(name.startswith("mcp__") for name in first)
    system = run.server.requests[0].body["messages"][0]["content"]
    assert "# MCP servers" in system and "\n- fault: Faults on request" in system  # what to search for
    assert "mcp__fault__echo" in after_search
    assert run.session_results()[1]["content"][0]["text"] == "fault echo: found"
    # resumed: the branch's tool_search result still declares what it loaded
    resumed = run.pi_tui("-c", prompt="more")
    assert resumed.returncode == 0, resumed.stderr
    assert "mcp__fault__echo" in run.tool_names(3)


def test_a_server_that_takes_30_s_to_start_does_not_hold_a_print_turn(run: Run) -> None:
    run.servers(
        {
            "slow": fault_entry("--start-delay", "30", exposure="direct"),
            "fault": fault_entry(exposure="direct"),
        }
    )
    run.server.queue(Scripted(text="answered"))
    began = time.monotonic()
    process = subprocess.Popen(
        ["pi-tui", "-p", "go", "--model", "test/m"],
        cwd=run.project,
        env=run.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    answer = process.stdout.readline()
    answered = time.monotonic() - began
    assert process.wait(timeout=30) == 0
    exited = time.monotonic() - began
    assert answer.strip() == "answered"
    assert answered < 15, f"the answer came after {answered:.1f} s"
    assert exited - answered < 5, f"quitting took {exited - answered:.1f} s (the slow server is stopped)"
    names = run.tool_names(0)
    assert "mcp__fault__echo" in names and not any(name.startswith("mcp__slow__") for name in names)


def test_a_crash_mid_call_is_an_error_and_the_next_call_starts_the_server_again(run: Run) -> None:
    run.servers({"fault": fault_entry(exposure="direct")})
    run.server.queue(
        call("mcp__fault__crash"),
        call("mcp__fault__echo", message="back"),
        Scripted(text="done"),
    )
    assert run.pi_tui().returncode == 0
    crashed, after = run.session_results()
    assert crashed["isError"] is True
    assert "closed the connection" in crashed["content"][0]["text"]
    assert after["isError"] is False and after["content"][0]["text"] == "fault echo: back"


def test_progress_resets_the_timeout_and_silence_ends_the_call(run: Run) -> None:
    run.servers({"fault": fault_entry(exposure="direct", timeout=1)})
    run.server.queue(
        call("mcp__fault__progress", seconds=2.5, interval=0.3),
        call("mcp__fault__sleep", seconds=3),
        Scripted(text="done"),
    )
    assert run.pi_tui().returncode == 0
    progressed, silent = run.session_results()
    assert progressed["isError"] is False, progressed
    assert progressed["content"][0]["text"].startswith("progress done after")
    assert silent["isError"] is True
    assert "did not answer tools/call sleep within 1 s" in silent["content"][0]["text"]


def test_a_huge_result_keeps_its_ends_and_the_whole_text_is_saved(run: Run) -> None:
    from tests.support.mcp_fault_server import HEAD, TAIL

    run.servers({"fault": fault_entry(exposure="direct")})
    run.server.queue(call("mcp__fault__huge", size=200_000), Scripted(text="done"))
    assert run.pi_tui().returncode == 0
    result = run.session_results()[0]
    text = result["content"][0]["text"]
    assert len(text.encode()) < 22_000
    assert HEAD in text and TAIL in text and "chars truncated…" in text
    full = Path(result["details"]["fullOutputPath"])
    assert full.read_text().startswith(HEAD) and full.read_text().rstrip().endswith(TAIL)
    assert str(full) in text


def test_errors_images_list_changes_and_logs(run: Run) -> None:
    run.servers({"fault": fault_entry(exposure="direct")})
    run.server.queue(
        Scripted(
            tool_calls=[
                ToolCallSpec("mcp__fault__fail", {"message": "nope"}),
                ToolCallSpec("mcp__fault__image", {}),
                ToolCallSpec("mcp__fault__log", {"message": "to the log"}),
                ToolCallSpec("mcp__fault__add_tool", {"name": "fresh"}),
            ]
        ),
        Scripted(text="done"),
    )
    assert run.pi_tui().returncode == 0
    failed, image, logged, added = run.session_results()
    assert failed["isError"] is True and failed["content"][0]["text"] == "nope"
    assert any(block["type"] == "image" and block["mimeType"] == "image/png" for block in image["content"])
    assert logged["content"][0]["text"] == "logged"
    assert added["isError"] is False
    # the server said its tool list changed during the call: the next request declares the new tool
    assert "mcp__fault__fresh" not in run.tool_names(0)
    assert "mcp__fault__fresh" in run.tool_names(1)
    log = (run.agent / "mcp.log").read_text()
    assert "[fault] info" in log and "[fault] warning" in log and "to the log" in log


def test_an_untrusted_projects_server_never_starts(run: Run, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    entry = {
        "command": sys.executable,
        "args": ["-c", f"open({str(marker)!r}, 'w').close()"],
        "exposure": "direct",
    }
    run.servers({"project-server": entry}, run.project / ".agent" / "mcp.json")
    run.servers({"claude-server": entry}, run.project / ".mcp.json")
    run.server.queue(Scripted(text="one"), Scripted(text="two"))
    assert run.pi_tui().returncode == 0  # print mode, folder never trusted: skipped
    assert not marker.exists()
    assert run.pi_tui("-a").returncode == 0  # trusted for this run: both start
    deadline = time.monotonic() + 20
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()


TOOL_PATTERNS = [
    # (words, the tools the request declares, what stderr must (not) say)
    (["--no-mcp"], ["read", "bash", "edit", "write"], None),
    (["-xt", "mcp__*"], ["read", "bash", "edit", "write"], None),
    (["--tools", "read,mcp__fault__echo"], ["read", "mcp__fault__echo"], None),
    # an allow-list without mcp__ entries declares no MCP tool (pi 1.x); tool_search finds them
    (["--tools", "read"], ["read"], "without tool_search in --tools they cannot be reached"),
    (["--tools", "read,tool_search"], ["read", "tool_search"], None),
    ([], ["read", "bash", "edit", "write", "mcp__fault__echo", "mcp__fault__add"], None),
]


@pytest.mark.parametrize(("words", "declared", "said"), TOOL_PATTERNS, ids=lambda value: str(value))
def test_no_mcp_and_tool_patterns(run: Run, words: list[str], declared: list[str], said: str | None) -> None:
    """A server with direct tools, and what --no-mcp / -xt / --tools leave of them (a plain
    stdio server written by hand: this is about names, and it starts in milliseconds)."""
    echo_server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_echo_server"],
        "cwd": str(REPO),
    }
    run.servers({"fault": {**echo_server, "exposure": "direct"}})
    run.server.queue(Scripted(text="ok"))
    done = run.pi_tui(*words)
    assert done.returncode == 0, done.stderr
    assert run.tool_names(0) == declared
    assert "Unknown tool" not in done.stderr
    if said is not None:
        assert said in done.stderr
    else:
        assert "cannot be reached" not in done.stderr
