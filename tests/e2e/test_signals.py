"""Every way out of pi-tui while a bash tool runs leaves no child behind (issue 13, Processes).

The scripted model asks for ``sleep A & sleep B & echo started; wait`` where A and B are unique
numbers, so the two background sleeps can be found in ``/proc`` by their command line. Once both
run, the installed ``pi-tui`` gets a signal (or its terminal is closed) and the test checks:
no sleep survives, the exit code is 128 + the signal (an exit, not a death by the signal), the
session file is whole JSONL holding the tool call, and its lock is free (a new ``pi-tui
--session FILE -p`` opens it). The TUI runs in tmux under a small wrapper that records its exit
status and keeps the pane open, so the terminal's modes can be checked after the exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.tools.bash import run_command
from pi_tui.tools.process_tree import kill_trees, process_table
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.tmux import TmuxPane
from tests.support.waiting import poll_for

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
pytestmark = [
    requires("pi-tui"),
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the children"),
]
needs_tmux = requires("tmux")

WRAPPER = """\
import os, signal, subprocess, sys
status, pid_file, *argv = sys.argv[1:]
child = None
def hang_up(*_):  # as a login shell does when its terminal closes: pass SIGHUP on, and stay
    if child is not None:
        child.send_signal(signal.SIGHUP)
signal.signal(signal.SIGHUP, hang_up)
child = subprocess.Popen(argv, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
with open(pid_file + ".tmp", "w") as out:
    out.write(str(child.pid))
os.replace(pid_file + ".tmp", pid_file)
code = child.wait()
with open(status + ".tmp", "w") as out:
    out.write(f"exit {code}" if code >= 0 else f"signal {-code}")
os.replace(status + ".tmp", status)
try:  # keep the pane until the terminal goes, so the test can look at its modes
    os.read(0, 1)
except OSError:
    pass
"""


def sleepers(numbers: tuple[str, ...]) -> list[int]:
    """Living (not zombie) ``sleep`` processes whose argument is one of ``numbers``."""
    wanted = {f"sleep\0{number}\0".encode() for number in numbers}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(cmdline.endswith(item) for item in wanted):
            found.append(int(name))
    return found


def unique() -> str:
    return f"{os.getpid() % 1000:03d}{random.randrange(1000):03d}"


def test_kill_trees_reaches_children_that_left_the_group_or_lost_their_parent() -> None:
    """``setsid`` leaves the group and session (still a child of the shell); a double fork
    leaves the parent chain (still in the group). ``killpg`` alone misses the first."""
    stamp = unique()
    numbers = (f"302{stamp}", f"303{stamp}", f"304{stamp}")
    script = f"setsid sleep {numbers[0]} & (sleep {numbers[1]} &); sleep {numbers[2]} & wait"
    shell = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    try:
        assert poll_for(lambda: len(sleepers(numbers)) == 3, 10), "the three sleeps never ran"
        table = process_table()
        by_number = {number: table[sleepers((number,))[0]] for number in numbers}
        assert by_number[numbers[0]].session != shell.pid  # left the session and group
        assert by_number[numbers[1]].ppid != shell.pid  # orphaned: not the shell's child
        signalled = kill_trees([shell.pid])
        assert shell.wait(timeout=5) == -signal.SIGKILL
        assert poll_for(lambda: not sleepers(numbers), 3), f"survived: {sleepers(numbers)}"
        assert signalled >= 4  # the shell and its three sleeps
    finally:
        for pid in sleepers(numbers):
            os.kill(pid, signal.SIGKILL)
        shell.kill()
        shell.wait()


def with_marker(marker: bytes) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if name.isdigit() and marker in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
    return found


def test_a_cancel_while_the_shell_starts_kills_what_it_already_started(tmp_path: Path) -> None:
    """The Ctrl+C race: the shell already runs (and has put a job in the background) while
    asyncio has not yet handed it over; a cancel at that moment must still kill the job."""
    number = f"305{unique()}"

    async def scenario() -> None:
        task = asyncio.ensure_future(run_command(f"sleep {number} & sleep 30", tmp_path))
        while not with_marker(f"sleep {number} &".encode()):  # let the loop start the shell...
            await asyncio.sleep(0)
        # ...then hold the loop (as a busy machine does) until the job runs, and cancel.
        assert poll_for(lambda: sleepers((number,)), 10), "the background sleep never ran"
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    try:
        asyncio.run(scenario())
        assert poll_for(lambda: not sleepers((number,)), 3), "the background job survived the cancel"
    finally:
        for pid in sleepers((number,)):
            os.kill(pid, signal.SIGKILL)


class Scenario:
    """One unique pair of sleeps, the model server that asks for them, one session folder."""

    def __init__(self, tmp_path: Path, agent_dir: Path) -> None:
        stamp = unique()
        self.numbers = (f"300{stamp}", f"301{stamp}")
        self.command = f"sleep {self.numbers[0]} & sleep {self.numbers[1]} & echo started; wait"
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.sessions = tmp_path / "sessions"
        self.agent_dir = agent_dir
        self.args = ["--provider", "test", "--model", "m", "--session-dir", str(self.sessions)]

    def server(self) -> ModelServer:
        """Asks for the bash call once; the reopen check after the exit gets a plain answer."""
        call = Scripted(tool_calls=[ToolCallSpec("bash", {"command": self.command})])
        server = ModelServer(call, default=Scripted(text="reopened fine")).start()
        models = server.models_json(models=[{"id": "m", "name": "Test model"}])
        (self.agent_dir / "models.json").write_text(json.dumps(models))
        return server

    def wait_for_children(self) -> list[int]:
        children = poll_for(lambda: len(sleepers(self.numbers)) == 2 and sleepers(self.numbers), 30)
        assert children, "the tool's two background sleeps never showed up"
        return children

    def check_after_exit(self) -> None:
        """No child left, the session file whole and unlocked."""
        poll_for(lambda: not sleepers(self.numbers), 5)
        assert sleepers(self.numbers) == [], "children survived"
        (session,) = sorted(self.sessions.glob("*.jsonl"))
        lines = session.read_text(encoding="utf-8").splitlines()
        entries = [json.loads(line) for line in lines]  # every line whole JSON
        calls = [
            block
            for entry in entries
            if entry.get("type") == "message" and entry["message"]["role"] == "assistant"
            for block in entry["message"]["content"]
            if block.get("type") == "toolCall"
        ]
        assert [call["arguments"]["command"] for call in calls] == [self.command]
        again = subprocess.run(
            [SCRIPT, *self.args, "--session", str(session), "-p", "hi"],
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0 and again.stdout == "reopened fine\n", again


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)],
    ids=["SIGTERM", "SIGHUP", "SIGINT"],
)
def test_print_mode_signal_kills_the_tool_children(
    tmp_path: Path, agent_dir: Path, signum: int, code: int
) -> None:
    scenario = Scenario(tmp_path, agent_dir)
    with scenario.server():
        process = subprocess.Popen(
            [SCRIPT, *scenario.args, "-p", "run the sleeps"],
            cwd=scenario.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            scenario.wait_for_children()
            process.send_signal(signum)
            _out, err = process.communicate(timeout=10)
        finally:
            process.kill()
        assert process.returncode == code, err
        assert "Traceback" not in err
        scenario.check_after_exit()


def test_rpc_mode_sigterm_kills_the_tool_children(tmp_path: Path, agent_dir: Path) -> None:
    scenario = Scenario(tmp_path, agent_dir)
    with scenario.server():
        process = subprocess.Popen(
            [SCRIPT, *scenario.args, "--mode", "rpc"],
            cwd=scenario.project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdin is not None
            process.stdin.write(json.dumps({"type": "prompt", "message": "run the sleeps"}) + "\n")
            process.stdin.flush()
            scenario.wait_for_children()
            process.send_signal(signal.SIGTERM)
            _out, err = process.communicate(timeout=15)
        finally:
            process.kill()
        assert process.returncode == 143, err
        scenario.check_after_exit()


@needs_tmux
@pytest.mark.parametrize(
    ("how", "code"), [("SIGTERM", 143), ("SIGHUP", 129), ("kill-session", 129), ("ctrl-d", 0)]
)
def test_tui_exit_kills_the_tool_children(tmp_path: Path, agent_dir: Path, how: str, code: int) -> None:
    scenario = Scenario(tmp_path, agent_dir)
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER)
    status, pid_file = tmp_path / "status", tmp_path / "pid"
    with scenario.server():
        wrapped = [sys.executable, str(wrapper), str(status), str(pid_file), SCRIPT]
        pane = TmuxPane.start(
            [*wrapped, *scenario.args, "run the sleeps"],
            cwd=scenario.project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_CACHE_DIR": str(tmp_path / "cache")},
        )
        try:
            scenario.wait_for_children()
            pid = int(pid_file.read_text())
            if how == "kill-session":
                pane.tmux("kill-session", "-t", pane.session)
            elif how == "ctrl-d":  # the TUI's own way out (empty editor), as the user leaves
                pane.press("C-d")
            else:
                os.kill(pid, getattr(signal, how))
            assert poll_for(status.exists, 10), f"pi-tui did not end; the pane showed:\n{pane.capture()}"
            assert status.read_text() == f"exit {code}"
            if how != "kill-session":  # the terminal is still there: it must be as before
                shown = "#{alternate_on} #{cursor_flag} #{mouse_any_flag}"
                modes = pane.tmux("display-message", "-p", "-t", pane.session, shown).stdout.split()
                assert modes == ["0", "1", "0"], f"alternate screen, cursor, mouse: {modes}"
        finally:
            pane.kill()
        scenario.check_after_exit()
