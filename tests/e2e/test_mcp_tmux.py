"""``/mcp`` in the installed ``pi-tui`` inside tmux, with two real stdio MCP servers from the
user's mcp.json (the fault server: one that serves, one that exits at start): the list shows
each server and its state, the failed one first, and its view shows what the server printed
on stderr before it died; the failure was also said once in the chat after startup."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.e2e.app_pane import start_pi_tui
from tests.e2e.test_tui_tmux import editor_text
from tests.support.mcp_fault_server import START_FAILURE
from tests.support.requires import requires

pytestmark = requires("tmux", "pi-tui")
REPO = Path(__file__).resolve().parents[2]
CONNECT = 40.0


def fault_entry(*extra: str) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fault_server", *extra],
        "cwd": str(REPO),
    }


def test_mcp_lists_the_servers_and_their_state(agent_dir: Path, tmp_path: Path) -> None:
    servers = {"fault": fault_entry(), "broken": fault_entry("--mode", "exit-at-start")}
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    pane = start_pi_tui(
        ["--model", "offline/demo"], project=tmp_path / "project", agent_dir=agent_dir, tmp_path=tmp_path,
        width=100, height=30,
    )  # fmt: skip
    try:
        pane.wait_for(lambda s: 'MCP server "broken" failed' in s, "the startup report", CONNECT)
        pane.type("/mcp")
        pane.wait_for(lambda s: editor_text(s) == "/mcp", "/mcp in the editor")
        pane.press("Enter")
        screen = pane.wait_for(
            lambda s: s if re.search(r"fault  connected · \d+ tools", s) and "broken  failed" in s else None,
            "both servers in the list",
            CONNECT,
        )
        lines = screen.splitlines()
        first = next(i for i, line in enumerate(lines) if "broken  failed" in line)
        assert first < next(i for i, line in enumerate(lines) if "fault  connected" in line)
        pane.press("Enter")
        pane.wait_for(lambda s: START_FAILURE in s and "State: failed" in s, "the server's stderr")
        pane.press("Escape")
        pane.wait_for(lambda s: "MCP servers" in s and "broken  failed" in s, "the list again")
        pane.press("Escape")
        pane.wait_for(lambda s: "MCP servers" not in s, "the screen to close")
        pane.type("/quit")
        pane.wait_for(lambda s: editor_text(s) == "/quit", "/quit in the editor")
        pane.press("Enter")
        assert pane.wait_gone(15)
    finally:
        pane.kill()
