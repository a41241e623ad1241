"""Errors the session core raises. Each message is meant to be shown to a user as is."""

from __future__ import annotations


class SessionError(Exception):
    """Base class: a session operation that cannot be done (bad id, bad file ...)."""


class EntryNotFoundError(SessionError, KeyError):
    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class SessionFileError(SessionError):
    """The file is not a session file (no readable header) or cannot be read."""


class SessionLockedError(SessionError):
    """Another live pi-tui process is writing this session file."""

    def __init__(self, path: str, pid: int | None) -> None:
        owner = f"process {pid}" if pid else "another process"
        super().__init__(
            f"Session {path} is being written by {owner}. "
            f"Close it there, or continue it in a copy: pi-tui --fork {path}"
        )
        self.path = path
        self.pid = pid


class SessionWriteError(SessionError):
    """Writing to a session file failed (disk full, I/O error, no permission, a symbolic link).

    ``written`` says how many of the entries handed to the writer are complete on disk; the
    file has been cut back after the last of them, so nothing partial stays behind.
    """

    def __init__(self, message: str, *, written: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.written = written
        self.reason = reason
        """The short cause (``No space left on device``), for messages that name it once."""
