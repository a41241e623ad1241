"""A daemon that a bash tool call double-forks into a session of its own does not outlive pi-tui
(issue 28, item 9).

The command starts ``sleep`` through ``setsid sh -c '... &'`` inside a subshell: the ``sh``
leads a new session and exits, so the ``sleep`` has left the shell's group, its session and
its parent chain before anything is killed. Before, it was re-parented to init and survived
SIGTERM and SIGHUP of pi-tui (and its normal exit); now pi-tui is a child subreaper, adopts it,
and kills it with the rest. The sleep writes its pid to a file, and the test waits on the
condition that this pid is gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_signals import SCRIPT, unique
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.waiting import poll_for

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="the subreaper is Linux's (PR_SET_CHILD_SUBREAPER)"
)


def alive(pid: int) -> bool:
    """Running (a zombie has already been killed; it only waits to be collected)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def is_our_sleep(pid: int, number: str) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes() == f"sleep\0{number}\0".encode()
    except OSError:
        return False


class Daemon:
    """The command that leaves a double-forked, setsid'd sleep behind, and its pid file."""

    def __init__(self, tmp_path: Path, agent_dir: Path, *, keep_running: bool) -> None:
        self.number = f"302{unique()}"
        self.pid_file = tmp_path / "daemon.pid"
        start = (
            f"(setsid sh -c 'sleep {self.number} >/dev/null 2>&1 & echo $! > {self.pid_file}' &); "
            f"while [ ! -s {self.pid_file} ]; do sleep 0.01; done"
        )
        # keep_running: the shell itself is still busy when pi-tui is told to stop.
        self.command = (
            f"{start}; sleep 300 & echo started; wait" if keep_running else f"{start}; echo started"
        )
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.args = ["--provider", "test", "--model", "m", "--session-dir", str(tmp_path / "sessions")]
        self.agent_dir = agent_dir
        self.pid: int | None = None

    def server(self) -> ModelServer:
        call = Scripted(tool_calls=[ToolCallSpec("bash", {"command": self.command})])
        server = ModelServer(call, default=Scripted(text="all done")).start()
        models = server.models_json(models=[{"id": "m", "name": "Test model"}])
        (self.agent_dir / "models.json").write_text(json.dumps(models))
        return server

    def written_pid(self) -> int:
        """The daemon's pid as it wrote it (the command waits for the file before it ends)."""
        return int(self.pid_file.read_text().strip())

    def wait_started(self) -> int:
        def started() -> int | None:
            try:
                pid = int(self.pid_file.read_text().strip())
            except (OSError, ValueError):
                return None
            return pid if is_our_sleep(pid, self.number) else None

        pid = poll_for(started, 30)
        assert pid, "the daemon never started"
        self.pid = pid
        # It has left the shell's tree: its own session, and no shell above it.
        assert os.getsid(pid) != os.getsid(os.getpid())
        return pid

    def assert_gone(self) -> None:
        pid = self.pid
        assert pid is not None
        poll_for(lambda: not (alive(pid) and is_our_sleep(pid, self.number)), 10)
        assert not (alive(pid) and is_our_sleep(pid, self.number)), "the double-forked daemon outlived pi-tui"

    def cleanup(self) -> None:
        """On the old code the daemon survives: it must not outlive the test either."""
        if self.pid is not None and alive(self.pid) and is_our_sleep(self.pid, self.number):
            os.kill(self.pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"]
)
def test_a_signal_stops_the_double_forked_daemon_of_a_running_command(
    tmp_path: Path, agent_dir: Path, signum: int, code: int
) -> None:
    daemon = Daemon(tmp_path, agent_dir, keep_running=True)
    try:
        with daemon.server():
            process = subprocess.Popen(
                [SCRIPT, *daemon.args, "-p", "start the daemon"],
                cwd=daemon.project,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                daemon.wait_started()
                process.send_signal(signum)
                _out, err = process.communicate(timeout=15)
            finally:
                process.kill()
            assert process.returncode == code, err
            assert "Traceback" not in err
            daemon.assert_gone()
    finally:
        daemon.cleanup()


def test_a_normal_exit_stops_what_a_finished_command_left_running(tmp_path: Path, agent_dir: Path) -> None:
    daemon = Daemon(tmp_path, agent_dir, keep_running=False)
    try:
        with daemon.server():
            done = subprocess.run(
                [SCRIPT, *daemon.args, "-p", "start the daemon"],
                cwd=daemon.project,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip() == "all done"
            daemon.pid = daemon.written_pid()
            daemon.assert_gone()
    finally:
        daemon.cleanup()


def test_rpc_sigterm_stops_the_daemon_of_a_finished_command(tmp_path: Path, agent_dir: Path) -> None:
    daemon = Daemon(tmp_path, agent_dir, keep_running=False)
    try:
        with daemon.server():
            process = subprocess.Popen(
                [SCRIPT, *daemon.args, "--mode", "rpc"],
                cwd=daemon.project,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                assert process.stdin is not None
                process.stdin.write(json.dumps({"type": "prompt", "message": "start the daemon"}) + "\n")
                process.stdin.flush()
                daemon.wait_started()
                process.send_signal(signal.SIGTERM)
                _out, err = process.communicate(timeout=15)
            finally:
                process.kill()
            assert process.returncode == 143, err
            daemon.assert_gone()
    finally:
        daemon.cleanup()


def test_rpc_abort_stops_the_daemon_of_the_aborted_command(tmp_path: Path, agent_dir: Path) -> None:
    """An abort stops what the aborted command double-forked, and pi-tui carries on."""
    daemon = Daemon(tmp_path, agent_dir, keep_running=True)
    try:
        with daemon.server():
            process = subprocess.Popen(
                [SCRIPT, *daemon.args, "--mode", "rpc"],
                cwd=daemon.project,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                assert process.stdin is not None
                process.stdin.write(json.dumps({"type": "prompt", "message": "start the daemon"}) + "\n")
                process.stdin.flush()
                daemon.wait_started()
                process.stdin.write(json.dumps({"type": "abort", "id": "stop"}) + "\n")
                process.stdin.flush()
                daemon.assert_gone()
                assert process.poll() is None  # only the command was stopped
                _out, err = process.communicate(timeout=15)
            finally:
                process.kill()
            assert process.returncode == 0, err
    finally:
        daemon.cleanup()


REAPER = """
import os, subprocess, sys, time
from pi_tui.tools import process_tree as pt
assert pt.become_subreaper()
helper = subprocess.Popen(["sleep", "30"])  # pi-tui's own child in its session: never reaped by us
pid_file = sys.argv[1]
script = f"(setsid sh -c 'sleep 0.2 & echo $! > {pid_file}' &); sleep 0.05"
subprocess.run(["sh", "-c", script], check=True)
orphan = int(open(pid_file).read())
def stat(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
assert int(stat(orphan)[1]) == os.getpid()  # adopted
deadline = time.monotonic() + 10
while stat(orphan)[0] != "Z":  # it ended: our zombie now
    assert time.monotonic() < deadline
    time.sleep(0.02)
assert pt.reap_orphans() == 0  # a zombie just seen may be another waiter's: not yet
time.sleep(pt.ZOMBIE_GRACE + 0.1)
assert pt.reap_orphans() >= 1
assert stat(orphan) is None  # collected
assert helper.poll() is None  # the helper was not touched (no status taken from its waiter)
helper.kill()
assert helper.wait() == -9
print("ok")
"""


def test_adopted_orphans_that_end_are_collected_and_no_other_child_is(tmp_path: Path) -> None:
    """A subreaper must wait for its adopted orphans (else they stay zombies), and only for them."""
    done = subprocess.run(
        [sys.executable, "-c", REAPER, str(tmp_path / "orphan.pid")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
