"""/reload and /changelog in the installed ``pi-tui`` at 80x24 (tmux).

/reload used to say everything in one sentence with brackets nested in brackets ("context
files and rules (8 stream rules (they stop a reply ...))"); now the files it re-read are one
plain line and each thing with something to report has a line of its own. /changelog shows
pi's "What's New" with the version heading, in words a user reads.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_columns_tmux import run_command, start
from tests.support.requires import requires

pytestmark = requires("tmux", "pi-tui")


def nesting(text: str) -> int:
    """How deep brackets go in ``text``."""
    depth = deepest = 0
    for character in text:
        if character in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif character in ")]":
            depth -= 1
    return deepest


def test_reload_summary_is_plain(agent_dir: Path, tmp_path: Path) -> None:
    pane = start(agent_dir, tmp_path, 80, 24)
    try:
        run_command(pane, "/reload")
        screen = pane.wait_for(lambda s: s if "Theme:" in s else "", "the /reload summary's last line")
        lines = screen.splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip().startswith("Reloaded "))
        last = next(i for i in range(first, len(lines)) if "Theme:" in lines[i])
        message = [line.strip() for line in lines[first : last + 1]]
        assert message[0] == "Reloaded settings, models.json, auth.json and keybindings.", screen
        labels = [line.split(":")[0] for line in message[1:]]
        assert labels == ["Context files and rules", "Skills and prompt templates", "Secrets", "Theme"], (
            screen
        )
        assert all(nesting(line) == 0 for line in message), screen
        assert "8 stream rules" in message[1] and "they stop" not in " ".join(message), screen
    finally:
        pane.kill()


def test_changelog_shows_what_is_new(agent_dir: Path, tmp_path: Path) -> None:
    pane = start(agent_dir, tmp_path, 80, 24)
    try:
        run_command(pane, "/changelog")
        screen = pane.wait_for(lambda s: s if "[0.1.0]" in s else "", "the version heading", timeout=15)
        assert "What's New" in screen and "issue" not in screen.lower(), screen
        pane.press("PageUp")  # the newest entry ends at the bottom; its start is above
        pane.wait_for(lambda s: "A coding agent in your terminal" in s, "the first new feature")
    finally:
        pane.kill()
