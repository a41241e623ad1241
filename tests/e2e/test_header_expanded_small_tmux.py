"""The expanded header (Ctrl+O, which the start banner points to) in small terminals, in the
installed ``pi-tui`` in tmux: it takes at most half the rows, the key list goes into columns, the
chat keeps rows, and the editor and footer stay on screen."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.e2e.test_tui_tmux import SCRIPT, editor_text, pytestmark
from tests.support.tmux import TmuxPane

__all__ = ["pytestmark"]  # skip without tmux or the installed script, as the main TUI test does

MIN_CHAT_ROWS = 4


def rows_between_header_and_editor(screen: str) -> tuple[int, int, int]:
    """(header rows, chat rows, editor top row): the header ends with its "Loaded:" line (its
    continuation, when wrapped, is indented like it); the chat runs down to the status line
    (the "▌" notice rows tmux's start brings, or the editor box when there is none)."""
    lines = screen.splitlines()
    editor_top = max(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))
    header_end = max(i for i, line in enumerate(lines[:editor_top]) if "Loaded:" in line)
    status = [i for i in range(header_end + 1, editor_top) if lines[i].lstrip().startswith("▌")]
    chat_end = min(status) if status else editor_top
    return header_end + 1, chat_end - header_end - 1, editor_top


@pytest.mark.parametrize(("width", "height"), [(80, 24), (100, 30), (120, 40)])
def test_ctrl_o_header_leaves_the_chat_editor_and_footer_on_screen(
    agent_dir: Path, width: int, height: int
) -> None:
    with tempfile.TemporaryDirectory(prefix="hdr") as folder:
        project = Path(folder)
        pane = TmuxPane.start(
            [SCRIPT, "--model", "offline/demo"],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir)},
            width=width,
            height=height,
        )
        try:
            pane.wait_for(
                lambda s: editor_text(s) == "" and "demo" in s.splitlines()[-1] and "Loaded:" in s,
                "the folded header, the editor and the footer",
                timeout=15,
            )
            pane.press("C-o")
            screen = pane.wait_for(
                lambda s: s if "Shift+Tab" in s and "Loaded:" in s else None, "the expanded key list"
            )
            lines = screen.splitlines()
            assert "demo" in lines[-1], f"the footer's model line left the screen:\n{screen}"
            assert editor_text(screen) == "", f"the editor left the screen:\n{screen}"
            header, chat, editor_top = rows_between_header_and_editor(screen)
            assert header <= height // 2, f"the header takes {header} of {height} rows:\n{screen}"
            assert chat >= MIN_CHAT_ROWS, f"the chat has {chat} rows left:\n{screen}"
            assert editor_top < height - 3, screen
            pane.press("C-o")
            pane.wait_for(lambda s: "Press Ctrl+O for every key" in s, "Ctrl+O again to fold the header")
        finally:
            pane.kill()
