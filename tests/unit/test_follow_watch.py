"""The inotify watch that wakes the app when a followed transcript is written (issue 18)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.tui.follow import FileWatch


async def test_a_write_to_the_file_wakes_the_watch_at_once(tmp_path: Path) -> None:
    source = tmp_path / "transcript.jsonl"
    source.write_text("{}\n")
    woken = asyncio.Event()
    watch = FileWatch.start(source, woken.set)
    assert watch is not None  # Linux: inotify is there
    try:
        await asyncio.sleep(0.05)
        assert not woken.is_set()
        with source.open("a") as stream:
            stream.write('{"more": 1}\n')
        await asyncio.wait_for(woken.wait(), 0.5)  # well before the one-second poll
    finally:
        watch.close()
    woken.clear()
    with source.open("a") as stream:  # closed: nothing wakes any more
        stream.write("{}\n")
    await asyncio.sleep(0.1)
    assert not woken.is_set()
