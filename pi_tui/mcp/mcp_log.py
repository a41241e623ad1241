"""``mcp.log``: the log messages MCP servers send (``notifications/message``), one line each.

pi 1.x writes the same file in the agent folder, ``<time> [<server>] <level> <logger>: <message>``,
and moves it to ``mcp.log.1`` once it grows past 5 MB; pi-tui does the same, so ``tail -f`` shows
both agents' servers alike. Several processes may append to the file at once, so every line is
one ``O_APPEND`` write of its own. A server's text is data: control characters in it are written
as escapes, so one message is one line and nothing reaches a terminal that ``cat``s the file.

Logging must never break a tool call: write errors are swallowed, and a folder that cannot be
written is not tried again.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

MAX_LOG_BYTES = 5 * 1024 * 1024
"""Past this size the file moves to ``mcp.log.1`` (replacing an older one) before the next line."""

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(char: str) -> str:
    code = ord(char)
    if char in _ESCAPES:
        return _ESCAPES[char]
    if code < 0x20 or code == 0x7F or 0x80 <= code <= 0x9F:
        return f"\\x{code:02x}"
    if code in (0x2028, 0x2029):  # line and paragraph separators: line breaks to many readers
        return f"\\u{code:04x}"
    return char


def escape(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1, U+2028/9) as backslash escapes."""
    if text.isprintable():
        return text
    return "".join(_escape_char(char) for char in text)


def format_line(
    server: str, level: str, logger: str | None, message: str, now: datetime | None = None
) -> str:
    """One log line, newline included; the logger part is left out when there is none."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    source = f" {escape(logger)}:" if logger else ""
    return f"{stamp} [{escape(server)}] {escape(level)}{source} {escape(message)}\n"


class McpLog:
    """Appends server log messages to one file (``<agent dir>/mcp.log``), from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._size: int | None = None
        """Bytes in the file as far as this process knows; None until the first write."""
        self._broken = False

    def _current_size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def write(self, server: str, level: str, logger: str | None, message: str) -> None:
        """Append one message. Never raises: a log that cannot be written is given up on."""
        line = format_line(server, level, logger, message).encode("utf-8", errors="replace")
        with self._lock:
            if self._broken:
                return
            try:
                self._append(line)
            except (OSError, ValueError):
                self._broken = True

    def _append(self, line: bytes) -> None:
        if self._size is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._size = self._current_size()
        if self._size > MAX_LOG_BYTES:
            # Another process may have moved it already: look again before moving.
            if self._current_size() > MAX_LOG_BYTES:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            self._size = self._current_size()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            written = os.write(fd, line)
        finally:
            os.close(fd)
        self._size += written
