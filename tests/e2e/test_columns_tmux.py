"""/hotkeys and /session in the installed ``pi-tui`` inside tmux: rows too long for the line
continue under their own column (a hanging indent), never at the left margin.

At 80 columns /hotkeys used to wrap most rows, putting ids such as ``tui.input.copy`` at the
left margin where they read as rows of their own; /session's file path continued at the margin
under "File:".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_tui.tui.keybindings import ACTIONS, SCOPES
from tests.e2e.app_pane import start_pi_tui
from tests.e2e.test_tui_tmux import editor_text
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")
MARGIN = 2
"""Where a chat message's text starts on screen (the chat's and the message's padding)."""


def start(agent_dir: Path, tmp_path: Path, width: int, height: int) -> TmuxPane:
    project = tmp_path / "a-project-folder-with-a-rather-long-name" / "and-one-more-level"
    args = ["--model", "offline/demo"]
    return start_pi_tui(
        args, project=project, agent_dir=agent_dir, tmp_path=tmp_path, width=width, height=height
    )


def run_command(pane: TmuxPane, command: str) -> None:
    pane.type(command)
    pane.wait_for(lambda s: editor_text(s) == command, f"{command} in the editor")
    pane.press("Enter")


def message_lines(screen: str, title: str, end: str) -> list[str]:
    """The message's lines from its title to the line holding ``end``, scroll bar cut off."""
    lines = [line[:-1].rstrip() if line.endswith(("▁", "▂", "▃", "▄", "▅", "▆", "▇", "█")) else line.rstrip()
             for line in screen.splitlines()]  # fmt: skip
    first = next(i for i, line in enumerate(lines) if line.strip() == title)
    last = next(i for i in range(first, len(lines)) if end in lines[i])
    return lines[first + 1 : last + 1]


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@pytest.mark.parametrize(("width", "height"), [(80, 200), (120, 150)])
def test_hotkeys_rows_keep_to_their_columns(agent_dir: Path, tmp_path: Path, width: int, height: int) -> None:
    pane = start(agent_dir, tmp_path, width, height)
    try:
        run_command(pane, "/hotkeys")
        last_row = "Select chat text"
        screen = pane.wait_for(lambda s: s if last_row in s else "", "the whole /hotkeys table")
        lines = message_lines(screen, "Keys", last_row)
        titles = {*SCOPES.values(), "Also"}
        section = ""
        column: dict[str, int] = {}
        for line in lines:
            if not line.strip():
                continue
            if indent(line) == MARGIN:  # the heading (and its wrapped end) or a section's title
                assert line.strip() in titles or not section, f"a row at the left margin: {line!r}\n{screen}"
                section = line.strip() if line.strip() in titles else section
                continue
            key_row = re.match(rf"^ {{{MARGIN + 2}}}\S.*?\S,?( {{2,}})\S", line)
            if key_row:  # keys, then the description where this section's descriptions start
                column.setdefault(section, key_row.end() - 1)
                assert key_row.end() - 1 == column[section], f"{line!r} out of its column\n{screen}"
            elif indent(line) != MARGIN + 2:  # a continuation: under the descriptions
                assert indent(line) == column[section], f"{line!r} not under its column\n{screen}"
            assert len(line) <= width - 2, line  # nothing reaches the scroll bar
        shown = " ".join(line.strip() for line in lines)
        for action, spec in ACTIONS.items():  # every id whole, on one line
            assert (spec.pi_id or action) in shown.split(), action
    finally:
        pane.kill()


def test_session_path_continues_under_its_value(agent_dir: Path, tmp_path: Path) -> None:
    pane = start(agent_dir, tmp_path, 80, 40)
    try:
        run_command(pane, "/session")
        screen = pane.wait_for(lambda s: s if "Model:" in s else "", "the /session message")
        lines = message_lines(screen, "Session", "Model:")
        file_at = next(i for i, line in enumerate(lines) if line.strip().startswith("File:"))
        value_column = lines[file_at].index("/")
        path = lines[file_at][value_column:]
        for line in lines[file_at + 1 :]:
            if re.match(r"^\s+\w+:\s", line):
                break  # the next label
            assert indent(line) == value_column, f"{line!r} is not under the path\n{screen}"
            path += line.strip()
        session_id = next(line.split()[-1] for line in lines if line.strip().startswith("ID:"))
        # the whole path, read back from its pieces (the file is written with the first reply)
        assert len(path) > 80 - value_column, screen
        assert path.startswith(f"{agent_dir}/sessions/") and path.endswith(f"_{session_id}.jsonl"), path
    finally:
        pane.kill()
