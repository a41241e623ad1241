"""The agent's side of file checkpoints (pi_tui/agent/file_turns.py) in process, against the
loopback model server and a real store: a before-snapshot that takes long (a project the store
has not seen) is said once as a ``files_notice`` and the tools wait for it, so the checkpoint
still holds the files from before them."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from pi_tui.agent.session import AgentSession
from pi_tui.ai.types import StreamOptions
from pi_tui.checkpoints.history import FileHistory
from pi_tui.checkpoints.store import ShadowStore, Snapshot
from pi_tui.checkpoints.timeline import checkpoints
from pi_tui.session import SessionManager
from pi_tui.tools.write import WriteTool
from tests.integration.test_agent_session import run
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.waiting import async_wait_until


class HeldStore(ShadowStore):
    """A real store whose first snapshot waits until the test lets it go (as a first snapshot
    of a large project takes seconds)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()

    def snapshot(self, session: str, extra: Any = (), *, rescan: bool = True) -> Snapshot:
        self.release.wait(timeout=60)
        return super().snapshot(session, extra, rescan=rescan)


def test_a_slow_first_snapshot_is_said_and_the_tools_wait_for_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("before\n")
    store = HeldStore(project, tmp_path / "store")
    replies = [
        Scripted(tool_calls=[ToolCallSpec("write", {"path": "a.txt", "content": "after\n"})]),
        Scripted(text="done"),
    ]
    with ModelServer(*replies) as server:
        manager = SessionManager.create(str(project), tmp_path / "sessions")
        agent = AgentSession(
            manager,
            server.model(),
            tools=[WriteTool(project)],
            request_options=lambda _model: StreamOptions(api_key="k"),
            cwd=project,
        )
        agent.files.history = FileHistory(store)
        notices: list[str] = []
        agent.subscribe(
            lambda event: notices.append(event["message"]) if event.type == "files_notice" else None
        )

        async def scenario() -> None:
            running = asyncio.ensure_future(agent.prompt("go"))
            await async_wait_until(lambda: notices, "the notice of a slow first snapshot", timeout=10)
            assert (project / "a.txt").read_text() == "before\n"  # the tools wait for it
            store.release.set()
            await running

        run(scenario)
    assert notices[0].startswith("Recording the project's files for the first time")
    assert len(notices) == 1
    assert (project / "a.txt").read_text() == "after\n"
    (found,) = checkpoints(manager.iter_raw_entries())
    assert [dict(change) for change in found.changes] == [{"status": "M", "path": "a.txt"}]
    store.close()
