"""``pi-tui --tui-mode regular`` keeps the whole conversation in the terminal's own scrollback.

The installed script runs inline in a 100x30 tmux pane, started from a shell, against the
loopback model server. Finished chat items are written above the inline block, so tmux's
history (``capture-pane -S -1000``, what copy mode and the scroll wheel show) holds every
message and reply exactly once and in order, during the run and after quitting; the block itself
is only as tall as what is live, the editor, the status line and the footer.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_tui_tmux import MODEL, SCRIPT, editor_text
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

WIDTH, HEIGHT = 100, 30
MESSAGES = [f"question-{number:02d} about item {number}" for number in range(1, 11)]
README = "Marmalade readme line\n"
HOSTILE = "colour \x1b[31mRED\x1b[0m and a bell \x07 here"
"""A reply trying to drive the terminal: it must arrive as visible symbols, never as codes."""


def history(pane: TmuxPane) -> str:
    """The pane's scrollback and screen (what the terminal's own scrolling can show)."""
    return pane.tmux("capture-pane", "-p", "-S", "-1000", "-t", pane.session).stdout


def exact_lines(text: str, wanted: str) -> int:
    """How many lines of ``text`` are exactly ``wanted`` once trimmed."""
    return sum(1 for line in text.splitlines() if line.strip() == wanted)


def start_regular(tmp_path: Path, server: ModelServer) -> TmuxPane:
    """A shell in a 100x30 pane; in it, ``pi-tui --tui-mode regular`` once it is ready."""
    agent_dir = tmp_path / "regular" / "agent"
    project = tmp_path / "regular" / "project"
    agent_dir.mkdir(parents=True)
    project.mkdir()
    (project / "README.md").write_text(README)
    (project / "AGENTS.md").write_text("Be brief.\n")  # listed in the banner, written first
    models = server.models_json(models=[{"id": MODEL, "name": "Tmux test model"}])
    (agent_dir / "models.json").write_text(json.dumps(models))
    pane = TmuxPane.start(
        ["bash", "--norc", "--noprofile", "-i"],
        cwd=project,
        env={"PI_CODING_AGENT_DIR": str(agent_dir), "PS1": "shell$ "},
        width=WIDTH,
        height=HEIGHT,
    )
    try:
        pane.wait_for(lambda screen: "shell$" in screen, "the shell prompt")
        pane.type(f"{SCRIPT} --provider test --model {MODEL} --tui-mode regular")
        pane.press("Enter")
        pane.wait_for(lambda screen: MODEL in screen and editor_text(screen) == "", "pi-tui ready", 20)
    except BaseException:
        pane.kill()
        raise
    return pane


def ask(pane: TmuxPane, text: str, answer: str) -> None:
    """Send ``text`` and wait until ``answer`` is written and the editor is empty again."""
    pane.type(text)
    pane.wait_for(lambda screen: editor_text(screen) == text, f"{text!r} in the editor")
    pane.press("Enter")
    pane.wait_for(
        lambda screen: exact_lines(screen, answer) == 1 and editor_text(screen) == "",
        f"the answer {answer!r}",
        20,
    )


def footer_row(screen: str) -> int | None:
    """The last row of the pane naming the model (the footer), None when none does."""
    rows = screen.split("\n")[:HEIGHT]
    found = [index for index, row in enumerate(rows) if MODEL in row]
    return found[-1] if found else None


def in_order(text: str, wanted: list[str]) -> bool:
    """Each of ``wanted`` is a whole line of ``text``, exactly once, in this order."""
    lines = [line.strip() for line in text.splitlines()]
    if any(lines.count(line) != 1 for line in wanted):
        return False
    positions = [lines.index(line) for line in wanted]
    return positions == sorted(positions)


def test_regular_mode_keeps_every_message_and_reply_in_the_scrollback(tmp_path: Path) -> None:
    with ModelServer() as server:
        pane = start_regular(tmp_path, server)
        try:
            ask(pane, MESSAGES[0], f"echo: {MESSAGES[0]}")
            # The block follows its content: under the footer, the rest of the pane is empty.
            # (Waited for, not captured at once: the finished exchange is written above the block
            # in the next frame, and a capture can land in the middle of that frame's bytes.)
            screen = pane.wait_for(
                lambda screen: screen if footer_row(screen) is not None else None, "the footer"
            )
            footer = footer_row(screen)
            for message in MESSAGES[1:]:
                ask(pane, message, f"echo: {message}")
            expected = [line for message in MESSAGES for line in (message, f"echo: {message}")]
            pane.wait_for(
                lambda _screen: in_order(history(pane), expected), "every exchange in the history", 20
            )
            pane.press("C-d")
            pane.wait_for(lambda screen: "To resume this session:" in screen, "the resume line", 15)
            after = history(pane)
        finally:
            pane.kill()
    assert in_order(after, expected), after
    assert footer is not None and footer < HEIGHT - 5, screen  # not a block filling the pane
    # the banner went first, once; the resume line comes after the conversation
    assert exact_lines(after, "Press Ctrl+O for every key (again to fold); /hotkeys lists them all.") == 1
    assert sum("AGENTS.md" in line for line in after.splitlines()) == 1, after  # all of it, once
    assert after.index("To resume this session:") > after.index(f"echo: {MESSAGES[-1]}")


def test_regular_mode_writes_tool_cards_safe_text_and_a_separator_for_a_new_session(tmp_path: Path) -> None:
    replies = [
        Scripted(tool_calls=[ToolCallSpec("read", {"path": "README.md"})]),
        Scripted(text="Read it."),
        Scripted(text=HOSTILE),
    ]
    with ModelServer(*replies) as server:
        pane = start_regular(tmp_path, server)
        try:
            pane.tmux("pipe-pane", "-O", "-t", pane.session, f"cat >> {tmp_path / 'raw'}")
            ask(pane, "read the readme", "Read it.")
            ask(pane, "say something odd", "colour ␛[31mRED␛[0m and a bell ␇ here")
            pane.type("/new")
            pane.wait_for(lambda screen: editor_text(screen) == "/new", "/new typed")
            pane.press("Enter")
            separator = "── the conversation as it is shown now "
            pane.wait_for(lambda _screen: separator in history(pane), "the separator", 20)
            ask(pane, "a fresh start", "echo: a fresh start")
            pane.press("C-d")
            pane.wait_for(lambda screen: "To resume this session:" in screen, "the resume line", 15)
            after = history(pane)
        finally:
            pane.kill()
    card = next(line.strip() for line in after.splitlines() if "README.md" in line)
    assert card.startswith("read"), after
    assert any(line.rstrip().endswith("Marmalade readme line") for line in after.splitlines()), after
    order = ["read the readme", "Read it.", "say something odd", "a fresh start", "echo: a fresh start"]
    assert in_order(after, order), after
    assert after.index(separator) < after.index("a fresh start")
    raw = (tmp_path / "raw").read_bytes()
    assert b"\x1b[31mRED" not in raw and b"\x07 here" not in raw


def test_regular_mode_writes_a_continued_session_once(tmp_path: Path) -> None:
    """``-c``: the session drawn at start (its tail first, then the whole branch, which
    replaces it) is written once, banner first, and stays after quitting; the block (editor,
    footer) is cleared at exit, so the resume line follows the conversation."""
    with ModelServer() as server:
        pane = start_regular(tmp_path, server)
        try:
            ask(pane, "first visit", "echo: first visit")
            ask(pane, "second question", "echo: second question")
            pane.press("C-d")
            pane.wait_for(lambda screen: screen.rstrip().endswith("shell$"), "the shell again", 15)
            pane.type(f"echo CONTINUED; {SCRIPT} --provider test --model {MODEL} --tui-mode regular -c")
            pane.press("Enter")

            def continued() -> str:
                return history(pane).split("\nCONTINUED\n", 1)[-1]

            pane.wait_for(lambda _screen: "Continuing" in continued(), "the session continued", 30)
            pane.press("C-d")
            pane.wait_for(lambda _screen: "To resume this session:" in continued(), "the resume line", 15)
            after = continued()
        finally:
            pane.kill()
    conversation = ["first visit", "echo: first visit", "second question", "echo: second question"]
    assert in_order(after, conversation), after
    assert after.index("Press Ctrl+O for every key") < after.index("first visit"), after
    # the block was cleared at exit: no editor box left between the conversation and the resume line
    tail = after[after.index("echo: second question") : after.index("To resume this session:")]
    assert "╭" not in tail and MODEL not in tail, after
