"""Kill everything a shell command started, including processes that left its process group.

``killpg`` alone is not enough: a command may call ``setsid`` (or a program may put itself in a
new group, as job-control shells and daemons do), and a double fork leaves a grandchild whose
parent is init, not the shell. So the tree is found three ways from ``/proc`` at kill time:
the shell's process group, its session (the shell is started in a session of its own) and the
parent chain down from the shell. The tree is frozen with ``SIGSTOP`` while it is searched (so
no parent dies and orphans a child out of sight, and nothing forks), then killed. Everything found
is remembered (by pid *and* start time, so a reused pid is never hit) and each search is repeated
until it finds nothing new.

Not reached: a process that already left both the session and the parent chain before the kill
(``setsid`` in a child whose parent then exited, as daemons do on purpose).

Linux only (``/proc``); elsewhere it falls back to signalling the process group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass

PROC = "/proc"
ROUND_PAUSE = 0.002
"""Seconds between two rounds: long enough for a signalled process to change state."""
FREEZE_LIMIT = 0.5
"""Seconds the freezing may take at most (a process in uninterruptible sleep stops late)."""


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """The fields of ``/proc/PID/stat`` this module needs."""

    pid: int
    ppid: int
    pgrp: int
    session: int
    start: int
    """Start time in clock ticks since boot: with the pid, a process's identity."""
    dead: bool
    """Zombie (or already being torn down): it needs no signal, only its parent's reaping."""
    stopped: bool
    """Stopped by a signal (``T``): it can neither fork nor exit until continued or killed."""


def parse_stat(text: str) -> ProcInfo | None:
    """Parse one ``/proc/PID/stat`` line; the command name may hold spaces and parentheses."""
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    if not head or len(fields) < 20:
        return None
    try:
        pid = int(head.split(" (", 1)[0])
        return ProcInfo(
            pid=pid,
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            session=int(fields[3]),
            start=int(fields[19]),
            dead=fields[0] in ("Z", "X", "x"),
            stopped=fields[0] in ("T", "t"),
        )
    except ValueError:
        return None


def process_table() -> dict[int, ProcInfo]:
    """Every process visible in ``/proc`` now (processes that vanish while reading are skipped)."""
    table: dict[int, ProcInfo] = {}
    try:
        names = os.listdir(PROC)
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{PROC}/{name}/stat", encoding="utf-8", errors="replace") as handle:
                info = parse_stat(handle.read())
        except OSError:
            continue
        if info is not None:
            table[info.pid] = info
    return table


def tree_members(
    table: dict[int, ProcInfo], leaders: set[int], known: set[tuple[int, int]]
) -> set[tuple[int, int]]:
    """Living processes of the trees: in a leader's group or session, a remembered process, or a
    descendant (by parent chain) of any of those. Returned as ``(pid, start)`` pairs."""
    members: dict[int, ProcInfo] = {}
    for info in table.values():
        if info.dead:
            continue
        # The group and session hold the shell itself; ``known`` holds what left them.
        if info.pgrp in leaders or info.session in leaders or (info.pid, info.start) in known:
            members[info.pid] = info
    children: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info)
    pending = list(members)
    while pending:
        for child in children.get(pending.pop(), ()):
            if not child.dead and child.pid not in members and child.pid != os.getpid():
                members[child.pid] = child
                pending.append(child.pid)
    members.pop(os.getpid(), None)  # never ourselves, whatever a table says
    return {(info.pid, info.start) for info in members.values()}


def _signal_all(pids: Iterable[int], leaders: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    for leader in leaders:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, sig)


def kill_trees(leaders: Iterable[int], *, timeout: float = 2.0) -> int:
    """SIGKILL every process of the trees led by ``leaders`` (shells started with their own
    session and group, so leader pid == group id == session id). Returns how many distinct
    processes were found.

    First the trees are frozen: ``SIGSTOP`` to the groups (atomic: no member can fork or die
    after it), then to every process found by session or parent chain, again and again until a
    pass finds nothing new and everything found is stopped. A stopped parent keeps its children
    attached, so nothing is orphaned out of sight while the search runs. Then ``SIGKILL`` to all,
    repeated until none is left or ``timeout`` passes.
    """
    leader_set = {pid for pid in leaders if pid > 0}
    if not leader_set:
        return 0
    if not os.path.isdir(PROC):
        _signal_all((), leader_set, signal.SIGKILL)
        return 0
    _signal_all((), leader_set, signal.SIGSTOP)
    known: set[tuple[int, int]] = set()
    deadline = time.monotonic() + timeout
    freeze_until = time.monotonic() + min(FREEZE_LIMIT, timeout)
    while True:
        table = process_table()
        members = tree_members(table, leader_set, known)
        new = members - known
        known |= members
        _signal_all((pid for pid, _start in new), leader_set, signal.SIGSTOP)
        settled = all(table[pid].stopped for pid, _start in members)
        if (not new and settled) or time.monotonic() >= freeze_until:
            break
        time.sleep(ROUND_PAUSE)
    while True:
        _signal_all((pid for pid, _start in known), leader_set, signal.SIGKILL)
        time.sleep(ROUND_PAUSE)
        members = tree_members(process_table(), leader_set, known)
        known |= members
        if not members or time.monotonic() >= deadline:
            return len(known)
