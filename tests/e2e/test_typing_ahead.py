"""Typing ahead in the real binary: a command typed in a burst and Enter run exactly what was
typed, never a row of a completion menu that had not caught up with the keys.

20 rounds of ``/name x y<i>``, ``/session``, ``/thinking high|low`` and ``/label z<i>``: the first
ten sent as one write (text and Enter together: 0 ms a key), the rest a key every 30 ms. Each
answer is distinct from the one before, so a command run without its argument, a different
command, or nothing at all is caught.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.tmux import TmuxPane

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
ROUNDS = 20
SLOW_FROM = 10
KEY_DELAY = 0.03


def send(pane: TmuxPane, text: str, slow: bool) -> None:
    if not slow:
        pane.type(text + "\r")  # one write: the keys and Enter arrive together
        return
    for character in text:
        pane.type(character)
        time.sleep(KEY_DELAY)
    pane.press("Enter")


def lines_of(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines()]


def last_line_starting(screen: str, prefix: str) -> str | None:
    found = [line for line in lines_of(screen) if line.startswith(prefix)]
    return found[-1] if found else None


def no_picker(screen: str) -> bool:
    return "Unknown command" not in screen and "Branch from" not in screen and "Select" not in screen


def test_bursts_of_commands_run_exactly_what_was_typed(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pane = TmuxPane.start(
        [SCRIPT, "--model", "offline/demo"],
        cwd=project,
        env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_OFFLINE_DELAY": "0"},
        width=120,
        height=50,
    )
    correct = 0
    try:
        pane.wait_for(lambda screen: "demo" in screen.splitlines()[-1], "the footer", timeout=15)
        send(pane, "hello", slow=False)
        pane.wait_for(lambda screen: "offline demo" in screen, "the demo's answer", timeout=15)
        level = "low"
        for round_number in range(ROUNDS):
            slow = round_number >= SLOW_FROM
            level = "high" if level == "low" else "low"
            checks: list[tuple[str, Callable[[str], bool]]] = [
                (f"/name x y{round_number}", lambda s, n=round_number: f"Session named “x y{n}”." in s),
                ("/session", lambda s, n=round_number: last_line_starting(s, "Name:") == f"Name:     x y{n}"),
                (
                    f"/thinking {level}",
                    lambda s, v=level: last_line_starting(s, "Thinking level:") == f"Thinking level: {v}",
                ),
                (
                    f"/label z{round_number}",
                    lambda s, n=round_number: f"Labelled the last message [z{n}]." in s,
                ),
            ]
            for command, answered in checks:
                send(pane, command, slow)
                screen = pane.wait_for(
                    lambda s, check=answered: check(s) and s.count("│") >= 2 and s, f"the answer to {command}"
                )
                assert no_picker(screen), f"{command} opened something else:\n{screen}"
                correct += 1
    finally:
        pane.kill()
    assert correct == 4 * ROUNDS
