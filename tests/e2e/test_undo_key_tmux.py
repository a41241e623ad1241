"""Ctrl+- (undo, pi's ``tui.editor.undo``) in the installed ``pi-tui`` inside tmux.

xterm and tmux send Ctrl+- as the byte 0x1f, which Textual reports as ``ctrl+underscore``; the
binding said ``ctrl+minus`` (what only kitty-protocol terminals send), so undo did nothing in the
terminals most people use. The tests type text, send the real byte and wait for the editor to
hold the text before it again: with the default binding, and with a keybindings.json written for
pi (``"ctrl+-"``, its spelling).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.e2e.app_pane import start_pi_tui
from tests.e2e.test_tui_tmux import editor_text
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")


def undone(typed: str) -> Callable[[str], bool]:
    """The editor holds an earlier state of ``typed``: the last typing (or all of it) undone.
    Textual groups typing into undo steps by time, so a loaded machine may make two of one burst."""

    def check(screen: str) -> bool:
        text = editor_text(screen)
        return text is not None and text != typed and typed.startswith(text)

    return check


def start(agent_dir: Path, tmp_path: Path) -> TmuxPane:
    return start_pi_tui(
        ["--model", "offline/demo"], project=tmp_path / "project", agent_dir=agent_dir, tmp_path=tmp_path
    )


def test_the_terminal_byte_of_ctrl_minus_undoes_typing(agent_dir: Path, tmp_path: Path) -> None:
    pane = start(agent_dir, tmp_path)
    try:
        pane.type("hello undo")
        pane.wait_for(lambda s: editor_text(s) == "hello undo", "the typed text in the editor")
        pane.tmux("send-keys", "-t", pane.session, "-H", "1f")  # what tmux/xterm send for Ctrl+-
        pane.wait_for(undone("hello undo"), "the typing undone by Ctrl+- (0x1f)")
        pane.press("C-u")  # whatever the undo left goes, so the next typing stands alone
        pane.wait_for(lambda s: editor_text(s) == "", "an empty editor")
        pane.type("again")
        pane.wait_for(lambda s: editor_text(s) == "again", "new text typed")
        pane.press("C-_")  # tmux's own name for the key: the same byte
        pane.wait_for(undone("again"), "the typing undone by C-_")
    finally:
        pane.kill()


def test_a_pi_keybindings_file_naming_ctrl_minus_works_in_tmux(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.editor.undo": ["alt+z", "ctrl+-"]}))
    pane = start(agent_dir, tmp_path)
    try:
        screen = pane.capture() or ""
        assert "keybindings.json" not in screen, screen  # no complaint about the file
        pane.type("some words")
        pane.wait_for(lambda s: editor_text(s) == "some words", "the typed text in the editor")
        pane.tmux("send-keys", "-t", pane.session, "-H", "1f")
        pane.wait_for(undone("some words"), "the typing undone by the user's ctrl+- binding")
    finally:
        pane.kill()
