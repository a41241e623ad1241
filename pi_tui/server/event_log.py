"""A session's numbered event stream: every event gets the next sequence number, is encoded
once as an SSE frame, and is kept in a bounded ring so a client that reconnects can be given
exactly what it missed.

Why frames and not events: fifty clients on one session must not cost fifty JSON encodings per
token. Each frame is the finished ``id:``/``event:``/``data:`` block; a follower just joins the
frames after its cursor and writes them. Followers wait on one shared :class:`asyncio.Event`
that each publish sets and replaces, so a burst of events wakes a follower once and it sends
the whole burst in one write (which is also what keeps the delay low under load).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pi_tui import jsonio

RING_SIZE = 4096
"""Events kept for replay; a client further behind than this gets a new snapshot."""
HEARTBEAT_SECONDS = 15.0


def sse_frame(seq: int, name: str, data: Any) -> bytes:
    """One SSE event: ``id:`` (the sequence number), ``event:`` (its type), one ``data:`` line.

    The JSON encoder never emits a raw newline (they are escaped inside strings), so the
    payload always fits on one ``data:`` line.
    """
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, name.encode("ascii"), jsonio.dumps(data, default=str))


@dataclass(slots=True, frozen=True)
class Resync:
    """The follower fell behind the ring (or asked for a seq we never had): send a snapshot."""


def first_seq() -> int:
    """Where a new log starts: the clock in microseconds. Numbers then keep growing across
    server restarts, so a client that reconnects to a restarted server with an old
    ``Last-Event-ID`` is below the new log's start and gets a snapshot, never someone else's
    events under numbers it already saw (2**53 is far: JavaScript clients read them exactly)."""
    return time.time_ns() // 1000


class EventLog:
    def __init__(self, ring_size: int = RING_SIZE, start: int | None = None) -> None:
        self.start = first_seq() if start is None else start
        """The seq before the first event: what a client that saw nothing has seen."""
        self.seq = self.start
        self.ring_size = ring_size
        self._frames: list[bytes] = []
        self._first = self.start + 1
        """The sequence number of ``_frames[0]``."""
        self._wake = asyncio.Event()
        self.closed = False

    def publish(self, name: str, data: Any) -> int:
        """Number, encode and keep one event; wake every follower. Returns its seq."""
        self.seq += 1
        self._frames.append(sse_frame(self.seq, name, data))
        if len(self._frames) > self.ring_size * 2:  # trim in batches: O(1) per publish on average
            drop = len(self._frames) - self.ring_size
            del self._frames[:drop]
            self._first += drop
        self._wake.set()
        self._wake = asyncio.Event()
        return self.seq

    @property
    def oldest(self) -> int:
        """The lowest seq that can still be replayed."""
        return max(self._first, self.seq - self.ring_size + 1)

    def can_replay_after(self, seq: int) -> bool:
        """Whether every event after ``seq`` is still in the ring (``seq`` itself was seen)."""
        return self.start <= seq <= self.seq and seq + 1 >= self.oldest

    def frames_after(self, seq: int) -> bytes:
        start = seq + 1 - self._first
        return b"".join(self._frames[start:])

    def close(self) -> None:
        """The session went away: followers end after what they have."""
        self.closed = True
        self._wake.set()

    async def follow(
        self,
        after: int,
        snapshot: Callable[[], bytes],
        heartbeat: float = HEARTBEAT_SECONDS,
    ) -> AsyncIterator[bytes]:
        """Frames after ``after``, as they come, forever (until :meth:`close`).

        ``snapshot`` makes a snapshot frame for the current seq (it must not await, so nothing
        can be published between the snapshot and the cursor it sets). A follower that falls
        behind the ring gets a new snapshot instead of a gap; an idle one gets a comment line
        every ``heartbeat`` seconds so proxies and clients know the stream is alive.
        """
        cursor = after
        while True:
            if cursor < self.seq:
                if not self.can_replay_after(cursor):
                    cursor = self.seq
                    yield snapshot()
                    continue
                cursor, chunk = self.seq, self.frames_after(cursor)
                yield chunk
                continue
            if self.closed:
                return
            wake = self._wake
            try:
                await asyncio.wait_for(wake.wait(), heartbeat)
            except TimeoutError:
                yield b": heartbeat\n\n"
