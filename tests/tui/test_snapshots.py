"""SVG snapshots of the main screens (stored in the top-level snapshots/ folder).

Refresh them after an intended visual change with ``pytest tests/tui/test_snapshots.py
--snapshot-update`` and look at the SVGs before committing.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.waiting import wait_until
from tests.tui.conftest import every_kind_session, make_app, settle
from tests.tui.test_ttsr_view import write_rules

SIZE = (100, 70)


def test_chat_with_every_item_kind(snap_compare, project: Path, tmp_path: Path, server: ModelServer) -> None:
    path = every_kind_session(project, tmp_path / "sessions")
    assert snap_compare(make_app(project, session=str(path)), terminal_size=SIZE)


def test_chat_in_the_light_theme(snap_compare, project: Path, tmp_path: Path, server: ModelServer) -> None:
    path = every_kind_session(project, tmp_path / "sessions")
    assert snap_compare(make_app(project, session=str(path), theme_name="light"), terminal_size=SIZE)


def test_model_picker(snap_compare, project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    assert snap_compare(app, press=["ctrl+l"], terminal_size=(100, 30))


def _interrupt_run(server: ModelServer, project: Path, *, expand: bool, tool: bool = False):
    write_rules(project)
    if tool:
        first = Scripted(
            text="Writing it.",
            tool_calls=[ToolCallSpec("write", {"path": "a.py", "content": "# TODO\n"})],
            event_delay=0.02,
        )
    else:
        # One event per network chunk, so the cut lands at the same word on every run.
        first = Scripted(
            text="I will add print(value) to debug it and then more words follow here", event_delay=0.02
        )
    server.queue(first, Scripted(text="Done, using the logger."))
    app = make_app(project, provider="test", model="m")

    async def run_before(pilot) -> None:
        await pilot.press(*"debug it", "enter")
        await settle(pilot, app, timeout=15)
        if expand:
            await pilot.press("ctrl+o")
        await pilot.pause()

    return app, run_before


def test_ttsr_notification_collapsed(snap_compare, project: Path, server: ModelServer) -> None:
    app, run_before = _interrupt_run(server, project, expand=False)
    assert snap_compare(app, run_before=run_before, terminal_size=(100, 30))


def test_ttsr_notification_expanded(snap_compare, project: Path, server: ModelServer) -> None:
    app, run_before = _interrupt_run(server, project, expand=True)
    assert snap_compare(app, run_before=run_before, terminal_size=(100, 30))


def test_rule_interrupted_tool_call_leaves_no_card(snap_compare, project: Path, server: ModelServer) -> None:
    app, run_before = _interrupt_run(server, project, expand=False, tool=True)
    assert snap_compare(app, run_before=run_before, terminal_size=(100, 30))


def test_resume_picker(snap_compare, project: Path, server: ModelServer) -> None:
    from datetime import UTC, datetime

    from textual.pilot import Pilot

    from pi_tui.config.paths import session_dir_for_cwd
    from pi_tui.tui.screens.resume import ResumePicker
    from tests.tui.test_resume import make_session

    now_ms = 1_750_000_000_000  # fixed message times and a fixed "now": the ages never change
    make_session(
        project, "Fix the greeting in notes.txt", "Done.", hours_ago=0.5, name="Deploy", now_ms=now_ms
    )
    make_session(project, "Why does the parser crash on quotes?", "A bug.", hours_ago=5, now_ms=now_ms)
    make_session(project, "cherry pick the fix onto main", "Picked.", hours_ago=50, now_ms=now_ms)
    app = make_app(project, provider="test", model="m")

    async def run_before(pilot: Pilot[None]) -> None:
        picker = ResumePicker(
            session_dir_for_cwd(str(project)),
            current=app.agent.manager,
            now=lambda: datetime.fromtimestamp(now_ms / 1000, UTC),
        )
        app.push_screen(picker)
        await wait_until(pilot, lambda: picker.is_attached and picker.loaded, "the picker to load")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=(100, 30))
