"""The protocol's input and output as asyncio streams, whatever stdin and stdout are.

Editors connect pipes, and asyncio's pipe transports serve those (and sockets and terminals)
without a thread. A script may also redirect a file (``pi-tui acp < requests.jsonl >
answers.jsonl``), which asyncio's pipe transports refuse: a file is read by a thread that hands
its blocks to the loop, and written with plain blocking writes (a file never makes a writer
wait long).

Lines that are not JSON never reach the SDK (which would log a traceback and answer nothing):
each is answered with JSON-RPC's parse error (-32700, ``id`` null) and said in one line on
stderr, and the agent reads on. A line longer than :data:`READ_LIMIT` is answered the same way,
and JSON that is not an object (a batch, a number, ``null``, on which the SDK would stop) with
invalid request (-32600).
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading

import orjson

READ_LIMIT = 64 * 1024 * 1024
"""The longest line the agent accepts (a prompt with images inlined as base64)."""
BLOCK = 64 * 1024


def _is_stream(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class _FlowControl(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """A write protocol with ``drain`` support for :class:`asyncio.StreamWriter`."""


class _FileTransport(asyncio.WriteTransport):
    """Blocking writes to a file, under the transport interface a StreamWriter wants."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def get_write_buffer_size(self) -> int:
        return 0

    def can_write_eof(self) -> bool:
        return False


async def open_streams(
    in_fd: int, out_fd: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.Task[None]]:
    """The SDK's reader (JSON lines only) and writer, and the task that feeds the reader."""
    loop = asyncio.get_running_loop()
    raw = asyncio.StreamReader(limit=READ_LIMIT)
    writer = await _open(loop, raw, in_fd, out_fd)
    checked = asyncio.StreamReader(limit=READ_LIMIT)
    return checked, writer, asyncio.ensure_future(_pump(raw, checked, writer))


async def _open(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, in_fd: int, out_fd: int
) -> asyncio.StreamWriter:
    """Feed ``reader`` from ``in_fd``; the writer to ``out_fd``."""
    if _is_stream(in_fd):
        source = os.fdopen(in_fd, "rb", buffering=0, closefd=False)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    else:
        threading.Thread(target=_feed, args=(in_fd, reader, loop), name="acp-stdin", daemon=True).start()
    if _is_stream(out_fd):
        target = os.fdopen(out_fd, "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(_FlowControl, target)
        return asyncio.StreamWriter(transport, protocol, None, loop)
    file_protocol = _FlowControl()
    file_transport = _FileTransport(out_fd)
    file_protocol.connection_made(file_transport)
    return asyncio.StreamWriter(file_transport, file_protocol, None, loop)


def _feed(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    try:
        while block := os.read(fd, BLOCK):
            loop.call_soon_threadsafe(reader.feed_data, block)
    except OSError:
        pass
    finally:
        loop.call_soon_threadsafe(reader.feed_eof)


async def _pump(
    raw: asyncio.StreamReader, checked: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Hand JSON lines on; answer the rest with a parse error."""
    try:
        while True:
            try:
                line = await raw.readuntil(b"\n")
            except asyncio.IncompleteReadError as partial:
                line = partial.partial  # the last line without its newline
                if line.strip():
                    _hand_on(line + b"\n", checked, writer)
                break
            except asyncio.LimitOverrunError as too_long:
                await _skip_line(raw, too_long.consumed)
                _answer_error(writer, -32700, "Parse error", f"a line longer than {READ_LIMIT >> 20} MiB")
                continue
            if line.strip():
                _hand_on(line, checked, writer)
    finally:
        checked.feed_eof()


def _hand_on(line: bytes, checked: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        _answer_error(writer, -32700, "Parse error", str(error).split(":", 1)[0])
        return
    if not isinstance(message, dict):  # a batch, a number, null: JSON, but no message
        _answer_error(writer, -32600, "Invalid Request", "a message must be a JSON object")
        return
    checked.feed_data(line)


async def _skip_line(raw: asyncio.StreamReader, consumed: int) -> None:
    await raw.readexactly(consumed)
    while True:
        try:
            await raw.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as more:
            await raw.readexactly(more.consumed)
        except asyncio.IncompleteReadError:
            return


def _answer_error(writer: asyncio.StreamWriter, code: int, kind: str, reason: str) -> None:
    print(
        f"pi-tui acp: a line that is not a JSON-RPC message was answered with {code} ({reason})",
        file=sys.stderr,
    )
    answer = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": f"{kind}: {reason}"}}
    writer.write(orjson.dumps(answer) + b"\n")
