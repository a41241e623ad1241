"""Starting the interactive mode from the command line, and leaving it however it ends.

The app runs on a loop made here so that SIGTERM and SIGHUP (the terminal closed) are handled
from the first frame: running commands are killed with all they started, the app shuts down as
on /quit (the run is aborted and recorded, the session file flushed, fsynced and unlocked, the
terminal restored) and the exit code is 128 + the signal. If the terminal is gone and the app
cannot finish, :func:`_last_resort` does the essential part and the process ends anyway.

pi 1.x's two terminal modes (``tuiMode``, ``--tui-mode``): ``fullscreen`` (the default) is the
alternate screen; ``regular`` runs the app inline, under what the shell printed before, writes
each finished chat item into the terminal's scrollback above it (:mod:`pi_tui.tui.scrollback`,
started with the display settings), leaves the mouse to the terminal and, at exit, writes what
was still live and clears its block: the conversation stays, the editor and footer go. After a quit, as
pi does, the transcript is printed on the normal screen (``fullscreenExitOutput``:
``transcript``, fullscreen only) and then the command that resumes the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.modes.attachments import Prompt
    from pi_tui.start_options import StartOptions
    from pi_tui.startup import Started


def run_interactive(
    options: StartOptions,
    cwd: str,
    initial_prompts: list[Prompt] | None = None,
    resume_picker: bool = False,
) -> int:
    """Run the app until the user leaves; the session file is closed on the way out.

    The app is built from the options, not from a started agent: it shows its first frame at
    once and runs :func:`pi_tui.startup.start` in a thread (the import of the agent, models and
    session layers is most of the start-up time). ``resume_picker`` (``pi-tui -r``) opens the
    session picker over the new, empty session.
    """
    from pi_tui.modes.exit_signals import ExitSignals
    from pi_tui.tools.bash import kill_running_commands
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.gitinfo import git_branch
    from pi_tui.tui.terminal_keys import restore_alt_enter

    restore_alt_enter()
    from pi_tui.view.terminal_colours import terminal_appearance

    terminal_appearance(ask=True)  # dark or light (the system theme), asked before Textual reads keys
    apply_true_color(options, cwd)
    app = PiApp(
        start_options=options,
        cwd=cwd,
        initial_prompts=initial_prompts,
        git_branch=git_branch(Path(cwd)),
        open_resume=resume_picker,
    )
    terminal = _saved_terminal()

    def leave(_signum: int) -> None:
        # As /quit: abort the run, record it, close the session file, exit (terminal restored).
        if not app.call_later(app.shutdown):
            signals.force()  # the app is not taking messages (not started, or gone)

    signals = ExitSignals(leave, last_resort=lambda: _last_resort(app, terminal))
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    signals.install(loop)
    regular = chosen_tui_mode(options, cwd) == "regular"
    quit_normally = False
    try:
        # (regular: the block is cleared at exit, everything it showed is written above it)
        app.run(loop=loop, inline=regular, mouse=not regular)
        quit_normally = signals.received is None
    except Exception:
        if signals.received is None:
            raise
        # The terminal went away under the app (SIGHUP): what matters is done below.
    finally:
        kill_running_commands()  # whatever way the app ended, no command outlives it
        lost = False
        if app.started is not None:
            if quit_normally:
                _say_on_exit(app.started, regular)  # before a save failure, which must show last
            manager = app.started.agent.manager
            # The chat is gone: a last failure to save (a full disk) is said on stderr.
            manager.save_listener = _say_on_stderr
            manager.close()
            lost = manager.unsaved_count > 0
        signals.remove()
    if signals.received is not None:
        return signals.exit_code or 1
    if lost and not app.return_code:
        return 2  # the user must hear that the session was not all saved, in the code too
    return app.return_code or 0


def apply_true_color(options: StartOptions, cwd: str) -> None:
    """``terminal.trueColor``: true draws 24-bit colour, false 256 colours, ``"auto"`` (the
    default) leaves Textual's own detection (``COLORTERM``, ``TERM``). ``TEXTUAL_COLOR_SYSTEM``,
    when set, wins. Textual reads its colour system when the app is made, so it is set before."""
    from textual import constants

    from pi_tui.tui.settings_peek import peek_setting

    if os.environ.get("TEXTUAL_COLOR_SYSTEM"):
        return
    terminal = peek_setting(cwd, "terminal", options.approve)
    choice = terminal.get("trueColor") if isinstance(terminal, dict) else None
    if choice is True or choice is False:
        setattr(constants, "COLOR_SYSTEM", "truecolor" if choice else "256")  # noqa: B010 (a Final)


def chosen_tui_mode(options: StartOptions, cwd: str) -> str:
    """``--tui-mode``, else the ``tuiMode`` setting (read without loading the settings module,
    before the first frame), else ``fullscreen``."""
    from pi_tui.tui.settings_peek import peek_setting

    mode = options.tui_mode or peek_setting(cwd, "tuiMode", options.approve)
    return "regular" if mode == "regular" else "fullscreen"


def _say_on_exit(started: Started, regular: bool) -> None:
    """What a quit leaves on the normal screen: the transcript (fullscreen with
    ``fullscreenExitOutput`` "transcript"; regular mode wrote the conversation as it went), then how
    to resume. Only on a terminal, as pi: a pipe gets nothing it did not ask for."""
    stdout = sys.stdout
    if stdout is None or not stdout.isatty():
        return
    manager = started.agent.manager
    path = manager.session_file
    lines: list[str] = []
    if not regular and started.agent.settings.fullscreen_exit_output == "transcript":
        lines.extend(exit_transcript(manager, started.options.cwd if started.options else None))
    if path is not None and path.exists():
        lines.append(f"To resume this session: {resume_command(manager)}")
    if lines:
        with contextlib.suppress(OSError):
            stdout.write("\n".join(lines) + "\n")
            stdout.flush()


def resume_command(manager: Any) -> str:
    """``pi-tui --session <id>``, with ``--session-dir`` when the session lives elsewhere than
    this folder's default (so the line works pasted as it is)."""
    import shlex

    from pi_tui.config.paths import session_dir_for_cwd

    words = ["pi-tui"]
    folder = manager.session_dir
    if folder is not None and Path(folder) != session_dir_for_cwd(manager.cwd):
        words += ["--session-dir", str(folder)]
    words += ["--session", manager.session_id]
    return shlex.join(words)


def exit_transcript(manager: Any, cwd: str | None) -> list[str]:
    """The current branch as plain lines: prompts (``>``), answers, a line per tool call and
    ``!`` command, compactions and branch summaries as one line. Made safe for the terminal (what
    the model or a file wrote can never drive it)."""
    from pi_tui.text_safety import clean_text, for_terminal
    from pi_tui.tui.render import tool_title

    lines: list[str] = []

    def add(text: str, first: str = "", rest: str = "") -> None:
        safe = for_terminal(clean_text(text)).rstrip()
        if not safe:
            return
        if lines:
            lines.append("")
        for number, line in enumerate(safe.splitlines()):
            lines.append((first if number == 0 else rest) + line)

    for entry in manager.get_branch():
        kind = entry.type
        if kind == "compaction":
            add(f"[compacted: {entry.tokens_before:,} tokens summarised]")
        elif kind == "branch_summary":
            add("[branch summary]")
        elif kind == "custom_message" and getattr(entry, "display", True):
            add(_text_of(entry.content))
        elif kind == "message":
            message = entry.message
            role = getattr(message, "role", None)
            if role == "user":
                add(_text_of(message.content), "> ", "  ")
            elif role == "assistant":
                for block in message.content:
                    if getattr(block, "type", None) == "text":
                        add(block.text)
                    elif getattr(block, "type", None) == "toolCall":
                        add(tool_title(block.name, block.arguments, cwd), "• ", "  ")
            elif role == "bashExecution":
                add(message.command, "$ ", "  ")
    return lines


def _text_of(content: Any) -> str:
    """The text blocks of a message's content (a string, or a list of blocks)."""
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content if getattr(block, "type", None) == "text")


def _say_on_stderr(text: str) -> None:
    from pi_tui.text_safety import clean_text, for_terminal

    print(f"pi-tui: {for_terminal(clean_text(text))}", file=sys.stderr, flush=True)


def _saved_terminal() -> Any:
    """The terminal's settings before the app changed them (None when stdin is no terminal)."""
    with contextlib.suppress(Exception):
        import termios

        if sys.stdin is not None and sys.stdin.isatty():
            return termios.tcgetattr(sys.stdin.fileno())
    return None


RESTORE_SEQUENCE = (
    "\x1b[<u"  # pop the keyboard protocol mode
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l"  # mouse reporting off
    "\x1b[?1004l\x1b[?2004l"  # focus events and bracketed paste off
    "\x1b[?25h\x1b[?1049l"  # cursor shown, main screen back
)
"""What the app turned on, turned off: for the forced exit, when the app could not do it."""


def _last_resort(app: Any, terminal: Any) -> None:
    """(Forced exit) close the session file and put the terminal back, each best effort."""
    with contextlib.suppress(Exception):
        if app.started is not None:
            app.started.agent.manager.close()
    with contextlib.suppress(Exception):
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        if os.isatty(fd):
            os.set_blocking(fd, False)  # a stalled terminal must not hold the exit
            os.write(fd, RESTORE_SEQUENCE.encode())
    if terminal is not None:
        with contextlib.suppress(Exception):
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, terminal)
