"""The interactive mode when the disk fills up mid-session (issue 11, acceptance 3): one line in
the chat, the session goes on, and once space is back the next prompt saves every waiting entry
in order, so the model gets every earlier turn, now and after the file is reopened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from pi_tui.tui.transcript import AssistantItem, InfoItem
from tests.integration.test_disk_full import SECOND, check_file, only_session, user_texts
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, text_reply
from tests.support.small_disk import SmallDisk, small_disk
from tests.tui.conftest import make_app, settle


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    with small_disk(tmp_path, monkeypatch) as small:
        yield small


async def send(pilot: object, app: object, text: str) -> None:
    app.editor.load_text(text)  # type: ignore[attr-defined]
    await pilot.press("enter")  # type: ignore[attr-defined]
    await settle(pilot, app)


def last_reply(app: object) -> str:
    return [item for item in app.chat.items if isinstance(item, AssistantItem)][-1].text  # type: ignore[attr-defined]


def save_lines(app: object) -> list[InfoItem]:
    return [
        item
        for item in app.chat.items  # type: ignore[attr-defined]
        if isinstance(item, InfoItem) and ("session file" in item.text or "Session saved" in item.text)
    ]


async def test_a_full_disk_is_said_once_and_everything_is_saved_when_space_is_back(
    project: Path, disk: SmallDisk, server: ModelServer
) -> None:
    sessions = disk.path / "sessions"
    app = make_app(project, session_dir=str(sessions), model="test/m", no_tools=True)
    server.queue(text_reply("answer one"), text_reply("answer two"))
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.pause()
        await send(pilot, app, "first question")
        path = only_session(sessions)
        size_before = path.stat().st_size

        disk.fill()
        await send(pilot, app, SECOND)
        assert last_reply(app) == "answer two"
        [failure] = save_lines(app)
        assert failure.level == "error"
        assert failure.text.startswith(f"Cannot write session file {path}: No space left on device.")
        assert path.stat().st_size == size_before  # no partial line

        def free_then_answer(_request: RecordedRequest) -> Scripted:
            disk.free()
            return text_reply("answer three")

        server.queue(free_then_answer)
        await send(pilot, app, "third question")
        assert last_reply(app) == "answer three"
        failure_again, recovered = save_lines(app)  # the failure was not repeated at every retry
        assert failure_again is failure
        assert (
            recovered.level == "info"
            and recovered.text == f"Session saved again: every entry is now in {path}"
        )
        assert user_texts(server.requests[-1].body) == ["first question", SECOND, "third question"]
    app.agent.manager.close()

    lines = check_file(path)
    assert [line["message"]["role"] for line in lines if line["type"] == "message"] == [
        "user",
        "assistant",
    ] * 3
    reopened = SessionManager.open(path)
    sent = [
        message.content if isinstance(message.content, str) else message.content[0].text
        for message in reopened.build_session_context().messages
        if message.role == "user"
    ]
    reopened.close()
    assert sent == ["first question", SECOND, "third question"]
    assert json.loads(path.read_bytes().splitlines()[0])["type"] == "session"
