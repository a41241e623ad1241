"""pi's editing keys in the prompt editor (kill ring, jumps, undo), the chat keys added with them
(Alt+Up, Ctrl+V, Ctrl+C on a selection) and keybindings.json reaching every scope."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from pi_tui.tui.screens.model_picker import ModelPicker
from pi_tui.tui.screens.tree import TreeScreen
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import wait_for_screen
from tests.tui.conftest import make_app, settle
from tests.tui.test_keys import press_during_stream, type_text

SIZE = (100, 40)


def cursor_column(app) -> int:
    return app.editor.cursor_location[1]


async def test_line_and_word_keys_move_and_delete_as_in_pi(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "alpha beta gamma")
        await pilot.press("ctrl+a")
        assert cursor_column(app) == 0
        await pilot.press("ctrl+e")
        assert cursor_column(app) == len("alpha beta gamma")
        await pilot.press("ctrl+b", "ctrl+b")
        assert cursor_column(app) == len("alpha beta gam")
        await pilot.press("ctrl+f", "alt+b")
        assert cursor_column(app) == len("alpha beta ")
        await pilot.press("ctrl+w")  # the word before the cursor
        assert app.editor.text == "alpha gamma"
        await pilot.press("ctrl+k")  # to the line's end
        assert app.editor.text == "alpha "
        await pilot.press("ctrl+a", "ctrl+d")  # Ctrl+D with text deletes forward, never quits
        assert app.editor.text == "lpha " and app.is_running
        await pilot.press("ctrl+minus")
        assert app.editor.text == "alpha "


async def test_yank_brings_back_deleted_text_and_alt_y_cycles(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "one two")
        await pilot.press("ctrl+w")  # kills "two"
        await pilot.press("ctrl+b", "ctrl+f")  # a move between: the next kill is a kill of its own
        await pilot.press("ctrl+u")  # kills "one "
        assert app.editor.text == ""
        await pilot.press("ctrl+y")
        assert app.editor.text == "one "
        await pilot.press("alt+y")  # the kill before replaces the yank
        assert app.editor.text == "two"
        await type_text(pilot, " x")
        await pilot.press("alt+y")  # not right after a yank: nothing happens
        assert app.editor.text == "two x"


async def test_kills_in_a_row_join_into_one_yank(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "keep a b c")
        await pilot.press("ctrl+w", "ctrl+w", "ctrl+w")
        assert app.editor.text == "keep "
        await pilot.press("ctrl+y")
        assert app.editor.text == "keep a b c"


async def test_jump_keys_go_to_the_next_character_typed(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "find the x here")
        await pilot.press("ctrl+a", "ctrl+right_square_bracket", "x")
        assert cursor_column(app) == len("find the ")
        assert app.editor.text == "find the x here"  # the target is not typed
        await pilot.press("ctrl+e", "alt+ctrl+right_square_bracket", "f")
        assert cursor_column(app) == 0


async def test_keybindings_json_rebinds_editor_keys_and_frees_the_defaults(
    project: Path, agent_dir: Path
) -> None:
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"yank": "f8", "tui.editor.cursorLineStart": "f7"})
    )
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "abc def")
        await pilot.press("ctrl+w", "ctrl+y")
        assert app.editor.text == "abc "  # Ctrl+Y no longer yanks (nor redoes: TextArea's keys are gone)
        await pilot.press("f8")
        assert app.editor.text == "abc def"
        await pilot.press("f7")
        assert cursor_column(app) == 0
        await pilot.press("ctrl+a")  # freed: the editor has no other meaning for it
        assert cursor_column(app) == 0 and app.editor.text == "abc def"


async def test_alt_up_brings_queued_messages_back_into_the_editor(project: Path, server: ModelServer) -> None:
    server.queue(Scripted(text=" ".join(f"w{n}" for n in range(200)), event_delay=0.02))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await press_during_stream(app, "enter", until=lambda: app.busy, what="the prompt to start a turn")
        await press_during_stream(
            app,
            *"steer me",
            "enter",
            *"later",
            "alt+enter",
            until=lambda: app.agent.follow_ups,
            what="the follow-up to be queued",
        )
        assert [q.text for q in app.agent.steering] == ["steer me"]
        app.action_app_key("alt+up")
        assert app.agent.steering == [] and app.agent.follow_ups == []
        assert app.editor.text == "steer me\nlater"
        app.abort()
        await settle(pilot, app, timeout=15)
        await pilot.press("alt+up")
        assert app.status.hint == "No queued messages to bring back."


def fake_xclip(folder: Path, image: bytes) -> None:
    """An xclip that offers one PNG on the clipboard, as the real one answers."""
    folder.mkdir()
    png = folder / "clip.png"
    png.write_bytes(image)
    script = folder / "xclip"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f'  *TARGETS*) printf "TARGETS\\ntext/plain\\nimage/png\\n" ;;\n'
        f'  *image/png*) cat "{png}" ;;\n'
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


async def test_ctrl_v_pastes_the_clipboard_image_as_a_file_path(
    project: Path, tmp_path: Path, monkeypatch
) -> None:
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
    fake_xclip(tmp_path / "bin", image)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":9")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "look at ")
        await pilot.press("ctrl+v")
        text = app.editor.text
        assert text.startswith("look at ") and text.endswith(".png")
        pasted = Path(text.removeprefix("look at "))
        assert pasted.read_bytes() == image
        pasted.unlink()


async def test_ctrl_v_without_a_clipboard_tool_says_how(project: Path, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+v")
        assert "No image pasted" in app.status.hint and "xclip" in app.status.hint
        assert app.editor.text == ""


async def test_pickers_follow_keybindings_json(project: Path, agent_dir: Path, server: ModelServer) -> None:
    """tui.select.* move in every list; app.tree.* work in /tree, each as the file says."""
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"tui.select.down": "ctrl+j", "app.tree.filter.userOnly": "f6"})
    )
    server.queue(Scripted(text="hi"))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("ctrl+l")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ModelPicker)
        before = picker.query_one("OptionList").highlighted
        await pilot.press("ctrl+j")
        assert picker.query_one("OptionList").highlighted != before
        await pilot.press("escape")
        await pilot.pause()
        app.run_slash("tree", "")
        tree = await wait_for_screen(pilot, app, TreeScreen)
        assert isinstance(tree, TreeScreen)
        await pilot.press("f6")
        await pilot.pause()
        assert tree.model.filter_mode == "user-only"


async def test_text_selected_with_the_mouse_is_copied_by_ctrl_c(project: Path, monkeypatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    app = make_app(project)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await settle(pilot, app)
        await type_text(pilot, "draft")
        user_view = next(widget for widget in app.chat.query("*") if "hello" in str(widget.render()))
        await pilot.mouse_down(user_view, offset=(0, 0))
        await pilot.hover(user_view, offset=(user_view.size.width - 1, user_view.size.height - 1))
        await pilot.mouse_up(user_view, offset=(user_view.size.width - 1, user_view.size.height - 1))
        await pilot.pause()
        assert "hello" in (app.screen.get_selected_text() or "")
        await pilot.press("ctrl+c")
        assert copied and "hello" in copied[-1]
        assert app.editor.text == "draft"  # the copy took Ctrl+C: the editor was not cleared
        assert app.screen.get_selected_text() is None
        await pilot.press("ctrl+c")
        assert app.editor.text == ""
