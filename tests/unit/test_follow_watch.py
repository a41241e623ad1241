"""The file watch that wakes the app when a followed transcript is written (issue 18), on
watchfiles (issue 30: inotify through ctypes was Linux only)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pi_tui.tui.follow import POLL_SECONDS, FileWatch


async def test_a_write_to_the_file_wakes_the_watch_and_close_ends_it(tmp_path: Path) -> None:
    source = tmp_path / "transcript.jsonl"
    source.write_text("{}\n")
    woken = asyncio.Event()
    wakes: list[str] = []

    def wake() -> None:
        wakes.append(source.read_text())
        woken.set()

    watch = FileWatch.start(source, wake)
    assert watch is not None
    await watch.ready.wait()
    (tmp_path / "neighbour.jsonl").write_text("{}\n")  # another file in the folder: no wake
    with source.open("a") as stream:
        stream.write('{"more": 1}\n')
    # Well before the poll would look (the bound only stops a broken watch hanging the test).
    await asyncio.wait_for(woken.wait(), POLL_SECONDS)
    assert wakes and wakes[0].endswith('{"more": 1}\n')
    watch.close()
    await asyncio.wait_for(watch.closed(), 10)  # its task has ended: no wake can come any more


async def test_a_transcript_replaced_by_a_rename_is_still_watched(tmp_path: Path) -> None:
    source = tmp_path / "transcript.jsonl"
    source.write_text("{}\n")
    woken = asyncio.Event()
    watch = FileWatch.start(source, woken.set)
    assert watch is not None
    try:
        await watch.ready.wait()
        fresh = tmp_path / "transcript.jsonl.tmp"
        fresh.write_text("{}\n{}\n")
        os.replace(fresh, source)
        await asyncio.wait_for(woken.wait(), 10)
        woken.clear()
        with source.open("a") as stream:  # the new file, not the replaced one, is watched
            stream.write("{}\n")
        await asyncio.wait_for(woken.wait(), 10)
    finally:
        watch.close()
        await watch.closed()


async def test_no_watch_without_the_folder(tmp_path: Path) -> None:
    assert FileWatch.start(tmp_path / "missing" / "t.jsonl", lambda: None) is None
