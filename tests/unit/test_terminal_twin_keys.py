"""Ctrl+- arrives from legacy terminals (xterm, tmux) as 0x1f, Textual's ``ctrl+underscore``:
a binding that names ``ctrl+-`` (pi's spelling, the default undo key) answers to both, in the
editor's lookup and in the chat's binding table."""

from __future__ import annotations

import json
from pathlib import Path

from textual.binding import BindingsMap

from pi_tui.tui.key_routing import APP_KEY_PREFIX, bind_app_keys
from pi_tui.tui.keybindings import KeyBindingsLoad, display_key, hotkeys_text, load_keybindings


def test_the_default_undo_answers_to_the_byte_terminals_send() -> None:
    keys = KeyBindingsLoad()
    assert keys.action_for("ctrl+underscore", "editor") == ["undo"]
    assert keys.action_for("ctrl+minus", "editor") == ["undo"]
    assert keys.action_for("ctrl+-", "editor") == ["undo"]


def test_a_chat_action_bound_to_ctrl_minus_is_bound_to_both_keys(agent_dir: Path) -> None:
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.thinking.toggle": "ctrl+-"}))
    keys = load_keybindings(agent_dir)
    assert not keys.problems
    table = BindingsMap()
    bind_app_keys(table, keys)
    for key in ("ctrl+minus", "ctrl+underscore"):
        assert [b.action for b in table.key_to_bindings[key]] == [f"{APP_KEY_PREFIX}'{key}')"]
    assert keys.action_for("ctrl+underscore", "app") == ["toggle_thinking"]


def test_hotkeys_shows_the_key_once_as_pi_names_it() -> None:
    assert display_key("ctrl+minus") == "Ctrl+-"
    undo = next(line for line in hotkeys_text(KeyBindingsLoad()).splitlines() if "tui.editor.undo" in line)
    assert "Ctrl+-" in undo and "_" not in undo.split("tui.editor.undo")[0]
