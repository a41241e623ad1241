"""A real ACP client for the tests of ``pi-tui acp``: the official TypeScript SDK, driven from Python.

``pi-tui acp`` speaks the Agent Client Protocol (ACP v1, JSON-RPC 2.0 over stdio) to editors.
A client we wrote ourselves would share our misreadings of the protocol, so the tests talk to
the agent through the client editors use: ``@agentclientprotocol/sdk`` (:data:`SDK_VERSION`),
run by ``tests/support/acp_client.mjs``. That node script spawns the agent, speaks ACP to it
with the SDK, takes commands from this module as JSON lines on its stdin and reports, as JSON
lines on its stdout, everything the agent sends. It also checks every line the agent writes:

- against the SDK's bundled JSON schema (``schema/v1/schema.json``): :attr:`AcpClient.schema_errors`;
- for being JSON-RPC at all (the agent's stdout must carry the protocol only): :attr:`AcpClient.garbage`;
- for protocol misuse the schema cannot see (a response to no request, a client method the
  client did not offer, a relative path): :attr:`AcpClient.protocol_errors`.

A test asserts all three are empty. What the agent asks of the client is answered for real:
``fs/read_text_file`` reads the disk (or an unsaved buffer set with :meth:`AcpClient.set_buffer`),
``fs/write_text_file`` writes it, ``terminal/*`` runs the command with node's child_process,
``session/request_permission`` picks the option :meth:`AcpClient.set_permission` names::

    with AcpClient.start([PI_TUI, "acp"], cwd=tmp_path, env=env) as client:
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {...}})
        session = client.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        turn = client.request_async("session/prompt", {...})
        client.notify("session/cancel", {"sessionId": session["sessionId"]})
        assert turn.result()["stopReason"] == "cancelled"
        assert client.schema_errors == [] and client.garbage == []

The SDK, its peer zod and the JSON-schema validator ajv are installed once into
``<user cache>/pi-tui-tests/acp-sdk-<version>`` (as :mod:`tests.support.mcp_servers` does, under
a file lock for parallel workers, ``.installed`` naming what was installed). Without npm the
tests skip on a developer's machine and fail under CI (:mod:`tests.support.requires`).

Leaving the ``with`` block closes the script's stdin: it closes the agent's stdin, waits a few
seconds, then SIGTERMs and SIGKILLs the agent, and exits. Both run in a process group of their
own that is killed at the end whatever happened, so no agent outlives its test.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal, TypeVar

from tests.support.mcp_servers import node_binary
from tests.support.npm_cache import npm_install_once
from tests.support.real_pi import tests_cache

SDK_VERSION = "2.4.0"
SDK = "@agentclientprotocol/sdk"
PACKAGES = (f"{SDK}@{SDK_VERSION}", "zod@4.6.7", "ajv@8.20.0")
"""What the bridge imports: the SDK, the zod it validates with (its peer dependency, pinned so
a new zod cannot change a test run) and ajv, which checks messages against the SDK's schema."""
BRIDGE = Path(__file__).with_name("acp_client.mjs")
DEFAULT_TIMEOUT = 30.0
"""How long a request or a wait may take: a cold agent on a loaded CI machine takes seconds to
import; a passing run is far below this."""
STOP_TIMEOUT = 15.0
"""How long closing may take before the process group is killed (the bridge itself gives the
agent 3 s after its stdin closes, then 3 s after SIGTERM)."""
RECHECK_SECONDS = 0.05
"""How often :meth:`AcpClient.wait_for` looks again when no report arrives."""

PermissionChoice = Literal["allow_once", "allow_always", "reject_once", "reject_always", "cancelled"]
T = TypeVar("T")


def install_root() -> Path:
    """The npm prefix the SDK is installed in (the bridge resolves its imports from here)."""
    return tests_cache() / f"acp-sdk-{SDK_VERSION}"


def install() -> Path:
    """``npm install`` :data:`PACKAGES` into :func:`install_root` once; return the root."""
    npm_install_once(install_root(), PACKAGES, (SDK, "zod", "ajv"), "acp")
    return install_root()


class AcpError(Exception):
    """The agent answered a request with a JSON-RPC error. (A request that fails without an
    answer, because the agent died or wrote nothing, fails the test with its stderr instead.)"""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}" + (f" ({data!r})" if data is not None else ""))
        self.code = code
        self.message = message
        self.data = data


class Pending:
    """A request on its way: :meth:`result` waits for the agent's answer."""

    def __init__(self, client: AcpClient, method: str, command_id: int) -> None:
        self.client = client
        self.method = method
        self.id = command_id

    def done(self) -> bool:
        return self.client._answer(self.id) is not None

    def result(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """The result, or :class:`AcpError` for an error answer; AssertionError after ``timeout``."""
        answer = self.client.wait_for(
            lambda: self.client._answer(self.id), timeout=timeout, what=f"the answer to {self.method}"
        )
        if answer["kind"] == "error":
            error = answer["error"]
            if error.get("code") is None:  # not the agent's answer: the connection failed
                said = error.get("message")
                raise AssertionError(
                    f"{self.method} failed without an answer ({said}); {self.client._context()}"
                )
            raise AcpError(error["code"], error.get("message", ""), error.get("data"))
        return answer["result"]

    def cancel(self) -> None:
        """Abort the request in the SDK, which sends ``$/cancel_request`` for it."""
        self.client._send({"op": "cancel_request", "target": self.id})


class AcpClient:
    """The ACP SDK's client, connected to one agent process (see the module's docstring)."""

    def __init__(self, process: subprocess.Popen[bytes], argv: Sequence[str]) -> None:
        self.process = process
        self.argv = list(argv)
        self._condition = threading.Condition(threading.RLock())
        self._reports: list[dict[str, Any]] = []
        self._answers: dict[int, dict[str, Any]] = {}
        self._stderr: list[str] = []
        self._ended = False
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._read_reports, name="acp-client-reports", daemon=True),
            threading.Thread(target=self._read_stderr, name="acp-client-stderr", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @classmethod
    def start(
        cls,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        schema: Literal["stable", "unstable"] = "stable",
    ) -> AcpClient:
        """Start the bridge, which starts the agent ``argv`` in ``cwd`` with ``env`` (this
        process's environment when None). ``schema`` picks the SDK's stable v1 schema or the
        one with the unstable additions for the validation. Use the result in a ``with``."""
        root = install()
        command = [
            node_binary(),
            str(BRIDGE),
            "--prefix",
            str(root),
            "--schema",
            schema,
            "--",
            *map(str, argv),
        ]
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # one group for the bridge and the agent: killed together at the end
        )
        return cls(process, [str(arg) for arg in argv])

    def __enter__(self) -> AcpClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ talking to the agent

    def request(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> Any:
        """Call an agent method (its ACP name, or an extension method starting with ``_``) and
        wait for the result; :class:`AcpError` for an error answer."""
        return self.request_async(method, params).result(timeout)

    def request_async(self, method: str, params: Mapping[str, Any] | None = None) -> Pending:
        """Send a request without waiting: for a prompt turn the test acts on while it runs."""
        command_id = next(self._ids)
        self._send({"op": "request", "id": command_id, "method": method, "params": dict(params or {})})
        return Pending(self, method, command_id)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification, e.g. ``session/cancel``."""
        self._send({"op": "notify", "method": method, "params": dict(params or {})})

    def set_buffer(self, path: str | os.PathLike[str], text: str | None) -> None:
        """Make ``fs/read_text_file`` of ``path`` answer ``text`` (an editor's unsaved buffer)
        instead of the file on disk; None removes the buffer. Writes update it."""
        self._send({"op": "set_buffer", "path": str(path), "text": text})

    def set_permission(self, choose: PermissionChoice) -> None:
        """Answer the next permission requests with the option of kind ``choose``, or with the
        ``cancelled`` outcome (the default; also when no option of that kind is offered)."""
        self._send({"op": "set_permission", "choose": choose})

    # ------------------------------------------------------------------ what the agent did

    @property
    def reports(self) -> list[dict[str, Any]]:
        """Every report of the bridge so far, in order (see acp_client.mjs for the kinds)."""
        with self._condition:
            return list(self._reports)

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [report for report in self.reports if report["kind"] == kind]

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The params of the agent's ``session/update`` notifications (of one session), in order,
        as the agent wrote them (an update the schema rejects is here too, and in
        :attr:`schema_errors`)."""
        return [
            report["params"]
            for report in self.of_kind("update")
            if session_id is None or (report["params"] or {}).get("sessionId") == session_id
        ]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The params of the requests the agent made of the client (of one method), in order."""
        return [
            report["params"]
            for report in self.of_kind("request")
            if method is None or report["method"] == method
        ]

    def answers(self, method: str | None = None) -> list[dict[str, Any]]:
        """What the client answered the agent's requests: ``{"method", "id", "result"|"error"}``."""
        return [report for report in self.of_kind("answer") if method is None or report["method"] == method]

    @property
    def schema_errors(self) -> list[dict[str, Any]]:
        """Agent messages the SDK's JSON schema rejects: ``{"message", "payload"}``."""
        return self.of_kind("schema_error")

    @property
    def garbage(self) -> list[str]:
        """Lines of the agent's stdout that are not JSON-RPC messages."""
        return [report["line"] for report in self.of_kind("garbage")]

    @property
    def protocol_errors(self) -> list[dict[str, Any]]:
        """Valid messages used wrongly (see the module's docstring)."""
        return self.of_kind("protocol_error")

    @property
    def stderr(self) -> str:
        """The agent's stderr (and the bridge's own notes, prefixed ``[acp_client.mjs]``)."""
        with self._condition:
            return "".join(self._stderr)

    @property
    def exit(self) -> dict[str, Any] | None:
        """How the agent ended (``{"code", "signal"}``), None while it runs."""
        ended = self.of_kind("exit")
        return ended[0] if ended else None

    def assert_clean(self) -> None:
        """Fail when the agent wrote anything the schema rejects, non-protocol output or misused
        the protocol: the check every test of a real agent ends with."""
        problems = {
            "schema_errors": self.schema_errors,
            "garbage": self.garbage,
            "protocol_errors": self.protocol_errors,
        }
        assert not any(problems.values()), json.dumps(problems, indent=1)[:6000]

    def wait_for(
        self, condition: Callable[[], T | None], timeout: float = DEFAULT_TIMEOUT, what: str = "a condition"
    ) -> T:
        """Wait until ``condition()`` (which looks at this client's reports) is truthy and return it.

        It is looked at again whenever a report arrives, so the wait ends as soon as it can (and
        every :data:`RECHECK_SECONDS`, for conditions on files or processes); at
        the deadline, or once the bridge has ended with the condition still false, it fails
        saying what was awaited, the last reports and the agent's stderr."""
        found = self._wait(condition, timeout)
        if found:
            return found
        why = "the bridge ended" if self._ended else f"{timeout}s passed"
        raise AssertionError(f"waited for {what}, but {why}; {self._context()}")

    # ------------------------------------------------------------------ plumbing

    def _wait(self, condition: Callable[[], T | None], timeout: float) -> T | None:
        """``condition()`` once truthy, or its last value at the deadline or the bridge's end."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                found = condition()
                left = deadline - time.monotonic()
                if found or left <= 0 or self._ended:
                    return found
                self._condition.wait(min(left, RECHECK_SECONDS))

    def _context(self) -> str:
        """The last reports and the stderr, for a failure's message (after a moment's wait for
        the agent's exit, which is reported just after its stdout ends)."""
        self._wait(lambda: self.exit, timeout=2.0)
        last = json.dumps(self.reports[-10:], indent=1)[-4000:]
        return f"last reports: {last}\nstderr: {self.stderr[-4000:]}"

    def _answer(self, command_id: int) -> dict[str, Any] | None:
        with self._condition:
            return self._answers.get(command_id)

    def _send(self, command: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        line = (json.dumps(command) + "\n").encode()
        with self._write_lock:
            try:
                stdin.write(line)
                stdin.flush()
            except (BrokenPipeError, ValueError) as error:
                raise AssertionError(f"the ACP bridge is gone ({error}); {self._context()}") from None

    def _read_reports(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for raw in stdout:
            try:
                report = json.loads(raw)
            except json.JSONDecodeError:
                report = {"kind": "bridge_noise", "line": raw.decode(errors="replace")}
            with self._condition:
                self._reports.append(report)
                if report.get("kind") in ("response", "error") and isinstance(report.get("id"), int):
                    self._answers[report["id"]] = report
                self._condition.notify_all()
        with self._condition:
            self._ended = True
            self._condition.notify_all()

    def _read_stderr(self) -> None:
        stderr: IO[bytes] | None = self.process.stderr
        assert stderr is not None
        for raw in stderr:
            with self._condition:
                self._stderr.append(raw.decode(errors="replace"))

    def close(self) -> None:
        """End the agent and the bridge: close the bridge's stdin (it closes the agent's, then
        signals it if it lingers), wait, and kill the process group whatever is left of it."""
        stdin = self.process.stdin
        if stdin is not None:
            with self._write_lock, contextlib.suppress(OSError, ValueError):
                stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_TIMEOUT)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_TIMEOUT)
        for thread in self._threads:
            thread.join(STOP_TIMEOUT)
