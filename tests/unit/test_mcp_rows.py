"""The /mcp rows (pi_tui/view/mcp_rows.py): order, state words, what is never shown."""

from __future__ import annotations

from pathlib import Path

from mcp.types import Tool

from pi_tui.mcp.connection import ServerStatus
from pi_tui.mcp.model import ConfigSource, ServerConfig
from pi_tui.view import mcp_rows

USER = ConfigSource("user", Path("/home/u/.agent/mcp.json"))


def status(name: str, state: str, **fields: object) -> ServerStatus:
    config = ServerConfig(name=name, transport="stdio", source=USER, command="srv")
    for key, value in fields.items():
        setattr(config, key, value)
    return ServerStatus(name=name, state=state, config=config)


def test_servers_that_need_attention_come_first_in_configuration_order() -> None:
    listed = [
        status("a", "connected"),
        status("b", "disabled"),
        status("c", "needs-sign-in"),
        status("d", "failed"),
        status("e", "disconnected"),
        status("f", "connecting"),
    ]
    assert [s.name for s in mcp_rows.ordered(listed)] == ["c", "d", "e", "a", "b", "f"]


def test_a_row_says_state_tool_count_exposure_and_scope() -> None:
    connected = status("docs", "connected", exposure="direct")
    connected.tools = [Tool(name="one", inputSchema={"type": "object"})]
    assert mcp_rows.server_row(connected).detail == "connected · 1 tool · direct · user"
    override = status("docs", "failed")
    override.config.override_source = ConfigSource("project", Path("/p/.agent/mcp.json"))
    assert mcp_rows.server_row(override).detail == "failed · deferred · user, project override"


def test_details_name_env_and_headers_but_never_their_values() -> None:
    stdio = status("s", "failed", args=["--flag"], env={"API_KEY": "sk-secret-value"})
    text = "\n".join(mcp_rows.detail_lines(stdio))
    assert "Command: srv --flag" in text and "API_KEY (values hidden)" in text
    assert "sk-secret-value" not in text
    http = status(
        "h", "connected", transport="http", url="https://x/mcp", headers={"Authorization": "Bearer t0k"}
    )
    text = "\n".join(mcp_rows.detail_lines(http))
    assert "URL: https://x/mcp" in text and "Authorization (values hidden)" in text and "t0k" not in text


def test_tools_show_their_effective_exposure_and_mcp_name() -> None:
    server = status(
        "gh", "connected", exposure="deferred", tool_exposure={"search_code": "direct", "delete_*": "hidden"}
    )
    server.tools = [
        Tool(name=n, inputSchema={"type": "object"}) for n in ("search_code", "delete_repo", "list")
    ]
    rows = {row.tool: row for row in mcp_rows.tool_rows(server)}
    assert (rows["search_code"].exposure, rows["search_code"].differs) == ("direct", True)
    assert (rows["delete_repo"].exposure, rows["list"].exposure) == ("hidden", "deferred")
    assert rows["list"].mcp_name == "mcp__gh__list" and not rows["list"].differs


def test_the_startup_line_names_the_server_once_and_points_at_mcp() -> None:
    failed = status("db", "failed")
    failed.error = "MCP server 'db': command not found: srv"
    assert (
        mcp_rows.report_line(failed)
        == 'MCP server "db" failed: command not found: srv (/mcp shows the details)'
    )
    assert "/mcp login web" in mcp_rows.report_line(status("web", "needs-sign-in"))


def test_the_stderr_tail_is_shown_for_a_failed_server_only() -> None:
    failed = status("s", "failed")
    failed.error, failed.stderr_tail = "it died", "Traceback...\nValueError: no\n"
    assert mcp_rows.problem_text(failed) == "it died\nstderr (last lines):\nTraceback...\nValueError: no"
    failed.stderr_tail = "".join(f"line {n}\n" for n in range(1, 40))
    assert mcp_rows.problem_text(failed).endswith("\n".join(f"line {n}" for n in range(30, 40)))
    assert "line 29\n" not in mcp_rows.problem_text(failed)
    connected = status("s", "connected")
    connected.stderr_tail = "noise"
    assert mcp_rows.problem_text(connected) == ""
