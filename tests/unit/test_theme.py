"""Themes: pi's theme format, the built-in themes, fallbacks with clear messages, user theme
discovery, and conversion to a Textual theme (specs/tui.md "Themes", SPEC themes row)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.theme import Theme as TextualTheme
from textual.widgets import Static

from pi_tui.tui.theme import textual_variable_name, to_textual_theme
from pi_tui.view.theme import (
    BG_TOKENS,
    OPTIONAL_TOKENS,
    REQUIRED_TOKENS,
    THEME_TOKENS,
    Theme,
    available_themes,
    builtin_themes_dir,
    load_theme,
    palette_to_hex,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dark() -> Theme:
    return load_theme(builtin_themes_dir() / "dark.json").theme


def write_theme(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def full_theme(**overrides: object) -> dict:
    """A valid theme using every value form: hex, var, var-to-var, 256-colour index, ""."""
    colors: dict[str, object] = {token: "#101010" for token in REQUIRED_TOKENS}
    colors.update(overrides)
    return {"name": "custom", "vars": {}, "colors": colors}


def test_required_tokens_are_pis_51():
    assert len(REQUIRED_TOKENS) == 51 == len(set(REQUIRED_TOKENS))
    some = {"accent", "toolSuccessBg", "mdListBullet", "syntaxPunctuation", "thinkingXhigh", "bashMode"}
    assert set(REQUIRED_TOKENS) >= some | BG_TOKENS


@pytest.mark.parametrize("name", ["dark", "light"])
def test_builtin_themes_load_cleanly_with_every_token(name):
    path = builtin_themes_dir() / f"{name}.json"
    load = load_theme(path)
    assert load.ok, load.problems
    assert load.theme.name == name
    assert set(load.theme.colors) == set(THEME_TOKENS)  # pi 1.x's optional tokens copy others
    assert all(value is not None and value.startswith("#") for value in load.theme.colors.values())
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert set(raw["colors"]) == set(REQUIRED_TOKENS)  # every token spelled out in the file
    assert load.theme.dark is (name == "dark")


def test_builtin_dir_is_the_top_level_themes_folder_in_a_checkout():
    assert builtin_themes_dir() == REPO / "themes"


@pytest.mark.parametrize("name", ["dark.json", "light.json"])
def test_packaged_copies_match_the_top_level_themes(name):
    """Wheels carry pi_tui/view/themes/; themes/ is the source of truth and they must not drift."""
    top = (REPO / "themes" / name).read_bytes()
    packaged = (REPO / "pi_tui" / "view" / "themes" / name).read_bytes()
    assert packaged == top, f"copy themes/{name} to pi_tui/view/themes/{name}"


def test_palette_conversion():
    assert palette_to_hex(0) == "#000000"
    assert palette_to_hex(9) == "#ff0000"
    assert palette_to_hex(16) == "#000000"
    assert palette_to_hex(39) == "#00afff"  # 16 + 0*36 + 3*6 + 5
    assert palette_to_hex(196) == "#ff0000"
    assert palette_to_hex(231) == "#ffffff"
    assert palette_to_hex(232) == "#080808"
    assert palette_to_hex(242) == "#6c6c6c"
    assert palette_to_hex(255) == "#eeeeee"
    with pytest.raises(ValueError):
        palette_to_hex(256)


def test_pi_user_theme_with_every_form_loads_unchanged(tmp_path):
    vars_ = {"primary": "#00AAFF", "secondary": 242, "alias": "primary", "plain": ""}
    forms: list[tuple[object, str | None]] = [
        ("primary", "#00aaff"),
        ("secondary", "#6c6c6c"),
        ("alias", "#00aaff"),
        ("plain", None),
        ("", None),
        (39, "#00afff"),
        ("#123abc", "#123abc"),
        (0, "#000000"),
    ]
    colors = {}
    expected = {}
    for i, token in enumerate(REQUIRED_TOKENS):
        raw, resolved = forms[i % len(forms)]
        colors[token] = raw
        expected[token] = resolved
    data = {
        "$schema": "https://example.invalid/theme-schema.json",
        "name": "my-theme",
        "vars": vars_,
        "colors": {**colors, "someFutureToken": "#ffffff"},  # unknown tokens are tolerated
        "export": {"pageBg": "#18181e", "cardBg": "secondary", "infoBg": ""},
    }
    load = load_theme(write_theme(tmp_path / "my-theme.json", data))
    assert load.ok, load.problems
    assert load.theme.name == "my-theme"
    expected.update({token: expected[source] for token, source in OPTIONAL_TOKENS.items()})
    assert load.theme.colors == expected
    assert load.theme.export == {"pageBg": "#18181e", "cardBg": "#6c6c6c", "infoBg": None}


def test_missing_token_is_named_and_filled_from_dark(tmp_path, dark):
    data = full_theme()
    del data["colors"]["toolSuccessBg"]
    path = write_theme(tmp_path / "partial.json", data)
    load = load_theme(path)
    assert len(load.problems) == 1
    message = load.problems[0]
    assert "toolSuccessBg" in message and str(path) in message and "missing" in message
    assert "\n" not in message
    assert load.theme.colors["toolSuccessBg"] == dark.colors["toolSuccessBg"]
    assert load.theme.colors["accent"] == "#101010"
    assert set(load.theme.colors) == set(THEME_TOKENS)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("#12345", "#12345"),
        ("#gggggg", "#gggggg"),
        (300, "300"),
        (-1, "-1"),
        ("nosuchvar", "unknown var"),
        (True, "wrong type"),
        ([1, 2], "wrong type"),
        (1.5, "wrong type"),
        (None, "wrong type"),
    ],
)
def test_bad_colour_is_named_and_falls_back(tmp_path, dark, value, words):
    path = write_theme(tmp_path / "bad.json", full_theme(mdHeading=value))
    load = load_theme(path)
    assert len(load.problems) == 1, load.problems
    message = load.problems[0]
    assert "mdHeading" in message and str(path) in message and words in message
    assert load.theme.colors["mdHeading"] == dark.colors["mdHeading"]


def test_circular_and_broken_var_chains_are_named(tmp_path, dark):
    data = full_theme(accent="a", border="x")
    data["vars"] = {"a": "b", "b": "a", "x": "y"}
    load = load_theme(write_theme(tmp_path / "loop.json", data))
    text = "\n".join(load.problems)
    assert "'accent'" in text and "circular" in text
    assert "'border'" in text and 'unknown var "y"' in text
    assert load.theme.colors["accent"] == dark.colors["accent"]
    assert load.theme.colors["border"] == dark.colors["border"]


def test_bad_json_names_file_and_line(tmp_path, dark):
    path = tmp_path / "broken.json"
    text = '{\n  "name": "broken",\n  "colors": {\n    "accent": "#ffffff",,\n  }\n}\n'
    path.write_text(text, encoding="utf-8")
    load = load_theme(path)
    assert len(load.problems) == 1
    message = load.problems[0]
    assert str(path) in message and "line 4" in message and "column" in message
    assert load.theme.colors == dark.colors  # still a complete, usable theme


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[1, 2]", "JSON object"),
        ('{"name": "x", "colors": []}', '"colors"'),
        ('{"name": "x"}', '"colors" is missing'),
        ('{"name": 5, "colors": {}}', '"name"'),
    ],
)
def test_wrong_structure_types_are_reported(tmp_path, dark, content, words):
    path = tmp_path / "odd.json"
    path.write_text(content, encoding="utf-8")
    load = load_theme(path)
    assert any(words in p and str(path) in p for p in load.problems), load.problems
    assert load.theme.colors == dark.colors


def test_unreadable_file_is_reported(tmp_path, dark):
    load = load_theme(tmp_path / "absent.json")
    assert "absent.json" in load.problems[0] and "cannot read" in load.problems[0]
    assert load.theme.colors == dark.colors


def test_user_themes_are_listed_and_override_builtins(tmp_path):
    assert {"dark", "light"} <= set(available_themes(None))
    assert available_themes(tmp_path) == available_themes(None)  # no themes/ folder yet
    user_dir = tmp_path / "themes"
    user_dir.mkdir()
    mine = write_theme(user_dir / "mine.json", full_theme())
    my_dark = write_theme(user_dir / "dark.json", {**full_theme(), "name": "dark"})
    (user_dir / "notes.txt").write_text("not a theme", encoding="utf-8")
    themes = available_themes(tmp_path)
    assert themes["mine"] == mine
    assert themes["dark"] == my_dark
    assert themes["light"] == builtin_themes_dir() / "light.json"
    assert "notes" not in themes


def test_variable_names():
    assert textual_variable_name("toolSuccessBg") == "pi-tool-success-bg"
    assert textual_variable_name("accent") == "pi-accent"
    assert textual_variable_name("mdCodeBlockBorder") == "pi-md-code-block-border"
    assert textual_variable_name("thinkingXhigh") == "pi-thinking-xhigh"


@pytest.mark.parametrize("name", ["dark", "light"])
def test_textual_theme_carries_every_token(name):
    theme = load_theme(builtin_themes_dir() / f"{name}.json").theme
    textual = to_textual_theme(theme)
    assert isinstance(textual, TextualTheme)
    assert textual.name == name and textual.dark is (name == "dark")
    assert textual.primary == theme.colors["accent"]
    assert textual.error == theme.colors["error"]
    assert textual.background == theme.export["pageBg"]
    for token in REQUIRED_TOKENS:
        assert textual.variables[textual_variable_name(token)] == theme.colors[token]
    textual.to_color_system().generate()  # Textual accepts every colour


def test_terminal_default_tokens_become_concrete_textual_colours(tmp_path):
    path = write_theme(tmp_path / "defaults.json", full_theme(text="", toolOutput="", userMessageBg=""))
    theme = load_theme(path).theme
    textual = to_textual_theme(theme)
    generated = textual.to_color_system().generate()
    assert textual.foreground is None
    assert textual.variables["pi-tool-output"] == generated["foreground"]
    assert textual.variables["pi-user-message-bg"] == generated["background"]
    for value in textual.variables.values():
        Color.parse(value)


class _ThemedApp(App[None]):
    """Uses $pi-* variables in its CSS, so the pi theme must be in place before CSS is parsed."""

    CSS = """
    #probe { color: $pi-tool-title; background: $pi-tool-success-bg; }
    """

    def __init__(self, theme: TextualTheme) -> None:
        super().__init__()
        self.register_theme(theme)
        self.theme = theme.name

    def compose(self) -> ComposeResult:
        yield Static("probe", id="probe")


def test_textual_app_registers_and_applies_the_theme():
    """Headless run: the theme registers, becomes active, and $pi-* variables style a widget."""
    dark = load_theme(builtin_themes_dir() / "dark.json").theme
    light = load_theme(builtin_themes_dir() / "light.json").theme

    async def scenario() -> None:
        app = _ThemedApp(to_textual_theme(dark))
        async with app.run_test() as pilot:
            await pilot.pause()
            probe = app.query_one("#probe")
            assert app.theme == "dark"
            assert probe.styles.background == Color.parse(dark.colors["toolSuccessBg"])
            assert probe.styles.color == Color.parse(dark.colors["toolTitle"])
            app.register_theme(to_textual_theme(light))  # switching at run time works too
            app.theme = "light"
            await pilot.pause()
            assert probe.styles.background == Color.parse(light.colors["toolSuccessBg"])

    asyncio.run(scenario())
