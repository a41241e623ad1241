"""What rpc mode's command handlers share, apart from the server itself: the wire records
(:class:`Output`, :func:`response_record`, :func:`read_lines`), the errors a handler raises, and
:class:`RpcHost`, the view of the server the handler modules (``rpc_commands_*``) work through.

Kept in its own module so those handler modules never import :mod:`pi_tui.modes.rpc_mode`
(which registers them): no import circle, and the server mode (:mod:`pi_tui.server`) takes the
same pieces from here instead of rpc mode's internals.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, BinaryIO, Protocol

from pydantic import BaseModel

from pi_tui import jsonio
from pi_tui.agent.session import AgentSession
from pi_tui.agent.session_ops import Moved
from pi_tui.ai.types import Model
from pi_tui.messages import Wire

READ_CHUNK = 1 << 16
ABORT_WAIT = 10.0
"""How long ``abort`` (and shutdown) wait for a run to wind down before giving up on it."""

NO_DATA = object()
"""Handler result meaning "the response has no ``data`` field" (``None`` means ``data: null``)."""


class Deferred:
    """A handler's answer that is known later (a prompt's ``disposition``): the command loop
    goes on reading, and the response is written when ``answer`` finishes."""

    def __init__(self, answer: Awaitable[Any]) -> None:
        self.answer = answer


class CommandError(Exception):
    """A command that cannot be carried out; the message becomes the response's ``error``.

    ``status`` is the HTTP status the server mode answers with (the rpc mode has no use for it).
    """

    status = 400


class BusyError(CommandError):
    """The command is fine but the session is doing something that excludes it right now."""

    status = 409


class FailedError(CommandError):
    """The command was carried out and failed (a compaction's model request, say)."""

    status = 502


def log(message: str) -> None:
    """Diagnostics go to stderr: stdout is reserved for protocol records."""
    print(f"pi-tui rpc: {message}", file=sys.stderr, flush=True)


def json_default(value: Any) -> Any:
    """Last-resort conversion so one odd value never kills the output stream."""
    if isinstance(value, Wire):
        return value.to_json_dict()
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return list(value)
    return str(value)


class Output:
    """The single writer of stdout: one JSON record per line, flushed at once.

    Writes are synchronous on purpose: a record is either written whole or not at all, and the
    order of responses and events is exactly the order in which they were produced. A closed
    pipe (the client went away) is remembered and reported through ``on_closed``.
    """

    def __init__(self, stream: BinaryIO, on_closed: Callable[[], None] | None = None) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self.closed = False

    def send(self, record: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            line = jsonio.dumps(record, default=json_default)  # lone surrogates from a file too
        except (TypeError, ValueError) as error:
            log(f"could not encode a {record.get('type')!r} record: {error}")
            return
        try:
            self._stream.write(line + b"\n")
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True
            if self._on_closed is not None:
                self._on_closed()


async def read_lines(stream: BinaryIO | None) -> AsyncIterator[bytes]:
    """Yield input records split on ``\\n`` only, each without its ``\\r\\n`` / ``\\n``.

    Pipes, sockets and terminals are read through the event loop; anything else (a regular
    file redirected to stdin) falls back to a reading thread, which is fine there because such
    reads never block for long. A final line without a newline is still delivered.
    """
    if stream is None:
        return
    loop = asyncio.get_running_loop()
    read: Callable[[], Awaitable[bytes]]
    transport: asyncio.BaseTransport | None = None
    try:
        reader = asyncio.StreamReader(limit=READ_CHUNK * 4)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)

        def read() -> Awaitable[bytes]:
            return reader.read(READ_CHUNK)

    except (ValueError, OSError, NotImplementedError):
        read1 = getattr(stream, "read1", stream.read)

        def read() -> Awaitable[bytes]:
            return asyncio.to_thread(read1, READ_CHUNK)

    pending = b""
    try:
        while True:
            chunk = await read()
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line[:-1] if line.endswith(b"\r") else line
        if pending:
            yield pending[:-1] if pending.endswith(b"\r") else pending
    finally:
        if transport is not None:
            transport.close()


def model_json(model: Model) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def response_record(
    command: str, request_id: Any, *, data: Any = NO_DATA, error: str | None = None
) -> dict[str, Any]:
    """pi's answer to a command: ``success``, the request's ``id``, ``data`` or ``error``."""
    record: dict[str, Any] = {"type": "response", "command": command, "success": error is None}
    if request_id is not None:
        record["id"] = request_id
    if error is not None:
        record["error"] = error
    elif data is not NO_DATA:
        record["data"] = data
    return record


Handler = Callable[[dict[str, Any]], Awaitable[Any]]
"""A command handler: the command's record in, the response's ``data`` out (or :data:`NO_DATA`,
or a :class:`Deferred`)."""


class RpcHost(Protocol):
    """What the handler modules use of :class:`~pi_tui.modes.rpc_mode.RpcServer`."""

    agent: AgentSession
    output: Output
    bash_task: asyncio.Task[Any] | None
    navigate_task: asyncio.Task[Any] | None
    session_changed: Callable[[str, dict[str, Any]], None]

    @property
    def busy(self) -> bool: ...

    @property
    def bash_running(self) -> bool: ...

    def ensure_idle_for(self, what: str) -> None: ...

    async def branch_off(self, command: str, entry_id: str, position: str) -> Moved: ...
