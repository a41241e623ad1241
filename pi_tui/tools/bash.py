"""``bash``: run a shell command in the working directory and return its output.

The command runs in a session of its own so that abort, timeout and pi-tui's own exit can kill
everything it started: its process group, its session and every descendant found in ``/proc``
(see :mod:`pi_tui.tools.process_tree`), so a child that called ``setsid`` goes too. Every running
command is listed in a registry that the exit paths (signals, the TUI's quit, end of input in
rpc mode) empty with :func:`kill_running_commands`. Output (stdout and stderr
merged, as in a terminal) is streamed to ``ctx.on_update`` while it runs. Only the tail is kept
for the model; when output is cut, all of it goes to a temp file whose path the result names.

The output goes through a plain ``os.pipe`` read by the event loop rather than asyncio's own
pipes: asyncio's ``Process.wait()`` only returns once every pipe is closed, so a command that
leaves a background job holding stdout (``server &``) would hang the tool. With our own pipe the
exit is seen at once and the rest of the output is drained for a short grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pi_tui.secrets.child_env import child_environment
from pi_tui.text_safety import decode_text, show_name
from pi_tui.tools.arguments import NonEmptyText, OptionalNumber, ToolArguments, parse_arguments
from pi_tui.tools.base import ToolContext, ToolError, ToolResult
from pi_tui.tools.process_tree import kill_trees, reap_orphans, start_time
from pi_tui.tools.truncation import MAX_BYTES, MAX_LINES, Truncation, format_size, truncate_tail

UPDATE_INTERVAL = 0.1
"""Seconds between two live updates: fast enough to feel live, slow enough not to flood the UI."""
KILL_GRACE = 1.0
"""Seconds a timed-out command gets between SIGTERM and SIGKILL to clean up."""
DRAIN_GRACE = 0.2
"""Seconds to keep reading after the shell exited, for output still in flight from children."""
READ_SIZE = 65536

DESCRIPTION = (
    "Run a shell command in the working directory (bash -c). stdout and stderr are returned "
    f"together. Only the last {MAX_LINES} lines or {MAX_BYTES // 1024} KB of output are returned; "
    "when output is longer, the full output is saved to a temp file whose path is given. "
    "A non-zero exit status is reported as an error. Optional timeout in seconds (no timeout by "
    "default). Commands cannot read input; do not start interactive programs."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The shell command to run."},
        "timeout": {"type": "number", "description": "Seconds after which the command is killed (optional)."},
    },
    "required": ["command"],
}


def user_shell(env: dict[str, str] | None = None) -> str:
    """``$SHELL`` when it is bash or zsh (their ``-c`` behaves as the model expects), else bash."""
    shell = (env or os.environ).get("SHELL", "")
    if Path(shell).name in ("bash", "zsh") and os.access(shell, os.X_OK):
        return shell
    for candidate in ("/bin/bash", "/usr/bin/bash"):
        if os.access(candidate, os.X_OK):
            return candidate
    return "/bin/sh"


def _chosen_shell(shell_path: str | None, env: dict[str, str]) -> str:
    """``shellPath`` from the settings when set (it must exist, as in pi), else :func:`user_shell`."""
    if not shell_path:
        return user_shell(env)
    path = Path(shell_path).expanduser()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ToolError(f"The shell {shell_path} (shellPath in settings.json) is not an executable file.")
    return str(path)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the whole process group led by ``pid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


_RUNNING: set[int] = set()
"""Shell pids (each also its group and session id) of the commands running now."""
_STARTED: dict[int, int] = {}
"""Each running shell's start time (clock ticks since boot): the orphans adopted since then are
that command's (see :mod:`pi_tui.tools.process_tree`)."""
_OVERLAPPED: set[int] = set()
"""Running shells that ran at the same time as another command (parallel tool calls, sessions
of ``pi-tui serve``): an orphan adopted meanwhile could be either's, so stopping one of them
leaves the orphans to pi-tui's exit instead of guessing."""
_RUNNING_LOCK = threading.RLock()
"""The forced exit reads the registry from a watchdog thread, and a signal handler may read it
in the main thread in the middle of an update (hence re-entrant)."""


def running_commands() -> list[int]:
    """The shells of the commands running now (tool calls and user ``!`` commands)."""
    with _RUNNING_LOCK:
        return sorted(_RUNNING)


def kill_running_commands() -> int:
    """SIGKILL every running command with everything it started; returns how many processes
    were signalled. Synchronous and safe to call more than once: the exit paths call it first,
    before anything that could hang, so no child outlives pi-tui whatever happens next."""
    # At an exit: and every orphan pi-tui adopted as a subreaper (what finished commands left
    # running, double-forked daemons too); without the subreaper this is the running trees only.
    return kill_trees(running_commands(), orphans_since=0)


def _kill_command(pid: int) -> None:
    """Kill one command's tree and the orphans adopted since its shell started (a daemon it
    double-forked), sparing the other commands still running."""
    with _RUNNING_LOCK:
        since = None if pid in _OVERLAPPED else _STARTED.get(pid)
        others = _RUNNING - {pid}
    kill_trees([pid], orphans_since=since, spare=others)


def _forget(pid: int) -> None:
    with _RUNNING_LOCK:
        _RUNNING.discard(pid)
        _STARTED.pop(pid, None)
        _OVERLAPPED.discard(pid)


class OutputBuffer:
    """Collects a command's output: a bounded in-memory tail, plus a temp file once it is long.

    Memory stays bounded whatever the command prints: once the output passes the limits
    everything goes to the file and only the last ``2 * MAX_BYTES`` or so are kept in memory.
    """

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self.total_bytes = 0
        self.total_newlines = 0
        self.file: IO[bytes] | None = None
        self.file_path: str | None = None

    def add(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.total_newlines += data.count(b"\n")
        if self.file is None and (self.total_bytes > MAX_BYTES or self.total_newlines >= MAX_LINES):
            handle = tempfile.NamedTemporaryFile(prefix="pi-bash-", suffix=".log", delete=False)  # noqa: SIM115
            self.file, self.file_path = handle, handle.name
            for chunk in self._chunks:
                handle.write(chunk)
        if self.file is not None:
            self.file.write(data)
        self._chunks.append(data)
        self._kept += len(data)
        while len(self._chunks) > 1 and self._kept - len(self._chunks[0]) >= 2 * MAX_BYTES:
            self._kept -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)
        if self._kept < self.total_bytes:  # the front was dropped: skip a half character
            start = 0
            while start < len(data) and data[start] & 0xC0 == 0x80:
                start += 1
            data = data[start:]
        return decode_text(data)  # bytes that are not UTF-8 become U+FFFD, as in pi

    def tail(self) -> Truncation:
        """The part to show, with totals counted over *all* the output."""
        text = self.text()
        cut = truncate_tail(text)
        if self._kept < self.total_bytes:
            cut.truncated = True
            cut.truncated_by = cut.truncated_by or "bytes"
            cut.total_bytes = self.total_bytes
            cut.total_lines = self.total_newlines + (0 if text.endswith("\n") else 1)
        return cut

    def finish(self, keep_file: bool) -> None:
        """Close the temp file; delete it if the output turned out not to need it."""
        if self.file is None:
            return
        self.file.close()
        if not keep_file and self.file_path:
            with contextlib.suppress(OSError):
                os.unlink(self.file_path)
            self.file_path = None


async def _wait_group_gone(pgid: int, grace: float) -> None:
    """Wait until no process of the group is left, at most ``grace`` seconds.

    Grandchildren get the same grace as the shell to clean up; they are not our children, so
    polling the group is the only way to see them go.
    """
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.02)


@dataclass(slots=True)
class CommandResult:
    """What :func:`run_command` saw: exit code (negative: killed by that signal) and output."""

    exit_code: int | None
    output: OutputBuffer
    timed_out: bool = False


class _PipeReader:
    """Reads a non-blocking pipe from the event loop; ``eof`` is set when the writers are gone."""

    def __init__(self, fd: int, on_data: Callable[[bytes], None]) -> None:
        self.fd = fd
        self.on_data = on_data
        self.eof = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        os.set_blocking(fd, False)
        self.loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        while True:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.close()
                self.eof.set()
                return
            self.on_data(data)

    def close(self) -> None:
        if self.fd >= 0:
            self.loop.remove_reader(self.fd)
            os.close(self.fd)
            self.fd = -1


async def run_command(
    command: str,
    cwd: Path,
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    on_output: Callable[[OutputBuffer], None] | None = None,
    shell_path: str | None = None,
    command_prefix: str | None = None,
) -> CommandResult:
    """Run ``command`` in its own session and process group and collect its output.

    ``on_output`` is called (unthrottled) after each chunk. On timeout the group gets SIGTERM,
    then the whole tree SIGKILL after :data:`KILL_GRACE`. If the caller is cancelled the tree is
    killed at once and ``CancelledError`` goes on up. The returned buffer's temp file is closed but kept if
    the output was cut; the caller decides what to do with it.
    """
    merged_env = child_environment(env)  # without pi-tui's own credentials (docs/secrets.md)
    shell = _chosen_shell(shell_path, merged_env)
    if command_prefix:
        command = f"{command_prefix}\n{command}"
    buffer = OutputBuffer()
    read_fd, write_fd = os.pipe()
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            shell,
            "-c",
            command,
            cwd=str(cwd),
            env=merged_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
        )
    )
    try:
        process = await _started(spawn)
    except OSError as error:
        os.close(read_fd)
        buffer.finish(keep_file=False)
        raise ToolError(
            f"Could not start the shell in {show_name(cwd)}: {error.strerror or error}."
        ) from None
    except asyncio.CancelledError:
        os.close(read_fd)
        buffer.finish(keep_file=False)
        raise
    finally:
        os.close(write_fd)
    try:
        return await _collect(process, read_fd, buffer, timeout, on_output)
    finally:
        _forget(process.pid)
        reap_orphans(running_commands())  # adopted orphans that died meanwhile (see process_tree)


async def _started(spawn: asyncio.Future[asyncio.subprocess.Process]) -> asyncio.subprocess.Process:
    """The started shell, registered as running; a cancel while it starts kills its tree.

    asyncio runs the shell before ``create_subprocess_exec`` returns; cancelled in between, it
    kills the shell alone, and whatever the shell had already put in the background lived on
    (the Ctrl+C race of issue 13: ``sleep 30 &`` survived about 1 run in 15). So the start is
    shielded from the cancel, finished, and then the whole tree is killed.
    """
    cancelled = False
    while True:
        try:
            process = await asyncio.shield(spawn)
            break
        except asyncio.CancelledError:
            cancelled = True
            if spawn.done():
                process = spawn.result()  # an OSError goes on up as usual
                break
    started = start_time(process.pid)
    with _RUNNING_LOCK:
        if _RUNNING:
            _OVERLAPPED.update(_RUNNING, (process.pid,))
        _RUNNING.add(process.pid)
        if started is not None:
            _STARTED[process.pid] = started
    if cancelled:
        _kill_command(process.pid)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(process.wait(), 0.1)
        _forget(process.pid)
        raise asyncio.CancelledError
    return process


async def _collect(
    process: asyncio.subprocess.Process,
    read_fd: int,
    buffer: OutputBuffer,
    timeout: float | None,
    on_output: Callable[[OutputBuffer], None] | None,
) -> CommandResult:
    """Read the output until the shell exits (or the timeout / a cancel kills its tree)."""

    def on_data(data: bytes) -> None:
        buffer.add(data)
        if on_output is not None:
            on_output(buffer)

    reader = _PipeReader(read_fd, on_data)
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout):
                code = await process.wait()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(reader.eof.wait(), DRAIN_GRACE)
        except TimeoutError:
            timed_out = True
            kill_group(process.pid, signal.SIGTERM)
            await _wait_group_gone(process.pid, KILL_GRACE)
            kill_trees([process.pid])
            code = await process.wait()
    except asyncio.CancelledError:
        _kill_command(process.pid)
        # Reap the shell (it dies at once) so no "still running" warning is left behind.
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(process.wait(), 0.1)
        reader.close()
        buffer.finish(keep_file=False)
        raise
    reader.close()
    keep = buffer.tail().truncated
    buffer.finish(keep_file=keep)
    return CommandResult(code, buffer, timed_out)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def format_output(buffer: OutputBuffer) -> tuple[str, dict[str, Any] | None]:
    """The text the model sees (tail plus a note when cut) and the details to store with it."""
    cut = buffer.tail()
    text = cut.content
    if not cut.truncated:
        return text or "(no output)", None
    if cut.last_line_partial:
        shown = f"the last {format_size(cut.output_bytes)} of a single very long line"
    else:
        shown = f"the last {cut.output_lines} of {cut.total_lines} lines"
    where = (
        f" Full output ({format_size(cut.total_bytes)}): {show_name(buffer.file_path)}"
        if buffer.file_path
        else ""
    )
    note = f"[Output cut to {shown}.{where}]"
    text = f"{text.rstrip(chr(10))}\n\n{note}" if text else note
    details: dict[str, Any] = {"truncation": cut.to_details()}
    if buffer.file_path:
        details["fullOutputPath"] = show_name(buffer.file_path)
    return text, details


class BashArguments(ToolArguments):
    command: NonEmptyText
    timeout: OptionalNumber = None
    """Seconds; 0 or less means no timeout."""


@dataclass(slots=True)
class BashTool:
    cwd: Path = field(default_factory=Path.cwd)
    name: str = "bash"
    label: str = "Bash"
    description: str = DESCRIPTION
    parameters: dict[str, Any] = field(default_factory=lambda: PARAMETERS)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        arguments = parse_arguments(BashArguments, self.name, args)
        command, timeout = arguments.command, arguments.timeout
        if timeout is not None and timeout <= 0:
            timeout = None  # 0 or less means "no timeout", as models sometimes send
        if not Path(ctx.cwd).is_dir():
            raise ToolError(
                f"The working directory {show_name(ctx.cwd)} does not exist; the command was not run."
            )

        updates = _Throttle(ctx)
        try:
            result = await run_command(
                command,
                Path(ctx.cwd),
                timeout=timeout,
                env=ctx.env,
                on_output=updates.poke,
                shell_path=ctx.shell_path,
                command_prefix=ctx.command_prefix,
            )
        finally:
            updates.stop()

        text, details = format_output(result.output)
        if result.timed_out:
            raise ToolError(
                f"{text}\n\nCommand timed out after {timeout:g} seconds and was stopped.", details
            )
        code = result.exit_code
        if code is not None and code < 0:
            raise ToolError(f"{text}\n\nCommand was killed by {_signal_name(-code)}.", details)
        if code:
            raise ToolError(f"{text}\n\nCommand exited with code {code}", details)
        return ToolResult.text(text, details)


class _Throttle:
    """Sends the output so far to ``ctx.on_update`` at most every :data:`UPDATE_INTERVAL`.

    The last chunk before a quiet spell is not lost: a timer sends it when the interval is up.
    """

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.buffer: OutputBuffer | None = None

    def poke(self, buffer: OutputBuffer) -> None:
        self.buffer = buffer
        if self.timer is not None:
            return
        wait = self.last + UPDATE_INTERVAL - time.monotonic()
        if wait <= 0:
            self._send()
        else:
            self.timer = asyncio.get_running_loop().call_later(wait, self._send)

    def _send(self) -> None:
        self.timer = None
        self.last = time.monotonic()
        if self.buffer is None:
            return
        text, details = format_output(self.buffer)
        with contextlib.suppress(Exception):  # a UI bug must not kill the command
            self.ctx.on_update(ToolResult.text(text, details))

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
