"""Resuming renders the saved conversation: every item kind, labels, hidden panels."""

from __future__ import annotations

from pathlib import Path

from pi_tui.tui.transcript import (
    AssistantItem,
    BashItem,
    CustomItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from tests.support.waiting import wait_until
from tests.tui.conftest import every_kind_session, make_app, screen_text


async def test_resumed_session_shows_every_item_kind(project: Path, tmp_path: Path, server: object) -> None:
    path = every_kind_session(project, tmp_path / "sessions")
    app = make_app(project, session=str(path))
    async with app.run_test(size=(100, 60)) as pilot:
        await pilot.pause()
        items = app.chat.items
        kinds = [type(item).__name__ for item in items]
        assert kinds == [
            "UserItem",
            "AssistantItem",
            "ToolItem",
            "ToolItem",
            "ToolItem",
            "AssistantItem",
            "BashItem",
            "CustomItem",
            "SummaryItem",
            "SummaryItem",
            "AssistantItem",
        ]
        user = items[0]
        assert isinstance(user, UserItem) and user.label == "start"
        read, edit, bash = items[2], items[3], items[4]
        assert isinstance(read, ToolItem) and read.status == "success" and "line 12" in read.output
        assert isinstance(edit, ToolItem) and "+new text" in edit.details["diff"]
        assert isinstance(bash, ToolItem) and bash.status == "error"
        assert isinstance(items[6], BashItem) and items[6].output == " M notes.txt"
        custom = items[7]
        assert (
            isinstance(custom, CustomItem)
            and custom.label == "deploy"
            and custom.custom_type == "deploy-note"
        )
        assert [item.kind for item in items[8:10] if isinstance(item, SummaryItem)] == [
            "compaction",
            "branch_summary",
        ]
        failed = items[-1]
        assert isinstance(failed, AssistantItem) and failed.failed
        screen = screen_text(app)
        assert "SECRET HIDDEN PANEL TEXT" not in screen
        assert "[deploy-note]" in screen and "Deployed build 42" in screen
        assert "Provider overloaded" in screen
        # Every mounted item has a view; the reply with thinking shows it.
        assert app.chat.mounted_count == len(items)
        assert "read the file first" in screen


async def test_pi_fixture_sessions_open_and_show_their_messages(project: Path, tmp_path: Path) -> None:
    import shutil

    from tests.conftest import PI_SESSIONS

    for source in sorted(PI_SESSIONS.glob("*/session.jsonl"))[:4]:
        path = tmp_path / f"{source.parent.name}.jsonl"  # resuming appends: never touch the fixtures
        shutil.copy(source, path)
        app = make_app(project, session=str(path))
        async with app.run_test(size=(100, 40)) as pilot:
            await pilot.pause()
            assert any(isinstance(item, UserItem) for item in app.chat.items), path
            assert any(isinstance(item, AssistantItem) for item in app.chat.items), path


async def test_an_extension_renderer_draws_its_custom_type(
    project: Path, tmp_path: Path, server: object
) -> None:
    from textual.content import Content

    from pi_tui.view import renderers

    def draw_deploy(item, expanded: bool) -> Content:
        return Content(f"BUILD #{item.details['build']} shipped")

    renderers.register_custom_renderer("deploy-note", draw_deploy)
    try:
        path = every_kind_session(project, tmp_path / "sessions")
        app = make_app(project, session=str(path))
        async with app.run_test(size=(100, 60)) as pilot:
            await pilot.pause()
            screen = screen_text(app)
            assert "BUILD #42 shipped" in screen and "[deploy-note]" in screen
            assert "Deployed build 42 to staging." not in screen
    finally:
        renderers.unregister_custom_renderer("deploy-note")


async def test_text_streamed_before_the_reply_is_mounted_shows_once(project: Path) -> None:
    from pi_tui.tui.transcript import AssistantItem

    app = make_app(project)
    async with app.run_test(size=(100, 30)) as pilot:
        item = AssistantItem()
        view = app.chat.add(item, live=True)
        view.append_text("Hello ")  # the first deltas often arrive in the same tick as the reply
        view.append_text("world.")
        await wait_until(
            pilot,
            lambda: view._live is not None and view._live.text == "Hello world.",
            "both deltas drawn",
            detail=lambda: view._live and view._live.text,
        )
        await view.finish()
        await pilot.pause()
        assert screen_text(app).count("Hello world.") == 1
