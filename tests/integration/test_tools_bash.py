"""The bash tool with real shells: streaming, exit codes, truncation, timeout and abort."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.tools import ToolContext, ToolError, ToolResult
from pi_tui.tools.bash import BashTool
from tests.support.waiting import async_wait_until, poll_for


def run(cwd: Path, updates: list[ToolResult] | None = None, **args: Any) -> ToolResult:
    ctx = ToolContext(cwd=cwd, on_update=(updates.append if updates is not None else lambda _r: None))
    return asyncio.run(BashTool().execute("call_1", args, ctx))


def fails(cwd: Path, **args: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        run(cwd, **args)
    return info.value


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs; a zombie (dead, not yet reaped by init) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pids: list[int], within: float = 1.0) -> list[int]:
    """The pids still alive after ``within`` seconds (a dying process needs a moment)."""
    poll_for(lambda: not any(alive(pid) for pid in pids), within)
    return [pid for pid in pids if alive(pid)]


def read_pids(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()] if path.exists() else []


def test_output_exit_code_and_cwd(tmp_path: Path) -> None:
    assert text_of(run(tmp_path, command="pwd; echo err >&2")) == f"{tmp_path}\nerr\n"
    error = fails(tmp_path, command="echo 'running tests' && echo 'boom' >&2 && exit 3")
    assert str(error) == "running tests\nboom\n\n\nCommand exited with code 3"  # pi's shape
    assert str(fails(tmp_path, command="false")) == "(no output)\n\nCommand exited with code 1"
    assert text_of(run(tmp_path, command="true")) == "(no output)"


def test_stdin_is_empty_and_env_is_passed(tmp_path: Path) -> None:
    assert text_of(run(tmp_path, command="cat; echo done")) == "done\n"  # would hang on a tty
    ctx = ToolContext(cwd=tmp_path, env={"PI_TOOL_TEST": "yes"})
    result = asyncio.run(BashTool().execute("c", {"command": "echo $PI_TOOL_TEST"}, ctx))
    assert text_of(result) == "yes\n"


def test_streams_updates_while_running(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    result = run(tmp_path, updates, command="for i in 1 2 3; do echo line$i; sleep 0.15; done")
    assert text_of(result) == "line1\nline2\nline3\n"
    seen = [text_of(update) for update in updates]
    assert len(seen) >= 2 and seen[0].startswith("line1")
    assert all(later.startswith(earlier.rstrip("\n")) for earlier, later in itertools.pairwise(seen))


def test_keeps_the_tail_and_saves_full_output(tmp_path: Path) -> None:
    result = run(tmp_path, command="seq 1 5000")
    body, note = text_of(result).split("\n\n")
    assert body.split("\n")[0] == "3001" and body.split("\n")[-1] == "5000"
    details = result.details
    full = Path(details["fullOutputPath"])
    assert str(full) in note and "last 2000 of 5000 lines" in note
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    assert details["truncation"]["truncatedBy"] == "lines"
    full.unlink()


def test_huge_output_stays_bounded_and_is_saved(tmp_path: Path) -> None:
    command = "python3 -c \"import sys; [sys.stdout.write('x' * 99 + '\\n') for _ in range(40000)]\"; exit 4"
    error = fails(tmp_path, command=command)
    message = str(error)
    assert message.endswith("Command exited with code 4")
    assert len(message.encode()) < 60 * 1024
    full = Path(error.details["fullOutputPath"])
    assert full.stat().st_size == 40000 * 100
    assert error.details["truncation"]["totalLines"] == 40000
    full.unlink()


def test_output_without_cut_leaves_no_temp_file(tmp_path: Path) -> None:
    result = run(tmp_path, command="seq 1 2000")  # exactly at the line limit: nothing cut
    assert result.details is None and text_of(result).endswith("2000\n")


def test_background_job_does_not_hang_the_tool(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    start = time.monotonic()
    result = run(tmp_path, command=f"sleep 30 & echo $! > {pids}; echo started")
    assert time.monotonic() - start < 2
    assert text_of(result) == "started\n"
    for pid in read_pids(pids):  # left running on purpose (like `server &`); clean up
        os.kill(pid, 9)


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # The inner shell ignores SIGTERM, so the tool has to follow up with SIGKILL.
    command = (
        f"bash -c \"trap '' TERM; sleep 30\" & echo $! >> {pids}; "
        f"echo waiting; sleep 30 & echo $! >> {pids}; wait"
    )
    start = time.monotonic()
    error = fails(tmp_path, command=command, timeout=0.3)
    assert time.monotonic() - start < 3
    assert "waiting" in str(error) and "timed out after 0.3 seconds" in str(error)
    assert len(read_pids(pids)) == 2
    assert wait_gone(read_pids(pids)) == []


def test_cancel_kills_grandchildren_quickly(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 30 & echo $! >> {pids}; (sleep 30; echo never) & echo $! >> {pids}; wait"

    async def scenario() -> float:
        task = asyncio.ensure_future(BashTool().execute("c", {"command": command}, ToolContext(cwd=tmp_path)))
        await async_wait_until(lambda: len(read_pids(pids)) >= 2, "the command to start", timeout=5)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    took = asyncio.run(scenario())
    assert took < 0.2
    children = read_pids(pids)
    assert len(children) == 2
    assert wait_gone(children, within=0.2) == []


def test_bad_arguments(tmp_path: Path) -> None:
    assert '"bash":\n  - command: ' in str(fails(tmp_path, command=""))  # pi's wording
    assert "timeout" in str(fails(tmp_path, command="true", timeout="soon"))
    assert "does not exist" in str(fails(tmp_path / "gone", command="true"))
