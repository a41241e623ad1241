"""A JSON-lines client for ``pi-tui --mode rpc`` run against the loopback model server (provider
``test``, model ``m``), shared by the rpc tests.

Every wait has a timeout and every process is killed on the way out, so a broken RPC mode fails
a test instead of hanging the suite. (tests/interop/continuation.py has the client that also
drives the real pi: its stderr goes to a file and its commands are matched by name.)
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_tui.ai.catalogue import KEY_ENV_VAR_NAMES

ROOT = Path(__file__).resolve().parents[2]
# A ceiling, not a pause: every wait returns as soon as its record arrives. The first request
# also waits for pi-tui to start, which on a busy two-core machine running three test workers
# can take several seconds.
TIMEOUT = 30.0


class RpcClient:
    """A JSON-lines client for one ``pi-tui --mode rpc`` process.

    A thread turns stdout into records (split on ``\\n`` only, like the protocol says); tests
    pull them in order with timeouts. Everything pulled is kept in ``seen`` for later checks.
    """

    #: How pi-tui is started: the module of this checkout (a subclass may run the installed script).
    LAUNCHER: tuple[str, ...] = (sys.executable, "-m", "pi_tui")

    def __init__(self, project: Path, *args: str) -> None:
        env = {key: value for key, value in os.environ.items() if key not in KEY_ENV_VAR_NAMES}
        env["PYTHONPATH"] = str(ROOT)
        self.process = subprocess.Popen(
            [*self.LAUNCHER, "--mode", "rpc", "--provider", "test", "--model", "m", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
            env=env,
        )
        self._records: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.seen: list[dict[str, Any]] = []
        self._ids = 0
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            try:
                self._records.put(json.loads(line))
            except ValueError:
                self._records.put({"type": "__not_json__", "line": line.decode("utf-8", "replace")})
        self._records.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in iter(self.process.stderr.readline, b""):
            self.stderr.append(line.decode("utf-8", "replace"))

    def _fail(self, message: str) -> AssertionError:
        tail = "".join(self.stderr[-30:])
        return AssertionError(f"{message}\n--- stderr of pi-tui ---\n{tail}")

    # --- sending ---

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, command: dict[str, Any]) -> None:
        self.send_raw(json.dumps(command).encode() + b"\n")

    def request(self, command: dict[str, Any], timeout: float = TIMEOUT) -> dict[str, Any]:
        """Send ``command`` with a fresh id and return its response (events meanwhile go to seen)."""
        self._ids += 1
        request_id = f"req-{self._ids}"
        self.send({**command, "id": request_id})
        return self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == request_id, timeout)

    # --- receiving ---

    def next(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        try:
            record = self._records.get(timeout=timeout)
        except queue.Empty:
            raise self._fail(f"no output within {timeout}s") from None
        if record is None:
            self._records.put(None)  # keep reporting the end to later calls
            raise self._fail(f"pi-tui closed stdout (exit code {self.process.poll()})")
        if record.get("type") == "__not_json__":
            raise self._fail(f"stdout carried a line that is not JSON: {record['line']!r}")
        self.seen.append(record)
        return record

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"timed out after {timeout}s; last records: {self.seen[-5:]}")
            record = self.next(left)
            if predicate(record):
                return record

    def wait_event(self, event_type: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.wait_for(lambda r: r.get("type") == event_type, timeout)

    def wait_text_delta(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next streamed text delta: the assistant message is under way."""
        return self.wait_for(
            lambda r: r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta",
            timeout,
        )

    def collect_until(self, event_type: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Records from now up to and including the next ``event_type``."""
        start = len(self.seen)
        self.wait_event(event_type, timeout)
        return self.seen[start:]

    def prompt(self, text: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Prompt and wait for the run to end; returns the records after the response."""
        response = self.request({"type": "prompt", "message": text})
        assert response["success"], response
        return self.collect_until("agent_end", timeout)

    def close(self, timeout: float = TIMEOUT) -> int:
        """End the input (EOF) and wait for the process to exit."""
        with contextlib.suppress(BrokenPipeError, OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise self._fail(f"pi-tui did not exit within {timeout}s after EOF") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)
