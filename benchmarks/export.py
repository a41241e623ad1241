"""HTML export at scale (issue 16): the 50,000-entry session, pi-tui beside the real pi 0.73.1.

Rows printed (medians after one warm-up):

1. ``--export BIG OUT.html`` wall time (process start to exit) and the page size, both programs;
2. first paint in headless Chromium: from navigation start until the page shows tree rows and
   the conversation (pi-tui's page says so itself: ``piExport.firstPaintMs``; for pi's page, the
   moment its tree and messages hold elements, or "never" when they stay empty);
3. scrolling the conversation and the tree of our page: 120 frames of 400 px each, frame times
   (median and 95th percentile) and how many rows/entries are in the document while it scrolls.

Targets: (1) <= 3 s, (2) <= 2 s, (3) smooth (frames near 16.7 ms).

Run: ``python benchmarks/export.py [--entries 50000] [--runs 3] [--no-pi]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from big_session import ENTRIES, generate  # noqa: E402  (benchmarks/ is on sys.path)
from bytecode import compile_pi_tui  # noqa: E402

from tests.support.browser import chromium, console_errors  # noqa: E402
from tests.support.real_pi import pi_package_dir  # noqa: E402

SCROLL_FRAMES = 120
SCROLL_STEP = 400
PI_WAIT = 20.0


def timed_export(argv: list[str], env: dict[str, str], cwd: Path, out: Path, runs: int) -> float:
    times = []
    for _ in range(runs + 1):  # one warm-up
        out.unlink(missing_ok=True)
        began = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - began)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"{argv[:2]} failed: {done.stderr[-2000:]}")
    return statistics.median(times[1:])


def our_first_paint(driver: Any, page: Path) -> float:
    driver.get("about:blank")
    driver.get(page.as_uri())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        painted = driver.execute_script("return window.piExport && window.piExport.firstPaintMs")
        if painted:
            rows = driver.execute_script(
                "return document.querySelectorAll('[role=tree] [data-entry-id]').length"
            )
            entries = driver.execute_script(
                "return document.querySelectorAll('#conversation section').length"
            )
            if not rows or not entries:
                raise RuntimeError("our page painted without rows or conversation")
            return float(painted) / 1000
        time.sleep(0.02)
    raise RuntimeError("our page never painted")


PI_CONTENT = """
const tree = document.querySelector('#tree-container, .tree-container, #tree, .tree');
const messages = document.querySelector('#messages, .messages, main');
return [tree ? tree.querySelectorAll('*').length : 0, messages ? messages.querySelectorAll('*').length : 0];
"""


def pi_first_paint(driver: Any, page: Path) -> tuple[float | None, str]:
    driver.get("about:blank")
    driver.get_log("browser")
    began = time.monotonic()
    driver.get(page.as_uri())
    loaded = time.monotonic() - began
    while time.monotonic() - began < PI_WAIT:
        tree, messages = driver.execute_script(PI_CONTENT)
        if tree > 0 and messages > 0:
            nav = driver.execute_script("return performance.now()") / 1000
            return min(nav, time.monotonic() - began), "content shown"
        time.sleep(0.05)
    errors = console_errors(driver)
    why = next((e for e in errors if "call stack" in e), errors[0] if errors else "nothing drawn")
    return None, f"empty after {PI_WAIT:.0f} s (load {loaded:.1f} s): {why[:90]}"


SCROLL_SCRIPT = """
const done = arguments[arguments.length - 1];
const target = document.querySelector(arguments[0]);
const items = arguments[1];
const frames = [];
const counts = [];
let last = performance.now();
let n = 0;
function step(now) {
  frames.push(now - last);
  last = now;
  counts.push(target.querySelectorAll(items).length);
  target.scrollTop += SCROLL_STEP;
  if (++n < SCROLL_FRAMES) requestAnimationFrame(step); else done([frames.slice(2), Math.max(...counts)]);
}
requestAnimationFrame((now) => { last = now; requestAnimationFrame(step); });
""".replace("SCROLL_STEP", str(SCROLL_STEP)).replace("SCROLL_FRAMES", str(SCROLL_FRAMES))


def scroll_frames(driver: Any, selector: str, items: str) -> tuple[float, float, int]:
    frames, most = driver.execute_async_script(SCROLL_SCRIPT, selector, items)
    frames = sorted(frames)
    return statistics.median(frames), frames[int(len(frames) * 0.95) - 1], most


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=ENTRIES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-pi", action="store_true")
    args = parser.parse_args(argv)

    ours = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
    node = shutil.which("node")
    with_pi = not args.no_pi and node is not None
    work = Path(tempfile.mkdtemp(prefix="pi-tui-export-"))
    try:
        project = work / "project"
        agent = work / "agent"
        project.mkdir()
        agent.mkdir()
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(work), "PI_OFFLINE": "1"}
        big = work / "big.jsonl"
        size = generate(big, args.entries, cwd=str(project))
        print(f"session: {args.entries:,} entries, {size / 1e6:.1f} MB")
        our_page = project / "ours.html"
        our_time = timed_export([ours, "--export", str(big), "ours.html"], env, project, our_page, args.runs)
        pi_page = project / "pi.html"
        pi_time = None
        if with_pi:
            cli = pi_package_dir() / "dist" / "cli.js"
            pi_time = timed_export(
                [node, str(cli), "--export", str(big), "pi.html"], env, project, pi_page, 1
            )
        print()
        print("| work | pi 0.73.1 | pi-tui | target |")
        print("|---|---|---|---|")
        pi_cell = f"{pi_time:.2f} s, {pi_page.stat().st_size / 1e6:.0f} MB page" if pi_time else "-"
        ok = "met" if our_time <= 3.0 else "MISSED"
        print(
            f"| `--export BIG OUT.html` | {pi_cell} | {our_time:.2f} s, "
            f"{our_page.stat().st_size / 1e6:.0f} MB page | <= 3 s: {ok} |"
        )
        with chromium(1400, 1000) as driver:
            paints = [our_first_paint(driver, our_page) for _ in range(args.runs + 1)][1:]
            paint = statistics.median(paints)
            pi_cell = "-"
            if with_pi:
                pi_paint, what = pi_first_paint(driver, pi_page)
                pi_cell = f"{pi_paint:.2f} s ({what})" if pi_paint is not None else what
            ok = "met" if paint <= 2.0 else "MISSED"
            label = "first paint in headless Chromium (rows + conversation)"
            print(f"| {label} | {pi_cell} | {paint:.2f} s | <= 2 s: {ok} |")
            our_first_paint(driver, our_page)
            median, p95, most = scroll_frames(driver, "#conversation", "section")
            print(
                f"| scroll the conversation, {SCROLL_FRAMES} frames x {SCROLL_STEP} px | - | frame median "
                f"{median:.1f} ms, p95 {p95:.1f} ms; at most {most} entries in the document | smooth |"
            )
            driver.execute_script("piExport.setFilter('all')")
            median, p95, most = scroll_frames(driver, "[role=tree]", "[data-entry-id]")
            rows = driver.execute_script("return piExport.rows().length")
            print(
                f"| scroll the tree ('all', {rows:,} rows) | - | frame median {median:.1f} ms, "
                f"p95 {p95:.1f} ms; at most {most} rows in the document | smooth |"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
