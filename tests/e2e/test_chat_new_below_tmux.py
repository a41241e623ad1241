"""Output that arrives while the chat is scrolled up, in the installed ``pi-tui`` (tmux, 80x24).

A long reply streams from the loopback server; PageUp mid-stream leaves the bottom. The view must
stay where the reader put it while the reply goes on growing below, and a one-line notice at the
chat's bottom edge must say that there is new output and name the jump key. Ctrl+End (the
``chat_bottom`` key) goes back: the notice is gone and the reply's end comes into view. The
mouse wheel does the same: up shows the notice, down to the end drops it and follows again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.app_pane import start_pi_tui
from tests.e2e.test_tui_tmux import chat_lines, editor_text, pytestmark
from tests.support.model_server import ModelServer, Scripted
from tests.support.tmux import TmuxPane

__all__ = ["pytestmark"]  # skip without tmux or the installed script, as the main TUI test does

MODEL = "unseen-model"
PARAGRAPHS = 300
REPLY = "\n\n".join(f"para{i:03d} of the reply" for i in range(1, PARAGRAPHS + 1))
NOTICE = "New output below"
WHEEL_UP = "\x1b[<64;20;8M"
WHEEL_DOWN = "\x1b[<65;20;8M"
"""The mouse wheel over the chat as the terminal reports it (SGR mouse mode, which pi-tui turns on)."""


def paragraphs(screen: str) -> list[int]:
    """The reply's paragraph numbers on screen, top to bottom."""
    return [int(n) for n in re.findall(r"para(\d{3})", "\n".join(chat_lines(screen)))]


def seconds_working(screen: str) -> int | None:
    """The status line's elapsed time ("Working... 5s"), None once the reply has ended."""
    found = re.search(r"Working\.\.\. (\d+)s", screen)
    return int(found.group(1)) if found else None


def start(agent_dir: Path, tmp_path: Path, server: ModelServer) -> TmuxPane:
    """pi-tui at 80x24 on the loopback server, once its editor and footer show."""
    (agent_dir / "models.json").write_text(
        json.dumps(server.models_json(models=[{"id": MODEL, "name": "M"}]))
    )
    args = ["--provider", "test", "--model", MODEL]
    return start_pi_tui(
        args, project=tmp_path / "project", agent_dir=agent_dir, tmp_path=tmp_path, footer=MODEL
    )


def test_scrolled_up_chat_stays_put_shows_the_new_output_notice_and_ctrl_end_jumps(
    agent_dir: Path, tmp_path: Path
) -> None:
    # one paragraph a delta, 20 a second: the whole reply takes 15 s or more (a busy machine
    # draws fewer a second), so it still streams when the wheel's turn comes
    with ModelServer(Scripted(text=REPLY, delta_size=22, event_delay=0.05)) as server:
        pane = start(agent_dir, tmp_path, server)
        try:
            pane.type("Tell me a long story")
            pane.wait_for(lambda s: editor_text(s) == "Tell me a long story", "the prompt in the editor")
            pane.press("Enter")
            pane.wait_for(lambda s: any(n >= 25 for n in paragraphs(s)), "the reply streaming past a screen")
            pane.press("PPage")
            held = pane.wait_for(
                lambda s: s if NOTICE in s and seconds_working(s) is not None else None,
                "the new-output notice while the reply still streams",
            )
            notice = next(line for line in held.splitlines() if NOTICE in line)
            assert "Ctrl+End" in notice, notice
            shown = paragraphs(held)
            assert shown and max(shown) < PARAGRAPHS, held
            # The reply goes on for two more seconds of the status line's clock; the view must
            # not move meanwhile (it is not yanked down to the end) and the notice stays.
            since = seconds_working(held) or 0
            later = pane.wait_for(
                lambda s: s if (seconds_working(s) or 0) >= since + 2 else None,
                "two more seconds of streaming",
                timeout=15,
            )
            assert paragraphs(later) == shown, f"the view moved while scrolled up:\n{held}\n---\n{later}"
            assert NOTICE in later, later
            # The notice sits on the chat's last row, right above the status line.
            rows = chat_lines(later)
            assert NOTICE in rows[next(i for i, row in enumerate(rows) if "Working..." in row) - 1], later

            pane.press("C-End")
            pane.wait_for(
                lambda s: NOTICE not in s and max(paragraphs(s), default=0) > max(shown) + 5,
                "Ctrl+End to drop the notice and show the newest output",
            )

            # The wheel: three notches up leave the end, and the notice comes with the next output.
            for _ in range(3):
                pane.type(WHEEL_UP)
            pane.wait_for(
                lambda s: NOTICE in s and seconds_working(s) is not None,
                "the notice after the wheel went up mid-reply",
            )
            # Notches down until the notice goes (the reply grows meanwhile: how far the end is
            # depends on the machine's speed); extra notches at the end do nothing.
            for _ in range(100):
                if NOTICE not in (pane.capture() or NOTICE):
                    break
                for _ in range(10):
                    pane.type(WHEEL_DOWN)
            bottom = pane.wait_for(
                lambda s: s if NOTICE not in s else None, "the wheel down to the end to drop the notice"
            )
            pane.wait_for(
                lambda s: (
                    max(paragraphs(s), default=0) > max(paragraphs(bottom))
                    or (f"para{PARAGRAPHS:03d}" in s and NOTICE not in s)
                ),
                "the chat following the reply again after the wheel (or showing its end)",
            )
            # Escape stops the rest of the reply: the chat, at its end, says nothing is below.
            pane.press("Escape")
            end = pane.wait_for(lambda s: s if seconds_working(s) is None else None, "the reply stopped")
            assert NOTICE not in end, end
        finally:
            pane.kill()
