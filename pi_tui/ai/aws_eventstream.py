"""AWS event-stream framing (``application/vnd.amazon.eventstream``): bytes in, events out.

Bedrock's ConverseStream answers with this binary framing instead of SSE. Each message is::

    total length (u32) | headers length (u32) | prelude CRC32 (u32)
    headers (name length u8, name, type u8, value)* | payload | message CRC32 (u32)

all big-endian, both CRCs being CRC-32 (zlib's) over the bytes before them. Headers say what
the payload is: ``:message-type`` is ``event`` (``:event-type`` names it, the payload is its
JSON), ``exception`` (``:exception-type`` names a modeled error such as
``throttlingException``, the payload is its JSON) or ``error`` (``:error-code`` and
``:error-message`` headers, no payload).

:class:`EventStreamDecoder` has the SSE decoder's interface (``feed_into(chunk, sink)`` and
``close_into(sink)``, ``sink(name, data)``), so the stream runner drives it the same way: the
name is the event type for events, ``exception:<type>`` for exceptions and ``error:<code>`` for
errors; the data is the payload as text (the error message for ``error``). A frame whose
lengths or checksums are wrong ends the stream with a :class:`ProviderError`: after a bad
length nothing later can be framed. :func:`encode_message` builds frames (tests, loopback
servers).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from typing import Any

import orjson

from pi_tui.ai.errors import ProviderError
from pi_tui.ai.sse import Sink

PRELUDE_LENGTH = 12
MINIMUM_MESSAGE = PRELUDE_LENGTH + 4
MAX_MESSAGE = 24 * 1024 * 1024
"""AWS allows 16 MiB of payload and 128 KiB of headers; anything larger is a broken length."""
MAX_HEADERS = 128 * 1024

HeaderValue = bool | int | bytes | str | uuid.UUID
_FIXED = {2: (">b", 1), 3: (">h", 2), 4: (">i", 4), 5: (">q", 8), 8: (">q", 8)}


class EventStreamError(ProviderError):
    """The bytes are not a valid event stream (a checksum or a length is wrong)."""


def decode_headers(data: bytes | memoryview) -> dict[str, HeaderValue]:
    """The headers block of one message. Timestamps come back as milliseconds (``int``)."""
    view = memoryview(data)
    headers: dict[str, HeaderValue] = {}
    at = 0
    try:
        while at < len(view):
            size = view[at]
            name = bytes(view[at + 1 : at + 1 + size]).decode("utf-8")
            at += 1 + size
            kind = view[at]
            at += 1
            value: HeaderValue
            if kind in (0, 1):
                value = kind == 0
            elif kind in _FIXED:
                fmt, width = _FIXED[kind]
                (value,) = struct.unpack_from(fmt, view, at)
                at += width
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", view, at)
                raw = bytes(view[at + 2 : at + 2 + length])
                if len(raw) != length:
                    raise EventStreamError("Malformed event stream: a header value is cut short")
                value = raw if kind == 6 else raw.decode("utf-8")
                at += 2 + length
            elif kind == 9:
                raw = bytes(view[at : at + 16])
                if len(raw) != 16:
                    raise EventStreamError("Malformed event stream: a header value is cut short")
                value = uuid.UUID(bytes=raw)
                at += 16
            else:
                raise EventStreamError(f"Malformed event stream: unknown header type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as error:
        raise EventStreamError(f"Malformed event stream: bad headers ({error})") from None
    return headers


class EventStreamDecoder:
    """Incremental: frames may be split across network chunks anywhere.

    Bytes are only copied into the decoder's buffer while a frame is incomplete; whole frames are
    read in place. The headers of a stream repeat (every text delta carries the same three), so
    each distinct header block is parsed once and its sink name kept beside it: about 5 us a
    frame instead of 20.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._known: dict[bytes, tuple[dict[str, HeaderValue], str, str | None]] = {}

    def feed(self, chunk: bytes) -> list[tuple[dict[str, HeaderValue], bytes]]:
        """The messages completed by ``chunk``: (headers, payload) each. The headers dict may be
        shared between messages with the same headers: read it, do not change it."""
        return [(headers, payload) for headers, _name, _data, payload in self._frames(chunk)]

    def feed_into(self, chunk: bytes, sink: Sink) -> None:
        for _headers, name, data, payload in self._frames(chunk):
            if name:
                sink(name, data if data is not None else payload.decode("utf-8", "replace"))

    def close_into(self, sink: Sink) -> None:
        """End of the body: bytes left over are a message cut short."""
        if self._buffer:
            left = len(self._buffer)
            self._buffer.clear()
            raise EventStreamError(f"The event stream ended inside a message ({left} bytes left over)")

    def _frames(self, chunk: bytes) -> list[tuple[dict[str, HeaderValue], str, str | None, bytes]]:
        buffer = self._buffer
        if buffer:
            buffer += chunk
            data: bytes | bytearray = buffer
        else:
            data = chunk
        frames: list[tuple[dict[str, HeaderValue], str, str | None, bytes]] = []
        start = 0
        size = len(data)
        try:
            with memoryview(data) as view:
                while size - start >= PRELUDE_LENGTH:
                    total, headers_length, prelude_crc = struct.unpack_from(">III", view, start)
                    if zlib.crc32(view[start : start + 8]) != prelude_crc:
                        raise EventStreamError("Malformed event stream: prelude checksum mismatch")
                    if total < MINIMUM_MESSAGE or total > MAX_MESSAGE:
                        raise EventStreamError(f"Malformed event stream: message length {total}")
                    if headers_length > MAX_HEADERS or headers_length > total - MINIMUM_MESSAGE:
                        raise EventStreamError(f"Malformed event stream: headers length {headers_length}")
                    if size - start < total:
                        break
                    end = start + total - 4
                    (message_crc,) = struct.unpack_from(">I", view, end)
                    if zlib.crc32(view[start:end]) != message_crc:
                        raise EventStreamError("Malformed event stream: message checksum mismatch")
                    block = bytes(view[start + PRELUDE_LENGTH : start + PRELUDE_LENGTH + headers_length])
                    known = self._known.get(block)
                    if known is None:
                        known = self._learn(block)
                    headers, name, message = known
                    frames.append(
                        (headers, name, message, bytes(view[start + PRELUDE_LENGTH + headers_length : end]))
                    )
                    start += total
        except EventStreamError:
            buffer.clear()  # nothing after a broken frame can be framed
            raise
        if data is buffer:
            del buffer[:start]
        elif start < size:
            buffer += chunk[start:]
        return frames

    def _learn(self, block: bytes) -> tuple[dict[str, HeaderValue], str, str | None]:
        """Parse a header block once: (headers, the sink name, the sink data when the headers
        carry it: an ``error`` message's text)."""
        headers = decode_headers(block)
        kind = headers.get(":message-type", "event")
        data: str | None = None
        if kind == "event":
            name = _text(headers, ":event-type", "")
        elif kind == "exception":
            name = "exception:" + _text(headers, ":exception-type", "UnknownException")
        elif kind == "error":
            name = "error:" + _text(headers, ":error-code", "UnknownError")
            data = _text(headers, ":error-message", "") or None
        else:
            name = ""  # other message types (none are defined for responses) carry nothing for us
        known = (headers, name, data)
        if len(self._known) < 64:  # distinct blocks are few; an odd stream cannot grow this
            self._known[block] = known
        return known


def _text(headers: Mapping[str, HeaderValue], name: str, default: str) -> str:
    value = headers.get(name, default)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _encode_header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    head = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return head + bytes([0 if value else 1])
    if isinstance(value, int):
        return head + b"\x04" + struct.pack(">i", value)
    if isinstance(value, uuid.UUID):
        return head + b"\x09" + value.bytes
    raw = value if isinstance(value, bytes) else value.encode("utf-8")
    return head + (b"\x06" if isinstance(value, bytes) else b"\x07") + struct.pack(">H", len(raw)) + raw


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One framed message (ints are sent as 32-bit integers)."""
    block = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = PRELUDE_LENGTH + len(block) + len(payload) + 4
    prelude = struct.pack(">II", total, len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


def encode_event(event_type: str, payload: Any) -> bytes:
    """A JSON ``event`` message as AWS sends them (``payload`` is JSON-encoded)."""
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, orjson.dumps(payload))


def encode_exception(exception_type: str, message: str) -> bytes:
    """A modeled exception message (``{"message": ...}`` payload)."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, orjson.dumps({"message": message}))
