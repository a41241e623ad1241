"""The example extensions in examples/extensions/, each doing its job through the real agent and
loopback HTTP (what a user copying one would see)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_tui.extensions.ui import ExtensionUI
from pi_tui.tools.bash import BashTool
from tests.integration.test_extensions import Harness, request_texts, run
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec, text_reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


class AnsweringUI(ExtensionUI):
    """A user who answers every question with ``answer`` and whose screen is recorded."""

    has_ui = True

    def __init__(self, answer: bool) -> None:
        super().__init__(say=lambda line: None)
        self.answer = answer
        self.asked: list[tuple[str, str]] = []
        self.status: dict[str, str | None] = {}
        self.widgets: dict[str, Any] = {}
        self.notices: list[str] = []

    def bound(self, extension: str) -> ExtensionUI:
        return self

    async def confirm(self, title: str, message: str = "", *, default: bool = False) -> bool:
        self.asked.append((title, message))
        return self.answer

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append(message)

    def set_status(self, key: str, text: str | None) -> None:
        self.status[key] = text

    def set_widget(self, key: str, lines: Sequence[str] | str | None, *, placement: str = "above") -> None:
        self.widgets[key] = lines


def example(harness: Harness, name: str) -> None:
    harness.load_file(EXAMPLES / f"{name}.py")


@pytest.mark.parametrize("answer", [None, True, False])
def test_permission_gate(tmp_path: Path, answer: bool | None) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "rm -rf build"})]),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "echo fine"})]),
        text_reply("done"),
    ]
    (tmp_path / "build").mkdir()
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path, tools=[BashTool()])
        if answer is not None:
            harness.runner.ui = AnsweringUI(answer)
        example(harness, "permission_gate")
        run(harness, "clean up")
        first, second = harness.messages("toolResult")
        if answer:
            assert not (tmp_path / "build").exists() and first["isError"] is False
            assert harness.runner.ui.asked == [("Allow rm -rf?", "rm -rf build")]
        else:
            assert (tmp_path / "build").exists() and first["isError"] is True
            reason = "no one can approve here" if answer is None else "The user did not allow rm -rf"
            assert reason in first["content"][0]["text"]
        assert second["content"][0]["text"].strip() == "fine"


def test_word_count_tool_and_its_card(tmp_path: Path) -> None:
    from pi_tui.tui.render import tool_content
    from pi_tui.tui.transcript import ToolItem

    (tmp_path / "a.txt").write_text("one two three\nfour\n")
    replies = [
        Scripted(tool_calls=[ToolCallSpec("word_count", {"paths": "a.txt"})]),
        Scripted(tool_calls=[ToolCallSpec("word_count", {"paths": ["a.txt"]})]),
        text_reply("done"),
    ]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        example(harness, "word_count")
        run(harness, "count")
        bad, good = harness.messages("toolResult")
        assert bad["isError"] is True and "paths" in bad["content"][0]["text"]
        assert good["content"][0]["text"] == "a.txt: 2 lines, 4 words, 19 characters"
        assert good["details"] == {"totals": {"a.txt": {"lines": 2, "words": 4, "chars": 19}}}
        assert "count lines, words and characters" in server.requests[0].body["messages"][0]["content"]
        item = ToolItem(
            "c1", "word_count", {"paths": ["a.txt"]}, status="success", output="x", details=good["details"]
        )
        assert tool_content(item, False).plain == "word_count a.txt\n4 words in 1 file"
        assert tool_content(item, True).plain.endswith("4 words in 1 file\n  a.txt: 4")


def test_todo_panel_reports_and_can_start_a_turn(tmp_path: Path) -> None:
    from pi_tui.tui.render import custom_content
    from pi_tui.tui.transcript import CustomItem

    (tmp_path / "app.py").write_text("x = 1  # TODO: name this better\n# FIXME broken on Windows\n")
    with ModelServer(text_reply("I will rename x.")) as server:
        harness = Harness(server, tmp_path)
        example(harness, "todo_panel")
        run(harness, "/todos", "/todos fix")
        panels = [e for e in harness.entries() if e["type"] == "custom_message"]
        assert [p["details"]["todos"][0]["text"] for p in panels] == ["name this better"] * 2
        assert len(server.requests) == 1  # only "fix" asked the model
        assert "app.py:1 TODO name this better" in request_texts(server.requests[0].body)[-1][1]
        item = CustomItem(custom_type="todo-report", text="", details=panels[0]["details"])
        drawn = custom_content(item, False).plain
        assert "2 open:" in drawn and "FIXME app.py:2  broken on Windows" in drawn


def test_bookmarks_label_and_jump_back(tmp_path: Path) -> None:
    with ModelServer(text_reply("one"), text_reply("two")) as server:
        harness = Harness(server, tmp_path)
        example(harness, "bookmarks")
        run(harness, "first question", "/mark start", "second question")
        manager = harness.agent.manager
        marked = next(e for e in harness.entries() if e["type"] == "label")["targetId"]
        assert manager.get_entry(marked).message.content[0].text == "one"
        run(harness, "/jump start")
        assert manager.get_leaf_id() == marked


def test_ttsr_log_writes_one_line_per_hit(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.config.settings import TtsrSettings
    from pi_tui.ttsr.coordinator import TtsrCoordinator
    from pi_tui.ttsr.manager import TtsrManager
    from tests.integration.test_ttsr_agent import no_print_rule

    with ModelServer(text_reply("Just print(x) it."), text_reply("Use logging.")) as server:
        harness = Harness(server, tmp_path)
        matcher = TtsrManager(TtsrSettings(), tmp_path)
        matcher.add_rule(no_print_rule(tmp_path))
        harness.agent.ttsr = TtsrCoordinator(matcher, tmp_path)
        harness.runner.ui = AnsweringUI(True)
        example(harness, "ttsr_log")
        run(harness, "how to log")
        (record,) = [json.loads(line) for line in (agent_dir / "ttsr-hits.jsonl").read_text().splitlines()]
        assert record["rules"] == ["no-print"] and record["scope"] == "text" and "print(" in record["cut"]
        assert harness.runner.ui.notices == ["rule hit: no-print in text"]


def test_turn_status_counts_turns_and_tools(tmp_path: Path) -> None:
    replies = [Scripted(tool_calls=[ToolCallSpec("echo", {"text": "a"})]), text_reply("done")]
    with ModelServer(*replies) as server:
        harness = Harness(server, tmp_path)
        harness.runner.ui = ui = AnsweringUI(True)
        example(harness, "turn_status")
        run(harness, "go")
        assert ui.status == {"turns": "turns: 2"}
        assert ui.widgets == {"tools": ["tools used: echo x1"]}


def test_every_example_is_tested() -> None:
    names = {path.stem for path in EXAMPLES.glob("*.py")}
    tested = {"permission_gate", "word_count", "todo_panel", "bookmarks", "ttsr_log", "turn_status"}
    assert names == tested
    asyncio.run(asyncio.sleep(0))
