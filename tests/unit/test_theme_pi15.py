"""pi 1.x themes: OKLab/OKLCH/OKHSL colours, ``#rgb``, ``appearance``, optional tokens, the
``system`` theme and ``light/dark`` pairs, and how pi-tui learns whether the terminal is dark.

Reference numbers come from two places. OKLab of the sRGB primaries and the OKLCH of sRGB red
are the published values (CSS Color 4's sample code, Björn Ottosson's OKLab post).
``tests/data/themes/pi-1.5.2/reference-hex.json`` holds the ``#rrggbb`` pi 1.5.2 itself draws for
every colour in its own ``dark.json``/``light.json`` (copied next to it) and for a few extra
spellings: it was made once by running pi 1.5.2's ``parseColor``/``colorToHex`` under node.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from pathlib import Path

import pytest

from pi_tui.view.colour_spaces import (
    ColourSyntaxError,
    okhsl_to_srgb,
    oklch_to_srgb,
    parse_ok_colour,
    srgb_to_hex,
    srgb_to_okhsl,
    srgb_to_oklab,
)
from pi_tui.view.terminal_colours import (
    TerminalReport,
    appearance_from_background,
    appearance_from_colorfgbg,
    decide_appearance,
    parse_report,
)
from pi_tui.view.theme import (
    OPTIONAL_TOKENS,
    REQUIRED_TOKENS,
    THEME_TOKENS,
    available_themes,
    builtin_themes_dir,
    choose_theme,
    load_theme,
    parse_theme_pair,
    theme_choices,
)

REPO = Path(__file__).resolve().parents[2]
PI_THEMES = REPO / "tests" / "data" / "themes" / "pi-1.5.2"
REFERENCE = json.loads((PI_THEMES / "reference-hex.json").read_text(encoding="utf-8"))


def write_theme(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- the colour maths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rgb", "oklab"),
    [
        ((1.0, 0.0, 0.0), (0.6279554, 0.2248631, 0.1258463)),
        ((0.0, 1.0, 0.0), (0.8664396, -0.2338876, 0.1794985)),
        ((0.0, 0.0, 1.0), (0.4520137, -0.0324570, -0.3115281)),
        ((1.0, 1.0, 1.0), (1.0, 0.0, 0.0)),
    ],
)
def test_oklab_of_the_srgb_primaries_matches_the_published_values(rgb, oklab):
    assert srgb_to_oklab(rgb) == pytest.approx(oklab, abs=2e-6)


def test_oklch_of_srgb_red_comes_back_as_red_and_out_of_gamut_chroma_is_reduced():
    assert srgb_to_hex(oklch_to_srgb(0.627955, 0.257683, 29.2339)) == "#ff0000"
    assert srgb_to_hex(oklch_to_srgb(1.0, 0.3, 150)) == "#ffffff"  # only white has L = 1
    assert srgb_to_hex(oklch_to_srgb(0.0, 0.2, 40)) == "#000000"
    # Far outside sRGB: the hue and lightness stay, the chroma drops to the gamut's edge.
    mapped = oklch_to_srgb(0.7, 0.4, 140)
    lightness = srgb_to_oklab(mapped)[0]
    assert lightness == pytest.approx(0.7, abs=0.003)
    assert max(mapped) <= 1 and min(mapped) >= 0


@pytest.mark.parametrize(
    "rgb", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0), (1.0, 0.0, 1.0)]
)
def test_okhsl_puts_every_srgb_primary_and_secondary_at_full_saturation(rgb):
    hue, saturation, lightness = srgb_to_okhsl(rgb)
    assert saturation == pytest.approx(1.0, abs=1e-4)
    assert okhsl_to_srgb(hue, saturation, lightness) == pytest.approx(rgb, abs=1e-4)


@pytest.mark.parametrize("rgb", [(0.2, 0.5, 0.7), (0.9, 0.85, 0.1), (0.05, 0.05, 0.06), (0.6, 0.3, 0.45)])
def test_okhsl_round_trips(rgb):
    assert okhsl_to_srgb(*srgb_to_okhsl(rgb)) == pytest.approx(rgb, abs=1e-5)


def test_okhsl_greys_and_the_ends():
    assert srgb_to_hex(okhsl_to_srgb(123, 0.0, 0.5)) == REFERENCE["extra"]["okhsl(0 0% 50%)"]
    assert okhsl_to_srgb(30, 1.0, 0.0) == (0.0, 0.0, 0.0)
    assert okhsl_to_srgb(30, 1.0, 1.0) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("text", [key for key in REFERENCE["extra"] if not key.startswith("#")])
def test_every_spelling_pi_accepts_gives_pis_colour(text):
    """Degrees with ``deg``, fractions or percentages, exponents, upper case, negative hues."""
    assert parse_ok_colour(text) == REFERENCE["extra"][text]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("okhsl(250, 60%, 55%)", "separated by spaces"),  # commas: pi refuses them too
        ("oklch(50% 0.1 200 / 0.5)", "separated by spaces"),  # no alpha
        ("okhsl(250 120% 55%)", "saturation"),
        ("okhsl(250 60% 101%)", "lightness"),
        ("oklch(150% 0.1 20)", "lightness"),
        ("oklch(50% -0.1 20)", "chroma"),
        ("okhsl()", "okhsl(H S L)"),
    ],
)
def test_malformed_ok_colours_are_refused_with_the_reason(text, words):
    with pytest.raises(ColourSyntaxError) as caught:
        parse_ok_colour(text)
    assert words in str(caught.value) and text in str(caught.value)


# --- pi 1.5.2's own themes -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dark", "light"])
def test_pi_152_theme_files_load_without_a_warning_in_pis_colours(name):
    load = load_theme(PI_THEMES / f"{name}.json")
    assert load.problems == []
    theme = load.theme
    assert theme.name == name and theme.appearance == name and theme.dark is (name == "dark")
    expected = {k: v for k, v in REFERENCE[name].items() if not k.startswith("export.")}
    assert theme.colors == expected  # every token, to the 8-bit step pi draws
    assert {f"export.{k}": v for k, v in theme.export.items()} == {
        k: v for k, v in REFERENCE[name].items() if k.startswith("export.")
    }


def test_optional_tokens_copy_their_fallback_when_missing():
    load = load_theme(builtin_themes_dir() / "dark.json")  # a pi 0.73-style file without them
    assert load.ok and set(load.theme.colors) == set(THEME_TOKENS)
    for token, source in OPTIONAL_TOKENS.items():
        assert load.theme.colors[token] == load.theme.colors[source], token


def test_short_hex_vars_of_every_form_and_a_broken_colour_keep_the_rest(tmp_path):
    colors: dict[str, object] = {token: "okhsl(250 60% 55%)" for token in REQUIRED_TOKENS}
    colors.update(accent="brand", border="#0aF", mdHeading="okhsl(250, 60%, 55%)", muted="lch")
    colors["thinkingMax"] = "oklch(62.8% 0.2577 29.23)"
    data = {
        "name": "mixed",
        "vars": {"brand": "base", "base": "oklch(0.5 0.1 200)", "lch": 242},
        "colors": colors,
    }
    load = load_theme(write_theme(tmp_path / "mixed.json", data))
    assert len(load.problems) == 1, load.problems
    problem = load.problems[0]
    assert "'mdHeading'" in problem and "okhsl(250, 60%, 55%)" in problem and "\n" not in problem
    dark = load_theme(builtin_themes_dir() / "dark.json").theme
    c = load.theme.colors
    assert c["mdHeading"] == dark.colors["mdHeading"]  # the broken one falls back ...
    assert c["accent"] == REFERENCE["extra"]["oklch(0.5 0.1 200)"]  # ... the rest is kept
    assert c["border"] == "#00aaff"
    assert c["muted"] == "#6c6c6c"
    assert c["text"] == REFERENCE["extra"]["okhsl(250 60% 55%)"]
    assert c["thinkingMax"] == "#ff0000"
    assert c["scrollbarTrack"] == c["muted"]  # optional tokens follow what the file gave


def test_appearance_is_read_and_a_bad_one_is_named(tmp_path):
    base = json.loads((PI_THEMES / "light.json").read_text(encoding="utf-8"))
    load = load_theme(write_theme(tmp_path / "a.json", {**base, "appearance": "dark"}))
    assert load.ok and load.theme.dark  # the file's word wins over its colours
    load = load_theme(write_theme(tmp_path / "b.json", {**base, "appearance": "dim"}))
    assert len(load.problems) == 1 and '"appearance"' in load.problems[0]
    assert load.theme.dark is False  # then judged from the colours: a light theme
    del base["appearance"]
    assert load_theme(write_theme(tmp_path / "c.json", base)).theme.dark is False


def test_appearance_from_colours_ignores_the_terminal_palette(tmp_path):
    """Colours 0-15 are the terminal's own: only the concrete ones judge a theme without
    ``appearance`` (here light backgrounds under palette-coloured text: a light theme)."""
    colors: dict[str, object] = {token: 1 for token in REQUIRED_TOKENS}
    colors.update({t: "#f4f4f4" for t in ("selectedBg", "userMessageBg", "customMessageBg")})
    colors.update({t: "#eeeeee" for t in ("toolPendingBg", "toolSuccessBg", "toolErrorBg")})
    load = load_theme(write_theme(tmp_path / "pal.json", {"name": "pal", "colors": colors}))
    assert load.ok and load.theme.dark is False


# --- which theme a setting means -------------------------------------------------------------------


def test_system_pairs_and_unknown_names(tmp_path):
    agent = tmp_path / "agent"
    (agent / "themes").mkdir(parents=True)
    mine = write_theme(agent / "themes" / "mine.json", json.loads((PI_THEMES / "light.json").read_text()))
    write_theme(agent / "themes" / "system.json", {"name": "system", "colors": {}})  # reserved
    themes = available_themes(agent)
    assert "system" not in themes and "mine" in themes
    assert theme_choices(themes) == ["system", *themes]
    builtins = builtin_themes_dir()
    for setting in (None, "", "system"):
        assert choose_theme(setting, themes, "dark").path == builtins / "dark.json"
        assert choose_theme(setting, themes, "light").path == builtins / "light.json"
    # pi 1.x stores the light terminal's theme first: "light/dark".
    assert parse_theme_pair("mine / dark") == ("mine", "dark")
    assert choose_theme("mine/dark", themes, "light").path == mine
    assert choose_theme("mine/dark", themes, "dark").path == builtins / "dark.json"
    assert choose_theme("mine/system", themes, "dark").path == builtins / "dark.json"
    unknown = choose_theme("nosuch", themes, "light")
    assert unknown.path == builtins / "light.json" and unknown.name == "light"
    assert unknown.problem is not None and '"nosuch"' in unknown.problem and "system" in unknown.problem
    assert "\n" not in unknown.problem
    half = choose_theme("mine/nosuch", themes, "dark")
    assert half.path == builtins / "dark.json" and '"nosuch"' in (half.problem or "")
    for bad in ("a/b/c", "/dark", "light/"):
        assert parse_theme_pair(bad) is None
        choice = choose_theme(bad, themes, "dark")
        assert choice.path == builtins / "dark.json" and bad in (choice.problem or "")


# --- dark or light terminal ------------------------------------------------------------------------


def test_terminal_answers_are_parsed_in_every_form():
    report = parse_report(
        b"\x1b]10;rgb:0000/0000/0000\x1b\\\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?997;2n\x1b[?62;22c"
    )
    assert report == TerminalReport(background=(1.0, 1.0, 1.0), foreground=(0.0, 0.0, 0.0), scheme="light")
    short = parse_report(b"\x1b]11;rgb:1c/1f/25\x1b\\")
    assert short.background == pytest.approx((0x1C / 255, 0x1F / 255, 0x25 / 255))
    assert parse_report(b"\x1b[?997;1n\x1b[?1;2c") == TerminalReport(scheme="dark")
    assert parse_report(b"\x1b[?1;2c") == TerminalReport()


def test_the_background_then_the_scheme_then_colorfgbg_then_dark():
    white, black, grey = (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (0.46, 0.46, 0.46)
    assert appearance_from_background(white) == "light"
    assert appearance_from_background((0.11, 0.12, 0.15)) == "dark"
    # A grey on which both white and black text are readable: the foreground's side decides.
    assert appearance_from_background(grey, white) == "dark"
    assert appearance_from_background(grey, black) == "light"
    assert appearance_from_background((0.5, 0.5, 0.5), white) == "light"  # white text unreadable
    env_light = {"COLORFGBG": "0;15"}
    assert decide_appearance(TerminalReport(background=(0.0, 0.0, 0.0), scheme="light"), env_light) == "dark"
    assert decide_appearance(TerminalReport(scheme="light"), {"COLORFGBG": "15;0"}) == "light"
    assert decide_appearance(TerminalReport(), env_light) == "light"
    assert decide_appearance(TerminalReport(), {}) == "dark"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("15;0", "dark"), ("0;15", "light"), ("0;7", "light"), ("12;8", "dark"), ("0;default;15", "light"),
     ("default;default", None), ("7;200", None), ("", None), ("junk", None)],
)  # fmt: skip
def test_colorfgbg_is_judged_by_palette_index(value, expected):
    assert appearance_from_colorfgbg({"COLORFGBG": value}) == expected


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal is needed")
@pytest.mark.parametrize(
    ("answer", "expected"), [(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\", "light"), (b"", "dark")]
)
def test_the_terminal_is_asked_through_a_real_pty(answer, expected):
    """A child on a pseudo-terminal asks; this side answers as a terminal would (the background,
    then the Device Attributes reply every terminal sends) and the child prints its verdict."""
    import pty

    code = "from pi_tui.view.terminal_colours import terminal_appearance as t; print('verdict', t(ask=True))"
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin/stdout are the pty, which is its controlling terminal
        env = {k: v for k, v in os.environ.items() if k != "COLORFGBG"}
        env["TERM"] = "xterm-256color"
        os.execve(sys.executable, [sys.executable, "-c", code], env)
    try:
        seen = b""
        deadline = time.monotonic() + 20
        while b"\x1b[c" not in seen and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.5)[0]:
                seen += os.read(fd, 4096)
        assert b"\x1b]11;?" in seen and b"\x1b[c" in seen, seen
        os.write(fd, answer + b"\x1b[?62;22c")
        out = b""
        while b"verdict" not in out or not out.endswith(b"\n"):
            if time.monotonic() > deadline:
                break
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        assert f"verdict {expected}".encode() in out, out
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
