"""The /settings rows as data: values read from the settings, changes in pi's settings.json keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.config.settings import Settings, load_settings, update_global_settings
from pi_tui.tui.settings_rows import (
    SettingsView,
    SettingValueError,
    apply_to_settings,
    build_rows,
    matching_rows,
    parse_change,
)


def view(settings: Settings | None = None, **overrides: object) -> SettingsView:
    values: dict[str, object] = {
        "settings": settings or Settings(),
        "theme": "dark",
        "themes": ["dark", "light", "mine"],
        "thinking_level": "medium",
        "thinking_levels": ["off", "low", "medium", "high"],
        "hide_thinking": False,
    }
    values.update(overrides)
    return SettingsView(**values)  # type: ignore[arg-type]


def test_rows_show_pis_defaults_and_the_live_state() -> None:
    rows = {row.id: row for row in build_rows(view(hide_thinking=True))}
    assert rows["autocompact"].value == "true"
    assert rows["steering-mode"].value == "one-at-a-time" and rows["steering-mode"].values == (
        "one-at-a-time",
        "all",
    )
    assert rows["double-escape-action"].values == ("tree", "fork", "none")
    assert rows["tree-filter-mode"].values == ("default", "no-tools", "user-only", "labeled-only", "all")
    assert rows["editor-padding"].value == "0" and rows["autocomplete-max-visible"].value == "5"
    assert rows["compaction-reserve-tokens"].value == "16384"
    assert rows["compaction-keep-recent-tokens"].value == "20000"
    assert rows["retry-max-retries"].value == "3" and rows["retry-base-delay-ms"].value == "2000"
    assert rows["shell-path"].value == "" and rows["thinking-budget-high"].value == ""
    assert rows["hide-thinking"].value == "true"  # what the chat shows now, not the file
    assert (
        rows["theme"].kind == "pick"
        and rows["theme"].preview
        and rows["theme"].values
        == (
            "dark",
            "light",
            "mine",
        )
    )
    assert rows["thinking"].value == "medium" and not rows["thinking"].preview


def test_rows_read_values_from_the_file_keys() -> None:
    settings = Settings.model_validate(
        {
            "steeringMode": "all",
            "doubleEscapeAction": "none",
            "editorPaddingX": 2,
            "images": {"blockImages": True},
            "thinkingBudgets": {"low": 500},
            "shellCommandPrefix": "shopt -s expand_aliases",
        }
    )
    rows = {row.id: row.value for row in build_rows(view(settings))}
    assert rows["steering-mode"] == "all" and rows["double-escape-action"] == "none"
    assert rows["editor-padding"] == "2" and rows["block-images"] == "true"
    assert rows["thinking-budget-low"] == "500"
    assert rows["shell-command-prefix"] == "shopt -s expand_aliases"


def test_next_value_cycles_and_restarts_on_an_unknown_value() -> None:
    rows = {row.id: row for row in build_rows(view())}
    assert rows["double-escape-action"].next_value() == "fork"
    assert rows["autocompact"].next_value() == "false"
    odd = build_rows(view(Settings.model_validate({"autocompleteMaxVisible": 4})))
    assert next(row for row in odd if row.id == "autocomplete-max-visible").next_value() == "3"


@pytest.mark.parametrize(
    ("row_id", "text", "value", "saved"),
    [
        ("autocompact", "false", False, {"compaction": {"enabled": False}}),
        ("block-images", "true", True, {"images": {"blockImages": True}}),
        ("steering-mode", "all", "all", {"steeringMode": "all"}),
        ("follow-up-mode", "all", "all", {"followUpMode": "all"}),
        ("double-escape-action", "fork", "fork", {"doubleEscapeAction": "fork"}),
        ("tree-filter-mode", "user-only", "user-only", {"treeFilterMode": "user-only"}),
        ("editor-padding", "3", 3, {"editorPaddingX": 3}),
        ("autocomplete-max-visible", "10", 10, {"autocompleteMaxVisible": 10}),
        ("hide-thinking", "true", True, {"hideThinkingBlock": True}),
        ("quiet-startup", "true", True, {"quietStartup": True}),
        ("thinking", "high", "high", {"defaultThinkingLevel": "high"}),
        ("theme", "light", "light", {"theme": "light"}),
        ("compaction-reserve-tokens", "8_000", 8000, {"compaction": {"reserveTokens": 8000}}),
        ("compaction-keep-recent-tokens", "30000", 30000, {"compaction": {"keepRecentTokens": 30000}}),
        ("branch-summary-reserve-tokens", "1000", 1000, {"branchSummary": {"reserveTokens": 1000}}),
        ("branch-summary-skip-prompt", "true", True, {"branchSummary": {"skipPrompt": True}}),
        ("retry", "false", False, {"retry": {"enabled": False}}),
        ("retry-max-retries", "0", 0, {"retry": {"maxRetries": 0}}),
        ("retry-base-delay-ms", "500", 500, {"retry": {"baseDelayMs": 500}}),
        ("thinking-budget-medium", "12000", 12000, {"thinkingBudgets": {"medium": 12000}}),
        ("thinking-budget-medium", "", None, {"thinkingBudgets": {"medium": None}}),
        ("shell-path", " /bin/zsh ", "/bin/zsh", {"shellPath": "/bin/zsh"}),
        ("shell-command-prefix", "", None, {"shellCommandPrefix": None}),
    ],
)
def test_changes_use_pis_keys_and_update_the_settings(
    row_id: str, text: str, value: object, saved: dict
) -> None:
    change = parse_change(row_id, text)
    assert change.value == value and change.saved == saved
    settings = Settings()
    apply_to_settings(settings, change)
    # The in-memory settings now equal what loading the saved file would give.
    assert settings.model_dump(by_alias=True, exclude_none=True) == Settings.model_validate(
        _without_nulls(saved)
    ).model_dump(by_alias=True, exclude_none=True)


def _without_nulls(data: dict) -> dict:
    return {
        key: _without_nulls(value) if isinstance(value, dict) else value
        for key, value in data.items()
        if value is not None
    }


@pytest.mark.parametrize(
    ("row_id", "text", "message"),
    [
        ("compaction-reserve-tokens", "lots", '"lots" is not a whole number'),
        ("retry-max-retries", "-1", '"-1" is not a whole number'),
        ("editor-padding", "4", "4 is out of range (0 to 3)"),
        ("autocomplete-max-visible", "2", "2 is out of range (3 to 20)"),
        ("steering-mode", "some", '"some" is not one of one-at-a-time, all'),
        ("autocompact", "maybe", '"maybe" is not on or off'),
    ],
)
def test_bad_values_are_one_line_problems(row_id: str, text: str, message: str) -> None:
    with pytest.raises(SettingValueError) as caught:
        parse_change(row_id, text)
    assert str(caught.value) == message and "\n" not in message


def test_saving_none_removes_the_key_and_keeps_the_rest(agent_dir: Path) -> None:
    path = agent_dir / "settings.json"
    path.write_text(
        json.dumps({"shellPath": "/bin/zsh", "thinkingBudgets": {"low": 1, "high": 2}, "x": None})
    )
    update_global_settings(parse_change("shell-path", "").saved)
    update_global_settings(parse_change("thinking-budget-low", "").saved)
    assert json.loads(path.read_text()) == {"thinkingBudgets": {"high": 2}, "x": None}
    assert load_settings().thinking_budgets.high == 2


def test_search_keeps_rows_whose_label_has_the_letters_in_order() -> None:
    rows = build_rows(view())
    assert [row.id for row in matching_rows(rows, "them")][:1] == ["theme"]  # the whole word first
    assert [row.id for row in matching_rows(rows, "qui")] == ["quiet-startup"]
    assert [row.id for row in matching_rows(rows, "Steer mode")] == ["steering-mode"]
    assert {row.id for row in matching_rows(rows, "budget")} == {
        f"thinking-budget-{level}" for level in ("minimal", "low", "medium", "high")
    }
    assert matching_rows(rows, "") == rows and matching_rows(rows, "zzz") == []
