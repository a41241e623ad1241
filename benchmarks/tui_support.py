"""Shared pieces of the interactive-mode benchmarks (``benchmarks/tui_*.py``).

- :func:`isolate`: a throw-away agent dir and working directory, and no API keys, so every
  benchmark runs the offline demo model and never touches the real ``~/.agent``;
- :func:`write_linear_session`: a session file of exactly N messages (users, replies with tool
  calls, multi-KB tool results, ``!`` commands), realistic sizes from ``session_load``'s generator;
- :func:`make_pi_app`: ``start()`` + ``PiApp`` as ``pi_tui.tui.run`` does it;
- :class:`FrameProbe`: counts the frames the app really draws (its ``_display`` calls outside a
  batch update) and lets a benchmark wait for the next one; it also renders each frame's segments,
  the work a real terminal driver does and the headless driver skips;
- :class:`Profiled` / :func:`hot_spots`: cProfile around async code, reported as shares.

Not a benchmark itself; imported by the scripts beside it.
"""

from __future__ import annotations

import asyncio
import atexit
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/x.py` without an installed pi_tui
    sys.path.insert(1, str(ROOT))

from session_load import CWD, START_MS, SessionGenerator, _iso, _uuid7  # noqa: E402

SIZE = (120, 40)
"""Terminal size of every headless run."""


# --- environment -------------------------------------------------------------------------------


def isolate(prefix: str = "pi-tui-tui-bench-") -> Path:
    """A temp root with ``agent/`` (made ``$PI_CODING_AGENT_DIR``) and ``project/`` (the cwd).

    API keys are removed from this process's environment so ``start()`` picks the offline demo
    model, as it does for a user without keys. The folder is removed when the process exits.
    """
    root = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    (root / "agent").mkdir()
    (root / "project").mkdir()
    os.environ["PI_CODING_AGENT_DIR"] = str(root / "agent")
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            del os.environ[name]
    return root


# --- session files -------------------------------------------------------------------------------


def write_linear_session(path: Path, messages: int, seed: int = 20_260_302) -> dict[str, Any]:
    """Write a one-branch session of exactly ``messages`` message entries (plus the header and
    the model/thinking entries pi writes first); returns counts and the file size."""
    gen = SessionGenerator(max(messages, 20), seed)
    header = {
        "type": "session",
        "version": 3,
        "id": _uuid7(START_MS - 40, gen.rng),
        "timestamp": _iso(START_MS - 40),
        "cwd": CWD,
    }
    gen._add("model_change", {"provider": gen.model[0], "modelId": gen.model[2]}, START_MS - 30)
    gen._add("thinking_level_change", {"thinkingLevel": gen.thinking_level}, START_MS - 30)
    preamble = len(gen.entries)

    def count() -> int:
        return len(gen.entries) - preamble

    while messages - count() >= 60:  # a turn has at most 1 + 8 * 4 + 1 messages
        if gen.rng.random() < 0.07:
            gen.bash_execution()
        gen.turn()
    remaining = messages - count()
    if remaining % 2:
        gen.bash_execution()
        remaining -= 1
    if remaining:
        gen.closing_turn(remaining)
    assert count() == messages, (count(), messages)
    size = 0
    with open(path, "wb") as handle:
        for entry in [header, *gen.entries]:
            line = orjson.dumps(entry) + b"\n"
            handle.write(line)
            size += len(line)
    roles: dict[str, int] = {}
    for entry in gen.entries:
        if entry["type"] == "message":
            role = entry["message"]["role"]
            roles[role] = roles.get(role, 0) + 1
    return {"bytes": size, "roles": roles}


def write_branched_session(
    path: Path, entries: int, branch_points: int, random_labels: int, seed: int = 20_260_302
) -> dict[str, Any]:
    """Write a session of ``entries`` entries with about ``branch_points`` branch points.

    ``session_load``'s full generator (user prompts, replies with tool calls, multi-KB tool
    results, ``!`` commands, custom entries, branch summaries, one compaction): it goes back 1-4
    turns and branches there at regular intervals over the first 90% of the session, labels about
    a quarter of those branch targets, and sets ``random_labels`` more labels on recent messages.
    Its per-50,000-entry rates are scaled for this call only. Returns the generator's counts (with
    ``branch points``), the file size and the active path length.
    """
    import session_load

    scale = entries / 50_000
    branches_per_50k = branch_points / scale
    saved = session_load.BRANCHES_PER_50K, session_load.LABELS_PER_50K
    session_load.BRANCHES_PER_50K = round(branches_per_50k)  # type: ignore[misc]
    session_load.LABELS_PER_50K = round(branches_per_50k / 4 + random_labels / scale)  # type: ignore[misc]
    try:
        generated = SessionGenerator(entries, seed).generate()
    finally:
        session_load.BRANCHES_PER_50K, session_load.LABELS_PER_50K = saved  # type: ignore[misc]
    size = session_load.write_session(generated, path)
    return {"bytes": size, "counts": generated.counts, "active_path": generated.active_path_length}


# --- the app ----------------------------------------------------------------------------------


def make_pi_app(cwd: Path, session: Path | None = None) -> Any:
    """``start()`` and ``PiApp`` as ``pi_tui.tui.run.run_interactive`` builds them.

    With a session (whose replies name real providers, for which there is no key here) the
    offline demo model is chosen explicitly, as ``--provider offline --model demo`` would.
    """
    from pi_tui.startup import StartOptions, start
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.loaded import loaded_summary

    options = StartOptions(cwd=str(cwd))
    if session is not None:
        options.session, options.provider, options.model = str(session), "offline", "demo"
    started = start(options)
    return PiApp(started, cwd=str(cwd), loaded=loaded_summary(started, str(cwd)))


class FrameProbe:
    """Watches the frames an app draws: its ``_display`` calls with an update, outside a batch.

    Installed on the instance (``app._display``), so nothing in the app's code changes.
    """

    def __init__(self, app: Any, *, render: bool = True, when: Callable[[], bool] | None = None) -> None:
        self.app = app
        self.render = render
        self.frames = 0
        self.times: list[float] = []
        """When each frame was drawn (``time.perf_counter``)."""
        self.first: float | None = None
        self.last: float | None = None
        self.when = when
        """A condition checked at every frame; :attr:`matched` is the first frame it held at."""
        self.matched: float | None = None
        self._event: asyncio.Event | None = None
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            if self.render:
                render_segments = getattr(renderable, "render_segments", None)
                if render_segments is not None:
                    render_segments(app.console)  # what a real terminal driver would write
            now = time.perf_counter()
            self.frames += 1
            self.times.append(now)
            self.last = now
            if self.first is None:
                self.first = now
            if self.matched is None and self.when is not None and self.when():
                self.matched = now
            if self._event is not None:
                self._event.set()

        app._display = display

    async def wait(self, after: int | None = None, timeout: float = 30.0) -> float:
        """Wait until more than ``after`` frames were drawn (default: any frame); returns when
        frame number ``after + 1`` was drawn."""
        target = 0 if after is None else after
        if self._event is None:
            self._event = asyncio.Event()
        deadline = time.perf_counter() + timeout
        while self.frames <= target:
            self._event.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no frame after {self.frames} within {timeout} s")
            try:
                await asyncio.wait_for(self._event.wait(), left)
            except TimeoutError:
                continue
        return self.times[target]

    async def wait_matched(self, timeout: float = 30.0) -> float:
        """Wait for the first frame drawn while :attr:`when` held; its time."""
        deadline = time.perf_counter() + timeout
        while self.matched is None:
            await self.wait(after=self.frames, timeout=max(0.0, deadline - time.perf_counter()))
        return self.matched

    def force(self) -> bool:
        """Draw now whatever is pending (what the screen's refresh timer does); True if it drew."""
        before = self.frames
        self.app.screen._on_timer_update()
        return self.frames > before


async def draw_now(probe: FrameProbe, frames: int) -> None:
    """Let the widgets' refresh requests reach the screen, then draw at once (no timer wait):
    the frame the screen's refresh timer would draw next, without waiting for the timer."""
    for _ in range(50):
        await asyncio.sleep(0)
        if probe.frames > frames or probe.force():
            return
    await probe.wait(after=frames)


async def settle(rounds: int = 3) -> None:
    """Let every ready task and message pump run a few times (no fixed sleep)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


# --- profiling --------------------------------------------------------------------------------


class Profiled:
    """``with Profiled() as prof: ...`` around (async) code; :meth:`report` gives the hot spots."""

    def __init__(self) -> None:
        self.profile = cProfile.Profile()

    def __enter__(self) -> Profiled:
        self.profile.enable()
        return self

    def __exit__(self, *exc: object) -> None:
        self.profile.disable()

    def report(self, top: int = 15, title: str = "") -> str:
        return hot_spots(self.profile, top=top, title=title)


def where(filename: str, line: int) -> str:
    for marker in ("site-packages/", "/work/main/", str(ROOT) + "/"):
        if marker in filename:
            filename = filename.split(marker, 1)[1]
            break
    return f"{filename}:{line}" if line else filename


PLUMBING_FILES = (
    "asyncio/",
    "textual/message_pump.py",
    "textual/_callback.py",
    "textual/timer.py",
    "textual/pilot.py",
    "benchmarks/",
    "contextlib.py",
)
PLUMBING_NAMES = {
    "<method 'run' of '_contextvars.Context' objects>",
    "<built-in method builtins.exec>",
    "run_app",
    "_process_messages",
    "run_test",
    "on_event",
    "_on_message",
    "_dispatch_message",
}


def _plumbing(key: tuple[str, int, str]) -> bool:
    filename, _line, name = key
    return name in PLUMBING_NAMES or any(part in filename for part in PLUMBING_FILES)


def hot_spots(profile: cProfile.Profile, top: int = 15, title: str = "", focus: str = "pi_tui/") -> str:
    """Hot spots as shares of the profiled total: functions by own time, files by own time, and
    the ``focus`` package's functions by cumulative time (which of our calls cost what)."""
    stats = pstats.Stats(profile)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values()) or 1e-9
    lines = [f"{title} (profiled total {total * 1000:.0f} ms)" if title else f"total {total * 1000:.0f} ms"]
    header = f"  {'share':>6} {'own ms':>9} {'cum ms':>9} {'calls':>9}  function (file:line)"

    def row(share: float, own: float, cum: float, calls: int, name: str, filename: str, line: int) -> str:
        figures = f"{share:6.1%} {own * 1000:9.1f} {cum * 1000:9.1f} {calls:9,}"
        return f"  {figures}  {name} ({where(filename, line)})"

    lines += [f"  top {top} functions by own time:", header]
    by_own = sorted(raw.items(), key=lambda item: item[1][2], reverse=True)[:top]
    for (filename, line, name), (_cc, calls, own, cum, _callers) in by_own:
        lines.append(row(own / total, own, cum, calls, name, filename, line))

    files: dict[str, float] = {}
    for (filename, _line, _name), entry in raw.items():
        files[filename] = files.get(filename, 0.0) + entry[2]
    lines.append(f"  top {top} files by own time:")
    for filename, own in sorted(files.items(), key=lambda item: item[1], reverse=True)[:top]:
        lines.append(f"  {own / total:6.1%} {own * 1000:9.1f}  {where(filename, 0)}")

    chain = [item for item in raw.items() if not _plumbing(item[0])]
    lines += [f"  top {top} functions by cumulative time (event-loop and message plumbing left out):", header]
    for (filename, line, name), (_cc, calls, own, cum, _callers) in sorted(
        chain, key=lambda item: item[1][3], reverse=True
    )[:top]:
        lines.append(row(cum / total, own, cum, calls, name, filename, line))

    ours = [item for item in raw.items() if focus in item[0][0]]
    lines += [f"  top {top} {focus.rstrip('/')} functions by cumulative time:", header]
    for (filename, line, name), (_cc, calls, own, cum, _callers) in sorted(
        ours, key=lambda item: item[1][3], reverse=True
    )[:top]:
        lines.append(row(cum / total, own, cum, calls, name, filename, line))
    return "\n".join(lines)


# --- printing ---------------------------------------------------------------------------------


def line(label: str, value: str, note: str = "") -> None:
    """Print one figure: label, value with its unit, note."""
    print(f"{label + ':':<52}{value}" + (f"   {note}" if note else ""))


def target(goal: str, ok: bool) -> str:
    """The target note of a figure, with PASS or FAIL."""
    return f"target {goal}: {'PASS' if ok else 'FAIL'}"
