"""Big-file benchmark for the ``read`` tool and the Python fallback of the ``grep`` tool.

Both tools once loaded whole files: a default ``read`` of a 2 GB log took 59 s and 15.2 GB of
memory, grep's fallback over a folder holding it 40.7 s and 7.3 GB. They now stream. This script
writes a text file of typical 80-character lines (2 GB unless ``--size-mb`` says otherwise) in a
temporary folder, runs each case in a fresh Python process and prints the time of the tool call,
the process's wall time and its peak RSS (``ru_maxrss`` of exactly that child, from ``wait4``):

    | read of a 2 GB text file | 0.005 s (0.18 s process), 40 MB |

Targets (issue 12): ``read`` under 0.5 s and 100 MB; grep's fallback under 200 MB. The grep cases
run with a ``PATH`` that has no ``rg``, which is how the tool picks its fallback. With
``--pi``, pi's own read tool (the real pi 0.73.1 from the test cache, when node and it are
installed) is timed on the same file for comparison. The folder is deleted at the end.

This is a script, not a test::

    python benchmarks/big_file_tools.py                 # 2 GB
    python benchmarks/big_file_tools.py --size-mb 200   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bytecode import compile_pi_tui  # benchmarks/ is on sys.path

ROOT = Path(__file__).resolve().parents[1]
LINE_CHARS = 80

CHILD = """
import asyncio, json, sys, time
from pathlib import Path
from pi_tui.tools.base import ToolContext
from pi_tui.tools.grep import GrepTool
from pi_tui.tools.read import ReadTool

tool_name, cwd, args = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
tool = ReadTool() if tool_name == "read" else GrepTool()
started = time.perf_counter()
result = asyncio.run(tool.execute("bench", args, ToolContext(cwd=cwd)))
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "tail": result.content[0].text[-200:]}))
"""

PI_CHILD = """
const [modulePath, cwd, file] = process.argv.slice(1);
const started = process.hrtime.bigint();
const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
import(modulePath)
  .then((m) => m.createReadTool(cwd).execute("bench", { path: file }))
  .then((result) => ({ seconds: seconds(), tail: result.content[0].text.slice(-200) }))
  .catch((error) => ({ seconds: seconds(), tail: `error: ${error && error.message}` }))
  .then((report) => console.log(JSON.stringify(report)));
"""


@dataclass(slots=True)
class Run:
    label: str
    seconds: float
    wall: float
    peak_bytes: int
    tail: str


def write_text_file(path: Path, size: int) -> int:
    """Numbered 80-character lines (79 characters and a newline) up to ``size`` bytes."""
    filler = "the quick brown fox jumps over the lazy dog while logs keep growing; "
    lines = 0
    with open(path, "w", encoding="ascii", buffering=4 * 1024 * 1024) as out:
        chunk: list[str] = []
        written = 0
        while written + LINE_CHARS <= size:  # 2048 MB stays within 2 GiB, the most pi reads
            line = f"{lines + 1:>9} {filler}"[: LINE_CHARS - 1] + "\n"
            chunk.append(line)
            written += LINE_CHARS
            lines += 1
            if len(chunk) == 10_000:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))
    return lines


def without_rg(path: str) -> str:
    """``PATH`` minus every folder holding an ``rg``, so the grep tool takes its Python fallback."""
    return os.pathsep.join(
        folder for folder in path.split(os.pathsep) if folder and not (Path(folder) / "rg").exists()
    )


def measure(label: str, command: list[str], env: dict[str, str]) -> Run:
    """Run ``command`` and read its own peak RSS with ``wait4`` (ru_maxrss: KB on Linux, bytes on macOS)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _pid, status, usage = os.wait4(process.pid, 0)  # reaps it: Popen must not wait again
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        output, errors = out.read(), err.read()
    if process.returncode != 0:
        raise SystemExit(f"{label} failed:\n{errors.decode(errors='replace')[-2000:]}")
    scale = 1 if sys.platform == "darwin" else 1024
    report = json.loads(output.decode().strip().splitlines()[-1])
    return Run(label, report["seconds"], wall, usage.ru_maxrss * scale, report["tail"])


def python_case(label: str, tool: str, cwd: Path, args: dict[str, object], env: dict[str, str]) -> Run:
    command = [sys.executable, "-c", CHILD, tool, str(cwd), json.dumps(args)]
    return measure(label, command, env)


def pi_read_module() -> Path | None:
    """pi's read tool module from the pi-interop test cache, if node and pi are installed there."""
    if shutil.which("node") is None:
        return None
    sys.path.insert(0, str(ROOT))
    from tests.support.real_pi import cache_root

    module = (cache_root() / "node_modules/@mariozechner/pi-coding-agent/dist/core/tools/read.js").resolve()
    return module if module.is_file() else None


def size_name(megabytes: int) -> str:
    return f"{megabytes / 1024:g} GB" if megabytes >= 1024 else f"{megabytes} MB"


def main() -> None:
    compile_pi_tui()  # launched pi-tui starts from .pyc files, as installed
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=2048, help="size of the text file (default 2048)")
    parser.add_argument("--pi", action="store_true", help="also time pi's read tool, if installed")
    parser.add_argument("--show", action="store_true", help="print the end of each tool's output")
    options = parser.parse_args()
    if options.size_mb < 1:
        raise SystemExit("--size-mb must be at least 1")

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    grep_env = dict(env, PATH=without_rg(env.get("PATH", "")))
    name = size_name(options.size_mb)
    folder = Path(tempfile.mkdtemp(prefix="pi-tui-big-file-"))
    try:
        path = folder / "big.log"
        started = time.perf_counter()
        lines = write_text_file(path, options.size_mb * 1024 * 1024)
        print(f"wrote {path} ({name}, {lines:,} lines) in {time.perf_counter() - started:.1f} s\n")
        runs = [
            python_case(f"read of a {name} text file", "read", folder, {"path": path.name}, env),
            python_case(
                f"read of a {name} text file near its end",
                "read",
                folder,
                {"path": path.name, "offset": max(1, lines - 10)},
                env,
            ),
            python_case(
                "grep fallback over a folder holding it (literal, no match)",
                "grep",
                folder,
                {"pattern": "needle"},
                grep_env,
            ),
            python_case(
                "grep fallback over a folder holding it (regex, context 2, no match)",
                "grep",
                folder,
                {"pattern": "ne+dle", "context": 2},
                grep_env,
            ),
            python_case(
                "grep fallback, regex matching every line (stops at 100)",
                "grep",
                folder,
                {"pattern": "fox", "context": 1},
                grep_env,
            ),
        ]
        module = pi_read_module() if options.pi else None
        if options.pi and module is None:
            print("(pi 0.73.1 or node not installed: run the pi-interop tests once to install it)\n")
        if module is not None:
            command = ["node", "-e", PI_CHILD, module.as_uri(), str(folder), path.name]
            runs.append(measure(f"pi 0.73.1: read of a {name} text file", command, env))
        print("| case | tool call (process wall), peak RSS |")
        print("|---|---|")
        for run in runs:
            megabytes = run.peak_bytes / (1024 * 1024)
            outcome = f"; {run.tail}" if run.tail.startswith("error:") else ""
            figures = f"{run.seconds:.3f} s ({run.wall:.2f} s process), {megabytes:.0f} MB{outcome}"
            print(f"| {run.label} | {figures} |")
        if options.show:
            for run in runs:
                print(f"\n{run.label}:\n...{run.tail}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
