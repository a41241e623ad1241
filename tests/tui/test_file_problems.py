"""The interactive mode on damaged or foreign session files: it opens them, shows what it could
not read (once), and the next prompt is saved and sent with every readable earlier turn."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.tui.transcript import AssistantItem, InfoItem, UserItem
from tests.support.model_server import ModelServer, text_reply
from tests.tui.conftest import make_app, settle
from tests.unit.test_odd_lines import HEADER, entry, five_turns, reply, user, write


def damaged_session(project: Path, folder: Path) -> Path:
    """Five turns with a user message whose content is a number, then a line cut in half."""
    folder.mkdir(parents=True, exist_ok=True)
    header = {**HEADER, "cwd": str(project)}
    lines = five_turns(entry("odd", "a2", user(42), second=3))
    return write(
        folder / "s.jsonl", header, *lines[:3], b'{"type":"message","id":"zz","parentId":', *lines[3:]
    )


async def test_problems_are_shown_once_and_the_session_continues(
    project: Path, tmp_path: Path, server: ModelServer
) -> None:
    path = damaged_session(project, tmp_path / "sessions")
    server.queue(text_reply("still here"))
    app = make_app(project, session=str(path), model="test/m")
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.pause()
        items = app.chat.items
        assert [item.text for item in items if isinstance(item, UserItem)] == [
            "first question",
            "last question",
        ]
        problems = [item for item in items if isinstance(item, InfoItem) and item.level == "warning"]
        assert len(problems) == 1 and problems[0].title.startswith("Session file problems")
        assert problems[0].text.splitlines() == [
            f"{path}:5: skipped a line that is not valid JSON",
            f"{path}:4: left out of the model's context: its content is 42, which no message can hold",
        ]

        app.editor.load_text("and now?")
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.chat.items[-1], AssistantItem) and app.chat.items[-1].text == "still here"
        # Shown once: the run did not repeat the panel.
        assert sum(isinstance(item, InfoItem) and item.level == "warning" for item in app.chat.items) == 1

    sent = [
        message["content"] for message in server.requests[-1].body["messages"] if message["role"] == "user"
    ]
    assert sent == ["first question", "last question", [{"type": "text", "text": "and now?"}]]
    appended = [json.loads(line) for line in path.read_bytes().splitlines()[7:]]
    saved = [raw for raw in appended if raw["type"] == "message"]
    assert [raw["message"]["role"] for raw in saved] == ["user", "assistant"]
    assert appended[0]["parentId"] == "a5"  # the new turn continues the last good entry


async def test_every_odd_message_opens_in_the_app(project: Path, tmp_path: Path) -> None:
    """A message no view can be made of is left out of the chat; the rest is drawn."""
    odd_messages = [user(42), user(None), {"role": 7, "content": "?"}, reply("x", content=None, usage="lots")]
    for number, odd in enumerate(odd_messages):
        header = {**HEADER, "cwd": str(project)}
        path = write(tmp_path / f"s{number}.jsonl", header, *five_turns(entry("odd", "a2", odd, second=3)))
        app = make_app(project, session=str(path))
        async with app.run_test(size=(110, 40)) as pilot:
            await pilot.pause()
            texts = [item.text for item in app.chat.items if isinstance(item, UserItem | AssistantItem)]
            assert texts[:2] == ["first question", "first answer"]
            assert texts[-2:] == ["last question", "last answer"]
