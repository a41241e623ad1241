"""Server-sent events: bytes in, events out, following the WHATWG parsing rules.

:class:`SSEDecoder` is incremental: feed it network chunks of any size (a line, a UTF-8
character or a CRLF pair may be cut anywhere) and it reports the events completed so far.
Lines end in LF, CRLF or CR; a line starting with ``:`` is a comment (keep-alives); ``field:
value`` loses one space after the colon; several ``data`` lines join with ``\\n``; a blank line
dispatches. One leniency: closing the decoder dispatches an event still pending at EOF, because
real servers end streams without the final blank line.

Two ways to receive events: :meth:`SSEDecoder.feed` returns :class:`SSEEvent` objects, and
:meth:`SSEDecoder.feed_into` calls ``sink(event_name, data)`` directly; the streaming hot path
uses the latter so that no object is made per event.

Why hand-written: every streamed token passes through here, and a general SSE library pays per
line for generators and event objects. Measured (100,000 small events in 4 KiB chunks, one
machine): 0.34 s for this decoder against 1.0 s for httpx's line splitter feeding httpx-sse's
decoder.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass

Sink = Callable[[str, str], None]
"""Receives ``(event name, data)`` for each dispatched event."""


@dataclass(slots=True)
class SSEEvent:
    event: str
    """The ``event:`` field, ``"message"`` when absent."""
    data: str
    id: str | None = None
    retry: int | None = None


class _PendingLine:
    """The unfinished last line, kept as pieces and joined once, when its line break arrives.

    Re-joining (or re-scanning) the whole pending line for each network chunk would make one
    huge event cost time quadratic in its size. Tiny chunks are folded into a block every
    ``FOLD`` pieces, so a line fed a byte at a time does not hold one object per byte; each
    character is then copied at most twice.
    """

    FOLD = 512

    __slots__ = ("blocks", "parts")

    def __init__(self) -> None:
        self.parts: list[str] = []
        """Pieces of the line in order, none holding a line break; the first ``blocks`` are folds."""
        self.blocks = 0

    def add(self, text: str) -> None:
        parts = self.parts
        parts.append(text)
        if len(parts) - self.blocks >= self.FOLD:
            block = "".join(parts[self.blocks :])
            del parts[self.blocks :]
            parts.append(block)
            self.blocks += 1

    def take(self, end: str) -> str:
        """The whole line, ``end`` being its last piece; the pending line is empty again."""
        parts = self.parts
        parts.append(end)
        line = "".join(parts)
        parts.clear()
        self.blocks = 0
        return line


class SSEDecoder:
    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = _PendingLine()
        self._pending_cr = False
        self._event = ""
        self._data: list[str] = []
        self._has_fields = False
        self.last_id: str | None = None
        """The last ``id:`` seen (what a reconnect would send as Last-Event-ID)."""
        self.retry: int | None = None
        """The last ``retry:`` hint, in milliseconds."""

    # --- object API ---------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events it completed."""
        events: list[SSEEvent] = []
        self.feed_into(chunk, self._collector(events))
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: the last unterminated line and a pending event count."""
        events: list[SSEEvent] = []
        self.close_into(self._collector(events))
        return events

    def _collector(self, events: list[SSEEvent]) -> Sink:
        def collect(name: str, data: str) -> None:
            events.append(SSEEvent(name, data, self.last_id, self.retry))

        return collect

    # --- sink API -----------------------------------------------------------------------------

    def feed_into(self, chunk: bytes, sink: Sink) -> None:
        """Decode ``chunk`` and call ``sink(event, data)`` for every event it completed."""
        text = self._text.decode(chunk)
        if text:
            self._feed_text(text, sink)

    def close_into(self, sink: Sink) -> None:
        tail = self._text.decode(b"", final=True)
        if tail:
            self._feed_text(tail, sink)
        if self._pending.parts:
            self._line(self._pending.take(""), sink)
        if self._has_fields:
            self._dispatch(sink)

    def _feed_text(self, text: str, sink: Sink) -> None:
        if self._pending_cr:
            self._pending_cr = False
            if text[0] == "\n":
                text = text[1:]  # second half of a CRLF cut across chunks
                if not text:
                    return
        if self._pending.parts:
            text = self._finish_pending_line(text, sink)
            if not text:
                return
        # From here on ``text`` starts at the beginning of a line, and only ``text`` is scanned.
        if "\r" in text:
            tail = self._feed_any_endings(text, sink)
        else:
            *lines, tail = text.split("\n")
            self._feed_lines(lines, sink)
        if tail:
            self._pending.add(tail)

    def _finish_pending_line(self, text: str, sink: Sink) -> str:
        """Continue the unfinished line with ``text``; return what follows its end ("" if none).

        Searching ``text`` alone is enough: the pending pieces hold no line break.
        """
        lf = text.find("\n")
        cr = text.find("\r", 0, len(text) if lf < 0 else lf)
        if lf < 0 and cr < 0:
            self._pending.add(text)
            return ""
        end = lf if cr < 0 else cr
        parts = self._pending.parts
        if parts[0][:6] == "data: ":
            # The usual long line: drop the prefix before joining, so the value is copied once.
            parts[0] = parts[0][6:]
            self._data.append(self._pending.take(text[:end]))
            self._has_fields = True
        else:
            self._line(self._pending.take(text[:end]), sink)
        after = end + 1
        if cr >= 0:
            if after == len(text):
                self._pending_cr = True  # a CR at the very end: the LF of a CRLF may come next
            elif text[after] == "\n":
                after += 1
        return text[after:]

    def _feed_lines(self, lines: list[str], sink: Sink) -> None:
        # Blank, "data: " and "event: " lines make up nearly every stream: handled inline with
        # the event state in locals, testing the first character (a cached one-letter string)
        # before any slicing. Other lines go through _line with the state written back.
        data = self._data
        event = self._event
        has_fields = self._has_fields
        for line in lines:
            if not line:
                if data:
                    sink(event or "message", data[0] if len(data) == 1 else "\n".join(data))
                    data.clear()
                event = ""
                has_fields = False
            elif line[0] == "d" and line[:6] == "data: ":
                data.append(line[6:])
                has_fields = True
            elif line[0] == "e" and line[:7] == "event: ":
                event = line[7:]
                has_fields = True
            else:
                self._event, self._has_fields = event, has_fields
                self._line(line, sink)
                event, has_fields = self._event, self._has_fields
        self._event, self._has_fields = event, has_fields

    def _feed_any_endings(self, text: str, sink: Sink) -> str:
        """Slow path for text with CR or CRLF line endings; returns the unfinished line.

        The next LF and the next CR are each found once and reused until passed, so a chunk
        with many CR-ended lines and a far-away LF (or none) is still scanned only once.
        """
        start = 0
        length = len(text)
        lf = text.find("\n")
        cr = text.find("\r")
        while True:
            if 0 <= lf < start:
                lf = text.find("\n", start)
            if 0 <= cr < start:
                cr = text.find("\r", start)
            if lf < 0 and cr < 0:
                return text[start:]
            if cr < 0 or (0 <= lf < cr):
                self._line(text[start:lf], sink)
                start = lf + 1
                continue
            self._line(text[start:cr], sink)
            if cr + 1 < length:
                start = cr + 2 if text[cr + 1] == "\n" else cr + 1
            else:
                self._pending_cr = True
                start = cr + 1

    def _line(self, line: str, sink: Sink) -> None:
        if not line:
            if self._has_fields:
                self._dispatch(sink)
            return
        if line[0] == ":":
            return
        field, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self.last_id = value
        elif field == "retry":
            if value.isdigit():
                self.retry = int(value)
        else:
            return
        self._has_fields = True

    def _dispatch(self, sink: Sink) -> None:
        data = self._data
        if data:
            sink(self._event or "message", data[0] if len(data) == 1 else "\n".join(data))
        self._event = ""
        data.clear()
        self._has_fields = False
