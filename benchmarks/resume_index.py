"""``/resume`` and ``pi-tui -r`` over a big sessions folder: the session index and the real picker.

Generates (deterministically, in a temp dir that is deleted afterwards) a sessions folder of
2,000 sessions totalling about 2 GB (``--quick``: 200 sessions, about 100 MB): most sessions
small, some of a few MB, a few of 50-100 MB, in pi's entry shapes (user prompts, assistant
replies with thinking, text and tool calls, large tool results, now and then a ``session_info``
name). Half of them are in the folder of the project the picker is opened from.

Then prints:
- cold index build (no index file) and warm open (nothing changed) of every folder;
- the incremental update after appending a turn to 10 files;
- search time per key while typing "refactor the parser" char by char against the index text;
- peak RSS of this process (the index, the texts and the search);
- the first frame of the real picker: ``pi-tui -r`` in tmux (HOME, XDG and agent dirs pointed at
  the generated folder), time from launch until rows are on screen, with a warm and a cold index,
  and the picker's own part: from its first frame ("Loading sessions…") to its rows. For scale,
  the launch in a folder without sessions (Python, Textual, the app: not the picker's doing).
  Each picker row also gives the peak RSS of the pi-tui process once every session is read. The
  real pi's ``-r`` (0.73.1, when installed for the interop tests) is timed the same way beside it.

With the code before the index existed, the index rows measure ``list_all_sessions`` instead
(every file parsed each time).

Run: ``python benchmarks/resume_index.py [--quick] [--no-tmux] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bytecode import compile_pi_tui  # noqa: E402  (benchmarks/ is on sys.path)

from tests.support.tmux import TmuxPane  # noqa: E402

START_MS = 1_772_442_000_000  # 2026-03-02T09:00:00Z
QUERY = "refactor the parser"
RARE_QUERY = "xylophone"
"""A word no session holds: every key scans all the text still matching (the worst case)."""
TARGET_FRAME_S = 0.5
TARGET_KEY_MS = 50.0
TARGET_RSS_MB = 250.0

_WORD_TEXT = (
    "the a of to and in is it that for on with as this be are from at by an not or we can "
    "function module test file parser token lexer session index cache branch tree label summary "
    "compaction context model provider request stream event error result value list dict string "
    "bytes offset size count name path folder config setting option command tool read write edit "
    "bash grep find replace update check run build install import export class method field type "
    "refactor rename move split merge fix bug crash slow fast memory disk network retry timeout"
)
WORDS = _WORD_TEXT.split()


class Texts:
    """Pools of prose and code-like text, made once; sessions pick from them (fast, deterministic)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        vocabulary = WORDS + [
            "".join(rng.choices("bcdfghklmnprstvz", k=rng.randint(3, 9))) for _ in range(3000)
        ]
        self.prose = [self._prose(vocabulary, rng.randint(200, 2_500)) for _ in range(400)]
        self.code = [self._code(vocabulary, rng.randint(4_000, 60_000)) for _ in range(60)]

    def _prose(self, vocabulary: list[str], size: int) -> str:
        words: list[str] = []
        length = 0
        while length < size:
            word = self.rng.choice(vocabulary)
            words.append(word)
            length += len(word) + 1
        return " ".join(words).capitalize() + "."

    def _code(self, vocabulary: list[str], size: int) -> str:
        lines: list[str] = []
        length = 0
        while length < size:
            name = "_".join(self.rng.choices(vocabulary, k=2))
            line = f"    def {name}(self, value: int) -> int:  # {self.rng.choice(vocabulary)}"
            lines.append(line)
            length += len(line) + 1
        return "\n".join(lines)


class Writer:
    """Writes one pi session file of about ``target`` bytes."""

    def __init__(self, rng: random.Random, texts: Texts, cwd: str, start_ms: int) -> None:
        self.rng = rng
        self.texts = texts
        self.cwd = cwd
        self.ms = start_ms
        self.leaf: str | None = None

    def _id(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def entry(self, kind: str, fields: dict[str, Any]) -> bytes:
        self.ms += self.rng.randint(500, 90_000)
        entry_id = self._id()
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": _iso(self.ms), **fields}
        self.leaf = entry_id
        return orjson.dumps(entry) + b"\n"

    def message(self, message: dict[str, Any]) -> bytes:
        return self.entry("message", {"message": {**message, "timestamp": self.ms}})

    def turn(self, big: bool) -> list[bytes]:
        rng, texts = self.rng, self.texts
        lines = [
            self.message({"role": "user", "content": [{"type": "text", "text": rng.choice(texts.prose)}]})
        ]
        for _ in range(rng.randint(1, 4)):
            call = f"toolu_01{rng.getrandbits(64):016x}"
            lines.append(
                self.message(
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "thinking",
                                "thinking": rng.choice(texts.prose)[:600],
                                "thinkingSignature": "sig",
                            },
                            {"type": "text", "text": rng.choice(texts.prose)},
                            {
                                "type": "toolCall",
                                "id": call,
                                "name": "read",
                                "arguments": {"path": "src/app.py"},
                            },
                        ],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "usage": {
                            "input": 1200,
                            "output": 300,
                            "cacheRead": 9000,
                            "cacheWrite": 0,
                            "totalTokens": 10500,
                        },
                        "stopReason": "toolUse",
                    }
                )
            )
            result = rng.choice(texts.code) if big or rng.random() < 0.3 else rng.choice(texts.prose)
            lines.append(
                self.message(
                    {
                        "role": "toolResult",
                        "toolCallId": call,
                        "toolName": "read",
                        "content": [{"type": "text", "text": result}],
                        "isError": False,
                    }
                )
            )
        lines.append(
            self.message(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": rng.choice(texts.prose)}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": {
                        "input": 800,
                        "output": 200,
                        "cacheRead": 9000,
                        "cacheWrite": 0,
                        "totalTokens": 10000,
                    },
                    "stopReason": "stop",
                }
            )
        )
        if rng.random() < 0.05:
            lines.append(self.entry("session_info", {"name": " ".join(rng.choices(WORDS, k=3))}))
        return lines

    def write(self, path: Path, target: int) -> int:
        header = {
            "type": "session",
            "version": 3,
            "id": _uuid(self.rng),
            "timestamp": _iso(self.ms),
            "cwd": self.cwd,
        }
        size = 0
        with open(path, "wb") as handle:
            for line in [
                orjson.dumps(header) + b"\n",
                self.entry("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
                self.entry("thinking_level_change", {"thinkingLevel": "medium"}),
            ]:
                handle.write(line)
                size += len(line)
            while size < target:
                for line in self.turn(big=target > 5_000_000):
                    handle.write(line)
                    size += len(line)
        os.utime(path, (self.ms / 1000, self.ms / 1000))
        return size


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _uuid(rng: random.Random) -> str:
    text = f"{rng.getrandbits(128):032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def sizes(quick: bool, rng: random.Random) -> list[int]:
    """Target sizes: a few of 50-100 MB (one of 40 MB with --quick), some MB-sized, most small."""
    if quick:
        plan = [(1, 40_000_000, 40_000_000), (19, 1_000_000, 3_000_000), (180, 20_000, 200_000)]
    else:
        plan = [(12, 50_000_000, 100_000_000), (188, 2_000_000, 6_000_000), (1_800, 20_000, 400_000)]
    targets = [rng.randint(low, high) for count, low, high in plan for _ in range(count)]
    rng.shuffle(targets)
    return targets


def generate(agent: Path, project: Path, quick: bool, seed: int = 20_261_124) -> tuple[int, int]:
    """Write the sessions folder; half the sessions belong to ``project``. (files, bytes)."""
    from pi_tui.config.paths import encode_cwd

    rng = random.Random(seed)
    texts = Texts(rng)
    others = [f"/home/user/work/project-{n:02d}" for n in range(19)]
    total = 0
    targets = sizes(quick, rng)
    for number, target in enumerate(targets):
        cwd = str(project) if number % 2 == 0 else others[number % len(others)]
        folder = agent / "sessions" / encode_cwd(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        start = START_MS - (len(targets) - number) * 3_600_000
        writer = Writer(rng, texts, cwd, start)
        path = folder / f"{_iso(start).replace(':', '-')}_{_uuid(rng)}.jsonl"
        total += writer.write(path, target)
    return len(targets), total


def append_turns(agent: Path, count: int, seed: int = 7) -> list[Path]:
    """Append one turn to the ``count`` newest session files (as a running pi-tui would)."""
    rng = random.Random(seed)
    texts = Texts(random.Random(seed))
    files = sorted(agent.glob("sessions/*/*.jsonl"), key=lambda path: path.stat().st_mtime, reverse=True)
    for path in files[:count]:
        writer = Writer(rng, texts, "", int(path.stat().st_mtime * 1000))
        with open(path, "ab") as handle:
            for line in writer.turn(big=False):
                handle.write(line)
    return files[:count]


# --- measuring ----------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    began = time.perf_counter()
    value = run()
    return time.perf_counter() - began, value


def list_everything(agent: Path) -> list[Any]:
    from pi_tui.session.listing import list_all_sessions

    return list_all_sessions(agent / "sessions")


def search_per_key(rows: list[Any], query: str = QUERY) -> list[float]:
    """Seconds per key typing ``query``, through the picker's own search over the listed rows."""
    from pi_tui.tui.screens import resume

    finder = getattr(resume, "RowSearch", None)
    parse = getattr(resume, "parse_query", None)
    times: list[float] = []
    if finder is not None:
        search = finder(rows)
        for end in range(1, len(query) + 1):
            began = time.perf_counter()
            if parse is not None:  # words, "phrases" and re:regex, as the picker reads a query
                resume.match_rows(rows, search, parse(query[:end]))
            else:
                search.find(query[:end])
            times.append(time.perf_counter() - began)
        return times
    for end in range(1, len(query) + 1):  # before the index: the picker's filter of that time
        began = time.perf_counter()
        [row for row in rows if all(word in row.haystack for word in query[:end].lower().split())]
        times.append(time.perf_counter() - began)
    return times


@dataclass
class Picker:
    """How to start one program's session picker and read its screen."""

    argv: list[str]
    frame: Callable[[str], bool]
    """The picker is on screen (rows or not)."""
    rows: Callable[[str], bool]
    """Its rows are on screen (or its line saying there are none)."""
    busy: Callable[[str], bool]
    """It is still reading sessions (shown rows or not)."""


def pi_tui_picker() -> Picker:
    program = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
    return Picker(
        [program, "-r"],
        frame=lambda screen: "Resume a session" in screen,
        rows=lambda screen: " msgs " in screen or "No sessions in this folder" in screen,
        busy=lambda screen: "Indexing the sessions folder" in screen or "Loading sessions" in screen,
    )


def pi_picker() -> Picker | None:
    """The real pi's ``-r`` when it is installed (see tests/support/real_pi.py)."""
    from tests.support.real_pi import cache_root

    cli = cache_root() / "node_modules" / "@mariozechner" / "pi-coding-agent" / "dist" / "cli.js"
    node = shutil.which("node")
    if node is None or not cli.exists():
        return None
    return Picker(
        [node, str(cli), "-r"],
        frame=lambda screen: "Resume Session" in screen,
        rows=lambda screen: re.search(r"\(\d+/\d+\)", screen) is not None or "No sessions" in screen,
        busy=lambda screen: "Loading" in screen,
    )


def picker_first_frame(
    picker: Picker, cwd: Path, env: dict[str, str], timeout: float = 300.0
) -> tuple[float, float, float]:
    """Seconds from launching the picker in tmux to its frame and to its first rows, and the peak
    RSS (MB) of its process once it has read every session."""
    began = time.perf_counter()
    pane = TmuxPane.start(picker.argv, cwd=cwd, env=env, width=120, height=40)
    framed = shown = 0.0
    try:
        pid = int(pane.tmux("list-panes", "-t", pane.session, "-F", "#{pane_pid}").stdout.split()[0])
        deadline = began + timeout
        while time.perf_counter() < deadline:
            screen = pane.capture() or ""
            if not framed and picker.frame(screen):
                framed = time.perf_counter() - began
            if framed and picker.rows(screen):
                shown = time.perf_counter() - began
                break
            time.sleep(0.005)
        else:
            raise RuntimeError(f"{picker.argv[0]}: the picker never listed sessions:\n{pane.capture()}")
        while time.perf_counter() < deadline and picker.busy(pane.capture() or ""):
            time.sleep(0.05)
        time.sleep(0.5)
        peak = _peak_rss_mb(pid)
    finally:
        pane.kill()
        time.sleep(0.3)
    return framed, shown, peak


def _peak_rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else float("nan")


def row(label: str, value: str, note: str = "") -> None:
    print(f"| {label} | {value} |" + (f" {note} |" if note else ""))


def main(argv: list[str] | None = None) -> int:
    compile_pi_tui()  # launched pi-tui starts from .pyc files, as installed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 sessions / 100 MB instead of 2,000 / 2 GB")
    parser.add_argument("--no-tmux", action="store_true", help="leave out the real picker rows")
    parser.add_argument("--no-pi", action="store_true", help="leave out the real pi's picker")
    parser.add_argument("--runs", type=int, default=3, help="picker launches per row (median)")
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this folder and keep it")
    args = parser.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="pi-tui-resume-"))
    work.mkdir(parents=True, exist_ok=True)
    agent, project, cache, home = work / "agent", work / "project", work / "cache", work / "home"
    for folder in (agent, project, home):
        folder.mkdir(exist_ok=True)
    theirs = pi_picker() if not args.no_pi else None  # found through the real cache folder
    os.environ["PI_CODING_AGENT_DIR"] = str(agent)
    os.environ["PI_TUI_CACHE_DIR"] = str(cache)
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        if not any(agent.glob("sessions/*/*.jsonl")):
            began = time.perf_counter()
            files, total = generate(agent, project, args.quick)
            print(
                f"generated {files:,} sessions, {total / 1e9:.2f} GB in {time.perf_counter() - began:.1f} s"
            )
        files = len(list(agent.glob("sessions/*/*.jsonl")))
        total = sum(path.stat().st_size for path in agent.glob("sessions/*/*.jsonl"))
        what = f"{files:,} sessions / {total / 1e9:.2f} GB"
        shutil.rmtree(cache, ignore_errors=True)

        try:
            import pi_tui.session.index  # noqa: F401

            indexed = True
        except ImportError:
            indexed = False
        print("| work | figure |\n|---|---|")
        cold, infos = timed(lambda: list_everything(agent))
        label = "index build, cold" if indexed else "list_all_sessions (parses every file)"
        row(f"/resume over {what}: {label}", f"{cold:.2f} s", f"{len(infos):,} sessions")
        warm, infos = timed(lambda: list_everything(agent))
        label = "index open, warm (nothing changed)" if indexed else "list_all_sessions again"
        row(f"/resume over {what}: {label}", f"{warm * 1000:.0f} ms")
        append_turns(agent, 10)
        update, infos = timed(lambda: list_everything(agent))
        row(f"/resume over {what}: after appending to 10 files", f"{update * 1000:.0f} ms")

        from pi_tui.session.search import SessionRow

        rows = [SessionRow.of(info) for info in infos]
        del infos
        for query in (QUERY, RARE_QUERY, f'"{QUERY}"', "re:refactor\\w* the pars"):
            keys = search_per_key(rows, query)
            figures = f"{statistics.median(keys) * 1000:.1f} ms median, {max(keys) * 1000:.1f} ms max"
            if query.startswith("re:"):  # the picker runs a regex in a thread: keys never wait for it
                row(
                    f"/resume over {what}: regex answer per key typing “{query}”",
                    figures,
                    "off the UI thread",
                )
                continue
            row(
                f"/resume over {what}: search per key typing “{query}”",
                figures,
                "target <= 50 ms a key: " + ("met" if max(keys) * 1000 <= TARGET_KEY_MS else "MISSED"),
            )
        text_mb = sum(len(r.info.all_messages_text) for r in rows) / 1e6
        del rows
        rss = peak_rss_mb()
        row(
            f"/resume over {what}: peak RSS (listing + search)",
            f"{rss:.0f} MB",
            f"search text held {text_mb:.0f} MB; target <= 250 MB: "
            + ("met" if rss <= TARGET_RSS_MB else "MISSED"),
        )

        if not args.no_tmux and shutil.which("tmux"):
            env = {
                "PI_CODING_AGENT_DIR": str(agent),
                "PI_TUI_CACHE_DIR": str(cache),
                "XDG_CACHE_HOME": str(cache),
                "HOME": str(home),
                "PI_TUI_OFFLINE_DELAY": "0",
            }
            empty = work / "empty-project"
            empty.mkdir(exist_ok=True)
            ours = pi_tui_picker()
            launch = statistics.median(picker_first_frame(ours, empty, env)[1] for _ in range(args.runs))
            row("`pi-tui -r` in a folder without sessions: launch to the picker's frame", f"{launch:.2f} s")
            for kind in ("warm", "cold"):
                runs = []
                for _ in range(args.runs):
                    if kind == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    runs.append(picker_first_frame(ours, project, env))
                first = statistics.median(run[1] for run in runs)
                own = statistics.median(run[1] - run[0] for run in runs)
                rss = max(run[2] for run in runs)
                row(
                    f"/resume over {what}: `pi-tui -r` first frame with rows, {kind} index",
                    f"{first:.2f} s, {rss:.0f} MB",
                    f"the picker's frame to its rows {own:.2f} s ({first - launch:+.2f} s over the launch "
                    f"without sessions); target <= {TARGET_FRAME_S} s for the picker's part: "
                    + ("met" if own <= TARGET_FRAME_S else "MISSED")
                    + f"; peak RSS after reading every session, target <= {TARGET_RSS_MB:.0f} MB: "
                    + ("met" if rss <= TARGET_RSS_MB else "MISSED"),
                )
            if theirs is not None:
                pi_env = {**env, "PI_OFFLINE": "1"}
                runs = [picker_first_frame(theirs, project, pi_env) for _ in range(args.runs)]
                first = statistics.median(run[1] for run in runs)
                own = statistics.median(run[1] - run[0] for run in runs)
                rss = max(run[2] for run in runs)
                row(
                    f"/resume over {what}: real pi `-r` first frame with rows",
                    f"{first:.2f} s, {rss:.0f} MB",
                    f"the picker's frame to its rows {own:.2f} s",
                )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
