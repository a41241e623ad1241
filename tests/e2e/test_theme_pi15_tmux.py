"""pi 1.x themes in the installed ``pi-tui``, through a real terminal (tmux), read by colour.

- pi 1.5.2's own ``light.json`` (colours written as ``okhsl(...)``) chosen with ``--use-theme``:
  the user message is drawn on pi's background and in pi's text colour (the ``#rrggbb`` pi 1.5.2
  itself computes, from ``tests/data/themes/pi-1.5.2/reference-hex.json``), no theme warning is
  shown and the choice is not saved.
- The default theme ``system`` on a terminal whose background is white (tmux answers the OSC 11
  query with its ``window-style``): the built-in light theme.
- A ``light/dark`` pair in settings on that white terminal: the first name is drawn.

``capture-pane -e`` gives the cells' colours as SGR escapes; ``COLORTERM=truecolor`` makes the
app send 24-bit colours, so each theme colour appears exactly.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pi_tui.view.theme import builtin_themes_dir, load_theme
from tests.e2e.test_tui_tmux import SCRIPT, editor_text
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

PI_THEMES = Path(__file__).resolve().parents[1] / "data" / "themes" / "pi-1.5.2"
REFERENCE = json.loads((PI_THEMES / "reference-hex.json").read_text(encoding="utf-8"))
WORD = "marmalade"


def sgr(hex_colour: str, *, background: bool) -> str:
    """The 24-bit SGR parameters for a colour: ``48;2;r;g;b`` (background) or ``38;2;...``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"{48 if background else 38};2;{r};{g};{b}"


def coloured_screen(pane: TmuxPane) -> str:
    """The visible screen with its colours as escape sequences."""
    return pane.tmux("capture-pane", "-e", "-p", "-t", pane.session).stdout


def user_message_line(pane: TmuxPane) -> str:
    """The coloured screen line showing the prompt typed (the user message, not the editor)."""
    for line in coloured_screen(pane).splitlines():
        if WORD in line and "You wrote" not in line:
            return line
    raise AssertionError(f"no line shows {WORD!r}:\n{pane.last_screen}")


def idle(screen: str) -> bool:
    return editor_text(screen) == "" and "demo" in screen.splitlines()[-1]


def start(tmp_path: Path, agent_dir: Path, args: list[str], *, white_terminal: bool = False) -> TmuxPane:
    """pi-tui with the offline model in tmux; with ``white_terminal`` the pane's background is
    set to white before pi-tui starts (so the terminal reports a light background)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    gate = tmp_path / "go"
    argv = [SCRIPT, "--model", "offline/demo", *args]
    if white_terminal:
        wait = 'while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"'
        argv = ["sh", "-c", wait, str(gate), *argv]
    pane = TmuxPane.start(
        argv,
        cwd=project,
        env={
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
            "PI_TUI_OFFLINE_DELAY": "0",
            "COLORTERM": "truecolor",
            "COLORFGBG": "",  # no hint from the environment: only the terminal's answer counts
        },
        width=100,
        height=30,
    )
    if white_terminal:
        pane.tmux("set-option", "-g", "window-style", "bg=#ffffff")
        gate.touch()
    try:
        pane.wait_for(idle, "the chat with an empty editor", timeout=20)
        pane.type(WORD)
        pane.press("Enter")
        pane.wait_for(lambda s: "You wrote" in s and idle(s), "the offline model's reply")
    except BaseException:
        pane.kill()
        raise
    return pane


def test_pi_152_light_theme_by_use_theme_draws_pis_colours(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "themes").mkdir()
    shutil.copy(PI_THEMES / "light.json", agent_dir / "themes" / "pi-light.json")
    pane = start(tmp_path, agent_dir, ["--use-theme", "pi-light"])
    try:
        line = user_message_line(pane)
        colours = REFERENCE["light"]
        assert sgr(colours["userMessageBg"], background=True) in line, line
        text = sgr(colours["userMessageText"], background=False)
        assert re.search(re.escape(text) + "m" + WORD, line), line
        screen = pane.last_screen
        assert "not found" not in screen and "colour token" not in screen, screen  # no warning
        page = sgr(colours["export.pageBg"], background=True)
        assert page in coloured_screen(pane)  # the page behind the chat: pi's export background
    finally:
        pane.kill()
    settings = agent_dir / "settings.json"
    assert not settings.exists() or "theme" not in json.loads(settings.read_text())  # not saved


def test_system_theme_on_a_white_terminal_is_the_light_theme(agent_dir: Path, tmp_path: Path) -> None:
    light = load_theme(builtin_themes_dir() / "light.json").theme
    pane = start(tmp_path, agent_dir, [], white_terminal=True)
    try:
        line = user_message_line(pane)
        assert sgr(light.colors["userMessageBg"] or "", background=True) in line, line
    finally:
        pane.kill()


def test_a_light_dark_pair_draws_its_first_theme_on_a_white_terminal(agent_dir: Path, tmp_path: Path) -> None:
    """pi 1.x's pair order: the theme for light terminals first. ``pi-light/dark`` on a white
    terminal therefore draws pi 1.5.2's light theme (the other order would draw ``dark``)."""
    (agent_dir / "themes").mkdir()
    shutil.copy(PI_THEMES / "light.json", agent_dir / "themes" / "pi-light.json")
    (agent_dir / "settings.json").write_text(json.dumps({"theme": "pi-light/dark"}))
    pane = start(tmp_path, agent_dir, [], white_terminal=True)
    try:
        line = user_message_line(pane)
        assert sgr(REFERENCE["light"]["userMessageBg"], background=True) in line, line
        assert "not found" not in (pane.last_screen or "")
    finally:
        pane.kill()


def test_an_unknown_theme_name_is_one_line_and_the_system_theme(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo", "--use-theme", "nosuch"],
        cwd=project,
        env={
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_TUI_CACHE_DIR": str(tmp_path / "cache"),
            "COLORTERM": "truecolor",
            "COLORFGBG": "",
        },
        width=140,
        height=30,
    )
    try:
        screen = pane.wait_for(lambda s: idle(s) and '"nosuch" not found' in s and s, "the one-line notice")
        notices = [line for line in screen.splitlines() if "nosuch" in line]
        assert len(notices) == 1 and 'using "system"' in notices[0], screen
        assert "Traceback" not in screen and pane.alive()
        dark = load_theme(builtin_themes_dir() / "dark.json").theme
        assert sgr(dark.export["pageBg"] or "", background=True) in coloured_screen(pane)
    finally:
        pane.kill()
