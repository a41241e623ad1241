"""Interactive-mode startup: time to the first frame of PiApp against a bare Textual app.

Two measurements, each for PiApp (a new empty session, the offline demo model, built as
``pi_tui.tui.run`` builds it) and for a bare ``App`` whose screen holds one ``Static``:

1. in-process, imports done: from ``start()`` / the app's constructor to the first frame the app
   draws inside ``App.run_test(size=(120, 40))`` (a ``_display`` call outside a batch update, its
   segments rendered as a terminal driver would); best of ``--runs`` after one warm-up, with
   PiApp's breakdown: ``start()``, constructor, ``on_mount``'s ``show_session``, first frame;
2. in a fresh process: ``python -c`` that imports, builds and runs the app headless and exits at
   its first frame; wall time from launch to that frame (imports included) and to the process's
   exit; best of ``--runs`` after one warm-up. ``python -c pass`` is shown as the floor.

Target: PiApp's time at most 1.5x the bare app's, in both measurements. When missed, the script
prints a cProfile of one in-process start and, for the fresh process, the imports that cost most
(``python -X importtime``, own time by module and the heaviest top-level imports).

Run: ``python benchmarks/tui_startup.py [--runs 7] [--profile]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bytecode import compile_pi_tui
from tui_support import SIZE, FrameProbe, Profiled, isolate, line, target

TARGET_RATIO = 1.5

CHILD = r"""
import json, sys, time
from pathlib import Path
launched = time.time()
variant, cwd = sys.argv[1], sys.argv[2]
if variant == "bare":
    from textual.app import App
    from textual.widgets import Static

    class Bare(App):
        def compose(self):
            yield Static("Hello, world")

    imported = time.time()
    app = Bare()
    close = lambda: None
elif variant == "cli":
    # What `pi-tui` does: the app paints, then starts the agent in a thread.
    from pi_tui.start_options import StartOptions
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.gitinfo import git_branch

    imported = time.time()
    app = PiApp(start_options=StartOptions(cwd=cwd), cwd=cwd, git_branch=git_branch(Path(cwd)))
    close = lambda: app.started and app.started.agent.manager.close()
else:
    from pi_tui.startup import StartOptions, start
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.gitinfo import git_branch
    from pi_tui.tui.loaded import loaded_summary

    imported = time.time()
    started = start(StartOptions(cwd=cwd))
    app = PiApp(started, cwd=cwd, loaded=loaded_summary(started, cwd), git_branch=git_branch(Path(cwd)))
    close = started.agent.manager.close
marks = {}
original = app._display

def display(screen, renderable):
    original(screen, renderable)
    if renderable is None or app._batch_count:
        return
    if "frame" not in marks:
        renderable.render_segments(app.console)
        marks["frame"] = time.time()
        if variant != "cli":
            app.exit()
    elif variant == "cli" and app.ready and app.status.activity is None and "ready" not in marks:
        marks["ready"] = time.time()
        app.exit()

app._display = display
app.run(headless=True, size=(120, 40))
close()
result = {"launched": launched, "imported": imported, "frame": marks.get("frame")}
result["ready"] = marks.get("ready")
print(json.dumps(result))
"""


# --- in-process -----------------------------------------------------------------------------------


async def bare_first_frame() -> float:
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("Hello, world")

    begin = time.perf_counter()
    app = Bare()
    probe = FrameProbe(app)
    async with app.run_test(size=SIZE):
        first = await probe.wait()
    return first - begin


async def pi_first_frame(cwd: Path) -> dict[str, float]:
    from pi_tui.startup import StartOptions, start
    from pi_tui.tui.app import PiApp
    from pi_tui.tui.loaded import loaded_summary

    marks: dict[str, float] = {}
    begin = time.perf_counter()
    started = start(StartOptions(cwd=str(cwd)))
    marks["start"] = time.perf_counter()
    app = PiApp(started, cwd=str(cwd), loaded=loaded_summary(started, str(cwd)))
    marks["constructed"] = time.perf_counter()
    probe = FrameProbe(app)
    show_session = app.show_session

    async def timed_show_session() -> None:
        marks["show_begin"] = time.perf_counter()
        await show_session()
        marks["show_end"] = time.perf_counter()

    app.show_session = timed_show_session
    async with app.run_test(size=SIZE):
        first = await probe.wait()
    started.agent.manager.close()
    return {
        "total": first - begin,
        "start()": marks["start"] - begin,
        "PiApp()": marks["constructed"] - marks["start"],
        "run_test to on_mount's show_session": marks["show_begin"] - marks["constructed"],
        "show_session (chat, footer)": marks["show_end"] - marks["show_begin"],
        "show_session end to first frame": first - marks["show_end"],
    }


def in_process(cwd: Path, runs: int) -> tuple[float, dict[str, float]]:
    asyncio.run(bare_first_frame())  # warm-up: lazy imports, CSS caches
    asyncio.run(pi_first_frame(cwd))
    bare = min(asyncio.run(bare_first_frame()) for _ in range(runs))
    pi_runs = [asyncio.run(pi_first_frame(cwd)) for _ in range(runs)]
    return bare, min(pi_runs, key=lambda run: run["total"])


# --- fresh process --------------------------------------------------------------------------------


def launch(variant: str, cwd: Path, extra: list[str] | None = None) -> tuple[float, float, float, str]:
    """(launch -> imports done, launch -> first frame, launch -> exit) in seconds, and stderr."""
    command = [sys.executable, *(extra or []), "-c", CHILD, variant, str(cwd)]
    begin = time.time()
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    ended = time.time()
    if result.returncode != 0:
        raise RuntimeError(f"{variant} child failed ({result.returncode}): {result.stderr[-1500:]}")
    marks = json.loads(result.stdout.strip().splitlines()[-1])
    if marks["frame"] is None:
        raise RuntimeError(f"{variant} child never drew a frame")
    finished = marks["ready"] - begin if marks.get("ready") else ended - begin  # cli: agent ready
    return marks["imported"] - begin, marks["frame"] - begin, finished, result.stderr


def floor(runs: int) -> float:
    times = []
    for _ in range(runs + 1):
        begin = time.time()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.time() - begin)
    return min(times[1:])


def fresh_process(cwd: Path, runs: int) -> dict[str, tuple[float, float, float]]:
    best: dict[str, tuple[float, float, float]] = {}
    for variant in ("bare", "pi", "cli"):
        launch(variant, cwd)  # warm-up: page cache, .pyc files
        samples = [launch(variant, cwd)[:3] for _ in range(runs)]
        best[variant] = min(samples, key=lambda sample: sample[1])
    return best


def import_profile(cwd: Path, top: int = 15) -> str:
    """``-X importtime`` of the PiApp child against the bare one: where the extra import time goes."""
    rows: dict[str, dict[str, tuple[int, int, int]]] = {}
    for variant in ("bare", "pi"):
        _, _, _, stderr = launch(variant, cwd, ["-X", "importtime"])
        parsed: dict[str, tuple[int, int, int]] = {}
        for raw in stderr.splitlines():
            if not raw.startswith("import time:") or "|" not in raw or "self [us]" in raw:
                continue
            own, cumulative, name = raw.removeprefix("import time:").split("|", 2)
            depth = (len(name) - len(name.lstrip())) // 2
            parsed[name.strip()] = (int(own), int(cumulative), depth)
        rows[variant] = parsed
    bare, pi = rows["bare"], rows["pi"]
    total_pi = sum(own for own, _, _ in pi.values())
    total_bare = sum(own for own, _, _ in bare.values())
    extra = {name: value for name, value in pi.items() if name not in bare}
    extra_total = sum(own for own, _, _ in extra.values())
    out = [
        f"imports (python -X importtime, one run): PiApp child {total_pi / 1000:.0f} ms, bare child "
        f"{total_bare / 1000:.0f} ms; modules only PiApp imports: {len(extra)}, {extra_total / 1000:.0f} ms",
    ]
    by_package: dict[str, int] = {}
    for name, (own, _, _) in extra.items():
        parts = name.split(".")
        package = ".".join(parts[:2]) if parts[0] == "pi_tui" else parts[0]
        by_package[package] = by_package.get(package, 0) + own
    out.append(f"  own import time of the modules only PiApp imports, by package (top {top}):")
    for package, own in sorted(by_package.items(), key=lambda item: item[1], reverse=True)[:top]:
        out.append(f"  {own / 1000:8.1f} ms  {own / max(extra_total, 1):6.1%}  {package}")
    out.append(f"  largest import subtrees (cumulative, nested ones overlap; top {top}):")
    for name, (own, cumulative, depth) in sorted(extra.items(), key=lambda item: item[1][1], reverse=True)[
        :top
    ]:
        out.append(f"  {cumulative / 1000:8.1f} ms cumulative {own / 1000:8.1f} ms own  {'  ' * depth}{name}")
    out.append(f"  heaviest single modules by own time (top {top}):")
    for name, (own, cumulative, _) in sorted(extra.items(), key=lambda item: item[1][0], reverse=True)[:top]:
        out.append(f"  {own / 1000:8.1f} ms own {cumulative / 1000:8.1f} ms cumulative  {name}")
    return "\n".join(out)


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()  # launched pi-tui starts from .pyc files, as installed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="best of this many runs (after one warm-up)")
    parser.add_argument("--profile", action="store_true", help="print the profiles even when targets pass")
    args = parser.parse_args(argv)
    root = isolate()
    cwd = root / "project"
    print(f"Textual headless, size {SIZE[0]}x{SIZE[1]}, best of {args.runs} runs after 1 warm-up")

    bare, pi = in_process(cwd, args.runs)
    ratio_in = pi["total"] / bare
    ok_in = ratio_in <= TARGET_RATIO
    ms = 1000
    print("in-process (imports done), app construction -> first frame:")
    line("  bare App + Static", f"{bare * ms:8.1f} ms")
    line("  PiApp, new session, offline model", f"{pi['total'] * ms:8.1f} ms")
    for label, value in pi.items():
        if label != "total":
            line(f"    {label}", f"{value * ms:8.1f} ms")
    line("  ratio PiApp / bare", f"{ratio_in:8.2f} x ", target(f"<= {TARGET_RATIO} x", ok_in))

    base = floor(args.runs)
    best = fresh_process(cwd, args.runs)
    (bare_imp, bare_frame, bare_exit), (pi_imp, pi_frame, pi_exit) = best["bare"], best["pi"]
    cli_imp, cli_frame, cli_ready = best["cli"]
    ratio_fresh = cli_frame / bare_frame
    ok_fresh = ratio_fresh <= TARGET_RATIO
    print("fresh process (python -c, imports included), launch -> first frame / -> exit:")
    line("  python -c pass (floor)", f"{base * ms:8.1f} ms")
    line("  bare App + Static: first frame", f"{bare_frame * ms:8.1f} ms", f"exit {bare_exit * ms:.0f} ms")
    line("    of which launch + imports", f"{bare_imp * ms:8.1f} ms")
    line(
        "  PiApp as pi-tui runs it (agent started after the frame): first frame", f"{cli_frame * ms:8.1f} ms"
    )
    line("    of which launch + imports", f"{cli_imp * ms:8.1f} ms")
    line("    agent started, session shown", f"{cli_ready * ms:8.1f} ms")
    line(
        "  ratio pi-tui / bare (first frame)",
        f"{ratio_fresh:8.2f} x ",
        target(f"<= {TARGET_RATIO} x", ok_fresh),
    )
    line(
        "  for comparison, agent started before the app: first frame",
        f"{pi_frame * ms:8.1f} ms",
        f"exit {pi_exit * ms:.0f} ms ({pi_frame / bare_frame:.2f} x)",
    )
    line("    of which launch + imports", f"{pi_imp * ms:8.1f} ms")

    if args.profile or not ok_in:
        print()
        asyncio.run(pi_first_frame(cwd))
        with Profiled() as prof:
            asyncio.run(pi_first_frame(cwd))
        print(prof.report(title="cProfile of one in-process PiApp start to its first frame"))
    if args.profile or not ok_fresh:
        print()
        print(import_profile(cwd))
    return 0 if ok_in and ok_fresh else 1


if __name__ == "__main__":
    sys.exit(main())
