"""Only pi-tui writes escape sequences to the terminal: the installed ``pi-tui`` in tmux.

Escape sequences arrive from every side: a file the model reads, a command's output, the
model's reply (plain, in a code span, in a fenced block, in a link target), its thinking, a tool
call's arguments, a provider's error message, and a resumed session file (a message, a label, the
session name). Each carries its own window title (``OSC 0``), and with it a screen clear
(``CSI 2J``) and a clipboard write (``OSC 52``). One app run goes through all of them, and after
each step the pane must still have tmux's own title, must still show the header drawn at the
start (a clear would have blanked it: Textual only redraws what changed), and must show the
sequence as visible symbols (``␛]0;PWN-FILE␇``). At the end tmux, which keeps every OSC 52 write
as a paste buffer (``set-clipboard on``), holds none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.session.manager import SessionManager
from tests.e2e.test_tui_tmux import MODEL, SCRIPT, editor_text, ready
from tests.support.builders import assistant, user
from tests.support.model_server import HttpError, ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

CLEAR = "\x1b[2J"


def attack(source: str) -> str:
    """A window title naming ``source``, a screen clear and a clipboard write."""
    return f"\x1b]0;PWN-{source}\x07{CLEAR}\x1b]52;c;UFdORUQ=\x07"


def shown(source: str) -> str:
    """How the title sequence of ``source`` must look on screen."""
    return f"␛]0;PWN-{source}␇"


HEADER = "pi-tui v"
"""The header's first words: drawn once at the start, so a screen clear would leave it blank."""


def resumed_session(project: Path) -> None:
    """The folder's most recent session: a message, a label and a name holding sequences."""
    manager = SessionManager.create(str(project))
    asked = manager.append_message(user("resumed question " + attack("SESSION")))
    manager.append_message(assistant("resumed answer"))
    manager.append_label_change(asked, "mark " + attack("LABEL"))
    manager.append_session_info("name " + attack("NAME"))
    manager.close()


PRINTF = r"printf 'out \033]0;PWN-BASH\007\033[2J\033]52;c;QkFTSA==\007\n'"
"""A command whose output (not its text) holds the sequences."""

REPLIES = [
    Scripted(
        thinking="pondering " + attack("THINK"),
        tool_calls=[
            ToolCallSpec("read", {"path": "evil.txt"}),
            ToolCallSpec("bash", {"command": PRINTF}),
            ToolCallSpec("bash", {"command": ": 'arg " + attack("ARG") + "'"}),
        ],
    ),
    Scripted(
        text=(
            f"Reply {attack('REPLY')} and `span {attack('SPAN')}` and [a link](http://x/{attack('LINK')}).\n\n"
            f"```\ncode {attack('CODE')}\n```\n\nReply ends."
        )
    ),
    HttpError(400, message="bad request " + attack("ERROR")),
]


class Terminal:
    """The pane and what it started with; :meth:`check` notes every way the terminal was taken."""

    def __init__(self, pane: TmuxPane) -> None:
        self.pane = pane
        self.title = self.pane_title()
        self.problems: list[str] = []

    def pane_title(self) -> str:
        shown = self.pane.tmux("display-message", "-p", "-t", self.pane.session, "#{pane_title}")
        return shown.stdout.strip()

    def buffers(self) -> str:
        return self.pane.tmux("list-buffers", check=False).stdout.strip()

    def check(self, step: str, markers: list[str], visible: list[str]) -> str:
        """Wait for plain ``markers`` (on screen whatever the escapes did), then note a changed
        title, a cleared screen, a clipboard write and any sequence not shown as symbols."""
        screen = self.pane.wait_for(
            lambda text: text if all(marker in text for marker in markers) else None, f"{markers} ({step})"
        )
        if (title := self.pane_title()) != self.title:
            self.problems.append(f"{step}: the window title became {title!r}")
        if HEADER not in screen.splitlines()[0]:
            self.problems.append(f"{step}: the screen was cleared (the header is gone)")
        if buffers := self.buffers():
            self.problems.append(f"{step}: OSC 52 reached the terminal: {buffers}")
        missing = [text for text in visible if text not in screen]
        if missing:
            self.problems.append(f"{step}: not shown as symbols: {missing}")
        return screen


def run_command(pane: TmuxPane, command: str) -> None:
    """Type ``command`` and press Enter once the completion menu lists it (Enter typed ahead of
    the menu is another issue's subject, not this test's)."""
    pane.type(command)
    pane.wait_for(
        lambda text: (
            editor_text(text) == command
            and any(line.strip(" │").startswith(f"{command}  ") for line in text.splitlines())
        ),
        f"{command} in the editor and the completion menu",
    )
    pane.press("Enter")


@pytest.fixture
def terminal(agent_dir: Path, tmp_path: Path) -> Iterator[Terminal]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "evil.txt").write_text("file says " + attack("FILE") + " end of file\n")
    resumed_session(project)
    with ModelServer(*REPLIES) as server:
        models = server.models_json(models=[{"id": MODEL, "name": "Tmux test model"}])
        (agent_dir / "models.json").write_text(json.dumps(models))
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", MODEL, "--continue"],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir)},
            width=150,
            height=50,
        )
        try:
            pane.tmux("set-option", "-g", "set-clipboard", "on")  # keep OSC 52 writes as buffers
            pane.wait_for(ready, "the app with its editor and footer", timeout=15)
            yield Terminal(pane)
        finally:
            pane.kill()


def test_no_outside_text_drives_the_terminal(terminal: Terminal) -> None:
    pane = terminal.pane
    assert terminal.title, "tmux gives the pane a title to compare against"
    # a resumed session: its message, the label beside it and its name in the footer
    terminal.check(
        "resumed session",
        ["resumed question", "resumed answer", "[mark", "• name"],
        [shown("SESSION"), f"[mark {shown('LABEL')}", f"• name {shown('NAME')}"],
    )

    # thinking, a file read, a command's output, a tool call's argument; then a Markdown reply
    pane.type("go")
    pane.press("Enter")
    screen = terminal.check(
        "tools and reply",
        ["pondering", "file says", "$ : 'arg", "out ", "Reply ends."],
        [shown(source) for source in ("THINK", "FILE", "BASH", "ARG", "REPLY", "SPAN", "CODE")],
    )
    if shown("FILE") in screen:
        assert "␛[2J␛]52;c;UFdORUQ=␇ end of file" in screen  # the whole sequence is shown

    # a provider error quoting the server's body
    pane.type("again")
    pane.press("Enter")
    terminal.check("provider error", ["bad request"], [shown("ERROR")])

    # /tree: the entries and the label from the file
    pane.press("C-c")  # the failed prompt was put back in the editor: clear it
    pane.wait_for(lambda text: editor_text(text) == "", "the editor to be empty")
    run_command(pane, "/tree")
    terminal.check(
        "/tree", ["user: resumed question", "[mark"], [shown("SESSION"), f"[mark {shown('LABEL')}"]
    )
    pane.press("Escape")
    pane.wait_for(lambda text: editor_text(text) == "", "the tree to close")

    # /resume: the session's name in the picker
    run_command(pane, "/resume")
    terminal.check("/resume", ["search: words", "name "], ["name " + shown("NAME")])
    pane.press("Escape")
    pane.wait_for(lambda text: "search: words" not in text, "the picker to close")

    # Up, five times: the resumed message comes back into the editor from the prompt history
    for expected in ("/resume", "/tree", "again", "go", "resumed question"):
        pane.press("Up")
        pane.wait_for(lambda text, want=expected: (editor_text(text) or "").startswith(want), expected)
    screen = terminal.check("history", [], [])
    if shown("SESSION") not in (editor_text(screen) or ""):
        terminal.problems.append(f"history: the editor shows {editor_text(screen)!r}")
    assert terminal.problems == []
