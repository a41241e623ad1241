"""The real ``pi-tui serve`` for tests: a subprocess on a free loopback port, a real HTTP client,
and a small reader of its Server-Sent Events.

:func:`configure_agent` points the agent dir's models.json and settings.json at a loopback
:class:`~tests.support.model_server.ModelServer`, so the server chooses its model exactly as
the CLI does (``defaultProvider`` / ``defaultModel``) and every reply comes over real HTTP.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.model_server import ModelServer
from tests.support.waiting import poll_until

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
TOKEN = "test-token-0123456789"


def configure_agent(
    agent_dir: Path, model_server: ModelServer, settings: dict[str, Any] | None = None, **model: Any
) -> None:
    models = [{"id": "m", "name": "Test model", "contextWindow": 200000, **model}]
    (agent_dir / "models.json").write_text(json.dumps(model_server.models_json(models=models)))
    chosen = {"defaultProvider": "test", "defaultModel": "m", **(settings or {})}
    (agent_dir / "settings.json").write_text(json.dumps(chosen))


@dataclass(slots=True)
class Event:
    id: int | None
    name: str
    data: dict[str, Any]


class ServeProcess:
    """``pi-tui serve --port 0`` in ``cwd``; :attr:`url` once it listens."""

    def __init__(
        self, cwd: Path, *args: str, token: str | None = TOKEN, env: dict[str, str] | None = None
    ) -> None:
        self.cwd = cwd
        self.args = list(args)
        self.token = token
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.printed: list[str] = []

    def start(self, timeout: float = 30.0) -> ServeProcess:
        command = [SCRIPT, "serve", "--port", "0", *self.args]
        if self.token is not None:
            command += ["--token", self.token]
        self.process = subprocess.Popen(
            command,
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert self.process is not None and self.process.stdout is not None
            for line in self.process.stdout:
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    problem = self.process.stderr.read() if self.process.stderr else ""
                    raise RuntimeError(f"pi-tui serve exited: {problem}") from None
                continue
            self.printed.append(line.rstrip("\n"))
            if line.startswith("web page:"):
                break
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].strip()
        if not self.url:
            raise RuntimeError(f"pi-tui serve did not start: {self.printed}")
        return self

    def client(self, token: str | None = None, timeout: float = 20.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(5)

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def stderr(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        return self.process.stderr.read()

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_idle(client: httpx.Client, session_id: str, timeout: float = 20.0) -> None:
    poll_until(
        lambda: client.get(f"/sessions/{session_id}").json()["runtime"] == "idle",
        f"session {session_id} to become idle",
        timeout,
        interval=0.05,
    )


def one_turn(client: httpx.Client, text: str = "hello") -> tuple[str, str]:
    """A new session with one prompt answered; its id and file."""
    session_id = client.post("/sessions", json={}).json()["id"]
    client.post(f"/sessions/{session_id}/commands", json={"type": "prompt", "message": text})
    wait_idle(client, session_id)
    return session_id, client.get(f"/sessions/{session_id}").json()["path"]


def raw_stream(server: ServeProcess, session_id: str) -> tuple[socket.socket, bytes]:
    """A session's event stream on a plain socket, read up to its snapshot: closing the socket
    is a hang-up the server sees at once (an HTTP client's close may wait for the next read)."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    raw = socket.create_connection((host, int(port)))
    raw.sendall(
        f"GET /sessions/{session_id}/events HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {server.token}\r\n\r\n".encode()
    )
    received = b""
    while b"event: snapshot" not in received:
        chunk = raw.recv(65536)
        if not chunk:
            raise AssertionError(f"the stream ended before its snapshot: {received[:300]!r}")
        received += chunk
    return raw, received


def parse_frames(lines: Iterator[str]) -> Iterator[Event | str]:
    """SSE frames from response lines: :class:`Event` objects, and comment lines as strings."""
    event_id: int | None = None
    name = "message"
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield Event(event_id, name, json.loads("\n".join(data)))
            event_id, name, data = None, "message", []
            continue
        if line.startswith(":"):
            yield line
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            event_id = int(value)
        elif field == "event":
            name = value
        elif field == "data":
            data.append(value)


class EventReader:
    """One SSE connection read on a thread, so a test can post commands meanwhile."""

    def __init__(
        self, server: ServeProcess, session_id: str, *, last_id: int | None = None, since: int | None = None
    ):
        self.events: list[Event] = []
        self.comments: list[str] = []
        self._changed = threading.Condition()
        self._stop = threading.Event()
        headers = {"Authorization": f"Bearer {server.token}"}
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
        query = f"?since={since}" if since is not None else ""
        self._client = httpx.Client(
            base_url=server.url, headers=headers, timeout=httpx.Timeout(10, read=None)
        )
        self._request = self._client.build_request("GET", f"/sessions/{session_id}/events{query}")
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            response = self._client.send(self._request, stream=True)
            self.status = response.status_code
            for item in parse_frames(response.iter_lines()):
                with self._changed:
                    if isinstance(item, Event):
                        self.events.append(item)
                    else:
                        self.comments.append(item)
                    self._changed.notify_all()
                if self._stop.is_set():
                    break
            response.close()
        except (httpx.HTTPError, RuntimeError):
            pass
        finally:
            with self._changed:
                self._changed.notify_all()

    def wait_for(self, predicate: Callable[[list[Event]], bool], timeout: float = 20.0) -> list[Event]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.events):
                left = deadline - time.monotonic()
                if left <= 0:
                    names = [event.name for event in self.events][-30:]
                    raise AssertionError(f"timed out waiting for events; last seen: {names}")
                self._changed.wait(min(left, 0.5))
            return list(self.events)

    def wait_named(self, name: str, count: int = 1, timeout: float = 20.0) -> list[Event]:
        return self.wait_for(lambda events: sum(e.name == name for e in events) >= count, timeout)

    def wait_last(self, name: str, count: int = 1, timeout: float = 20.0) -> Event:
        """The ``count``-th event called ``name``, once it has come."""
        events = self.wait_named(name, count, timeout)
        return [event for event in events if event.name == name][count - 1]

    def close(self) -> None:
        """Hang up. The reading thread may sit in a blocking read until the next byte (an event
        or a heartbeat, or the server stopping); it is a daemon and ends then, unwaited."""
        self._stop.set()
        self._client.close()
        self._thread.join(0.2)


def assert_consecutive(events: list[Event]) -> None:
    """Every event after the first snapshot numbered one more than the one before."""
    numbered = [event.id for event in events if event.id is not None]
    assert events and events[0].name == "snapshot", [e.name for e in events[:3]]
    for before, after in itertools.pairwise(numbered):
        assert after == before + 1, (before, after)
