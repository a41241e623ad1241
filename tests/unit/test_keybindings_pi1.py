"""Every keybinding id of pi 1.5.2 is one of pi-tui's, with pi's default keys, and a pi 1.x
keybindings.json loads without a single "unknown action" problem; pi 0.73's ids keep working.

The ids and their Linux defaults are in tests/data/keybindings/pi-1.5.2-defaults.json, taken
from the table of pi 1.5.2's docs/keybindings.md (platform notes left out: Linux keeps the
first keys)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.tui.keybindings import (
    ACTIONS,
    PI_ACTION_NAMES,
    PI_LEGACY_NAMES,
    KeyBindingsLoad,
    hotkeys_text,
    load_keybindings,
    to_textual_key,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "keybindings" / "pi-1.5.2-defaults.json"
PI_DEFAULTS: dict[str, list[str]] = json.loads(DATA.read_text())["defaults"]
EXTRA_DEFAULTS = {"tui.input.newLine": {"alt+enter"}}
"""Keys pi-tui adds to pi's defaults: Alt+Enter is a new line while no agent runs (pi's follow-up
key, which means nothing then)."""
NEW_IN_PI1 = {
    "app.message.copy",
    "app.thinking.save",
    "tui.editor.historyPrevious",
    "tui.editor.historyNext",
    *(
        f"tui.altScreen.{name}"
        for name in (
            "pageUp",
            "pageDown",
            "halfPageUp",
            "halfPageDown",
            "lineUp",
            "lineDown",
            "previousPrompt",
            "nextPrompt",
            "search",
            "searchNext",
            "searchPrevious",
            "searchClose",
            "top",
            "bottom",
        )
    ),
}


def write(folder: Path, table: dict[str, object]) -> None:
    (folder / "keybindings.json").write_text(json.dumps(table))


def test_the_table_holds_pi_1_5_2s_ids() -> None:
    assert len(PI_DEFAULTS) == 90
    assert set(PI_DEFAULTS) >= NEW_IN_PI1 and len(NEW_IN_PI1) == 18


@pytest.mark.parametrize("pi_id", sorted(PI_DEFAULTS))
def test_every_pi_id_is_known_with_pis_default_keys(pi_id: str) -> None:
    assert pi_id in PI_ACTION_NAMES, pi_id
    action = PI_ACTION_NAMES[pi_id]
    ours = set(ACTIONS[action].defaults)
    pis = {to_textual_key(key) for key in PI_DEFAULTS[pi_id]}
    assert pis <= ours, (pi_id, pis, ours)
    assert ours - pis == EXTRA_DEFAULTS.get(pi_id, set()), (pi_id, ours - pis)


def test_a_pi_1_keybindings_json_loads_without_problems(tmp_path: Path) -> None:
    table = {pi_id: keys for pi_id, keys in PI_DEFAULTS.items()}
    table["$schema"] = "https://pi.dev/schemas/keybindings.schema.json"
    write(tmp_path, table)
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    for pi_id, keys in PI_DEFAULTS.items():
        assert loaded.keys_for(PI_ACTION_NAMES[pi_id]) == tuple(to_textual_key(key) for key in keys), pi_id


def test_new_ids_rebind_and_an_empty_list_unbinds(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app.message.copy": "alt+c",
            "tui.editor.historyPrevious": "ctrl+p",
            "tui.altScreen.pageUp": [],
            "tui.altScreen.halfPageUp": "alt+u",
            "tui.altScreen.search": ["ctrl+f", "f3"],
            "tui.altScreen.searchNext": "f3",
            "app.thinking.save": "ctrl+w",
        },
    )
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    assert loaded.action_for("alt+c", "app") == ["message_copy"]
    assert loaded.action_for("ctrl+x", "app") == []  # copy moved; the palette is on Alt+X
    assert loaded.action_for("alt+x", "app") == ["command_palette"]
    assert loaded.action_for("ctrl+p", "editor") == ["recall_previous"]
    assert loaded.action_for("pageup", "app") == []
    assert loaded.action_for("alt+u", "app") == ["half_page_up"]
    assert loaded.action_for("f3", "app") == ["search"] and loaded.action_for("f3", "search") == [
        "search_next"
    ]
    assert loaded.action_for("ctrl+w", "thinking") == ["thinking_save"]


def test_pi_0_73_names_keep_working(tmp_path: Path) -> None:
    write(tmp_path, {name: "f5" for name in PI_LEGACY_NAMES} | {"tui.editor.pageUp": "f6"})
    loaded = load_keybindings(tmp_path)
    assert loaded.problems == []
    assert loaded.keys_for("editor_page_up") == ("f6",)  # the namespaced id wins over "pageUp"
    assert loaded.keys_for("model_picker") == ("f5",)


def test_hotkeys_lists_every_pi_id_and_puts_working_keys_first() -> None:
    text = hotkeys_text(KeyBindingsLoad())
    for pi_id in PI_DEFAULTS:
        assert any(line.rstrip().endswith(f"  {pi_id}") for line in text.splitlines()), pi_id
    chat = text.split("\n\nChat\n", 1)[1].split("\n\n", 1)[0].splitlines()
    bound = [not line.lstrip().startswith("(unbound)") for line in chat]
    assert bound == sorted(bound, reverse=True)  # every bound key before the unbound actions
    for key in ("Ctrl+Z", "Ctrl+G", "PageUp", "PageDown", "Ctrl+X", "Alt+X", "Ctrl+Shift+F"):
        assert any(line.lstrip().startswith(key) for line in chat), key
