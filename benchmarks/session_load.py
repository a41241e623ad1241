"""Session scale benchmark: open, build context, tree and append on a 50,000-entry session.

Builds a deterministic (fixed seed) session file in pi's exact JSON shapes: about 100 MB,
50,000 entries after the header, with tool calls and multi-KB tool results, thinking blocks,
user ``!`` commands, about 200 branch points (some with branch summaries), about 100 labels,
custom and custom_message entries and exactly one compaction near the end of the active path.
Then it prints, each as the best of 3 runs after one warm-up (``time.perf_counter``):

1. the floor: read the bytes and ``orjson.loads`` every line (kept in a list, as any loader must);
2. ``SessionManager.open(path, read_only=True)`` + ``build_session_context()``, and each part;
3. the ratio of (2) to (1);
4. ``get_tree()`` on the opened manager;
5. the time per ``append_message`` on a copy of the big session and on a 100-entry session;
6. (informational) open + build context of the same session without its compaction.

Targets (``/work/shared/specs/session-format.md``, "Scale targets"): open + context under 1 s
and under 2x the floor, append independent of size, ``get_tree`` under 0.2 s.

This is a script, not a test::

    python benchmarks/session_load.py              # 50,000 entries
    python benchmarks/session_load.py --quick      # 5,000 entries
    python benchmarks/session_load.py --entries 20000 --out /tmp/bench --profile
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import io
import pstats
import random
import shutil
import string
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson

try:
    from pi_tui.session.manager import SessionManager
    from pi_tui.session.tree import TreeNode
except ImportError:  # run as `python benchmarks/session_load.py` without an installed pi_tui
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pi_tui.session.manager import SessionManager
    from pi_tui.session.tree import TreeNode

T = TypeVar("T")

DEFAULT_ENTRIES = 50_000
QUICK_ENTRIES = 5_000
SMALL_ENTRIES = 100
BYTES_PER_ENTRY = 2_040
"""Target average line size: 50,000 entries make about 102 MB."""
BRANCHES_PER_50K = 200
LABELS_PER_50K = 100
CONTEXT_WINDOW_CHARS = 600_000
"""Text kept after the compaction (kept entries + later entries): about 150k tokens."""
KEPT_BEFORE_COMPACTION_CHARS = 80_000
"""Text from ``firstKeptEntryId`` to the compaction (pi keeps ~20k recent tokens)."""
APPENDS = 2_000
RUNS = 3

TARGET_OPEN_CONTEXT_S = 1.0
TARGET_RATIO = 2.0
TARGET_TREE_S = 0.2
TARGET_APPEND_RATIO = 1.5
"""Append counts as size-independent when big/small per-append time stays under this."""

START_MS = 1_772_442_000_000  # 2026-03-02T09:00:00Z
CWD = "/home/user/project"

# --- synthetic project: words, code, prose ---------------------------------------------------

NOUNS = (
    "session", "entry", "parser", "config", "buffer", "token", "request", "response", "cache",
    "index", "record", "payload", "handler", "widget", "layout", "theme", "message", "stream",
    "chunk", "provider", "model", "context", "result", "node", "tree", "label", "writer", "reader",
    "lock", "prompt", "editor", "history", "keymap", "render", "diff", "patch", "tool", "schema",
)  # fmt: skip
VERBS = (
    "load", "parse", "build", "render", "flush", "resolve", "validate", "encode", "decode",
    "apply", "collect", "merge", "split", "update", "compute", "format", "read", "write", "open",
    "close", "find", "scan", "emit", "retry", "select", "migrate", "sync", "wrap", "trim",
)  # fmt: skip
SUFFIXES = ("id", "ids", "path", "count", "map", "list", "text", "data", "size", "offset", "name")
ADJECTIVES = (
    "stale", "empty", "missing", "duplicated", "truncated", "slow", "unsorted", "cached", "lazy",
    "nested", "invalid", "partial", "pending", "unknown", "shared", "frozen",
)  # fmt: skip
TYPES = ("str", "int", "bool", "bytes", "Path", "list[str]", "dict[str, Any]", "Node | None", "float")
PACKAGES = ("core", "session", "ui", "tools", "providers", "config", "util", "agent")

CODE_LINES = (
    "    {a} = {f}({b})",
    "    if {a} is None:",
    "        return {b}",
    "    for {a} in {b}s:",
    "        {a}.{f}({b}, strict=True)",
    "    {a}_map: dict[str, {T}] = {{}}",
    "    # {s}",
    '    raise ValueError(f"{s}: {{{a}!r}}")',
    '    with open({a}_path, encoding="utf-8") as handle:',
    "        {a} = handle.read()",
    '    log.debug("{s} %s", {a})',
    "    return {a}",
    "    {a}.{b} = {n}",
    "    self._{a} = {b}",
    '    assert {a} >= {n}, "{s}"',
    "    yield from {f}({a}, {b})",
    "    {a}_list = [{b} for {b} in {a}s if {b}.{c}]",
    "    try:",
    "        {a} = {f}({b}, timeout={n})",
    "    except KeyError:",
    "        {a} = None",
    "    elif {a} and not {b}:",
    "    {a}_{c} = len({b}) + {n}",
    '    {a}["{b}"] = {c}.get("{b}", {n})',
    "",
)
SENTENCES = (
    "the {a} is {adj} when the {b} changes",
    "{f} keeps the {a} in sync with the {b}",
    "a {adj} {a} must not reach the {b}",
    "we {v} the {a} before the {b} is written",
    "the {b} owns the {a} until {f} returns",
    "every {a} gets its own {b} so the {c} stays small",
    "this is the slow path; the {a} is usually {adj}",
    "fall back to the {b} when the {a} is {adj}",
)
USER_PROMPTS = (
    "In {path}, {v} the {a} before returning the {b}; right now it is {adj} sometimes.",
    "The tests for {path} fail after the last change. Can you find out why and fix it?",
    "Please refactor {f} in {path} so it does not {v} the {a} twice.",
    "Add a test that covers a {adj} {a} in {path}.",
    "Why is the {a} {adj} after {f}? Look at {path} and explain, then fix it.",
    "Run the test suite and fix whatever is broken.",
    "Rename {f} to {g} everywhere and update the docs.",
    "Write a short design note in docs/{a}.md about how the {a} and the {b} interact.",
    "ok, continue",
    "Looks good. Now {v} the {b} too, the same way.",
    "Can you make {f} faster? It shows up in the profile when the {a} is large.",
)
ASSISTANT_OPENERS = (
    "Let me look at `{path}` first.",
    "I'll check how `{f}` is used before changing it.",
    "Running the tests to see the current state.",
    "The {a} is built in `{path}`; reading it.",
    "Now I'll update `{f}` so the {a} is only {v}ed once.",
    "That test failure comes from the {adj} {a}; fixing the guard.",
    "Let me search for other callers of `{f}`.",
)
THINKING = (
    "The user wants the {a} handled in {path}. {S}. I should read the file first and check "
    "whether {f} is called from anywhere else, because changing its signature would break "
    "callers. {S}. Then run the tests.",
    "The failure says the {a} is {adj}. {S}. Probably {f} returns early when the {b} is empty. "
    "Let me verify with a search before editing. {S}.",
    "{S}. {S}. I think the cleanest fix is to {v} the {a} in one place and pass it down.",
)
BASH_COMMANDS = ("pytest", "rg", "git_status", "git_diff", "ls", "ruff", "wc")
LABEL_NAMES = (
    "checkpoint", "before-refactor", "tests-green", "bug-repro", "good-state", "plan", "design",
    "perf-baseline", "todo", "release",
)  # fmt: skip
ALNUM = string.ascii_letters + string.digits


class _Words:
    """Random names and sentences from the vocabularies above."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def fill(self, template: str, **extra: str) -> str:
        """``template`` with its ``{a}``, ``{f}``, ``{s}`` ... placeholders filled at random."""
        rng = self.rng
        values = {
            "a": rng.choice(NOUNS),
            "b": rng.choice(NOUNS),
            "c": rng.choice(SUFFIXES),
            "f": f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}",
            "g": f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{rng.choice(SUFFIXES)}",
            "v": rng.choice(VERBS),
            "n": str(rng.randint(0, 4096)),
            "adj": rng.choice(ADJECTIVES),
            "T": rng.choice(TYPES),
        }
        values.update(extra)
        if "{s}" in template:
            values["s"] = self.sentence(capital=False)
        while "{S}" in template:
            template = template.replace("{S}", self.sentence(), 1)
        return template.format(**values)

    def sentence(self, capital: bool = True) -> str:
        """One sentence, without its final full stop."""
        text = self.fill(self.rng.choice(SENTENCES))
        return text[0].upper() + text[1:] if capital else text

    def paragraph(self, sentences: int) -> str:
        """``sentences`` sentences, each with its full stop."""
        return " ".join(self.sentence() + "." for _ in range(sentences))


class _Project:
    """A virtual repository whose files tool calls read, grep, edit and write."""

    def __init__(self, rng: random.Random, words: _Words) -> None:
        self.rng = rng
        self.words = words
        self.files: dict[str, list[str]] = {}
        for package in PACKAGES:
            for noun in rng.sample(NOUNS, 12):
                self.files[f"src/app/{package}/{noun}.py"] = self.module(rng.randint(30, 900))
        for noun in rng.sample(NOUNS, 30):
            self.files[f"tests/test_{noun}.py"] = self._tests(rng.randint(20, 300))
        for name in ("README.md", "docs/architecture.md", "docs/sessions.md", "CHANGELOG.md"):
            self.files[name] = self._markdown(rng.randint(20, 200))
        self.paths = list(self.files)
        self.py_paths = [path for path in self.paths if path.endswith(".py")]

    def module(self, length: int) -> list[str]:
        """The lines of a Python module of ``length`` lines."""
        rng, words = self.rng, self.words
        lines = ['"""' + words.sentence() + '."""', "", "from __future__ import annotations", ""]
        lines += ["import logging", "from pathlib import Path", "from typing import Any", ""]
        lines += ["log = logging.getLogger(__name__)", "", ""]
        while len(lines) < length:
            if rng.random() < 0.15:
                lines.append(f"class {rng.choice(NOUNS).title()}{rng.choice(NOUNS).title()}:")
                lines.append(f'    """{words.sentence()}."""')
                lines.append("")
            args = ", ".join(f"{rng.choice(NOUNS)}: {rng.choice(TYPES)}" for _ in range(rng.randint(0, 3)))
            lines.append(words.fill("def {f}(" + args + ") -> {T}:"))
            lines.append(f'    """{words.sentence()}."""')
            lines.extend(words.fill(rng.choice(CODE_LINES)) for _ in range(rng.randint(2, 16)))
            lines += ["", ""]
        return lines[:length]

    def _tests(self, length: int) -> list[str]:
        words = self.words
        lines = ["import pytest", "", "from app.core import *", "", ""]
        while len(lines) < length:
            lines.append(words.fill("def test_{f}_{adj}() -> None:"))
            lines.append(words.fill("    {a} = {f}({n})"))
            lines.append(words.fill('    assert {a} == {n}, "{s}"'))
            lines += ["", ""]
        return lines[:length]

    def _markdown(self, length: int) -> list[str]:
        words = self.words
        lines = [f"# {words.fill('The {a} and the {b}')}", ""]
        while len(lines) < length:
            lines += [f"## {words.fill('{v} the {a}').capitalize()}", "", words.paragraph(4), ""]
            lines += [f"- {words.sentence()}" for _ in range(3)] + [""]
        return lines[:length]

    def pick(self, python: bool = False) -> str:
        """A random path of the project (only Python files with ``python``)."""
        return self.rng.choice(self.py_paths if python else self.paths)


# --- the session generator ---------------------------------------------------------------------


@dataclass
class GeneratedSession:
    """The entries of a generated session, in file order, and facts about them."""

    header: dict[str, Any]
    entries: list[dict[str, Any]]
    compaction_id: str
    compaction_child_id: str
    """The active-path entry that follows the compaction (its parentId is the compaction)."""
    active_path_length: int = 0
    context_chars: int = 0
    counts: dict[str, int] = field(default_factory=dict)


def _iso(ms: int) -> str:
    """Unix milliseconds as pi's ISO-8601 timestamp with milliseconds and ``Z``."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _context_chars(entry: dict[str, Any]) -> int:
    """Roughly the characters an entry adds to the model's context (pi estimates tokens as /4)."""
    kind = entry["type"]
    if kind == "custom_message":
        content = entry.get("content")
        return len(content) if isinstance(content, str) else len(orjson.dumps(content))
    if kind == "branch_summary":
        return len(entry.get("summary", ""))
    if kind != "message":
        return 0
    message = entry["message"]
    if message["role"] == "bashExecution":
        return 0 if message.get("excludeFromContext") else len(message["command"]) + len(message["output"])
    content = message.get("content")
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            total += len(block["text"])
        elif kind == "thinking":
            total += len(block["thinking"])
        elif kind == "toolCall":
            total += len(block["name"]) + len(orjson.dumps(block["arguments"]))
    return total


class SessionGenerator:
    """Builds a session of exactly ``n_entries`` entries after the header, deterministically."""

    def __init__(self, n_entries: int, seed: int, bytes_per_entry: int = BYTES_PER_ENTRY) -> None:
        if n_entries < 20:
            raise ValueError("a generated session needs at least 20 entries")
        self.n = n_entries
        self.rng = random.Random(seed)
        self.words = _Words(self.rng)
        self.project = _Project(self.rng, self.words)
        self.bytes_per_entry = bytes_per_entry
        self.entries: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.ms_of: dict[str, int] = {}
        self.leaf: str | None = None
        self.ms = START_MS
        self.written_bytes = 0
        self.scale = 1.0
        """Multiplies the size of large payloads; steered so the file reaches its target size."""
        self.context_tokens = 12_000
        self.tool_calls = 0
        self.model = ("anthropic", "anthropic-messages", "claude-sonnet-4-5")
        self.thinking_level = "medium"
        self.labelled: list[str] = []

    # --- low level ------------------------------------------------------------------------------

    def _new_id(self) -> str:
        """A fresh 8-hex-digit entry id (re-drawn on collision, as pi does)."""
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.by_id:
                return candidate

    def _tick(self, low_ms: int, high_ms: int) -> int:
        """Advance the clock by a random delay; timestamps never go backwards."""
        self.ms += self.rng.randint(low_ms, high_ms)
        return self.ms

    def _add(self, kind: str, fields: dict[str, Any], ms: int, parent: str | None = None) -> str:
        """Append an entry under ``parent`` (default: the leaf), make it the leaf, steer the size."""
        entry_id = self._new_id()
        entry: dict[str, Any] = {
            "type": kind,
            "id": entry_id,
            "parentId": self.leaf if parent is None else parent,
            "timestamp": _iso(ms),
        }
        entry.update(fields)
        self.entries.append(entry)
        self.by_id[entry_id] = entry
        self.ms_of[entry_id] = ms
        self.leaf = entry_id
        self.written_bytes += len(orjson.dumps(entry)) + 1
        self.context_tokens += _context_chars(entry) // 4
        if self.context_tokens > 185_000:  # the real session would have compacted here
            self.context_tokens = self.rng.randint(25_000, 45_000)
        if len(self.entries) % 250 == 0:
            wanted = self.bytes_per_entry * len(self.entries)
            self.scale = min(8.0, max(0.1, self.scale * (wanted / self.written_bytes) ** 0.5))
        return entry_id

    def _sized(self, low: int, high: int) -> int:
        """A random size for a large payload, times the size-steering factor."""
        return max(1, int(self.rng.randint(low, high) * self.scale))

    def _call_id(self) -> str:
        self.tool_calls += 1
        if self.model[0] == "anthropic":
            return "toolu_01" + "".join(self.rng.choices(ALNUM, k=22))
        return f"call_{''.join(self.rng.choices(ALNUM, k=24))}"

    def _usage(self, output_chars: int) -> dict[str, Any]:
        """pi's ``usage`` object for a reply of ``output_chars`` at the current context size."""
        rng = self.rng
        output = max(1, output_chars // 4)
        fresh = rng.randint(50, 3_000)
        cache_write = rng.randint(0, 2_000)
        cache_read = max(0, self.context_tokens - fresh - cache_write)
        cost = {
            "input": fresh * 3e-6,
            "output": output * 15e-6,
            "cacheRead": cache_read * 0.3e-6,
            "cacheWrite": cache_write * 3.75e-6,
        }
        cost["total"] = sum(cost.values())
        return {
            "input": fresh,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": fresh + output + cache_read + cache_write,
            "cost": cost,
        }

    # --- messages -------------------------------------------------------------------------------

    def user(self) -> str:
        """A user prompt, sometimes with a pasted test log."""
        words = self.words
        text = words.fill(self.rng.choice(USER_PROMPTS), path=self.project.pick())
        if self.rng.random() < 0.08:  # a pasted traceback or log
            text += "\n\n```\n" + self._pytest_output(failures=True) + "\n```"
        ms = self._tick(4_000, 180_000)
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms - 3}
        return self._add("message", {"message": message}, ms)

    def assistant(self, blocks: list[dict[str, Any]], stop_reason: str, error: str | None = None) -> str:
        """An assistant message with ``blocks`` and usage figures for the current context size."""
        ms = self._tick(1_500, 45_000)
        provider, api, model = self.model
        chars = sum(len(orjson.dumps(block)) for block in blocks)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": self._usage(chars),
            "stopReason": stop_reason,
        }
        if error is not None:
            message["errorMessage"] = error
        message["timestamp"] = ms - self.rng.randint(800, 30_000)
        prefix = "msg_01" if provider == "anthropic" else "resp_"
        message["responseId"] = prefix + "".join(self.rng.choices(ALNUM, k=22))
        return self._add("message", {"message": message}, ms)

    def thinking_block(self) -> dict[str, Any]:
        """A ``thinking`` content block with its signature."""
        text = " ".join(
            self.words.fill(self.rng.choice(THINKING), path=self.project.pick())
            for _ in range(self.rng.randint(1, 3))
        )
        signature = base64.b64encode(self.rng.randbytes(self.rng.randint(180, 600))).decode()
        return {"type": "thinking", "thinking": text, "thinkingSignature": signature}

    def tool_result(self, call: dict[str, Any]) -> str:
        """The ``toolResult`` message answering ``call``, in the shapes pi's tools produce."""
        name, args = call["name"], call["arguments"]
        details: dict[str, Any] | None = None
        is_error = False
        if name == "read":
            text, is_error = self._read_result(args)
        elif name == "bash":
            text, is_error = self._bash_result(args["command"])
        elif name == "edit":
            text, details, is_error = self._edit_result(args)
        else:
            text = f"Successfully wrote {len(args['content'].encode())} bytes to {args['path']}"
        if is_error and details is None:
            details = {}
        ms = self._tick(5, 6_000)
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            message["details"] = details
        message["isError"] = is_error
        message["timestamp"] = ms
        return self._add("message", {"message": message}, ms)

    def tool_call(self) -> dict[str, Any]:
        """A ``toolCall`` block: read 40%, bash 32%, edit 19%, write 9%."""
        rng, project = self.rng, self.project
        roll = rng.random()
        if roll < 0.40:
            path = project.pick()
            args: dict[str, Any] = {"path": path}
            length = len(project.files[path])
            wanted = self._sized(30, 320)
            if wanted < length:
                offset = rng.randint(1, length - wanted + 1)
                args.update(offset=offset, limit=wanted)
            if rng.random() < 0.04:
                args["path"] = path.replace(".py", "_old.py").replace(".md", ".txt")
            return {"type": "toolCall", "id": self._call_id(), "name": "read", "arguments": args}
        if roll < 0.72:
            return {"type": "toolCall", "id": self._call_id(), "name": "bash", "arguments": self._bash_args()}
        if roll < 0.91:
            path = project.pick(python=True)
            lines = project.files[path]
            edits = []
            for _ in range(1 if rng.random() < 0.8 else 2):
                start = rng.randint(0, max(0, len(lines) - 12))
                while start < len(lines) - 1 and not lines[start].strip():
                    start += 1  # oldText starts with a real line, never an empty string
                old = lines[start : start + rng.randint(1, 10)]
                fresh = self.words.fill
                new = [fresh(rng.choice(CODE_LINES)) if rng.random() < 0.5 else line for line in old]
                new += [fresh(rng.choice(CODE_LINES)) for _ in range(rng.randint(0, 4))]
                edits.append({"oldText": "\n".join(old), "newText": "\n".join(new)})
            arguments = {"path": path, "edits": edits}
            return {"type": "toolCall", "id": self._call_id(), "name": "edit", "arguments": arguments}
        package = rng.choice(PACKAGES)
        path = f"src/app/{package}/{rng.choice(VERBS)}_{rng.choice(NOUNS)}.py"
        content = "\n".join(project.module(self._sized(20, 260))) + "\n"
        return {
            "type": "toolCall",
            "id": self._call_id(),
            "name": "write",
            "arguments": {"path": path, "content": content},
        }

    def _bash_args(self) -> dict[str, Any]:
        rng, project = self.rng, self.project
        kind = rng.choice(BASH_COMMANDS)
        if kind == "pytest":
            command = f"python -m pytest -q {project.pick(python=True).replace('src/app', 'tests')} -x"
        elif kind == "rg":
            command = f"rg -n '{rng.choice(VERBS)}_{rng.choice(NOUNS)}' src tests"
        elif kind == "git_status":
            command = "git status --short && git log --oneline -5"
        elif kind == "git_diff":
            command = f"git diff {project.pick(python=True)}"
        elif kind == "ls":
            command = f"ls -la src/app/{rng.choice(PACKAGES)}"
        elif kind == "ruff":
            command = "ruff check . && ruff format --check ."
        else:
            command = "wc -l src/app/*/*.py | sort -n | tail -20"
        args: dict[str, Any] = {"command": command}
        if rng.random() < 0.2:
            args["timeout"] = rng.choice((60, 120, 300))
        return args

    def _read_result(self, args: dict[str, Any]) -> tuple[str, bool]:
        path = args["path"]
        lines = self.project.files.get(path)
        if lines is None:
            return f"ENOENT: no such file or directory, access '{CWD}/{path}'", True
        start = args.get("offset", 1) - 1
        end = start + args.get("limit", len(lines))
        text = "\n".join(lines[start:end])
        if end < len(lines):
            shown = f"lines {start + 1}-{end} of {len(lines)}"
            text += f"\n\n[Showing {shown}. Use offset={end + 1} to continue.]"
        return text, False

    def _bash_result(self, command: str) -> tuple[str, bool]:
        rng = self.rng
        exit_code = 0
        if command.startswith("python -m pytest"):
            failed = rng.random() < 0.3
            text = self._pytest_output(failures=failed)
            exit_code = 1 if failed else 0
        elif command.startswith("rg"):
            text = "\n".join(self._grep_lines(self._sized(3, 80)))
            exit_code = 0 if text else 1
        elif command.startswith("git status"):
            text = "\n".join(f" M {self.project.pick()}" for _ in range(rng.randint(1, 8)))
            text += "\n" + "\n".join(f"{rng.getrandbits(28):07x} {self.words.sentence()}" for _ in range(5))
        elif command.startswith("git diff"):
            text = self._unified_diff(command.split()[-1])
        elif command.startswith("ls"):
            text = f"total {rng.randint(40, 400)}\n" + "\n".join(
                f"-rw-r--r--  1 user user {rng.randint(200, 40_000):6d} Mar  {rng.randint(1, 9)} "
                f"1{rng.randint(0, 9)}:{rng.randint(10, 59)} {rng.choice(NOUNS)}.py"
                for _ in range(rng.randint(4, 20))
            )
        elif command.startswith("ruff"):
            if rng.random() < 0.6:
                text = "All checks passed!\n" + f"{rng.randint(40, 90)} files already formatted"
            else:
                text = "\n".join(
                    f"{self.project.pick(python=True)}:{rng.randint(1, 500)}:{rng.randint(1, 80)}: "
                    f"{rng.choice(('F401', 'E501', 'B006', 'SIM108', 'UP006'))} {self.words.sentence()}"
                    for _ in range(self._sized(1, 25))
                )
                text += "\nFound errors."
                exit_code = 1
        else:
            text = "\n".join(f"{rng.randint(20, 900):5d} {self.project.pick(python=True)}" for _ in range(20))
        if exit_code:
            return f"{text}\n\n\nCommand exited with code {exit_code}", True
        return text, False

    def _pytest_output(self, failures: bool) -> str:
        rng, words = self.rng, self.words
        collected = rng.randint(40, 900)
        lines = [
            "=" * 29 + " test session starts " + "=" * 30,
            "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
            f"rootdir: {CWD}",
            "configfile: pyproject.toml",
            f"collected {collected} items",
            "",
        ]
        for index in range(self._sized(2, 14)):
            dots = "." * rng.randint(5, 60)
            lines.append(f"tests/test_{rng.choice(NOUNS)}.py {dots:<60} [{min(99, index * 7):3d}%]")
        if failures:
            lines.append("=" * 35 + " FAILURES " + "=" * 35)
            for _ in range(rng.randint(1, 3)):
                name = words.fill("test_{f}_{adj}")
                lines.append("_" * 20 + f" {name} " + "_" * 20)
                lines.append("")
                lines.extend(words.fill(rng.choice(CODE_LINES)) for _ in range(self._sized(4, 30)))
                lines.append(words.fill(">       assert {a} == {n}"))
                lines.append(words.fill("E       AssertionError: {s}"))
                lines.append("")
                lines.append(f"tests/test_{rng.choice(NOUNS)}.py:{rng.randint(5, 300)}: AssertionError")
            lines.append("=" * 27 + " short test summary info " + "=" * 28)
            lines.append(words.fill("FAILED tests/test_{a}.py::test_{f} - AssertionError: {s}"))
            lines.append(f"1 failed, {collected - 1} passed in {rng.uniform(0.5, 40):.2f}s")
        else:
            lines.append(f"{collected} passed in {rng.uniform(0.5, 40):.2f}s")
        return "\n".join(lines)

    def _grep_lines(self, count: int) -> Iterator[str]:
        project, rng = self.project, self.rng
        for _ in range(count):
            path = project.pick(python=True)
            lines = project.files[path]
            number = rng.randint(1, len(lines))
            yield f"{path}:{number}:{lines[number - 1]}"

    def _unified_diff(self, path: str) -> str:
        rng = self.rng
        lines = self.project.files.get(path) or self.project.files[self.project.pick(python=True)]
        out = [f"diff --git a/{path} b/{path}"]
        out += [f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644"]
        out += [f"--- a/{path}", f"+++ b/{path}"]
        for _ in range(self._sized(1, 5)):
            start = rng.randint(0, max(0, len(lines) - 10))
            out.append(f"@@ -{start + 1},7 +{start + 1},8 @@")
            chunk = lines[start : start + 7]
            out += [" " + line for line in chunk[:3]]
            out += ["-" + line for line in chunk[3:4]]
            out += ["+" + self.words.fill(rng.choice(CODE_LINES)) for _ in range(2)]
            out += [" " + line for line in chunk[4:]]
        return "\n".join(out)

    def _edit_result(self, args: dict[str, Any]) -> tuple[str, dict[str, Any] | None, bool]:
        path = args["path"]
        if self.rng.random() < 0.08:
            return (
                f"Could not find the exact text in {path}. The old text must match exactly including all "
                "whitespace and newlines.",
                {},
                True,
            )
        lines = self.project.files[path]
        edit = args["edits"][0]
        old, new = edit["oldText"].split("\n"), edit["newText"].split("\n")
        first = next((i for i in range(len(lines)) if lines[i : i + len(old)] == old), 0)
        width = len(str(len(lines) + len(new)))
        diff = [f" {n + 1:>{width}} {lines[n]}" for n in range(max(0, first - 4), first)]
        diff += [f"-{first + 1 + n:>{width}} {line}" for n, line in enumerate(old)]
        diff += [f"+{first + 1 + n:>{width}} {line}" for n, line in enumerate(new)]
        after = first + len(old)
        shift = len(new) - len(old)
        diff += [f" {n + 1 + shift:>{width}} {lines[n]}" for n in range(after, min(len(lines), after + 4))]
        text = f"Successfully replaced {len(args['edits'])} block(s) in {path}."
        return text, {"diff": "\n".join(diff), "firstChangedLine": first + 1}, False

    # --- turns and the other entry types --------------------------------------------------------

    def turn(self) -> str:
        """A user prompt, tool rounds, and a final answer; returns the final assistant's id."""
        rng, words = self.rng, self.words
        self.user()
        thinking = self.thinking_level != "off"
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8))):
            blocks: list[dict[str, Any]] = []
            if thinking and rng.random() < 0.4:
                blocks.append(self.thinking_block())
            if rng.random() < 0.6:
                opener = words.fill(rng.choice(ASSISTANT_OPENERS), path=self.project.pick())
                blocks.append({"type": "text", "text": opener})
            calls = [self.tool_call() for _ in range(rng.choice((1, 1, 1, 1, 1, 2, 2, 3)))]
            self.assistant(blocks + calls, "toolUse")
            for call in calls:
                self.tool_result(call)
        if rng.random() < 0.006:
            error = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
            return self.assistant([], "error", error)
        blocks = [self.thinking_block()] if thinking and rng.random() < 0.5 else []
        summary = words.paragraph(rng.randint(1, 4))
        if rng.random() < 0.5:
            summary += "\n\n" + "\n".join(f"- {words.sentence()}" for _ in range(rng.randint(2, 7)))
        blocks.append({"type": "text", "text": summary})
        return self.assistant(blocks, "stop")

    def closing_turn(self, entries: int) -> None:
        """A turn of exactly ``entries`` (>= 2, even) entries: user, tool rounds, final answer."""
        self.user()
        for _ in range((entries - 2) // 2):
            call = self.tool_call()
            self.assistant([call], "toolUse")
            self.tool_result(call)
        self.assistant([{"type": "text", "text": self.words.paragraph(3)}], "stop")

    def bash_execution(self) -> str:
        """A ``!command`` the user ran (``!!`` for some: excluded from the context)."""
        rng = self.rng
        args = self._bash_args()
        output, failed = self._bash_result(args["command"])
        output = output.split("\n\n\nCommand exited")[0] + "\n"
        truncated = rng.random() < 0.05
        ms = self._tick(2_000, 60_000)
        message: dict[str, Any] = {
            "role": "bashExecution",
            "command": args["command"],
            "output": output,
            "exitCode": 1 if failed else 0,
            "cancelled": False,
            "truncated": truncated,
        }
        if truncated:
            message["fullOutputPath"] = f"/tmp/pi-bash-{rng.getrandbits(32):08x}.log"
        message["timestamp"] = ms
        message["excludeFromContext"] = rng.random() < 0.2
        return self._add("message", {"message": message}, ms)

    def custom_message(self) -> str:
        """An extension message that goes to the model (a rule injection)."""
        rng = self.rng
        rule = rng.choice(("no-print-debugging", "typed-python", "small-commits", "test-first"))
        content = f'<rule name="{rule}">\n' + self.words.paragraph(rng.randint(2, 6)) + "\n</rule>"
        fields = {
            "customType": "ttsr-rule",
            "content": content,
            "display": rng.random() < 0.5,
            "details": {"rule": rule, "trigger": self.words.fill("{f}")},
        }
        return self._add("custom_message", fields, self._tick(5, 500))

    def custom(self) -> str:
        """Extension state that never reaches the model (a todo list)."""
        rng, words = self.rng, self.words
        todos = [
            {"id": n + 1, "text": words.sentence(), "status": rng.choice(("pending", "in_progress", "done"))}
            for n in range(rng.randint(1, 8))
        ]
        return self._add("custom", {"customType": "todo-state", "data": {"todos": todos}}, self._tick(5, 200))

    def label(self, target: str, name: str | None) -> str:
        """Set (or, with None, clear) the label of ``target``; written under the current leaf."""
        fields: dict[str, Any] = {"targetId": target}
        if name is not None:
            fields["label"] = name
        return self._add("label", fields, self._tick(1_000, 20_000))

    def branch_summary(self, at: str) -> str:
        """The summary pi writes when the user navigates back to ``at`` and asks for one."""
        words = self.words
        modified = sorted({self.project.pick(python=True) for _ in range(self.rng.randint(0, 3))})
        read = sorted({self.project.pick() for _ in range(self.rng.randint(1, 4))})
        summary = (
            "The user explored a different conversation branch before returning here.\n"
            "Summary of that exploration:\n\n## Goal\n"
            + words.sentence()
            + ".\n\n## Progress\n### Done\n"
            + "\n".join(f"- [x] {words.sentence()}" for _ in range(self.rng.randint(1, 5)))
            + "\n\n## Next Steps\n1. "
            + words.sentence()
            + "."
        )
        if modified:
            summary += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
        fields = {
            "fromId": at,
            "summary": summary,
            "details": {"readFiles": read, "modifiedFiles": modified},
            "fromHook": False,
        }
        return self._add("branch_summary", fields, self._tick(5_000, 30_000), parent=at)

    def model_change(self) -> str:
        """Switch between the two models of the session."""
        self.model = (
            ("openai", "openai-responses", "gpt-5")
            if self.model[0] == "anthropic"
            else ("anthropic", "anthropic-messages", "claude-sonnet-4-5")
        )
        fields = {"provider": self.model[0], "modelId": self.model[2]}
        return self._add("model_change", fields, self._tick(1_000, 10_000))

    def thinking_level_change(self, level: str | None = None) -> str:
        """Set the thinking level (random when ``level`` is None)."""
        self.thinking_level = level or self.rng.choice(("off", "low", "medium", "high"))
        fields = {"thinkingLevel": self.thinking_level}
        return self._add("thinking_level_change", fields, self._tick(1, 2_000))

    # --- the whole session ----------------------------------------------------------------------

    def generate(self) -> GeneratedSession:
        """Generate the whole session: turns, extras, branches, labels, then the compaction."""
        rng = self.rng
        header = {
            "type": "session",
            "version": 3,
            "id": _uuid7(START_MS - 40, rng),
            "timestamp": _iso(START_MS - 40),
            "cwd": CWD,
        }
        self._add("model_change", {"provider": self.model[0], "modelId": self.model[2]}, START_MS - 30)
        self._add("thinking_level_change", {"thinkingLevel": self.thinking_level}, START_MS - 30)

        budget = self.n - 1  # the compaction is inserted afterwards
        scale = self.n / 50_000
        branch_every = 0.88 * budget / (round(BRANCHES_PER_50K * scale) + 1)
        # about a quarter of the branches also set a label (see below); the rest come at random
        label_every = budget / (round((LABELS_PER_50K - BRANCHES_PER_50K / 4) * scale) + 1)
        next_branch, next_label = branch_every, label_every
        turn_ends: list[str] = []
        reserve = 60  # largest turn (1 + 8 * 4 + 1) plus the extras around it, with room to spare
        while budget - len(self.entries) >= reserve:
            if rng.random() < 0.05:
                self.custom_message()
            if rng.random() < 0.07:
                self.bash_execution()
            turn_ends.append(self.turn())
            roll = rng.random()
            if roll < 0.09:
                self.custom()
            elif roll < 0.092:
                self.model_change()
            elif roll < 0.094:
                self.thinking_level_change()
            count = len(self.entries)
            if count >= next_label:
                next_label += label_every
                self._random_label()
            if count >= next_branch and len(turn_ends) >= 2 and count < budget * 0.9:
                next_branch += branch_every
                back = rng.randint(1, min(4, len(turn_ends) - 1))
                target = turn_ends[-1 - back]
                if rng.random() < 0.25:  # pi writes the label under the old leaf, then navigates
                    self.label(target, f"{rng.choice(LABEL_NAMES)}-{len(self.labelled) + 1}")
                    self.labelled.append(target)
                self.leaf = target
                if rng.random() < 0.5:
                    self.branch_summary(target)
                turn_ends = []
        remaining = budget - len(self.entries)
        if remaining % 2:
            self.custom()
            remaining -= 1
        self.closing_turn(remaining)
        assert len(self.entries) == budget
        return self._insert_compaction(header)

    def _random_label(self) -> None:
        """Label a recent entry, or now and then clear an earlier label."""
        rng = self.rng
        if self.labelled and rng.random() < 0.1:
            self.label(rng.choice(self.labelled), None)  # clear an earlier label
            return
        window = self.entries[-400:]
        target = rng.choice([e for e in window if e["type"] == "message"] or window)["id"]
        self.label(target, f"{rng.choice(LABEL_NAMES)}-{len(self.labelled) + 1}")
        self.labelled.append(target)

    def _active_path(self) -> list[dict[str, Any]]:
        """Entries from the root to the last entry of the file (the leaf pi resumes at)."""
        path = []
        current: dict[str, Any] | None = self.entries[-1]
        while current is not None:
            path.append(current)
            parent = current["parentId"]
            current = self.by_id.get(parent) if parent is not None else None
        path.reverse()
        return path

    def _insert_compaction(self, header: dict[str, Any]) -> GeneratedSession:
        """Put one compaction on the active path so ~600 KB of text remains in the context."""
        path = self._active_path()
        chars = [_context_chars(entry) for entry in path]
        window = min(CONTEXT_WINDOW_CHARS, sum(chars) // 2)
        keep = min(KEPT_BEFORE_COMPACTION_CHARS, window // 4)

        def is_user(entry: dict[str, Any]) -> bool:
            return entry["type"] == "message" and entry["message"]["role"] == "user"

        after = 0
        cut = len(path) - 1
        while cut > 2 and (after < window - keep or not is_user(path[cut])):
            after += chars[cut]
            cut -= 1
        kept_chars = 0
        first_kept = cut - 1
        while first_kept > 2 and (kept_chars < keep or not is_user(path[first_kept])):
            first_kept -= 1
            kept_chars += chars[first_kept]
        child = path[cut]  # a user message: the compaction goes right before it
        parent_id = child["parentId"]
        last_assistant = next(
            e for e in reversed(path[:cut]) if e["type"] == "message" and e["message"]["role"] == "assistant"
        )
        read = sorted({self.project.pick() for _ in range(12)})
        modified = sorted({self.project.pick(python=True) for _ in range(6)})
        words = self.words
        summary = (
            "## Goal\n"
            + words.paragraph(2)
            + "\n\n## Constraints & Preferences\n"
            + "\n".join(f"- {words.sentence()}" for _ in range(4))
            + "\n\n## Progress\n### Done\n"
            + "\n".join(f"- [x] {words.sentence()}" for _ in range(14))
            + "\n\n### In Progress\n"
            + "\n".join(f"- [ ] {words.sentence()}" for _ in range(3))
            + "\n\n## Key Decisions\n"
            + "\n".join(f"- **{words.fill('{f}')}**: {words.sentence()}" for _ in range(6))
            + "\n\n## Next Steps\n"
            + "\n".join(f"{n}. {words.sentence()}" for n in range(1, 5))
            + "\n\n<read-files>\n"
            + "\n".join(read)
            + "\n</read-files>"
            + "\n\n<modified-files>\n"
            + "\n".join(modified)
            + "\n</modified-files>"
        )
        position = next(index for index, entry in enumerate(self.entries) if entry is child)
        previous_ms = self.ms_of[self.entries[position - 1]["id"]]
        ms = (previous_ms + self.ms_of[child["id"]]) // 2
        compaction_id = self._new_id()
        compaction = {
            "type": "compaction",
            "id": compaction_id,
            "parentId": parent_id,
            "timestamp": _iso(ms),
            "summary": summary,
            "firstKeptEntryId": path[first_kept]["id"],
            "tokensBefore": last_assistant["message"]["usage"]["totalTokens"],
            "details": {"readFiles": read, "modifiedFiles": modified},
            "fromHook": False,
        }
        self.entries.insert(position, compaction)
        self.by_id[compaction_id] = compaction
        child["parentId"] = compaction_id

        counts: dict[str, int] = {}
        children: dict[str | None, int] = {}
        for entry in self.entries:
            kind = entry["type"]
            if kind == "message":
                kind = "message/" + entry["message"]["role"]
            counts[kind] = counts.get(kind, 0) + 1
            children[entry["parentId"]] = children.get(entry["parentId"], 0) + 1
        counts["branch points"] = sum(1 for n in children.values() if n > 1)
        return GeneratedSession(
            header=header,
            entries=self.entries,
            compaction_id=compaction_id,
            compaction_child_id=child["id"],
            active_path_length=len(path) + 1,
            context_chars=sum(chars[first_kept:]) + len(summary),
            counts=counts,
        )


def _uuid7(ms: int, rng: random.Random) -> str:
    """A UUID v7 for ``ms`` whose random bits come from ``rng`` (reproducible session ids)."""
    value = (ms & 0xFFFF_FFFF_FFFF) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64
    value |= 0b10 << 62 | rng.getrandbits(62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def write_session(session: GeneratedSession, path: Path, with_compaction: bool = True) -> int:
    """Write the session as JSONL; without the compaction its child hangs off its old parent."""
    skip = None if with_compaction else session.compaction_id
    reparent: dict[str, str | None] = {}
    if skip is not None:
        compaction = next(e for e in session.entries if e["id"] == skip)
        reparent[session.compaction_child_id] = compaction["parentId"]
    size = 0
    with open(path, "wb") as handle:
        for entry in [session.header, *session.entries]:
            if entry["id"] == skip:
                continue
            if entry["id"] in reparent:
                entry = {**entry, "parentId": reparent[entry["id"]]}
            line = orjson.dumps(entry) + b"\n"
            handle.write(line)
            size += len(line)
    return size


# --- measuring -----------------------------------------------------------------------------------


def _repeat(run: Callable[[], T], runs: int = RUNS) -> list[T]:
    """One warm-up call, then ``runs`` calls; garbage from each call is collected before the next."""
    run()
    gc.collect()
    results = []
    for _ in range(runs):
        results.append(run())
        gc.collect()
    return results


def measure_floor(path: Path, keep: bool = True, collect: bool = True) -> float:
    """Best time to read the file and parse every line with orjson.

    The floor keeps the parsed objects in a list with the garbage collector on, as any loader
    must; ``keep=False`` drops each object at once and ``collect=False`` pauses the cyclic
    garbage collector (informational variants).
    """

    def run() -> float:
        paused = not collect and gc.isenabled()
        if paused:
            gc.disable()
        try:
            start = time.perf_counter()
            loads = orjson.loads
            lines = path.read_bytes().split(b"\n")
            if keep:
                parsed = [loads(line) for line in lines if line]
            else:
                for line in lines:
                    if line:
                        loads(line)
            elapsed = time.perf_counter() - start
            del lines
            if keep:
                del parsed
        finally:
            if paused:
                gc.enable()
        return elapsed

    return min(_repeat(run))


def measure_open_context(path: Path) -> tuple[float, float, float, int]:
    """Best (total, open, context, context messages) of open(read_only) + build_session_context."""

    def run() -> tuple[float, float, float, int]:
        start = time.perf_counter()
        manager = SessionManager.open(path, read_only=True)
        opened = time.perf_counter()
        context = manager.build_session_context()
        done = time.perf_counter()
        return done - start, opened - start, done - opened, len(context.messages)

    return min(_repeat(run))


def measure_tree(path: Path) -> tuple[float, int, int]:
    """Best ``get_tree()`` time on an opened manager, with the number of roots and nodes."""
    manager = SessionManager.open(path, read_only=True)

    def run() -> float:
        start = time.perf_counter()
        roots = manager.get_tree()
        elapsed = time.perf_counter() - start
        del roots
        return elapsed

    best = min(_repeat(run))
    roots = manager.get_tree()
    nodes, stack = 0, list(roots)
    while stack:  # iterative: the active path is tens of thousands of levels deep
        node: TreeNode = stack.pop()
        nodes += 1
        stack.extend(node.children)
    return best, len(roots), nodes


APPEND_USER = {
    "role": "user",
    "content": [{"type": "text", "text": "Now run the tests again and fix what still fails."}],
    "timestamp": START_MS,
}
APPEND_ASSISTANT = {
    "role": "assistant",
    "content": [{"type": "text", "text": "All 412 tests pass now; the fix was the guard in `load_session`."}],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "usage": {
        "input": 120,
        "output": 18,
        "cacheRead": 91_000,
        "cacheWrite": 300,
        "totalTokens": 91_438,
        "cost": {
            "input": 0.00036,
            "output": 0.00027,
            "cacheRead": 0.0273,
            "cacheWrite": 0.001125,
            "total": 0.029,
        },
    },
    "stopReason": "stop",
    "timestamp": START_MS,
    "responseId": "msg_01BenchmarkAppendResponse",
}


def measure_append(source: Path, work_dir: Path, count: int = APPENDS) -> float:
    """Best time per ``append_message`` (seconds) on a fresh writable copy of ``source``."""
    messages = (APPEND_USER, APPEND_ASSISTANT)

    def run() -> float:
        copy = work_dir / f"append-copy-{source.name}"
        shutil.copyfile(source, copy)
        manager = SessionManager.open(copy)
        try:
            append = manager.append_message
            start = time.perf_counter()
            for index in range(count):
                append(messages[index % 2])
            elapsed = time.perf_counter() - start
        finally:
            manager.close()
            copy.unlink()
        return elapsed / count

    return min(_repeat(run))


def gc_cost(run: Callable[[], object]) -> tuple[float, int]:
    """Seconds the cyclic garbage collector ran during one call of ``run``, and its full collections."""
    spent = [0.0, 0]
    began = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - began[0]
            spent[1] += info["generation"] == 2

    gc.collect()
    gc.callbacks.append(callback)
    try:
        run()
    finally:
        gc.callbacks.remove(callback)
    return spent[0], int(spent[1])


def profile(run: Callable[[], object], top: int = 15) -> str:
    """cProfile of one call of ``run``: the ``top`` functions by cumulative time."""
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def _open_and_build(path: Path) -> None:
    """What the measured call does: open read-only and build the context."""
    SessionManager.open(path, read_only=True).build_session_context()


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, generate the sessions and print the figures; 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--entries", type=int, default=DEFAULT_ENTRIES, help="entries after the header")
    size.add_argument("--quick", action="store_true", help=f"{QUICK_ENTRIES:,} entries")
    parser.add_argument("--out", type=Path, help="keep the generated files in this directory")
    parser.add_argument("--seed", type=int, default=20_260_302, help="random seed of the generator")
    parser.add_argument(
        "--profile", action="store_true", help="print the cProfile summaries even when every target is met"
    )
    args = parser.parse_args(argv)
    entries = QUICK_ENTRIES if args.quick else args.entries

    temp = None
    if args.out is not None:
        out_dir = args.out
        out_dir.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="pi-tui-bench-")
        out_dir = Path(temp.name)
    try:
        return _run(entries, args.seed, out_dir, args.profile)
    finally:
        if temp is not None:
            temp.cleanup()


def _run(entries: int, seed: int, out_dir: Path, always_profile: bool) -> int:
    """Generate the sessions in ``out_dir``, measure and print; 0 when every target is met."""
    start = time.perf_counter()
    session = SessionGenerator(entries, seed).generate()
    big = out_dir / f"session-{entries}.jsonl"
    size = write_session(session, big)
    no_compaction = out_dir / f"session-{entries}-no-compaction.jsonl"
    write_session(session, no_compaction, with_compaction=False)
    small = out_dir / f"session-{SMALL_ENTRIES}.jsonl"
    write_session(SessionGenerator(SMALL_ENTRIES, seed + 1).generate(), small)
    generated = time.perf_counter() - start
    counts = session.counts
    path_length, context_chars = session.active_path_length, session.context_chars
    del session
    gc.collect()

    print(f"session file: {big}")
    print(
        f"  {entries:,} entries + header, {size / 1e6:.1f} MB, generated in {generated:.1f} s "
        f"(Python {sys.version.split()[0]}, orjson {orjson.__version__})"
    )
    print("  " + ", ".join(f"{kind} {count:,}" for kind, count in sorted(counts.items())))
    print(
        f"  active path {path_length:,} entries; the context after the compaction holds about "
        f"{context_chars / 1000:.0f} k characters (~{context_chars // 4000} k tokens)"
    )

    floor = measure_floor(big)
    floor_dropped = measure_floor(big, keep=False)
    floor_no_gc = measure_floor(big, collect=False)
    total, opened, built, messages = measure_open_context(big)
    ratio = total / floor
    tree, roots, nodes = measure_tree(big)
    append_big = measure_append(big, out_dir)
    append_small = measure_append(small, out_dir)
    append_ratio = append_big / append_small
    worst, _, _, worst_messages = measure_open_context(no_compaction)
    gc_open, full_open = gc_cost(lambda: _open_and_build(big))
    manager = SessionManager.open(big, read_only=True)
    gc_tree, full_tree = gc_cost(manager.get_tree)

    ok_total = total < TARGET_OPEN_CONTEXT_S
    ok_ratio = ratio < TARGET_RATIO
    ok_tree = tree < TARGET_TREE_S
    ok_append = append_ratio < TARGET_APPEND_RATIO
    ms, us = 1000, 1e6
    print(f"best of {RUNS} runs after 1 warm-up (time.perf_counter):")
    _line("floor: read + orjson.loads every line (kept)", f"{floor * ms:9.1f} ms")
    _line(
        "  open + build context",
        f"{total * ms:9.1f} ms",
        _target(f"< {TARGET_OPEN_CONTEXT_S * ms:.0f} ms", ok_total),
    )
    _line("  open (read_only=True)", f"{opened * ms:9.1f} ms")
    _line("  build_session_context", f"{built * ms:9.1f} ms", f"{messages:,} context messages")
    _line("ratio (open + context) / floor", f"{ratio:9.2f} x ", _target(f"< {TARGET_RATIO:.0f} x", ok_ratio))
    _line("get_tree", f"{tree * ms:9.1f} ms", _target(f"< {TARGET_TREE_S * ms:.0f} ms", ok_tree))
    _line("  get_tree result", f"{roots:9,} roots", f"{nodes:,} nodes")
    for label, per_append in ((f"{entries:,}", append_big), (f"{SMALL_ENTRIES:,}", append_small)):
        _line(
            f"append per entry, {label}-entry session", f"{per_append * us:9.1f} µs", f"{APPENDS:,} appends"
        )
    target = _target(f"< {TARGET_APPEND_RATIO} x (size-independent)", ok_append)
    _line("append ratio big / small", f"{append_ratio:9.2f} x ", target)
    print("informational:")
    _line(
        "worst case: open + context, no compaction", f"{worst * ms:9.1f} ms", f"{worst_messages:,} messages"
    )
    _line("floor, each object dropped at once", f"{floor_dropped * ms:9.1f} ms")
    _line("floor, kept, garbage collector paused", f"{floor_no_gc * ms:9.1f} ms")
    _line("gc time in one open + build context", f"{gc_open * ms:9.1f} ms", f"{full_open} full collections")
    _line("gc time in one get_tree", f"{gc_tree * ms:9.1f} ms", f"{full_tree} full collections")

    met = ok_total and ok_ratio and ok_tree and ok_append
    if always_profile or not met:
        print()
        print("cProfile of one open + build context (top 15 by cumulative time):")
        print(profile(lambda: _open_and_build(big)))
    if always_profile or not ok_tree:
        print("cProfile of one get_tree (top 15 by cumulative time):")
        print(profile(manager.get_tree))
    return 0 if met else 1


def _line(label: str, value: str, note: str = "") -> None:
    """Print one figure: label, value with its unit, note."""
    print(f"{label + ':':<46}{value}" + (f"   {note}" if note else ""))


def _target(goal: str, ok: bool) -> str:
    """The target note of a figure, with PASS or MISS."""
    return f"target {goal}: {'PASS' if ok else 'MISS'}"


if __name__ == "__main__":
    sys.exit(main())
