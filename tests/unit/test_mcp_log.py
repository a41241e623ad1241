"""mcp.log: pi's line format, 0600, one line per message, rotation past 5 MB, never raising."""

from __future__ import annotations

import re
import stat
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pi_tui.mcp.mcp_log import MAX_LOG_BYTES, McpLog, format_line

LINE = re.compile(r"^(\S+) \[([^\]]*)\] (.*)$")


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_line_format_with_and_without_logger() -> None:
    moment = datetime(2026, 11, 27, 6, 5, 4, 321987, tzinfo=UTC)
    assert (
        format_line("files", "info", "fs", "ready", moment)
        == "2026-11-27T06:05:04.321Z [files] info fs: ready\n"
    )
    assert (
        format_line("files", "warning", None, "slow", moment)
        == "2026-11-27T06:05:04.321Z [files] warning slow\n"
    )
    assert format_line("files", "debug", "", "x", moment) == "2026-11-27T06:05:04.321Z [files] debug x\n"


def test_write_appends_lines_with_the_current_time_to_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "mcp.log"
    log = McpLog(path)
    before = datetime.now(UTC)
    log.write("everything", "info", "server", "started")
    log.write("filesystem", "error", None, "denied")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first, second = lines(path)
    stamp, server, rest = LINE.match(first).groups()
    assert (server, rest) == ("everything", "info server: started")
    assert stamp.endswith("Z")
    moment = datetime.fromisoformat(stamp)
    assert before - timedelta(seconds=1) <= moment <= datetime.now(UTC)
    assert LINE.match(second).groups()[1:] == ("filesystem", "error denied")


def test_control_characters_stay_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    McpLog(path).write("s\x1b", "info", "lo\ngger", "one\ntwo\r\n\x1b[31mred\tcell\x85next\u2028end\x7f")
    [line] = lines(path)
    assert "\x1b" not in line
    assert line.endswith(r"[s\x1b] info lo\ngger: one\ntwo\r\n\x1b[31mred\tcell\x85next\u2028end\x7f")


def test_unicode_text_is_kept_and_bad_text_does_not_raise(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    log = McpLog(path)
    log.write("s", "info", None, "héllo 搜索 ✓")
    log.write("s", "info", None, "lone \ud800 surrogate")
    first, second = lines(path)
    assert first.endswith("info héllo 搜索 ✓")
    assert second.endswith("info lone ? surrogate")


def test_file_past_5_mb_moves_to_dot_1_before_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    old = tmp_path / "mcp.log.1"
    old.write_text("older rotation\n")
    path.write_bytes(b"x" * MAX_LOG_BYTES)
    log = McpLog(path)
    log.write("s", "info", None, "at the limit")  # exactly 5 MB is not past it
    assert old.read_text() == "older rotation\n"
    log.write("s", "info", None, "past the limit")
    assert old.stat().st_size > MAX_LOG_BYTES
    assert old.read_bytes().endswith(b"info at the limit\n")
    [line] = lines(path)
    assert line.endswith("info past the limit")


def test_growth_by_this_process_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    log = McpLog(path)
    log.write("s", "info", None, "y" * MAX_LOG_BYTES)
    log.write("s", "info", None, "after")
    assert (tmp_path / "mcp.log.1").stat().st_size > MAX_LOG_BYTES
    assert lines(path)[0].endswith("info after")


def test_file_another_process_rotated_is_not_moved_again(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    log = McpLog(path)
    log.write("s", "info", None, "z" * MAX_LOG_BYTES)
    # Another pi or pi-tui rotates it and starts a new file.
    path.rename(tmp_path / "mcp.log.1")
    path.write_text("their line\n")
    log.write("s", "info", None, "ours")
    assert (tmp_path / "mcp.log.1").stat().st_size > MAX_LOG_BYTES
    assert lines(path)[0] == "their line"
    assert lines(path)[1].endswith("info ours")


def test_unwritable_folder_is_ignored_after_one_attempt(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder should be")
    path = blocker / "mcp.log"
    log = McpLog(path)
    log.write("s", "info", None, "lost")  # must not raise
    blocker.unlink()
    blocker.mkdir()
    log.write("s", "info", None, "not tried")
    assert not path.exists()
    # A new log (a new session) tries again.
    McpLog(path).write("s", "info", None, "works")
    assert lines(path)[0].endswith("info works")


def test_writes_from_many_threads_give_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    log = McpLog(path)

    def writer(index: int) -> None:
        for count in range(200):
            log.write(f"server{index}", "info", "t", f"message {count} " + "m" * 100)

    # Switching threads often makes an unlocked size count lose updates (about one run in five
    # without the lock); with the lock it never does.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=writer, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    written = lines(path)
    assert len(written) == 1600
    assert all(re.fullmatch(r"\S+ \[server\d\] info t: message \d+ m{100}", line) for line in written)
    assert log._size == path.stat().st_size
