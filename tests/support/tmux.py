"""Drive a terminal program inside a private tmux server: start it, type keys, read the screen.

Every :class:`TmuxPane` has its own server (``tmux -L <unique socket> -f /dev/null``), so a
user's tmux and configuration never get involved, and :meth:`TmuxPane.kill` ends exactly
what the test started. Waiting is done by polling the pane against a deadline
(:meth:`TmuxPane.wait_for`); a timeout fails with what the pane showed last.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.05


class TmuxPane:
    """One detached tmux session with one pane running one command."""

    def __init__(self, socket: str, session: str = "main") -> None:
        self.socket = socket
        self.session = session
        self.last_screen = ""

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        width: int = 120,
        height: int = 40,
        status_file: Path | None = None,
    ) -> TmuxPane:
        """Run ``argv`` in a new detached session of a new tmux server.

        ``env`` is set for the command explicitly (``env K=V ...``), whatever the server
        inherited. With ``status_file`` the command's exit status is written there when it ends.
        """
        pane = cls(f"pi-tui-test-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        command = shlex.join(["env", *(f"{k}={v}" for k, v in (env or {}).items()), *argv])
        if status_file is not None:
            command += f"; echo $? > {shlex.quote(str(status_file))}"
        pane.tmux(
            "new-session", "-d", "-s", pane.session, "-x", str(width), "-y", str(height),
            "-c", str(cwd), command,
            ";", "set-option", "-g", "escape-time", "0",
        )  # fmt: skip
        return pane

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=check,
            env=environ,
        )

    # --- the screen -------------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", self.session, check=False).returncode == 0

    def capture(self) -> str | None:
        """The visible screen as text (None once the session is gone)."""
        result = self.tmux("capture-pane", "-p", "-t", self.session, check=False)
        if result.returncode != 0:
            return None
        self.last_screen = result.stdout
        return result.stdout

    def wait_for(self, check: Callable[[str], T], what: str, timeout: float = 10.0) -> T:
        """Poll the screen until ``check(screen)`` is truthy and return that value."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if screen is None:
                raise AssertionError(
                    f"the pane went away while waiting for {what}; it showed:\n{self.last_screen}"
                )
            found = check(screen)
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout}s for {what}; the pane shows:\n{screen}")
            time.sleep(POLL_SECONDS)

    def wait_gone(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                return False
            self.capture()
            time.sleep(POLL_SECONDS)
        return True

    # --- keys -------------------------------------------------------------------------------------

    def type(self, text: str) -> None:
        """Literal text (no key names), as if typed."""
        self.tmux("send-keys", "-t", self.session, "-l", text)

    def paste(self, text: str) -> None:
        """Text as a terminal paste (bracketed when the program asked for it), the way a user
        puts thousands of characters in: typed one key at a time they would be thousands of
        key events, which a loaded machine takes many seconds to work through."""
        self.tmux("set-buffer", "-b", "pasted", "--", text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "pasted", "-t", self.session)

    def press(self, *keys: str) -> None:
        """Keys by tmux name: ``Enter``, ``Escape``, ``C-d``..."""
        self.tmux("send-keys", "-t", self.session, *keys)

    def kill(self) -> None:
        """End the server and everything running in it (safe to call twice)."""
        self.tmux("kill-server", check=False)


def exit_status(status_file: Path, timeout: float = 5.0) -> str:
    """The exit status a pane's command wrote to ``status_file`` (see :meth:`TmuxPane.start`),
    once the shell has written it: the pane can be gone a moment before the file is complete."""
    from tests.support.waiting import poll_until

    return poll_until(
        lambda: status_file.exists() and status_file.read_text().strip(),
        f"the exit status in {status_file}",
        timeout=timeout,
    )
