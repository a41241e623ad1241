"""A project's MCP servers in the real app (pilot): while the trust question is open none of
them has started; answering "trust" starts them (the reload after the answer reads the
project's mcp.json files), and their tools join the agent's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_tui.tui.screens.prompts import ChoiceMenu
from tests.support.waiting import wait_until
from tests.tui.test_extensions_tui import SIZE, background_app, choose, infos
from tests.tui.test_more_commands import wait_for_screen

REPO = Path(__file__).resolve().parents[2]


def project_server(project: Path, marker: Path, where: str) -> None:
    """A fault server (tests/support/mcp_fault_server.py) that leaves ``marker`` when started."""
    script = (
        f"open({str(marker)!r}, 'w').close(); import runpy, sys; sys.argv = ['mcp_fault_server']; "
        "runpy.run_module('tests.support.mcp_fault_server', run_name='__main__')"
    )
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"command": sys.executable, "args": ["-c", script], "cwd": str(REPO), "exposure": "direct"}
    path.write_text(json.dumps({"mcpServers": {"proj": entry}}))


async def test_project_servers_start_only_once_the_folder_is_trusted(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    project_server(project, marker, ".pi/mcp.json")
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert ".pi/mcp.json" in menu.message
        await wait_until(pilot, lambda: app.started is not None, "the agent started")
        assert not marker.exists() and app.agent.mcp is None
        await choose(pilot, app, "Trust this folder")
        await wait_until(pilot, lambda: marker.exists(), "the project's server started", timeout=20)
        names = lambda: [tool.name for tool in app.agent.active_tools()]  # noqa: E731
        await wait_until(pilot, lambda: "mcp__proj__echo" in names(), "its tools joined", timeout=20)


async def test_not_trusting_keeps_them_stopped(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    project_server(project, marker, ".mcp.json")
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ChoiceMenu)
        await choose(pilot, app, "Not now")
        said = lambda: any("Started without the project's" in text for text in infos(app))  # noqa: E731
        await wait_until(pilot, said, "the answer taken")
        assert not marker.exists() and app.agent.mcp is None  # startup (done) read no project file


async def test_the_question_names_the_mcp_files_where_they_are_and_the_servers_they_start(
    project: Path, tmp_path: Path
) -> None:
    """A project with only .mcp.json was asked about as ``<cwd>/.agent: .mcp.json`` (no such
    folder) and never said that trusting starts commands: each file is named by its path from
    the folder, with the servers it would start."""
    marker = tmp_path / "started"
    project_server(project, marker, ".mcp.json")
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert menu.message == f"{project.resolve()}: .mcp.json (starts MCP servers: proj)."
        await choose(pilot, app, "Not now")
        said = lambda: any("Started without the project's" in text for text in infos(app))  # noqa: E731
        await wait_until(pilot, said, "the answer taken")
    project_server(project, marker, ".agent/mcp.json")
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert menu.message == (
            f"{project.resolve()}: .agent/mcp.json (starts MCP servers: proj), "
            ".mcp.json (starts MCP servers: proj)."
        )
        await choose(pilot, app, "Not now")
        said = lambda: any("Started without the project's" in text for text in infos(app))  # noqa: E731
        await wait_until(pilot, said, "the answer taken")
    assert not marker.exists()
