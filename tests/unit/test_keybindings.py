"""Key bindings: defaults, pi's keybindings.json format, key-name translation and /hotkeys."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pi_tui.tui.keybindings import (
    ACTIONS,
    KeyBindingsLoad,
    default_bindings,
    display_key,
    hotkeys_text,
    load_keybindings,
    to_textual_key,
)


def write(agent_dir: Path, data: object) -> Path:
    path = agent_dir / "keybindings.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    assert loaded.bindings == default_bindings()
    assert loaded.keys_for("submit") == ("enter",)
    assert loaded.keys_for("newline") == ("shift+enter", "ctrl+j", "alt+enter")  # pi 1.x adds Ctrl+J
    assert loaded.keys_for("follow_up") == ("alt+enter",)
    assert loaded.keys_for("model_picker") == ("ctrl+l",)
    assert loaded.keys_for("cycle_thinking") == ("shift+tab",)
    assert loaded.action_for("alt+enter", "editor") == ["newline", "follow_up"]
    assert loaded.action_for("escape", "editor") == ["abort"]
    assert loaded.action_for("escape", "select") == ["select_cancel"]
    assert loaded.action_for("ctrl+d", "app") == ["exit"]
    assert loaded.action_for("ctrl+d", "sessions") == ["session_delete"]
    assert loaded.action_for("ctrl+c", "app") == ["copy", "clear"]  # a selection is copied first
    assert loaded.action_for("f5") == []
    assert all(spec.description for spec in ACTIONS.values())
    with pytest.raises(KeyError):
        loaded.keys_for("no_such_action")


@pytest.mark.parametrize(
    ("pi_key", "textual"),
    [
        ("ctrl+l", "ctrl+l"),
        ("shift+enter", "shift+enter"),
        ("alt+enter", "alt+enter"),
        ("shift+ctrl+p", "ctrl+shift+p"),
        ("ctrl+shift+alt+x", "alt+ctrl+shift+x"),
        ("esc", "escape"),
        ("return", "enter"),
        ("pageUp", "pageup"),
        ("ctrl+pageDown", "ctrl+pagedown"),
        ("F5", "f5"),
        ("ctrl+-", "ctrl+minus"),
        ("ctrl+]", "ctrl+right_square_bracket"),
        ("ctrl++", "ctrl+plus"),
        ("/", "slash"),
        ("@", "at"),
        ("Ctrl+A", "ctrl+a"),
        ("shift+l", "L"),
        ("ctrl+1", "ctrl+1"),
    ],
)
def test_pi_keys_become_textual_keys(pi_key: str, textual: str) -> None:
    assert to_textual_key(pi_key) == textual


@pytest.mark.parametrize("bad", ["", "ctrl+", "hyper+x", "ctrl+ctrl+x", "ctrl+banana", "€"])
def test_bad_keys_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        to_textual_key(bad)


def test_display_key_is_how_users_type_it() -> None:
    assert display_key("ctrl+l") == "Ctrl+L"
    assert display_key("shift+enter") == "Shift+Enter"
    assert display_key("alt+ctrl+shift+x") == "Alt+Ctrl+Shift+X"
    assert display_key("escape") == "Escape"
    assert display_key("pageup") == "PageUp"
    assert display_key("ctrl+minus") == "Ctrl+-"
    assert display_key("f12") == "F12"
    assert display_key("L") == "Shift+L"


def test_pi_namespaced_legacy_and_own_names_are_accepted(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app.model.select": "ctrl+k",
            "expandTools": ["ctrl+e", "f2"],
            "tui.input.newLine": ["shift+enter", "ctrl+j"],
            "history_prev": ["up", "ctrl+p"],
            "app.message.followUp": "ctrl+f",
        },
    )
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    assert loaded.keys_for("model_picker") == ("ctrl+k",)
    assert loaded.keys_for("expand") == ("ctrl+e", "f2")
    assert loaded.keys_for("newline") == ("shift+enter", "ctrl+j")
    assert loaded.keys_for("history_prev") == ("up", "ctrl+p")
    assert loaded.keys_for("follow_up") == ("ctrl+f",)
    assert loaded.keys_for("submit") == ("enter",)  # untouched actions keep their defaults
    assert loaded.action_for("ctrl+l", "app") == []
    assert loaded.action_for("ctrl+k", "app") == ["model_picker"]


def test_namespaced_id_wins_over_legacy_and_ours_wins_over_both(tmp_path: Path) -> None:
    write(tmp_path, {"selectModel": "ctrl+a", "app.model.select": "ctrl+b", "interrupt": "ctrl+x"})
    loaded = load_keybindings(tmp_path)
    assert loaded.keys_for("model_picker") == ("ctrl+b",)
    assert loaded.keys_for("abort") == ("ctrl+x",)
    write(tmp_path, {"model_picker": "ctrl+y", "app.model.select": "ctrl+b"})
    assert load_keybindings(tmp_path).keys_for("model_picker") == ("ctrl+y",)


def test_every_pi_action_id_is_ours(tmp_path: Path) -> None:
    """pi 0.73.1's ids (namespaced and legacy) all bind a pi-tui action: none is skipped."""
    pi_ids = [
        *(
            f"tui.editor.{name}"
            for name in [
                "cursorUp",
                "cursorDown",
                "cursorLeft",
                "cursorRight",
                "cursorWordLeft",
                "cursorWordRight",
                "cursorLineStart",
                "cursorLineEnd",
                "jumpForward",
                "jumpBackward",
                "pageUp",
                "pageDown",
                "deleteCharBackward",
                "deleteCharForward",
                "deleteWordBackward",
                "deleteWordForward",
                "deleteToLineStart",
                "deleteToLineEnd",
                "yank",
                "yankPop",
                "undo",
            ]
        ),
        *(f"tui.input.{name}" for name in ("newLine", "submit", "tab", "copy")),
        *(f"tui.select.{name}" for name in ("up", "down", "pageUp", "pageDown", "confirm", "cancel")),
        *(
            f"app.{name}"
            for name in [
                "interrupt",
                "clear",
                "exit",
                "suspend",
                "thinking.cycle",
                "model.cycleForward",
                "model.cycleBackward",
                "model.select",
                "tools.expand",
                "thinking.toggle",
                "session.toggleNamedFilter",
                "editor.external",
                "message.followUp",
                "message.dequeue",
                "clipboard.pasteImage",
                "session.new",
                "session.tree",
                "session.fork",
                "session.resume",
                "tree.foldOrUp",
                "tree.unfoldOrDown",
                "tree.editLabel",
                "tree.toggleLabelTimestamp",
                "session.togglePath",
                "session.toggleSort",
                "session.rename",
                "session.delete",
                "session.deleteNoninvasive",
                "models.save",
                "models.enableAll",
                "models.clearAll",
                "models.toggleProvider",
                "models.reorderUp",
                "models.reorderDown",
                "tree.filter.default",
                "tree.filter.noTools",
                "tree.filter.userOnly",
                "tree.filter.labeledOnly",
                "tree.filter.all",
                "tree.filter.cycleForward",
                "tree.filter.cycleBackward",
            ]
        ),
    ]
    write(tmp_path, dict.fromkeys(pi_ids, "f9"))
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    rebound = {action for action, keys in loaded.bindings.items() if keys == ("f9",)}
    assert len(rebound) == len(pi_ids)  # each id moved its own action
    write(tmp_path, {"yank": "f8", "treeEditLabel": "f7", "selectCancel": "f6", "pasteImage": "f5"})
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    assert loaded.keys_for("yank") == ("f8",)
    assert loaded.keys_for("tree_edit_label") == ("f7",)
    assert loaded.keys_for("select_cancel") == ("f6",)
    assert loaded.keys_for("paste_image") == ("f5",)


def test_problems_name_the_file_and_key_and_keep_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "app.modle.select": "ctrl+k",
            "submit": 5,
            "app.clear": ["ctrl+c", "ctrl+nope"],
            "abort": ["escape", 3],
            "app.exit": "ctrl+q",
        },
    )
    loaded = load_keybindings(tmp_path)
    assert len(loaded.problems) == 4
    assert all(problem.startswith(f"{path}: ") and "\n" not in problem for problem in loaded.problems)
    first, second, third, fourth = loaded.problems
    assert 'unknown action "app.modle.select"' in first
    assert '"submit": expected a key or a list of keys, got int; keeping the default' in second
    assert '"app.clear": "ctrl+nope" is not a key (unknown key "nope")' in third
    assert '"abort": expected a key or a list of keys, found 3' in fourth
    assert loaded.keys_for("submit") == ("enter",)
    assert loaded.keys_for("clear") == ("ctrl+c",)
    assert loaded.keys_for("abort") == ("escape",)
    assert loaded.keys_for("exit") == ("ctrl+q",)  # the good entry still applies


def test_broken_file_gives_one_problem_and_all_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, '{"app.model.select": "ctrl+k",')
    loaded = load_keybindings(tmp_path)
    assert loaded.bindings == default_bindings()
    assert len(loaded.problems) == 1
    assert loaded.problems[0].startswith(f"{path}: not valid JSON")
    write(tmp_path, '["ctrl+k"]')
    loaded = load_keybindings(tmp_path)
    assert loaded.bindings == default_bindings()
    assert loaded.problems == [
        f"{path}: expected an object of action -> key(s), got list; using the default key bindings"
    ]
    (tmp_path / "keybindings.json").write_bytes(b"\xff\xfe\x00garbage")
    loaded = load_keybindings(tmp_path)
    assert loaded.bindings == default_bindings() and len(loaded.problems) == 1


def test_an_empty_list_unbinds(tmp_path: Path) -> None:
    write(tmp_path, {"app.thinking.toggle": []})
    loaded = load_keybindings(tmp_path)
    assert loaded.keys_for("toggle_thinking") == ()
    assert loaded.action_for("ctrl+t", "app") == []


def test_hotkeys_text_lists_every_key_aligned() -> None:
    text = hotkeys_text(KeyBindingsLoad(), width=200)  # wide enough for every row on one line
    lines = text.splitlines()
    assert lines[0].startswith("Keyboard shortcuts")
    rows = [line for line in lines[1:] if line.startswith("  ")]
    matches = [re.fullmatch(r"  (\S.*?)\s{2,}(\S.*?)(?:\s{2,}(\S+))?", row) for row in rows]
    assert all(matches), [row for row, match in zip(rows, matches, strict=True) if not match]
    sections = "\n".join(lines[1:]).split("\n\n")
    for section in sections:  # descriptions share one column within each section
        in_section = [
            re.fullmatch(r"  (\S.*?)\s{2,}(\S.*?)(?:\s{2,}(\S+))?", row) for row in section.splitlines()[1:]
        ]
        assert len({match.start(2) for match in in_section if match}) == 1, section
    by_text = {match.group(2): match.group(1) for match in matches if match}
    assert by_text["Send the message"] == "Enter"
    assert by_text["Insert a new line"] == "Shift+Enter, Ctrl+J, Alt+Enter"
    assert by_text["Open the model picker"] == "Ctrl+L"
    assert by_text["Cycle the thinking level"] == "Shift+Tab"
    assert by_text["Suspend to the shell (fg comes back)"] == "Ctrl+Z"
    assert by_text["Edit the message in $VISUAL / $EDITOR"] == "Ctrl+G"
    assert by_text["Bring queued messages back into the editor"] == "Alt+Up"
    assert by_text["Paste an image from the clipboard"] == "Ctrl+V"
    assert by_text["Paste the text deleted last"] == "Ctrl+Y"
    assert by_text["Command palette: commands, settings and actions"] == "Alt+X"  # Ctrl+X: pi 1.x's copy
    assert by_text["Copy the last assistant message to the clipboard"] == "Ctrl+X"
    assert by_text["Next model of the scoped list"] == "Ctrl+P"
    assert by_text["Steer: send the message to the running agent"] == "Enter while running"
    assert by_text["Open /tree (the doubleEscapeAction setting)"] == "Escape twice (empty editor)"
    for action, spec in ACTIONS.items():  # every action has its row, named by pi's id when pi has one
        assert any(line.rstrip().endswith(spec.pi_id or action) for line in rows), action
    for title in ("Chat", "Editor", "Lists and pickers", "/tree", "/resume", "/scoped-models"):
        assert title in lines


def test_hotkeys_text_reflects_overrides(tmp_path: Path) -> None:
    write(
        tmp_path, {"app.model.select": "ctrl+k", "app.message.followUp": "ctrl+f", "app.thinking.toggle": []}
    )
    text = hotkeys_text(load_keybindings(tmp_path).bindings)
    assert re.search(r"^  Ctrl\+K +Open the model picker", text, re.M)
    assert not re.search(r"^  Ctrl\+L +Open the model picker", text, re.M)
    assert "Ctrl+F " in text and "Queue a follow-up" in text
    assert "(unbound)" in text
