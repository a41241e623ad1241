"""pi 1.x's keybinding ids in the installed ``pi-tui``, in a real terminal (tmux): a
keybindings.json written for pi 1.5.2 loads without a complaint, and its keys do their things:
Ctrl+X copies the last answer, the history key recalls a prompt, the search key finds text in
the transcript, Ctrl+Shift+Up jumps to a prompt, and /hotkeys shows the keys on screen."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

from tests.support.tmux import TmuxPane
from tests.tui.test_long_session_open import long_session

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
TURNS = 40


def test_a_pi_1_keybindings_json_works_in_the_terminal(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    path = long_session(project, tmp_path / "sessions", TURNS)
    (agent_dir / "keybindings.json").write_text(
        json.dumps(
            {
                "$schema": "https://pi.dev/schemas/keybindings.schema.json",
                "app.message.copy": "ctrl+x",
                "tui.editor.historyPrevious": "alt+p",
                "tui.altScreen.search": ["ctrl+shift+f", "f3"],  # tmux cannot send Ctrl+Shift+F
                "tui.altScreen.searchNext": ["enter", "ctrl+g"],
                "tui.altScreen.searchClose": "escape",
                "tui.altScreen.halfPageUp": "alt+u",
                "tui.altScreen.previousPrompt": ["ctrl+shift+up", "ctrl+up"],
            }
        )
    )
    tools = tmp_path / "bin"
    tools.mkdir()
    clipboard = tmp_path / "clipboard.txt"
    xclip = tools / "xclip"
    xclip.write_text(f"#!/bin/sh\ncat > {clipboard}\n")
    xclip.chmod(xclip.stat().st_mode | stat.S_IEXEC)
    env = {
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_TUI_CACHE_DIR": os.environ["PI_TUI_CACHE_DIR"],
        "PI_TUI_PI_AGENT_DIR": os.environ["PI_TUI_PI_AGENT_DIR"],
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "DISPLAY": ":0",
    }
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo", "--session", str(path)],
        cwd=project,
        env=env,
        width=100,
        height=40,
    )
    newest = f"answer {TURNS - 1}"
    try:
        screen = pane.wait_for(
            lambda s: s if newest in s and "demo" in s.splitlines()[-1] else None, "the chat"
        )
        assert "unknown action" not in screen and "keybindings.json" not in screen, screen

        pane.press("C-x")  # app.message.copy
        pane.wait_for(lambda s: clipboard.exists() and clipboard.read_text() == newest, "the answer copied")
        pane.wait_for(lambda s: "xclip" in s, "the copy hint")

        pane.press("M-p")  # tui.editor.historyPrevious
        last = f"question {TURNS - 1}"
        pane.wait_for(lambda s: last in s.splitlines()[-4], "the last prompt recalled into the editor")
        pane.press("C-c")  # clear the editor again

        pane.press("F3")  # tui.altScreen.search
        pane.wait_for(lambda s: "Search:" in s, "the search box")
        pane.type("question 1")  # question 1 and 10..19: eleven matches
        pane.wait_for(lambda s: "1/11" in s, "the first of eleven matches")
        pane.wait_for(lambda s: re.search(r"question 1(?!\d)", s), "the first match on screen")
        pane.press("C-g")  # searchNext
        pane.wait_for(lambda s: "2/11" in s and "question 10" in s, "the next match")
        pane.press("Escape")  # searchClose
        pane.wait_for(lambda s: "Search:" not in s, "the search box closed")

        pane.press("C-End")
        pane.wait_for(lambda s: newest in s, "back at the end")

        def top_prompt(screen: str) -> int | None:
            """The number of the prompt on the chat's second row (its first is the prompt's
            padding), right under the three header lines."""
            found = re.fullmatch(r"\s*question (\d+)\s*", screen.splitlines()[4])
            return int(found.group(1)) if found else None

        pane.press("C-S-Up")  # previousPrompt
        first = pane.wait_for(top_prompt, "a prompt at the top of the chat")
        pane.press("C-S-Up")
        pane.wait_for(lambda s: top_prompt(s) == first - 1, "the prompt before it at the top")
        pane.press("C-S-Down")  # nextPrompt
        pane.wait_for(lambda s: top_prompt(s) == first, "the next prompt at the top again")

        pane.type("/hotkeys")
        pane.press("Enter")
        screen = pane.wait_for(lambda s: s if "Keyboard shortcuts" in s else None, "/hotkeys")
        for key in ("Ctrl+Z", "Ctrl+G", "PageUp", "PageDown", "Ctrl+X", "Alt+X", "Alt+U", "F3"):
            assert key in screen, (key, screen)
    finally:
        pane.kill()
