"""File checkpoints in a 10,000-file project (issue 34): what recording a turn and restoring
files cost.

A project of ``--files`` source-like files (sizes drawn around 4 KB, up to 200 KB; folders up to
four deep; a ``.gitignore``'d ``build/`` of 500 more, and the user's own ``git init``) is written
to a temporary folder, with the shadow store in another. Rows printed (medians of ``--runs``):

1. the first snapshot of the project (the baseline every later one builds on);
2. a turn's checkpointing, 1-5 files changed: the snapshot before the tools, the one after and
   the checkpoint entry's comparison, called one after the other (the store's own cost);
3. the same through the agent's path (:class:`~pi_tui.agent.file_turns.TurnFiles` with a real
   in-memory session, its snapshots in worker threads) with a model that streams in 0 ms: the
   worst case, in which the turn waits for every git process;
4. a restore of 100 changed files (``FileHistory.restore_commit``: a snapshot of the files as
   they are, the hand-edit check, the writes, the undo point) and its undo;
5. with ``--breakdown``: where a snapshot's time goes, git command by git command.

Targets: a turn's checkpointing (row 3) under 100 ms; a restore of 100 changed files under 1 s.

Where the time goes (``--breakdown``, git 2.39 on a 2-CPU machine under load): a snapshot is
one ``git ls-files`` over the whole project (about 40 ms of CPU, nearly all of it the kernel's
lstat of every indexed file and readdir of every folder), then, only when something changed,
``update-index`` of the changed files, ``write-tree``, ``commit-tree`` and ``update-ref``
(about 30 ms together). With a 0 ms model a turn waits for two snapshots (before and after its
tools) and the comparison: about 110 ms of git CPU. Any model that streams for longer than one
snapshot hides the first one (it runs while the reply streams). Tried and measured, not kept:
the two halves of ``ls-files`` as two processes at once (slower here: two index reads on two
busy CPUs).

This is a script, not a test::

    python benchmarks/checkpoints.py [--files 10000] [--runs 15] [--breakdown] [--project DIR]

``--project DIR`` writes the project there once and reuses it on later runs (writing 10,000
files is most of the script's time). Beside each median, the CPU time git used (``cpu``): on a
loaded machine the wall time waits for the CPU, the CPU time does not.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_tui.agent.file_turns import TurnFiles  # noqa: E402
from pi_tui.checkpoints.history import FileHistory  # noqa: E402
from pi_tui.checkpoints.store import ShadowStore  # noqa: E402
from pi_tui.messages import ToolCall  # noqa: E402
from pi_tui.session.manager import SessionManager  # noqa: E402

WORDS = ["def", "class", "return", "import", "self", "value", "items", "index", "result", "error", "path"]
TURN_TARGET = 0.100
RESTORE_TARGET = 1.0


def make_project(root: Path, count: int, rng: random.Random) -> list[Path]:
    """``count`` files in folders up to four deep, sizes around 4 KB (a long tail to 200 KB)."""
    folders = [Path(".")]
    for top in range(12):
        folders.append(Path(f"pkg{top}"))
        for mid in range(6):
            folders.append(Path(f"pkg{top}/mod{mid}"))
            for low in range(3):
                folders.append(Path(f"pkg{top}/mod{mid}/sub{low}/impl"))
    files: list[Path] = []
    for index in range(count):
        folder = root / rng.choice(folders)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file_{index}.py"
        path.write_bytes(text_of(rng, min(200_000, max(40, int(rng.lognormvariate(8.3, 1.0))))))
        files.append(path)
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for index in range(500):
        ignored = root / "build" / f"obj{index // 50}" / f"out_{index}.o"
        ignored.parent.mkdir(parents=True, exist_ok=True)
        ignored.write_bytes(rng.randbytes(2000))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return files


def text_of(rng: random.Random, size: int) -> bytes:
    line_words = [" ".join(rng.choices(WORDS, k=8)) for _ in range(32)]
    out: list[str] = []
    total = 0
    while total < size:
        line = "    " * rng.randrange(4) + rng.choice(line_words) + f"  # {rng.randrange(10**6)}\n"
        out.append(line)
        total += len(line)
    return "".join(out).encode()[:size]


def change(files: list[Path], rng: random.Random, how_many: int) -> list[Path]:
    chosen = rng.sample(files, how_many)
    for path in chosen:
        with path.open("ab") as stream:
            stream.write(f"# changed {rng.random()}\n".encode())
    return chosen


def timed(action: Callable[[], Any]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def children_cpu() -> float:
    """CPU seconds (user and system) of the git processes that have ended so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def cpu_note(cpu: list[float]) -> str:
    return f"cpu {ms(statistics.median(cpu))}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def row(name: str, value: str, note: str = "") -> None:
    print(f"| {name:<58} | {value:>12} | {note}")


class CountingStore(ShadowStore):
    """A store that notes the CPU time of each git command (``--breakdown``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spent: dict[str, list[float]] = defaultdict(list)

    def _git(self, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
        began = children_cpu()
        try:
            return super()._git(*args, stdin=stdin, index=index)
        finally:
            command = next((arg for arg in args if not arg.startswith("-") and "=" not in arg), "")
            self.spent[command].append(children_cpu() - began)


MODEL_SECONDS = 0.5
"""A reply's streaming time for the typical row: a short tool-calling reply of a fast model
(first token to last)."""


def turn_through_agent(
    files: TurnFiles,
    project_files: list[Path],
    rng: random.Random,
    manager: Any,
    model: float = 0.0,
    tool: str = "bash",
) -> float:
    """One turn with tools and a model that streams for ``model`` seconds (before the tool call
    and again for the next reply): the time the turn waits for checkpointing (the model's time
    and the tools' own edits are not counted)."""

    async def turn() -> float:
        began = time.perf_counter()
        files.turn_started()
        await asyncio.sleep(model)  # the reply asking for tools streams
        chosen = rng.sample(project_files, rng.randint(1, 5))
        calls = [ToolCall(id=f"c{i}", name=tool, arguments={"path": str(p)}) for i, p in enumerate(chosen)]
        before = await files.before_tools(calls)
        edits_began = time.perf_counter()
        for path in chosen:  # the tools
            with path.open("ab") as stream:
                stream.write(f"# changed {rng.random()}\n".encode())
        edits = time.perf_counter() - edits_began
        files.after_tools(manager.get_leaf_id(), before)
        files.turn_started()  # the next turn
        await asyncio.sleep(model)  # the next reply streams
        await files.settle()
        await files.run_ended()
        return time.perf_counter() - began - edits - 2 * model

    return asyncio.run(turn())


def the_project(options: argparse.Namespace, work: Path, rng: random.Random) -> list[Path]:
    project = Path(options.project).resolve() if options.project else work / "project"
    if project.is_dir() and any(project.iterdir()):
        files = sorted(p for p in project.rglob("file_*.py"))
        print(f"project: {project} (reused)")
    else:
        project.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        files = make_project(project, options.files, rng)
        print(f"project written in {time.perf_counter() - began:.1f} s")
    size = sum(path.stat().st_size for path in files)
    print(f"project: {len(files):,} files, {size / 1e6:.1f} MB")
    return files


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=10_000, help="files in the project (default 10000)")
    parser.add_argument("--runs", type=int, default=15, help="runs per median (default 15)")
    parser.add_argument("--breakdown", action="store_true", help="time each git command of a snapshot")
    parser.add_argument("--project", help="write the project here once and reuse it")
    options = parser.parse_args()
    rng = random.Random(34)
    work = Path(tempfile.mkdtemp(prefix="pi-tui-checkpoints-"))
    try:
        project_files = the_project(options, work, rng)
        project = project_files[0].parents[0]
        while not (project / ".gitignore").is_file():
            project = project.parent
        print(f"git: {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}")
        print(f"load average: {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}\n")
        store = CountingStore(project, work / "store")
        history = FileHistory(store)
        session = "bench"
        cpu = children_cpu()
        first = timed(lambda: store.snapshot(session))
        row("first snapshot (baseline, whole project)", ms(first), f"cpu {ms(children_cpu() - cpu)}")
        walls, cpus = [], []
        for _ in range(options.runs):
            cpu = children_cpu()
            walls.append(timed(lambda: store.snapshot(session)))
            cpus.append(children_cpu() - cpu)
        row("snapshot, nothing changed", ms(statistics.median(walls)), cpu_note(cpus))
        store.spent.clear()

        walls, cpus = [], []
        for _ in range(options.runs):
            cpu = children_cpu()
            first_began = time.perf_counter()
            before = store.snapshot(session)
            taken = time.perf_counter() - first_began
            used = children_cpu() - cpu
            change(project_files, rng, rng.randint(1, 5))
            cpu = children_cpu()
            second_began = time.perf_counter()
            after = store.snapshot(session)
            history.turn_entry(session, "turn", before, after)
            walls.append(taken + time.perf_counter() - second_began)
            cpus.append(used + children_cpu() - cpu)
        row("turn, 1-5 files changed: snapshots + comparison", ms(statistics.median(walls)), cpu_note(cpus))
        if options.breakdown:
            for command, times in sorted(store.spent.items(), key=lambda item: -sum(item[1])):
                row(f"  git {command}: cpu per turn", ms(sum(times) / options.runs), f"{len(times)} runs")
        store.spent.clear()

        manager = SessionManager.in_memory(str(project))
        turns = TurnFiles(lambda: manager, lambda message: print("notice:", message))
        turns.history = history
        for tool, model in (("bash", 0.0), ("edit", 0.0), ("bash", MODEL_SECONDS), ("edit", MODEL_SECONDS)):
            walls, cpus = [], []
            for _ in range(options.runs):
                cpu = children_cpu()
                walls.append(turn_through_agent(turns, project_files, rng, manager, model, tool))
                cpus.append(children_cpu() - cpu)
            waited = statistics.median(walls)
            verdict = "OK" if waited < TURN_TARGET else "OVER"
            what = "0 ms model (worst case)" if not model else f"replies streaming {model * 1000:.0f} ms"
            row(
                f"turn through TurnFiles, {tool} calls, {what}",
                ms(waited),
                f"{cpu_note(cpus)}; {verdict} (target 100 ms)",
            )

        restores: list[float] = []
        undos: list[float] = []
        cpus, undo_cpus = [], []
        for _ in range(max(3, options.runs // 3)):
            start = store.snapshot(session)
            change(project_files, rng, 100)
            end = store.snapshot(session)
            history.set_known(manager.session_id, end.commit)  # as after the turn that made them
            cpu = children_cpu()
            began = time.perf_counter()
            done = history.restore_commit(manager, start.commit, force=False)
            restores.append(time.perf_counter() - began)
            cpus.append(children_cpu() - cpu)
            assert done.count == 100, done.summary()
            cpu = children_cpu()
            began = time.perf_counter()
            undone = history.undo(manager)
            undos.append(time.perf_counter() - began)
            undo_cpus.append(children_cpu() - cpu)
            assert undone.count == 100, undone.summary()
        best = statistics.median(restores)
        verdict = "OK" if best < RESTORE_TARGET else "OVER"
        row("restore of 100 changed files", ms(best), f"{cpu_note(cpus)}; {verdict} (target 1 s)")
        row("undo of that restore (100 files)", ms(statistics.median(undos)), cpu_note(undo_cpus))
        store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
