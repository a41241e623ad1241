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
RING_BYTES = 8 * 1024 * 1024
"""Bytes of encoded events kept for replay per session (8 MB): whichever of this and
:data:`RING_SIZE` is reached first trims the ring, so a session's ring never holds more than
this however large its events are."""
CHUNK_BYTES = 256 * 1024
"""The most a follower joins into one write: what one client can hold back from a session."""
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


@dataclass(slots=True)
class Cursor:
    """Where one follower stands: the seq of the last event handed to its connection."""

    seq: int


class EventLog:
    def __init__(
        self, ring_size: int = RING_SIZE, start: int | None = None, ring_bytes: int = RING_BYTES
    ) -> None:
        self.start = first_seq() if start is None else start
        """The seq before the first event: what a client that saw nothing has seen."""
        self.seq = self.start
        self.ring_size = ring_size
        self.ring_bytes = ring_bytes
        self._frames: list[bytes] = []
        self._ends: list[int] = []
        """Bytes published up to the end of each frame (``total`` after it was published)."""
        self._base = self.start + 1
        """The sequence number of ``_frames[0]``."""
        self._head = 0
        """Frames before this index have left the ring (dropped in batches, O(1) per publish)."""
        self.total = 0
        """Bytes of every event published so far (the ring holds the tail of them)."""
        self._wake = asyncio.Event()
        self.closed = False

    def publish(self, name: str, data: Any) -> int:
        """Number, encode and keep one event; wake every follower. Returns its seq."""
        self.seq += 1
        frame = sse_frame(self.seq, name, data)
        self.total += len(frame)
        self._frames.append(frame)
        self._ends.append(self.total)
        frames, head = self._frames, self._head
        # The newest event always stays, so a follower can be handed what it just missed.
        while len(frames) - head > 1 and (
            len(frames) - head > self.ring_size
            or self.total - self._ends[head] + len(frames[head]) > self.ring_bytes
        ):
            frames[head] = b""
            head += 1
        if head > 256 and head * 2 > len(frames):
            del frames[:head], self._ends[:head]
            self._base += head
            head = 0
        self._head = head
        self._wake.set()
        self._wake = asyncio.Event()
        return self.seq

    @property
    def oldest(self) -> int:
        """The lowest seq that can still be replayed."""
        return self._base + self._head

    @property
    def ring_held(self) -> int:
        """Bytes of the events the ring holds now (at most ``ring_bytes`` plus the newest one)."""
        if self._head >= len(self._frames):
            return 0
        return self.total - self._ends[self._head] + len(self._frames[self._head])

    def can_replay_after(self, seq: int) -> bool:
        """Whether every event after ``seq`` is still in the ring (``seq`` itself was seen)."""
        return self.start <= seq <= self.seq and seq + 1 >= self.oldest

    def bytes_after(self, seq: int) -> int | None:
        """Bytes published after ``seq``, or None when they are no longer all in the ring."""
        if seq >= self.seq:
            return 0
        if not self.can_replay_after(seq):
            return None
        if seq < self._base:
            return self.total
        return self.total - self._ends[seq - self._base]

    def frames_after(self, seq: int) -> bytes:
        """Every frame after ``seq`` (which must be replayable), joined."""
        return b"".join(self._frames[seq + 1 - self._base :])

    def chunk_after(self, seq: int, limit: int = CHUNK_BYTES) -> tuple[bytes, int]:
        """The frames after ``seq``, whole ones up to about ``limit`` bytes (at least one), and
        the seq of the last of them."""
        start = seq + 1 - self._base
        before = self._ends[start] - len(self._frames[start])
        stop = start + 1
        while stop < len(self._frames) and self._ends[stop] - before <= limit:
            stop += 1
        return b"".join(self._frames[start:stop]), self._base + stop - 1

    def close(self) -> None:
        """The session went away: followers end after what they have."""
        self.closed = True
        self._wake.set()

    async def follow(
        self,
        after: int,
        snapshot: Callable[[], bytes],
        heartbeat: float = HEARTBEAT_SECONDS,
        cursor: Cursor | None = None,
    ) -> AsyncIterator[bytes]:
        """Frames after ``after``, as they come, forever (until :meth:`close`).

        ``snapshot`` makes a snapshot frame for the current seq (it must not await, so nothing
        can be published between the snapshot and the cursor it sets). A follower that falls
        behind the ring gets a new snapshot instead of a gap; an idle one gets a comment line
        every ``heartbeat`` seconds so proxies and clients know the stream is alive. A chunk
        holds at most about :data:`CHUNK_BYTES`, so a follower stuck on a slow connection holds
        no more than that; ``cursor``, when given, always says the last seq handed out.
        """
        position = cursor if cursor is not None else Cursor(after)
        position.seq = after
        while True:
            if position.seq < self.seq:
                if not self.can_replay_after(position.seq):
                    position.seq = self.seq
                    yield snapshot()
                    continue
                chunk, position.seq = self.chunk_after(position.seq)
                yield chunk
                continue
            if self.closed:
                return
            wake = self._wake
            try:
                await asyncio.wait_for(wake.wait(), heartbeat)
            except TimeoutError:
                yield b": heartbeat\n\n"
