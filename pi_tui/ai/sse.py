"""Server-sent events: bytes in, events out, following the WHATWG parsing rules.

:class:`SSEDecoder` is incremental: feed it network chunks of any size (a line, a UTF-8
character or a CRLF pair may be cut anywhere) and it returns the events completed so far.
Lines end in LF, CRLF or CR; a line starting with ``:`` is a comment (keep-alives); ``field:
value`` loses one space after the colon; several ``data`` lines join with ``\\n``; a blank line
dispatches. One leniency: :meth:`SSEDecoder.close` dispatches an event still pending at EOF,
because real servers end streams without the final blank line.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass


@dataclass(slots=True)
class SSEEvent:
    event: str
    """The ``event:`` field, ``"message"`` when absent."""
    data: str
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._pending_cr = False
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events it completed."""
        return self._feed_text(self._text.decode(chunk))

    def close(self) -> list[SSEEvent]:
        """End of stream: the last line without a terminator, and a pending event, count."""
        events = self._feed_text(self._text.decode(b"", final=True))
        if self._buffer:
            line, self._buffer = self._buffer, ""
            self._line(line, events)
        if self._has_fields:
            self._dispatch(events)
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if not text:
            return events
        if self._pending_cr:
            self._pending_cr = False
            if text.startswith("\n"):
                text = text[1:]  # second half of a CRLF cut across chunks
        buffer = self._buffer + text
        if "\r" not in buffer:
            *lines, self._buffer = buffer.split("\n")
            data = self._data
            for line in lines:
                # Inline fast paths for the two lines that make up nearly every stream.
                if line[:6] == "data: ":
                    data.append(line[6:])
                    self._has_fields = True
                elif line[:7] == "event: ":
                    self._event = line[7:]
                    self._has_fields = True
                elif not line and self._data:
                    text = data[0] if len(data) == 1 else "\n".join(data)
                    events.append(SSEEvent(self._event or "message", text, self._id, self._retry))
                    self._event = ""
                    data.clear()
                    self._retry = None
                    self._has_fields = False
                else:
                    self._line(line, events)
                    data = self._data
            return events
        start = 0
        length = len(buffer)
        while True:
            lf = buffer.find("\n", start)
            cr = buffer.find("\r", start)
            if lf < 0 and cr < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                self._line(buffer[start:lf], events)
                start = lf + 1
                continue
            self._line(buffer[start:cr], events)
            if cr + 1 < length:
                start = cr + 2 if buffer[cr + 1] == "\n" else cr + 1
            else:
                self._pending_cr = True
                start = cr + 1
        self._buffer = buffer[start:]
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if line[:6] == "data: ":  # by far the most common line: skip the general parse
            self._data.append(line[6:])
            self._has_fields = True
            return
        if not line:
            if self._has_fields:
                self._dispatch(events)
            return
        if line[0] == ":":
            return
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self._id = value
        elif field == "retry":
            if value.isdigit():
                self._retry = int(value)
        else:
            return
        self._has_fields = True

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent(self._event or "message", "\n".join(self._data), self._id, self._retry))
        self._event = ""
        self._data.clear()
        self._retry = None
        self._has_fields = False
