"""Kill everything a shell command started, including processes that left its process group.

``killpg`` alone is not enough: a command may call ``setsid`` (or a program may put itself in a
new group, as job-control shells and daemons do), and a double fork leaves a grandchild whose
parent is init, not the shell. So the tree is found three ways from ``/proc`` at kill time:
the shell's process group, its session (the shell is started in a session of its own) and the
parent chain down from the shell. The tree is frozen with ``SIGSTOP`` while it is searched (so
no parent dies and orphans a child out of sight, and nothing forks), then killed. Everything found
is remembered (by pid *and* start time, so a reused pid is never hit) and each search is repeated
until it finds nothing new.

A process that left both the session and the parent chain before the kill (``setsid`` in a
child whose parent then exited, as daemons do on purpose) is out of reach of those three ways.
So on Linux the pi-tui process makes itself a *child subreaper* (:func:`become_subreaper`,
``prctl(PR_SET_CHILD_SUBREAPER)``): such an orphan is then re-parented to pi-tui instead of init.
pi-tui's children that it did not start itself this way, *adopted orphans*, are told from its
own by their session: everything pi-tui starts either stays in pi-tui's session (short helpers)
or is registered by its caller (the bash shells); an adopted orphan comes from a shell's session
or a newer one. They are killed (with their descendants) when pi-tui exits in any way, and
when a command is aborted, those adopted since that command's shell started. An adopted orphan
that exits becomes pi-tui's zombie: :func:`reap_orphans` waits for it (only for pids no one else
waits for, see there).

Elsewhere (macOS and other systems without ``/proc``) it falls back to signalling the process
group: whatever left the group (``setsid``, a daemon's double fork) survives.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

PROC = "/proc"
ROUND_PAUSE = 0.002
"""Seconds between two rounds: long enough for a signalled process to change state."""
FREEZE_LIMIT = 0.5
"""Seconds the freezing may take at most (a process in uninterruptible sleep stops late)."""
PR_SET_CHILD_SUBREAPER = 36
"""``prctl`` option (Linux 3.4+): orphans of descendants are re-parented to this process."""
ZOMBIE_GRACE = 1.0
"""Seconds a zombie child must have been seen before :func:`reap_orphans` waits for it: the
child's own waiter (asyncio's watcher thread, ``subprocess.wait``) collects it far sooner."""

_subreaper = False
_zombies_seen: dict[tuple[int, int], float] = {}


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux), so that a double-forked daemon started by a
    command stays a descendant of pi-tui and is stopped with the rest; arrange for the adopted
    orphans left at a normal exit to be killed. True when it is one now.

    Called once at startup by the ``pi-tui`` program itself, never when pi-tui's code runs
    inside another program (tests): that program's own children must not be taken for orphans.
    """
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux") or not os.path.isdir(PROC):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    _subreaper = True
    atexit.register(kill_orphans)
    return True


def is_subreaper() -> bool:
    return _subreaper


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
    table: dict[int, ProcInfo],
    leaders: set[int],
    known: set[tuple[int, int]],
    orphans_since: int | None = None,
    spare: frozenset[int] = frozenset(),
) -> set[tuple[int, int]]:
    """Living processes of the trees: in a leader's group or session, a remembered process, an
    adopted orphan started at or after ``orphans_since`` (clock ticks; None: none), or a
    descendant (by parent chain) of any of those. Returned as ``(pid, start)`` pairs. The trees
    of the shells in ``spare`` (other commands still running) are left alone."""
    members: dict[int, ProcInfo] = {}
    adopted = (
        set(adopted_orphans(table, orphans_since, spare | leaders)) if orphans_since is not None else set()
    )
    for info in table.values():
        if info.dead:
            continue
        # The group and session hold the shell itself; ``known`` holds what left them.
        if (
            info.pgrp in leaders
            or info.session in leaders
            or (info.pid, info.start) in known
            or info.pid in adopted
        ):
            members[info.pid] = info
    children: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info)
    pending = list(members)
    while pending:
        for child in children.get(pending.pop(), ()):
            if (
                not child.dead
                and child.pid not in members
                and child.pid not in spare
                and child.pid != os.getpid()
            ):
                members[child.pid] = child
                pending.append(child.pid)
    members.pop(os.getpid(), None)  # never ourselves, whatever a table says
    return {(info.pid, info.start) for info in members.values()}


def adopted_orphans(table: dict[int, ProcInfo], since: int | None, ours: Iterable[int] = ()) -> list[int]:
    """pi-tui's living children that it did not start: re-parented to it as a subreaper, started
    at or after ``since`` (clock ticks since boot). ``ours`` are children it did start (the bash
    shells); a child in pi-tui's own session is one of its short helpers. Empty unless this
    process is a subreaper."""
    if not _subreaper or since is None:
        return []
    me = os.getpid()
    own = table.get(me)
    session = own.session if own is not None else os.getsid(0)
    skip = set(ours)
    return [
        info.pid
        for info in table.values()
        if info.ppid == me
        and not info.dead
        and info.session != session
        and info.pid not in skip
        and info.start >= since
    ]


def start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (None when it is gone or unknown)."""
    try:
        with open(f"{PROC}/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            info = parse_stat(handle.read())
    except OSError:
        return None
    return info.start if info is not None else None


def reap_orphans(ours: Iterable[int] = ()) -> int:
    """Wait for the adopted orphans that have died (zombie children of a subreaper stay until
    their parent waits for them); returns how many were collected.

    Only pids no one else waits for: not a child in ``ours`` (the running shells: asyncio waits
    for them), not one in pi-tui's own session (``subprocess`` helpers), and only a zombie seen
    at least :data:`ZOMBIE_GRACE` seconds ago by an earlier call, which a child's own waiter
    would have collected long before (``waitpid`` on a pid, never ``-1``: another waiter's
    status is never taken).
    """
    if not _subreaper or not _has_children():
        return 0
    me = os.getpid()
    table = process_table()
    own = table.get(me)
    session = own.session if own is not None else os.getsid(0)
    skip = set(ours)
    now = time.monotonic()
    zombies = {
        (info.pid, info.start)
        for info in table.values()
        if info.ppid == me and info.dead and info.session != session and info.pid not in skip
    }
    for gone in set(_zombies_seen) - zombies:
        del _zombies_seen[gone]
    reaped = 0
    for key in zombies:
        first = _zombies_seen.setdefault(key, now)
        if now - first < ZOMBIE_GRACE:
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(key[0], os.WNOHANG)[0] == key[0]:
                reaped += 1
        _zombies_seen.pop(key, None)
    return reaped


def _signal_all(pids: Iterable[int], leaders: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    for leader in leaders:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, sig)


def kill_trees(
    leaders: Iterable[int],
    *,
    timeout: float = 2.0,
    orphans_since: int | None = None,
    spare: Iterable[int] = (),
) -> int:
    """SIGKILL every process of the trees led by ``leaders`` (shells started with their own
    session and group, so leader pid == group id == session id), and with ``orphans_since`` the
    adopted orphans started since then (0: all; see :func:`adopted_orphans`) with their
    descendants, sparing the trees of the shells in ``spare``. Returns how many distinct
    processes were found.

    First the trees are frozen: ``SIGSTOP`` to the groups (atomic: no member can fork or die
    after it), then to every process found by session or parent chain, again and again until a
    pass finds nothing new and everything found is stopped. A stopped parent keeps its children
    attached, so nothing is orphaned out of sight while the search runs. Then ``SIGKILL`` to all,
    repeated until none is left or ``timeout`` passes.
    """
    leader_set = {pid for pid in leaders if pid > 0}
    spared = frozenset(pid for pid in spare if pid > 0) - leader_set
    chase = orphans_since is not None and _subreaper
    if not leader_set and not chase:
        return 0
    if not os.path.isdir(PROC):
        _signal_all((), leader_set, signal.SIGKILL)
        return 0
    since = orphans_since if chase else None
    _signal_all((), leader_set, signal.SIGSTOP)
    known: set[tuple[int, int]] = set()
    deadline = time.monotonic() + timeout
    freeze_until = time.monotonic() + min(FREEZE_LIMIT, timeout)
    while True:
        table = process_table()
        members = tree_members(table, leader_set, known, since, spared)
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
        members = tree_members(process_table(), leader_set, known, since, spared)
        known |= members
        if not members or time.monotonic() >= deadline:
            return len(known)


def _has_children() -> bool:
    """Whether this process has a child now (cheap: the kernel's list per thread)."""
    try:
        tasks = os.listdir(f"{PROC}/self/task")
    except OSError:
        return True
    for task in tasks:
        try:
            with open(f"{PROC}/self/task/{task}/children", encoding="ascii") as handle:
                if handle.read().strip():
                    return True
        except OSError:
            return True  # no such file (an older kernel): look the long way
    return False


def kill_orphans() -> int:
    """At exit: kill every adopted orphan left (what finished commands left running, double-forked
    daemons included) with its descendants. Nothing to do, and nothing read, when this process
    is not a subreaper or has no children."""
    if not _subreaper or not _has_children():
        return 0
    return kill_trees((), orphans_since=0)
