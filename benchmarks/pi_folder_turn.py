"""Resume + one print turn with pi's folder (``~/.pi/agent``) scanned too (issue 27).

HOME is a temp folder holding both agent folders: pi-tui's (``PI_CODING_AGENT_DIR``) and pi's
(``HOME/.pi/agent``), each with ``--sessions`` small sessions spread over 20 project folders, and
the big 50,000-entry session of ``big_session.py`` in one project's folder. Rows (medians after
one warm-up; every run continues a fresh copy of the big file, so each turn does the same work;
the CPU column is the process's user + system time, which a busy machine disturbs less than wall):

1. ``--session BIG_PATH -p hi``: no listing at all (the figure issue 12 measures);
2. ``-c -p hi`` with the big session in pi-tui's own folder;
3. ``-c -p hi`` with the big session in pi's folder (both folders listed for the project);
4. ``--session ID_PREFIX -p hi`` with the big session in pi's folder (this project's folders,
   then every folder of both programs, are searched by id; the file stays from run to run, so
   the index reads only the turn each run appended).

The session index lives in a temp cache folder, warmed by the first run of each row, as it is
for a user after their first listing. Target: every row <= 1.0 s.

Run: ``python benchmarks/pi_folder_turn.py [--entries 50000] [--sessions 200] [--runs 3]
[--source OLD_TREE]`` (``--source``: the same rows for a checkout of an older commit).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from big_session import API, MODEL, PROVIDER, generate, median_runs, peak_rss_of  # noqa: E402
from bytecode import compile_pi_tui  # noqa: E402  (benchmarks/ is on sys.path)

from pi_tui.config.paths import encode_cwd  # noqa: E402
from tests.support.model_server import ModelServer  # noqa: E402

SMALL_SESSION = (
    '{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"}}\n'
    '{{"type":"message","id":"a{n:07x}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    '"message":{{"role":"user","content":"question {n}","timestamp":1767225601000}}}}\n'
)


def small_sessions(root: Path, projects: list[Path], count: int, tag: str) -> None:
    """``count`` one-message sessions spread over ``projects``, under ``root/sessions``."""
    for n in range(count):
        cwd = str(projects[n % len(projects)])
        folder = root / "sessions" / encode_cwd(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        session_id = f"{tag}{n:07x}-0000-7000-8000-000000000000"
        (folder / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl").write_text(
            SMALL_SESSION.format(id=session_id, cwd=cwd, n=n)
        )


def big_name(session_id: str) -> str:
    """The big session's file name (newer than every small session's)."""
    return f"2026-02-01T00-00-00-000Z_{session_id}.jsonl"


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--sessions", type=int, default=200, help="small sessions in each folder")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--source", type=Path, help="run `python -m pi_tui` from this source tree (an older commit)"
    )
    args = parser.parse_args(argv)
    program = [shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))]
    if args.source is not None:
        program = [sys.executable, "-m", "pi_tui"]
    with tempfile.TemporaryDirectory(prefix="pi-tui-pifolder-") as scratch, ModelServer() as server:
        home = Path(scratch)
        project = home / "project"
        agent = home / "agent"
        pi_agent = home / ".pi" / "agent"
        projects = [project, *(home / f"other{n}" for n in range(19))]
        for folder in (agent, pi_agent, *projects):
            folder.mkdir(parents=True, exist_ok=True)
        small_sessions(agent, projects, args.sessions, "0a")
        small_sessions(pi_agent, projects, args.sessions, "0b")
        big = home / "big.jsonl"
        size = generate(big, args.entries, cwd=str(project))
        big_id = json.loads(big.open("rb").readline())["id"]
        (agent / "models.json").write_text(json.dumps(server.models_json(provider=PROVIDER, api=API)))
        env = {
            **os.environ,
            "PI_CODING_AGENT_DIR": str(agent),
            "HOME": str(home),
            "PI_TUI_CACHE_DIR": str(home / "cache"),
            "PI_OFFLINE": "1",
        }
        env.pop("PI_TUI_PI_AGENT_DIR", None)
        if args.source is not None:
            env["PYTHONPATH"] = str(args.source.resolve())
        print(f"session: {args.entries:,} entries, {size / 1e6:.0f} MB; {args.sessions} small sessions each")
        print("| work | wall | CPU (user + sys) | peak RSS |")
        print("|---|---|---|---|")

        def turn(where: Path, words: list[str], keep: bool) -> tuple[float, int]:
            folder = where / "sessions" / encode_cwd(str(project))
            folder.mkdir(parents=True, exist_ok=True)
            copy = folder / big_name(big_id)
            if not copy.exists():
                shutil.copyfile(big, copy)
            command = [*program, "--provider", PROVIDER, "--model", MODEL, *words, "-p", "hi"]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            elapsed, rss, _ = peak_rss_of(command, env, project)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if not keep:
                copy.unlink()
            server.clear_requests()
            return elapsed, rss

        # The id-prefix row keeps its copy from run to run (it grows by one turn each time), as a
        # user's session stays: a fresh copy each run would make the index read 72 MB anew.
        rows = [
            ("`--session BIG_PATH -p hi`", agent, ["--session", "{path}"], False),
            ("`-c -p hi`, the session in pi-tui's folder", agent, ["-c"], False),
            ("`-c -p hi`, the session in pi's folder", pi_agent, ["-c"], False),
            ("`--session ID_PREFIX -p hi`, in pi's folder", pi_agent, ["--session", big_id[:13]], True),
        ]
        for title, where, words, keep in rows:
            path = str(where / "sessions" / encode_cwd(str(project)) / big_name(big_id))
            filled = [word.replace("{path}", path) for word in words]
            cpu_times: list[float] = []
            try:
                wall, rss = median_runs(lambda w=where, f=filled, k=keep: turn(w, f, k), args.runs)
            except RuntimeError as error:  # a pi-tui that does not read pi's folder yet
                print(f"| {title} | failed: {str(error).splitlines()[-1][:80]} | - | - |")
                continue
            cpu = statistics.median(cpu_times[1:])  # the first run warms up
            print(f"| {title} | {wall:.2f} s | {cpu:.2f} s | {rss / 1e6:.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
