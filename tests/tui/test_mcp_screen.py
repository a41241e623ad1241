"""``/mcp`` in the app, against real MCP servers: the fault server over stdio (connected, or a
command that fails at start), through the real startup path and a real mcp.json in the test's
agent folder. Changes made in the screen must land in that file and in the agent's tool set."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from pi_tui.tui.app import PiApp
from pi_tui.tui.screens.mcp_screen import McpScreen
from tests.support.mcp_fault_server import START_FAILURE
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until
from tests.tui.conftest import make_app, screen_text

REPO = Path(__file__).resolve().parents[2]
CONNECT = 30.0
"""Seconds a server gets to start (a Python process importing the SDK, on a loaded machine)."""


def fault_entry(*extra: str, **fields: Any) -> dict[str, Any]:
    """An mcp.json entry that runs the fault server from this checkout."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fault_server", *extra],
        "cwd": str(REPO),
        **fields,
    }


def write_mcp_json(agent_dir: Path, servers: dict[str, Any]) -> Path:
    path = agent_dir / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
    return path


@pytest.fixture
def closing() -> Iterator[list[PiApp]]:
    """Apps whose MCP servers are stopped after the test (their processes never outlive it)."""
    apps: list[PiApp] = []
    yield apps
    for app in apps:
        if app.agent is not None and app.agent.mcp is not None:
            app.agent.mcp.close()


def started_app(project: Path, closing: list[PiApp], **options: Any) -> PiApp:
    app = make_app(project, provider="test", model="m", **options)
    closing.append(app)
    return app


def state_of(app: PiApp, name: str) -> str | None:
    return next((s.state for s in app.agent.mcp.statuses() if s.name == name), None)


def mcp_tool_names(app: PiApp) -> set[str]:
    return {tool.name for tool in app.agent.active_tools() if tool.name.startswith("mcp__")}


async def open_mcp(pilot: Any, app: PiApp) -> McpScreen:
    await pilot.press(*"/mcp", "enter")
    await wait_until(pilot, lambda: isinstance(app.screen, McpScreen), "the /mcp screen")
    screen = app.screen
    assert isinstance(screen, McpScreen)
    return screen


async def choose(pilot: Any, app: PiApp, option_id: str) -> None:
    """Move the highlight to ``option_id`` with the arrow keys, then Enter."""
    from textual.widgets import OptionList

    options = app.screen.query_one(OptionList)
    ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
    assert option_id in ids, ids
    target = ids.index(option_id)
    while options.highlighted != target:
        await pilot.press("down" if (options.highlighted or 0) < target else "up")
    await pilot.press("enter")


async def test_the_list_shows_a_connected_server_with_its_tool_count(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    write_mcp_json(agent_dir, {"fault": fault_entry("--start-delay", "3")})
    app = started_app(project, closing)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: app.ready, "the app")
        screen = await open_mcp(pilot, app)  # while the server is still starting
        assert state_of(app, "fault") == "connecting"
        assert "fault  connecting · deferred · user" in screen_text(app)
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault to connect", CONNECT)
        count = len(next(s for s in app.agent.mcp.statuses() if s.name == "fault").tools)
        assert count >= 10  # echo, crash, huge, progress, sleep, ...
        assert app.screen is screen  # the same screen, redrawn by the manager's listener
        await wait_until(
            pilot,
            lambda: f"fault  connected · {count} tools · deferred · user" in screen_text(app),
            "the server's row",
        )
        await pilot.press("enter")  # the server's view
        text = screen_text(app)
        assert "MCP server fault" in text and f"Command: {sys.executable} -m tests.support" in text
        await choose(pilot, app, "tools")
        await wait_until(pilot, lambda: "mcp__fault__echo" in screen_text(app), "the tools view")
        assert "Echo the message back." in screen_text(app)
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: "MCP servers" in screen_text(app), "the list again")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, McpScreen), "the screen to close")
        assert app.agent.mcp.listeners and all(
            getattr(listener, "__self__", None) is None or not isinstance(listener.__self__, McpScreen)
            for listener in app.agent.mcp.listeners
        )


async def test_a_failed_server_comes_first_with_its_error_and_stderr(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    secret = "sk-do-not-show-1234567890"
    write_mcp_json(
        agent_dir,
        {
            "good": fault_entry(),
            "broken": fault_entry("--mode", "exit-at-start", env={"API_TOKEN": secret}),
        },
    )
    app = started_app(project, closing)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(
            pilot,
            lambda: state_of(app, "broken") == "failed" and state_of(app, "good") == "connected",
            "both servers to settle",
            CONNECT,
        )
        # reported once in the chat, pointing at /mcp
        await wait_until(pilot, lambda: 'MCP server "broken" failed' in screen_text(app), "the report")
        assert screen_text(app).count('MCP server "broken" failed') == 1
        assert "(/mcp shows the details)" in screen_text(app)
        assert 'MCP server "good"' not in screen_text(app)
        await open_mcp(pilot, app)
        rows = [line for line in screen_text(app).splitlines() if "broken" in line or "good" in line]
        assert "broken" in rows[0] and "failed" in rows[0] and "good" in rows[1]
        await pilot.press("enter")  # the first row: broken
        await wait_until(pilot, lambda: "MCP server broken" in screen_text(app), "the server's view")
        text = screen_text(app)
        assert START_FAILURE in text  # the stderr tail
        assert "Environment: API_TOKEN (values hidden)" in text and secret not in text
        assert "State: failed" in text


async def test_disable_saves_enabled_false_and_the_tools_leave_the_agent(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    path = write_mcp_json(agent_dir, {"fault": fault_entry(exposure="direct")})
    app = started_app(project, closing)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault to connect", CONNECT)
        assert "mcp__fault__echo" in mcp_tool_names(app)
        screen = await open_mcp(pilot, app)
        await pilot.press("enter")
        await choose(pilot, app, "disable")
        await wait_until(pilot, lambda: state_of(app, "fault") == "disabled", "the server to stop")
        await wait_until(pilot, lambda: screen.busy is None, "the action to finish")
        assert json.loads(path.read_text())["mcpServers"]["fault"]["enabled"] is False
        assert mcp_tool_names(app) == set()
        assert screen.note == (f'Disabled MCP server "fault" (saved to {path}).', "info")
        assert 'Disabled MCP server "fault"' in screen_text(app)
        await choose(pilot, app, "enable")  # and back: the key goes (true is the default)
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault again", CONNECT)
        await wait_until(pilot, lambda: "mcp__fault__echo" in mcp_tool_names(app), "the tools back")
        assert "enabled" not in json.loads(path.read_text())["mcpServers"]["fault"]


async def test_an_exposure_change_is_saved_and_applied(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    path = write_mcp_json(agent_dir, {"fault": fault_entry(exposure="direct")})
    path.write_text(path.read_text().replace('"cwd"', '"description": "kept as written",\n      "cwd"'))
    app = started_app(project, closing)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault to connect", CONNECT)
        assert "mcp__fault__echo" in mcp_tool_names(app)
        await open_mcp(pilot, app)
        await pilot.press("enter")
        await choose(pilot, app, "exposure")
        await wait_until(pilot, lambda: "Exposure of fault" in screen_text(app), "the exposure chooser")
        await choose(pilot, app, "exposure:hidden")
        await wait_until(pilot, lambda: "now has exposure hidden" in screen_text(app), "the outcome")
        entry = json.loads(path.read_text())["mcpServers"]["fault"]
        assert entry["exposure"] == "hidden" and entry["description"] == "kept as written"
        await wait_until(pilot, lambda: mcp_tool_names(app) == set(), "the hidden tools to go")
        assert "Exposure: hidden" in screen_text(app)


async def test_disable_in_this_project_writes_an_override_and_later_changes_go_there(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    user_file = write_mcp_json(agent_dir, {"fault": fault_entry(exposure="direct")})
    written = user_file.read_text()
    (project / ".agent").mkdir()
    (project / ".agent" / "mcp.json").write_text('{\n  "mcpServers": {}\n}\n')  # needs trust: -a
    app = started_app(project, closing, approve=True)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault to connect", CONNECT)
        screen = await open_mcp(pilot, app)
        await pilot.press("enter")
        await choose(pilot, app, "disable-project")
        await wait_until(pilot, lambda: state_of(app, "fault") == "disabled", "the server to stop")
        await wait_until(pilot, lambda: screen.busy is None, "the action to finish")
        override = project / ".agent" / "mcp.json"
        assert json.loads(override.read_text()) == {"mcpServers": {"fault": {"enabled": False}}}
        assert user_file.read_text() == written  # the user's file is the same for other projects
        assert mcp_tool_names(app) == set()
        assert "(override: project" in screen_text(app)
        await choose(pilot, app, "enable")  # saved to the override now, as pi does
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault again", CONNECT)
        assert json.loads(override.read_text()) == {"mcpServers": {"fault": {"enabled": True}}}
        assert user_file.read_text() == written


async def test_what_a_server_prints_reaches_the_screen_as_visible_symbols(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    noisy = "import sys; sys.stderr.write('\\x1b]0;pwned\\x07\\x1b[2Jcleared'); sys.exit(3)"
    write_mcp_json(agent_dir, {"noisy": {"command": sys.executable, "args": ["-c", noisy]}})
    app = started_app(project, closing)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(pilot, lambda: state_of(app, "noisy") == "failed", "noisy to fail", CONNECT)
        await open_mcp(pilot, app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "cleared" in screen_text(app), "the stderr tail")
        text = screen_text(app)
        assert "\x1b" not in text and "\x07" not in text
        assert "␛]0;pwned␇␛[2Jcleared" in text


async def test_subcommands_name_the_known_servers_and_reconnect(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    write_mcp_json(agent_dir, {"fault": fault_entry(), "other": fault_entry()})
    app = started_app(project, closing)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault to connect", CONNECT)
        await pilot.press(*"/mcp reconnect nope", "enter")
        await wait_until(
            pilot,
            lambda: 'No MCP server named "nope". Known: fault, other.' in screen_text(app),
            "the answer",
        )
        await pilot.press(*"/mcp reconnect fault", "enter")
        await wait_until(
            pilot, lambda: 'Reconnected to MCP server "fault"' in screen_text(app), "the reconnect", CONNECT
        )
        await pilot.press(*"/mcp logout fault", "enter")
        await wait_until(pilot, lambda: "does not use OAuth" in screen_text(app), "the logout answer")


async def test_no_server_says_where_mcp_json_goes(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    app = started_app(project, closing)
    async with app.run_test(size=(140, 32)) as pilot:
        await wait_until(pilot, lambda: app.ready, "the app")
        await pilot.press(*"/mcp", "enter")
        expected = f"No MCP servers are configured. Add them to {agent_dir / 'mcp.json'}"
        await wait_until(pilot, lambda: expected in screen_text(app).replace("\n", ""), "the answer")
        assert ".agent/mcp.json in a trusted project" in screen_text(app).replace("\n", "")
        assert not isinstance(app.screen, McpScreen)


@pytest.fixture
def oauth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The loopback OAuth-protected MCP server; no graphical browser is tried meanwhile."""
    from tests.support.oauth_server import running_oauth_server

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with running_oauth_server() as running:
        yield running


async def test_sign_in_and_out_from_the_screen(
    project: Path, agent_dir: Path, server: ModelServer, oauth_server: Any, closing: list[PiApp]
) -> None:
    import asyncio

    import httpx

    write_mcp_json(agent_dir, {"demo": {"url": oauth_server.mcp_url}})
    app = started_app(project, closing)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(
            pilot, lambda: state_of(app, "demo") == "needs-sign-in", "demo to want sign-in", CONNECT
        )
        await wait_until(pilot, lambda: "/mcp login demo" in screen_text(app), "the one report")
        screen = await open_mcp(pilot, app)
        assert "demo  needs-sign-in" in screen_text(app)
        await pilot.press("enter")
        await choose(pilot, app, "sign-in")
        await wait_until(pilot, lambda: screen.sign_in_url is not None, "the authorization URL")
        url = screen.sign_in_url
        assert url is not None and url.startswith(oauth_server.issuer)
        assert "If it did not open, visit:" in screen_text(app)
        # the browser: follows the page's redirects to pi-tui's loopback callback
        answer = await asyncio.to_thread(httpx.get, url, follow_redirects=True, timeout=10)
        assert answer.status_code == 200
        await wait_until(pilot, lambda: state_of(app, "demo") == "connected", "demo to connect", CONNECT)
        await wait_until(pilot, lambda: screen.busy is None, "the sign-in to finish")
        assert screen.note == ('Signed in to MCP server "demo" (1 tool).', "info")
        assert "State: connected" in screen_text(app)
        assert json.loads((agent_dir / "mcp-auth.json").read_text())
        await choose(pilot, app, "sign-out")
        await wait_until(
            pilot, lambda: state_of(app, "demo") == "needs-sign-in", "demo to need sign-in again"
        )
        await wait_until(pilot, lambda: screen.busy is None, "the sign-out to finish")
        assert screen.note is not None and "credentials are deleted" in screen.note[0]


async def test_mcp_login_accepts_a_pasted_redirect_url(
    project: Path, agent_dir: Path, server: ModelServer, oauth_server: Any, closing: list[PiApp]
) -> None:
    import asyncio

    import httpx

    write_mcp_json(agent_dir, {"demo": {"url": oauth_server.mcp_url}})
    app = started_app(project, closing)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(
            pilot, lambda: state_of(app, "demo") == "needs-sign-in", "demo to want sign-in", CONNECT
        )
        await pilot.press(*"/mcp login demo", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, McpScreen), "the sign-in view")
        screen = app.screen
        assert isinstance(screen, McpScreen)
        await wait_until(pilot, lambda: screen.sign_in_url is not None, "the authorization URL")
        # a browser on another machine: approve, but stop at the redirect the user copies
        approved = await asyncio.to_thread(httpx.get, screen.sign_in_url, timeout=10)
        redirect = approved.headers["location"]
        assert "code=" in redirect
        app.screen.query_one("#mcp-paste").post_message(events.Paste(redirect))  # as a terminal pastes
        await wait_until(
            pilot, lambda: app.screen.query_one("#mcp-paste", Input).value == redirect, "the paste"
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: state_of(app, "demo") == "connected", "demo to connect", CONNECT)
        await wait_until(pilot, lambda: screen.note is not None, "the outcome")
        assert screen.note == ('Signed in to MCP server "demo" (1 tool).', "info")


def test_mcp_screen_snapshot(
    snap_compare: Any, project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    write_mcp_json(
        agent_dir,
        {"fault": fault_entry(exposure="direct"), "broken": fault_entry("--mode", "exit-at-start")},
    )
    app = started_app(project, closing)

    async def run_before(pilot: Any) -> None:
        await wait_until(
            pilot,
            lambda: state_of(app, "fault") == "connected" and state_of(app, "broken") == "failed",
            "the servers to settle",
            CONNECT,
        )
        await open_mcp(pilot, app)
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=(100, 24))


def highlighted_id(app: PiApp) -> str | None:
    from textual.widgets import OptionList

    options = app.screen.query_one(OptionList)
    index = options.highlighted
    return options.get_option_at_index(index).id if index is not None else None


async def test_the_highlight_stays_on_the_chosen_action_and_exposure_opens_on_the_current_one(
    project: Path, agent_dir: Path, server: ModelServer, closing: list[PiApp]
) -> None:
    """Reconnect's row leaves the view while the server connects: the highlight comes back to it
    (Enter again reconnects again, not opens Exposure); the exposure chooser opens on the
    server's exposure, and after a save (or Escape) the highlight is on Exposure again."""
    write_mcp_json(agent_dir, {"fault": fault_entry()})  # exposure: deferred (the default)
    app = started_app(project, closing)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: state_of(app, "fault") == "connected", "fault to connect", CONNECT)
        screen = await open_mcp(pilot, app)
        await pilot.press("enter")
        await choose(pilot, app, "reconnect")
        await wait_until(
            pilot, lambda: 'Reconnected to MCP server "fault"' in screen_text(app), "the reconnect", CONNECT
        )
        assert highlighted_id(app) == "reconnect"
        await pilot.press("enter")  # the same action again
        assert screen.view == "server" and screen.busy == "Reconnecting..."
        await wait_until(pilot, lambda: screen.busy is None, "the second reconnect", CONNECT)
        assert highlighted_id(app) == "reconnect"
        await choose(pilot, app, "exposure")
        await wait_until(pilot, lambda: "Exposure of fault" in screen_text(app), "the exposure chooser")
        assert highlighted_id(app) == "exposure:deferred" and "✓ deferred" in screen_text(app)
        await choose(pilot, app, "exposure:hidden")
        await wait_until(pilot, lambda: "now has exposure hidden" in screen_text(app), "the outcome")
        assert screen.view == "server" and highlighted_id(app) == "exposure"
        await pilot.press("enter")  # straight back into the chooser, on the saved choice
        await wait_until(pilot, lambda: "Exposure of fault" in screen_text(app), "the chooser again")
        assert highlighted_id(app) == "exposure:hidden" and "✓ hidden" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.view == "server", "the server view")
        assert highlighted_id(app) == "exposure"
