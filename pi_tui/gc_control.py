"""Keeping Python's cyclic garbage collector off the session's data.

A 100 MB session is ~250k dicts and lists. They can never form cycles (orjson builds trees), so
the cycle collector gains nothing from them, yet every full collection walks all of them: about a
quarter of a second each, at a moment nobody chose (the middle of a keystroke, say). We pause the
collector while we build such data and then move it to the permanent generation with
``gc.freeze()``; it is still freed by reference counting when the session is dropped.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FREEZE_THRESHOLD = 5_000
"""Entries above which a load is frozen; small sessions are not worth a process-wide effect."""


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cycle collector for the block (re-enabled only if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def settle(entry_count: int) -> None:
    """After a large load: exempt everything alive now from future cycle scans."""
    if entry_count >= FREEZE_THRESHOLD:
        gc.freeze()
