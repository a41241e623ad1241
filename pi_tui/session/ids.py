"""Identifiers and timestamps in the exact shapes pi writes."""

from __future__ import annotations

import math
import os
import secrets
import time
import uuid
from collections.abc import Container
from datetime import UTC, datetime


def new_entry_id(taken: Container[str]) -> str:
    """Eight lowercase hex characters, re-drawn until unique within the file."""
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def uuid7() -> str:
    """A time-ordered UUID (RFC 9562 version 7), so session ids sort by creation time."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFF_FFFF_FFFF) << 80
    value |= 0x7 << 76
    value |= ((rand >> 68) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & 0x3FFF_FFFF_FFFF_FFFF
    return str(uuid.UUID(int=value))


def iso_now() -> str:
    """ISO-8601 UTC with milliseconds and ``Z``: the timestamp format of entries and headers."""
    return format_iso(datetime.now(UTC))


def format_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def file_stamp(iso: str) -> str:
    """The timestamp part of a session file name: ``:`` and ``.`` replaced by ``-``."""
    return iso.replace(":", "-").replace(".", "-")


def parse_iso(value: str) -> datetime | None:
    """Parse an entry/header timestamp; None for anything unreadable."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None


def timestamp_ms(value: object) -> float:
    """Milliseconds since the epoch of a timestamp as JavaScript's ``new Date(value)`` reads it
    (any ISO form: ``Z``, fractions, offsets; no offset means local time); NaN when unreadable.

    Entries are ordered by time, not text: ``...05Z`` sorts after ``...05.500Z`` as text.
    """
    if not isinstance(value, str):
        return math.nan
    moment = parse_iso(value)
    if moment is None:
        return math.nan
    if moment.tzinfo is None:
        moment = moment.astimezone()  # local time, as JavaScript reads a stamp with no offset
    return moment.timestamp() * 1000
