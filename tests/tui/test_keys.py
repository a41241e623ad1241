"""Every key of the chat screen, driven through the real app with Textual's pilot."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from pi_tui.tui.transcript import AssistantItem, BashItem, ToolItem, UserItem
from pi_tui.tui.widgets.chat_items import AssistantView, ToolView
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import async_wait_until, wait_until
from tests.tui.conftest import kinds, make_app, screen_text, settle

SIZE = (100, 40)


async def type_text(pilot, text: str) -> None:
    await pilot.press(*text)


async def press_during_stream(app, *keys: str, until: Callable[[], object], what: str) -> None:
    """Deliver keys to the editor without the pilot's wait-until-idle (never idle mid-stream),
    then wait until they had their effect (``until``)."""
    from textual import events

    editor = app.editor
    for key in keys:
        editor.post_message(events.Key(key, key if len(key) == 1 else None))
    await async_wait_until(until, what)


def session_lines(app) -> list[dict]:
    """The session's entries as pi's JSON (the file itself appears with the first reply)."""
    return [json.loads(json.dumps(raw)) for raw in app.agent.manager.iter_raw_entries()]


def file_lines(app) -> list[dict]:
    path = app.agent.manager.session_file
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


async def test_enter_submits_and_the_demo_reply_streams_in(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hello there")
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.editor.text == ""
        assert kinds(app)[-2:] == ["UserItem", "AssistantItem"]
        reply = app.chat.items[-1]
        assert isinstance(reply, AssistantItem) and "offline demo model" in reply.text
        assert "offline demo model" in screen_text(app)
        roles = [line["message"]["role"] for line in file_lines(app) if line["type"] == "message"]
        assert roles == ["user", "assistant"]


async def test_newline_keys_add_lines_instead_of_submitting(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "one")
        for key in ("shift+enter", "alt+enter", "ctrl+j"):
            await pilot.press(key)
        await type_text(pilot, "two")
        await pilot.pause()
        assert app.editor.text == "one\n\n\ntwo"
        assert not any(isinstance(item, UserItem) for item in app.chat.items)


async def test_up_and_down_walk_the_prompt_history(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("first", "second"):
            await type_text(pilot, prompt)
            await pilot.press("enter")
            await settle(pilot, app)
        await pilot.press("up")
        assert app.editor.text == "second"
        await pilot.press("up")
        assert app.editor.text == "first"
        await pilot.press("down")
        assert app.editor.text == "second"
        await pilot.press("down")
        assert app.editor.text == ""


async def test_history_is_seeded_from_a_resumed_session(project: Path) -> None:
    first = make_app(project)
    async with first.run_test(size=SIZE) as pilot:
        await type_text(pilot, "remember me")
        await pilot.press("enter")
        await settle(pilot, first)
    second = make_app(project, continue_recent=True)
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [item.text for item in second.chat.items if isinstance(item, UserItem)] == ["remember me"]
        await pilot.press("up")
        assert second.editor.text == "remember me"


async def test_tab_completes_commands_and_file_paths(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/mo")
        await pilot.pause()
        assert app.editor.menu is not None and app.editor.menu.display  # the list opens as you type
        await pilot.press("tab")
        assert app.editor.text == "/model "
        assert not app.editor.menu.display
        await pilot.press("ctrl+c")
        await type_text(pilot, "look at @REA")
        await pilot.press("tab")
        assert app.editor.text == "look at @README.md"
        await pilot.press("ctrl+c")
        await type_text(pilot, "@")
        await pilot.press("tab")  # several candidates: a menu, arrows move, enter picks
        assert app.editor.menu.display
        await pilot.press("down", "enter")
        assert app.editor.text == "@README.md"  # candidates: notes.txt, README.md


async def test_the_slash_list_lines_its_descriptions_up(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/")
        await pilot.pause()
        menu = app.editor.menu
        assert menu is not None and menu.display and menu.option_count > 3
        rows = [menu.get_option_at_index(n).prompt.plain for n in range(menu.option_count)]
        starts = {len(row) - len(row.split("  ", 1)[1].lstrip()) for row in rows if "  " in row}
        assert len(starts) == 1, rows  # every description starts in the same column


async def test_escape_aborts_a_slow_answer_and_the_session_records_it(
    project: Path, server: ModelServer
) -> None:
    server.queue(Scripted(text=" ".join(f"word{n}" for n in range(400)), event_delay=0.03))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go slowly")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.feed.reply is not None and "word5" in app.feed.reply.text, "word5 to stream in"
        )
        assert app.busy
        await pilot.press("escape")
        await settle(pilot, app, timeout=3)
        assert not app.busy
        reply = app.chat.items[-1]
        assert isinstance(reply, AssistantItem) and reply.stop_reason == "aborted"
        assert "Aborted" in screen_text(app)
        last = file_lines(app)[-1]["message"]
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"


async def test_enter_while_running_steers_and_alt_enter_queues_a_follow_up(
    project: Path, server: ModelServer
) -> None:
    server.queue(Scripted(text=" ".join(f"w{n}" for n in range(150)), event_delay=0.02))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await press_during_stream(app, "enter", until=lambda: app.busy, what="the prompt to start a turn")
        await press_during_stream(
            app,
            *"steer this",
            "enter",
            *"and later",
            "alt+enter",
            until=lambda: app.agent.follow_ups,
            what="the follow-up to be queued",
        )
        assert app.busy
        assert [q.text for q in app.agent.steering] == ["steer this"]
        assert [q.text for q in app.agent.follow_ups] == ["and later"]

        # The status line redraws on its next frame, not within the key press: wait for it.
        def queue_shown() -> str:
            text = screen_text(app)
            return text if "steering: steer this" in text and "follow-up: and later" in text else ""

        shown = await wait_until(
            pilot, queue_shown, "the queue under the status line", detail=lambda: screen_text(app)
        )
        assert "Alt+Up to edit all queued messages" in shown  # pi's hint under the queue
        await settle(pilot, app, timeout=15)
        prompts = [item.text for item in app.chat.items if isinstance(item, UserItem)]
        assert prompts == ["start", "steer this", "and later"]
        last_user = [request.body["messages"][-1] for request in server.requests]
        assert [message["content"][0]["text"] for message in last_user][1:] == ["steer this", "and later"]


async def test_ctrl_c_clears_then_twice_exits(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.editor.text == ""
        await pilot.pause(1.5)  # time itself is tested: a clear followed much later by one Ctrl+C only warns
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and "Ctrl+C again" in screen_text(app)
        await pilot.press("ctrl+c")
        await async_wait_until(lambda: not app.is_running, "the second Ctrl+C to end the app")


async def test_ctrl_d_exits_only_on_an_empty_editor(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "x")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.is_running
        await pilot.press("backspace", "ctrl+d")
        await async_wait_until(lambda: not app.is_running, "Ctrl+D on an empty editor to end the app")


async def test_ctrl_l_opens_the_model_picker_and_enter_switches(project: Path, server: ModelServer) -> None:
    from pi_tui.tui.screens.model_picker import ModelPicker

    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, ModelPicker)
        await type_text(pilot, "reason")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ModelPicker)
        assert (app.agent.model.provider, app.agent.model.id) == ("test", "r")
        changes = [line for line in session_lines(app) if line["type"] == "model_change"]
        assert changes[-1]["modelId"] == "r"
        assert "r • thinking off" in screen_text(app)
        await pilot.press("ctrl+l")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ModelPicker) and app.agent.model.id == "r"


async def test_shift_tab_cycles_the_thinking_level(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        assert app.agent.thinking_level == "medium"  # pi's default level
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            seen.append(app.agent.thinking_level)
        assert seen == ["high", "off", "minimal"]
        await pilot.pause()
        assert "r • minimal" in screen_text(app)
        changes = [line for line in session_lines(app) if line["type"] == "thinking_level_change"]
        levels = [line["thinkingLevel"] for line in changes]
        assert levels[-1] == "minimal"


async def test_shift_tab_on_a_model_without_thinking_says_so(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.agent.thinking_level == "off"
        assert "does not support thinking" in screen_text(app)


async def test_ctrl_o_expands_tool_output_and_ctrl_t_hides_thinking(
    project: Path, server: ModelServer
) -> None:
    from tests.support.model_server import ToolCallSpec

    server.queue(
        Scripted(thinking="Reading the readme.", tool_calls=[ToolCallSpec("read", {"path": "README.md"})])
    )
    server.queue(Scripted(thinking="It has 30 lines.", text="The readme has thirty lines."))
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=(100, 60)) as pilot:
        await type_text(pilot, "read it")
        await pilot.press("enter")
        await settle(pilot, app)
        card = next(item for item in app.chat.items if isinstance(item, ToolItem))
        view = app.chat.view_of(card)
        assert isinstance(view, ToolView) and card.status == "success"
        assert "line 10" not in screen_text(app) and "ctrl+o to expand" in screen_text(app)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert view.expanded and "line 10" in screen_text(app)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not view.expanded
        assert "It has 30 lines." in screen_text(app)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert "It has 30 lines." not in screen_text(app)
        assert all(not v.show_thinking for v in app.chat.query(AssistantView))
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert "It has 30 lines." in screen_text(app)


async def test_double_escape_on_an_empty_editor_opens_the_tree(project: Path, monkeypatch) -> None:
    from pi_tui.tui import slash_registry

    opened = []

    async def fake_tree(app, args: str) -> None:
        opened.append(args)

    monkeypatch.setitem(slash_registry.HANDLERS, "tree", fake_tree)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "x")
        await pilot.press("escape", "escape")  # not empty: nothing
        await pilot.pause()
        assert opened == []
        await pilot.press("backspace", "escape", "escape")
        await pilot.pause()
        assert opened == [""]


async def test_large_paste_becomes_a_marker_and_is_sent_in_full(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    pasted = "\n".join(f"log line {n}" for n in range(50))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "look: ")
        app.editor.post_message(__import__("textual").events.Paste(pasted))
        await pilot.pause()
        assert app.editor.text == "look: [paste #1 +50 lines]"
        await pilot.press("enter")
        await settle(pilot, app)
        user = next(item for item in app.chat.items if isinstance(item, UserItem))
        assert user.text == "look: " + pasted
        assert "log line 49" in json.dumps(server.requests[-1].body)


async def test_bang_runs_a_shell_command_and_double_bang_keeps_it_out_of_context(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "!echo hi-there")
        await pilot.press("enter")
        await settle(pilot, app)
        await type_text(pilot, "!!echo secret")
        await pilot.press("enter")
        await settle(pilot, app)
        bash = [item for item in app.chat.items if isinstance(item, BashItem)]
        assert [(b.command, b.output.strip(), b.excluded) for b in bash] == [
            ("echo hi-there", "hi-there", False),
            ("echo secret", "secret", True),
        ]
        assert "not sent to the model" in screen_text(app)
        saved = [line["message"] for line in session_lines(app) if line["type"] == "message"]
        assert [m["role"] for m in saved] == ["bashExecution", "bashExecution"]
        assert saved[1]["excludeFromContext"] is True


async def test_bash_cards_say_how_long_the_command_took(project: Path) -> None:
    """As pi: "Took 1.2s" under a finished command, live (no duration is kept in the session)."""
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "!sleep 0.3; echo done")
        await pilot.press("enter")
        await settle(pilot, app)
        bash = next(item for item in app.chat.items if isinstance(item, BashItem))
        assert bash.seconds is not None and 0.3 <= bash.seconds < 5
        assert re.search(r"Took \d+\.\ds", screen_text(app))
