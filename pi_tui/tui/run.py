"""Starting the interactive mode from the command line, and leaving it however it ends.

The app runs on a loop made here so that SIGTERM and SIGHUP (the terminal closed) are handled
from the first frame: running commands are killed with all they started, the app shuts down as
on /quit (the run is aborted and recorded, the session file flushed, fsynced and unlocked, the
terminal restored) and the exit code is 128 + the signal. If the terminal is gone and the app
cannot finish, :func:`_last_resort` does the essential part and the process ends anyway.
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


def loaded_summary(started: Started, cwd: str) -> list[str]:
    """What the header lists as loaded: context files (shortened) and the number of rules."""
    from pi_tui.agent.system_prompt import context_files
    from pi_tui.tui.render import short_path

    options = started.options
    with_files = options is None or not options.no_context_files
    loaded = [short_path(str(path), cwd) for path in context_files(Path(cwd))] if with_files else []
    ttsr = started.agent.ttsr
    if ttsr is not None:
        count = len(getattr(ttsr.manager, "rules", []) or [])
        if count:
            rules = f"{count} stream rule{'s' if count != 1 else ''}"
            loaded.append(f"{rules} (they stop a reply that breaks one; /rules lists them)")
    return loaded


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
    from pi_tui.tui.terminal_colours import terminal_appearance

    terminal_appearance(ask=True)  # dark or light (the system theme), asked before Textual reads keys
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
    try:
        app.run(loop=loop)
    except Exception:
        if signals.received is None:
            raise
        # The terminal went away under the app (SIGHUP): what matters is done below.
    finally:
        kill_running_commands()  # whatever way the app ended, no command outlives it
        lost = False
        if app.started is not None:
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
