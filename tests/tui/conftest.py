"""Driving the real app: PiApp built by the real startup path, against the offline model or the
loopback model server, plus a session with every kind of chat item for snapshots."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_textual_snapshot

from pi_tui.ai.http import close_shared_client
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_tui.session import SessionManager
from pi_tui.startup import StartOptions, start
from pi_tui.tui.app import PiApp
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = REPO / "snapshots"


class RepoSnapshots(pytest_textual_snapshot.SVGImageExtension):
    """SVG snapshots live in the repository's top-level ``snapshots/`` folder."""

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(SNAPSHOTS)


pytest_textual_snapshot.SVGImageExtension = RepoSnapshots  # snap_compare looks the class up by name


@pytest.fixture(autouse=True)
def fast_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PiApp, "CURSOR_BLINK", False)
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY", "0")
    monkeypatch.delenv("COLORFGBG", raising=False)  # the "system" theme would follow the terminal
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# Demo\n" + "".join(f"line {n}\n" for n in range(1, 30)))
    (folder / "notes.txt").write_text("old text\n")
    return folder


@pytest.fixture
def server(agent_dir: Path) -> Iterator[ModelServer]:
    """A loopback model server registered as provider ``test`` (model ``m``, and ``r`` that thinks)."""
    with ModelServer() as running:
        models = [
            {"id": "m", "name": "Test model", "contextWindow": 100_000},
            {"id": "r", "name": "Reasoning model", "reasoning": True, "contextWindow": 200_000},
        ]
        (agent_dir / "models.json").write_text(json.dumps(running.models_json(models=models)))
        yield running


def make_app(
    project: Path, *, display_cwd: str | None = "~/project", theme_name: str | None = None, **options: Any
) -> PiApp:
    started = start(StartOptions(cwd=str(project), **options))
    return PiApp(
        started, cwd=str(project), display_cwd=display_cwd, loaded=["AGENTS.md"], theme_name=theme_name
    )


async def settle(pilot: Any, app: PiApp, timeout: float = 10.0) -> None:
    """Wait until the agent is idle and the screen has caught up (fails after ``timeout``)."""
    await wait_until(pilot, lambda: not app.busy, "the agent to finish its turn", timeout)
    await pilot.pause()
    await close_shared_client()


async def palette_searched(pilot: Any, app: PiApp) -> None:
    """Wait until the command palette has gathered its providers' hits for what was typed (a
    worker of the palette's, started by each change of the input, that fills the list in batches)."""
    from textual.command import CommandPalette

    group = CommandPalette._GATHER_COMMANDS_GROUP
    await wait_until(
        pilot,
        lambda: not any(worker.group == group and not worker.is_finished for worker in app.workers),
        "the command palette's search",
    )


def chat_texts(app: PiApp) -> list[str]:
    """What each chat item says (plain text of its data), in order."""
    return [type(item).__name__ + ": " + repr(item) for item in app.chat.items]


def kinds(app: PiApp) -> list[str]:
    return [type(item).__name__ for item in app.chat.items]


def every_kind_session(project: Path, folder: Path) -> Path:
    """A session holding every kind of chat item, for rendering tests and snapshots."""
    manager = SessionManager.create(str(project), folder)
    usage = Usage(input=1200, output=340, cache_read=12000, cache_write=1100, total_tokens=14640)
    manager.append_model_change("test", "m")
    user_id = manager.append_message(UserMessage(content="Fix the greeting in notes.txt", timestamp=1))
    manager.append_label_change(user_id, "start")
    manager.append_message(
        AssistantMessage(
            content=[
                ThinkingContent(thinking="The user wants the greeting fixed; read the file first."),
                TextContent(text="Let me look at **notes.txt** first."),
                ToolCall(id="call_read", name="read", arguments={"path": "notes.txt"}),
            ],
            provider="test",
            model="m",
            usage=usage,
            stop_reason="toolUse",
            timestamp=2,
        )
    )
    lines = "".join(f"{n:>6}\tline {n}\n" for n in range(1, 13))
    manager.append_message(
        ToolResultMessage(
            tool_call_id="call_read", tool_name="read", content=[TextContent(text=lines)], timestamp=3
        )
    )
    manager.append_message(
        AssistantMessage(
            content=[ToolCall(id="call_edit", name="edit", arguments={"path": "notes.txt"})],
            provider="test",
            model="m",
            usage=usage,
            stop_reason="toolUse",
            timestamp=4,
        )
    )
    diff = "--- notes.txt\n+++ notes.txt\n@@ -1 +1 @@\n-old text\n+new text\n context line"
    manager.append_message(
        ToolResultMessage(
            tool_call_id="call_edit",
            tool_name="edit",
            content=[TextContent(text="Applied 1 edit to notes.txt.")],
            details={"diff": diff},
            timestamp=5,
        )
    )
    manager.append_message(
        AssistantMessage(
            content=[ToolCall(id="call_bash", name="bash", arguments={"command": "make test"})],
            provider="test",
            model="m",
            usage=usage,
            stop_reason="toolUse",
            timestamp=6,
        )
    )
    manager.append_message(
        ToolResultMessage(
            tool_call_id="call_bash",
            tool_name="bash",
            content=[
                TextContent(
                    text="make: *** No rule to make target 'test'.  Stop.\n\nCommand exited with code 2"
                )
            ],
            is_error=True,
            timestamp=7,
        )
    )
    manager.append_message(
        AssistantMessage(
            content=[
                TextContent(text="Done:\n\n- `notes.txt` now says *new text*\n- there is no `make test`")
            ],
            provider="test",
            model="m",
            usage=usage,
            stop_reason="stop",
            timestamp=8,
        )
    )
    manager.append_message(
        BashExecutionMessage(command="git status --short", output=" M notes.txt", exit_code=0, timestamp=9)
    )
    custom_id = manager.append_custom_message_entry(
        "deploy-note", "Deployed build 42 to staging.", True, {"build": 42}
    )
    manager.append_label_change(custom_id, "deploy")
    manager.append_custom_message_entry("hidden-state", "SECRET HIDDEN PANEL TEXT", False)
    first = manager.get_entries()[2].id
    manager.append_compaction("The user asked to fix the greeting; it was fixed.", first, 48_213)
    manager.branch_with_summary(manager.get_leaf_id(), "Tried a regex rewrite first; abandoned it.")
    manager.append_message(
        AssistantMessage(
            content=[],
            provider="test",
            model="m",
            stop_reason="error",
            error_message="Provider overloaded (HTTP 529)",
            timestamp=10,
        )
    )
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


def screen_text(app: PiApp) -> str:
    """The visible screen as plain text, one line per row (what a user would read)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)
