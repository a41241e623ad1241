"""Helpers for the "pi opens every file pi-tui writes" checks.

A :class:`Workspace` is one project folder plus a private agent dir in which pi-tui writes a
session through one of its real entry points (the ``pi-tui`` console script in print, json or
rpc mode, the Textual app, or the agent API). :func:`check_pi_continues` then hands copies of
the file to the real pi 0.73.1 and to pi-tui, each continued with the prompt ``next`` against
its own loopback model server, and checks that

- ``pi --session COPY -c -p next`` exits 0 and answers;
- pi's interactive mode opens the file, draws the chat and its footer, /session and /tree, and
  exits 0 on Ctrl+D (print mode never draws the footer, where an empty ``usage`` crashed pi);
- the messages of pi's request equal those of pi-tui's, role by role and text by text
  (system prompt and tool list differ on purpose and are not compared).

The three runs are independent and run at the same time to keep the folder fast.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import queue
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.canonical import Canonical, from_anthropic_request, from_openai_request
from tests.support.model_server import ModelServer
from tests.support.real_pi import DEFAULT_VERSION, PI_VERSIONS, pi_cli, pi_env

PI_TUI = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
PROVIDER = "loop"
MODEL = "m"
CONTEXT_WINDOW = 128_000
NEXT = "next"

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def models_json(base_url: str, api: str, *, reasoning: bool = False) -> dict[str, Any]:
    """One provider ``loop`` with model ``m`` on the loopback server, for pi and pi-tui alike."""
    model = {
        "id": MODEL,
        "name": MODEL,
        "reasoning": reasoning,
        "input": ["text", "image"],
        "contextWindow": CONTEXT_WINDOW,
        "maxTokens": 16000 if reasoning else 4096,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    provider = {"baseUrl": base_url, "api": api, "apiKey": "test-key", "models": [model]}
    return {"providers": {PROVIDER: provider}}


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


@dataclass
class Workspace:
    """A project folder and the agent dir pi-tui writes the session in."""

    root: Path
    api: str = "openai-completions"
    reasoning: bool = False
    tools: str | None = None
    """``--tools`` for every run (writing and continuing, pi and pi-tui); None: the defaults."""
    other_replay: tuple[str, ...] = ()
    """pi versions whose replay of *another model's* replies differs from pi-tui's by rule (pi
    0.73.1 sends their thinking as text and only the call half of a Responses ``call|item`` id;
    pi-tui follows pi 1.x, see pi_tui/ai/transform.py): for a file holding such replies their
    request is held to :func:`same_conversation`, every other version's to the same messages."""
    settings: dict[str, Any] = field(
        default_factory=lambda: {"retry": {"baseDelayMs": 1}, "compaction": {"keepRecentTokens": 40}}
    )

    def __post_init__(self) -> None:
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / "README.md").write_text("# Demo\n\nA tiny demo project.\n")
        self.agent.mkdir(parents=True, exist_ok=True)
        (self.agent / "settings.json").write_text(json.dumps(self.settings))

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def agent(self) -> Path:
        return self.root / "agent"

    def use(self, server: ModelServer) -> None:
        """Point pi-tui's provider ``loop`` at ``server``."""
        (self.agent / "models.json").write_text(
            json.dumps(models_json(server.base_url, self.api, reasoning=self.reasoning))
        )

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update({"PI_CODING_AGENT_DIR": str(self.agent), "HOME": str(self.root / "home"), "NO_COLOR": "1"})
        return env

    def tool_args(self) -> list[str]:
        return ["--tools", self.tools] if self.tools else []

    def pi_tui(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PI_TUI, *_model_args(self), *args],
            cwd=self.project,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def rpc(self, *args: str) -> RpcClient:
        return RpcClient([PI_TUI, *_model_args(self), "--mode", "rpc", *args], self)

    def session_file(self) -> Path:
        """The newest session file (names start with their creation time; a fork is newer)."""
        return max((self.agent / "sessions").rglob("*.jsonl"), key=lambda path: path.name)


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def messages_of(path: Path, role: str | None = None) -> list[dict[str, Any]]:
    found = [e["message"] for e in entries(path) if e.get("type") == "message"]
    return [m for m in found if role is None or m.get("role") == role]


# --- rpc --------------------------------------------------------------------------------------


class RpcClient:
    """``pi-tui --mode rpc`` (or the real pi's) as a subprocess: send commands, wait for events
    and responses."""

    def __init__(self, argv: list[str], workspace: Workspace, env: dict[str, str] | None = None) -> None:
        """``env``: the process's environment (the real pi's, say); pi-tui's by default."""
        self.stderr_path = workspace.root / "rpc-stderr.txt"
        with open(self.stderr_path, "w") as stderr:  # a file: a full stderr pipe would block it
            self.process = subprocess.Popen(
                argv,
                cwd=workspace.project,
                env=workspace.env() if env is None else env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip():
                self.records.put(json.loads(line))

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 30, *, seen: bool = False
    ) -> dict[str, Any]:
        """The next record that matches (with ``seen``: or one already read, e.g. an event that
        came before the response being waited for)."""
        if seen:
            for record in self.seen:
                if match(record):
                    return record
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"rpc: nothing matched in {timeout}s (exit {self.process.poll()}); "
                    f"seen {self.seen[-5:]}; stderr: {self.stderr()[-2000:]}"
                )
            try:
                record = self.records.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(record)
            if match(record):
                return record

    def call(self, command: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """Send a command and return its response, which must be a success."""
        self.send(command)
        response = self.wait_for(
            lambda r: r.get("type") == "response" and r.get("command") == command["type"], timeout
        )
        assert response["success"], response
        return response

    def prompt(self, message: str, timeout: float = 30) -> None:
        """A prompt, run until the agent ends."""
        self.call({"type": "prompt", "message": message})
        self.wait_for(lambda r: r.get("type") == "agent_end", timeout)

    def close(self) -> int:
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        self._reader.join(timeout=5)
        return code

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        code = self.close()
        if exc[0] is None:
            assert code == 0, self.stderr()

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


# --- continuing a file with pi and with pi-tui -------------------------------------------------


@dataclass
class Continuation:
    """One program's ``-p next`` on a copy of the file."""

    returncode: int
    stdout: str
    stderr: str
    requests: list[dict[str, Any]]

    def tool_names(self) -> list[str]:
        """The names of the tools the request offered, in order (every API kind)."""
        assert self.requests, f"no request was sent; stderr:\n{self.stderr[-3000:]}"
        body = self.requests[-1]
        names: list[str] = []
        for tool in body.get("tools") or []:
            if "functionDeclarations" in tool:  # google
                names += [declaration["name"] for declaration in tool["functionDeclarations"]]
            else:  # Chat Completions nests the function; Anthropic and Responses do not
                names.append(tool.get("function", tool).get("name"))
        return names

    def messages(self, api: str) -> Canonical:
        """The request's messages without the system prompt: canonical for Chat Completions and
        Anthropic (see tests/support/canonical.py), the raw wire items for the other two."""
        assert self.requests, f"no request was sent; stderr:\n{self.stderr[-3000:]}"
        body = self.requests[-1]
        if api == "anthropic-messages":
            return from_anthropic_request(body)
        if api == "openai-responses":  # the wire items themselves, the system prompt left out
            return [item for item in body["input"] if item.get("role") not in ("system", "developer")]
        if api == "google-generative-ai":
            return body["contents"]
        return from_openai_request(body)


@dataclass
class Interactive:
    """pi's interactive mode opening the file, then Ctrl+D."""

    returncode: int | None
    screen: str
    shown: list[str] = field(default_factory=list)
    """The :data:`VIEWS` pi drew before it ended."""


def _copy(session: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / session.name
    shutil.copy(session, copy)
    return copy


def _pi_agent_dir(folder: Path, base_url: str, api: str, reasoning: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models.json").write_text(json.dumps(models_json(base_url, api, reasoning=reasoning)))
    return folder


def _pi_env(agent_dir: Path, home: Path, pi: str) -> dict[str, str]:
    return pi_env(agent_dir, home=home, version=pi)


def _model_args(workspace: Workspace) -> list[str]:
    return ["--provider", PROVIDER, "--model", MODEL, *workspace.tool_args()]


def continue_with_pi(
    workspace: Workspace, session: Path, folder: Path, pi: str = DEFAULT_VERSION
) -> Continuation:
    copy = _copy(session, folder)
    with ModelServer() as server:
        agent = _pi_agent_dir(folder / "agent", server.base_url, workspace.api, workspace.reasoning)
        done = subprocess.run(
            [*pi_cli(pi), *_model_args(workspace), "--session", str(copy), "-c", "-p", NEXT],
            cwd=workspace.project,
            env=_pi_env(agent, folder / "home", pi),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Continuation(done.returncode, done.stdout, done.stderr, [r.body for r in server.requests])


def continue_with_pi_tui(workspace: Workspace, session: Path, folder: Path) -> Continuation:
    copy = _copy(session, folder)
    with ModelServer() as server:
        agent = _pi_agent_dir(folder / "agent", server.base_url, workspace.api, workspace.reasoning)
        env = workspace.env()
        env.update({"PI_CODING_AGENT_DIR": str(agent), "HOME": str(folder / "home")})
        done = subprocess.run(
            [PI_TUI, *_model_args(workspace), "--session", str(copy), "-p", NEXT],
            cwd=workspace.project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Continuation(done.returncode, done.stdout, done.stderr, [r.body for r in server.requests])


FOOTER = re.compile(r"%/128k")
"""pi's footer: context use over the window (``0.0%/128k``); drawn once the chat is drawn."""
CRASH = re.compile(
    r"\b(?:TypeError|RangeError|ReferenceError|SyntaxError)\b|Node\.js v\d|^\s+at .+:\d+:\d+\)?$", re.M
)
"""What a JavaScript exception leaves on the terminal."""


VIEWS: list[tuple[str, re.Pattern[str], list[bytes]]] = [
    ("the chat and its footer", FOOTER, [b"/session", b"\r"]),
    (
        "/session (pi's stats: usage and cost of every assistant message)",
        re.compile("Session Info"),
        [b"/tree", b"\r"],
    ),
    ("/tree (every entry, labels, summaries)", re.compile("Session Tree"), [b"\x1b"]),
    # Ctrl+D only once pi has redrawn after the Escape (the tree closed): inside pi's tree Ctrl+D
    # toggles a filter, so sent while a busy machine still showed the tree it was taken as one
    # and pi never ended (CI runs of 2026-11-25 and -27). pi draws nothing by itself meanwhile,
    # so every step also waits for the paint that proved its view to be over (see PAINTED).
    ("the chat again after Escape", re.compile(r"\S"), [b"\x04"]),
]
"""What the interactive check shows, in order: (name, what proves it is drawn, keys sent next).
Each is a place where pi reads fields of our entries without guards."""

PAINTED = 0.3
"""Seconds without output after which pi's paint is over. A view's text can arrive before the
rest of its frame (the tree's title came, Escape went, the tree's last rows then matched the
next step's "any output" and Ctrl+D was taken as a filter key): keys go only once pi is quiet.
pi draws nothing on its own while it waits for keys, so silence is the end of a paint."""


def open_in_pi(
    workspace: Workspace, session: Path, folder: Path, timeout: float = 90, pi: str = DEFAULT_VERSION
) -> Interactive:
    """pi's interactive mode on a copy of the file in a pseudo-terminal: the chat, /session and
    /tree are drawn in turn (see :data:`VIEWS`), then Escape and Ctrl+D end it. pi 1.x draws
    fullscreen (the alternate screen) by default; the same texts prove the same views.

    ``timeout`` only bounds a pi that hangs: every step waits for its screen, and node starting
    pi 1.x's bundle beside two other programs on a loaded two-core machine took over 30 s."""
    copy = _copy(session, folder)
    agent = _pi_agent_dir(folder / "agent", "http://127.0.0.1:9", workspace.api, workspace.reasoning)
    env = _pi_env(agent, folder / "home", pi)
    env.update({"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [*pi_cli(pi), *_model_args(workspace), "--session", str(copy)],
        cwd=workspace.project,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    output = bytearray()
    shown: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        step_start = 0
        last_output = time.monotonic()
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break  # the child closed the terminal
                if not chunk:
                    break
                output += chunk
                last_output = time.monotonic()
            painted = time.monotonic() - last_output >= PAINTED
            if len(shown) < len(VIEWS) and painted:
                name, drawn, keys = VIEWS[len(shown)]
                if drawn.search(strip_ansi(output[step_start:].decode(errors="replace"))):
                    shown.append(name)  # a crash in a later paint still ends pi with a failure code
                    step_start = len(output)
                    for key in keys:
                        os.write(master, key)
                        time.sleep(0.15)  # a key per paint: Enter must not hit the completion list
            if process.poll() is not None and not ready:
                break
        try:
            code = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        os.close(master)
    return Interactive(code, strip_ansi(output.decode(errors="replace")), shown)


@dataclass
class Outcome:
    pi: Continuation
    pi_tui: Continuation
    interactive: Interactive


def continue_both(
    workspace: Workspace, session: Path, pi: str = DEFAULT_VERSION, ours: Continuation | None = None
) -> Outcome:
    """pi ``pi`` (print and interactive) and pi-tui on their own copies of ``session``,
    concurrently. ``ours``: pi-tui's continuation of the same file from a check with another pi
    (it does not depend on the pi version), not run again."""
    base = workspace.root / f"continued-{pi}"
    with ThreadPoolExecutor(max_workers=3) as pool:
        theirs = pool.submit(continue_with_pi, workspace, session, base / "pi", pi)
        if ours is None:
            mine = pool.submit(continue_with_pi_tui, workspace, session, base / "pi-tui")
        shown = pool.submit(open_in_pi, workspace, session, base / "pi-interactive", pi=pi)
        return Outcome(theirs.result(), ours if ours is not None else mine.result(), shown.result())


def null_fields(session: Path) -> list[str]:
    """Where a file holds ``null`` other than a root's ``parentId``: pi never writes one there
    (its JSON leaves unset fields out), so a reader of pi's files may not expect it."""
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if value is None:
            found.append(path)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")

    for line, entry in enumerate(entries(session), start=1):
        walk({key: value for key, value in entry.items() if key != "parentId"}, f"line {line}")
    return found


def check_pi_continues(
    workspace: Workspace, session: Path, pi: str = DEFAULT_VERSION, ours: Continuation | None = None
) -> Outcome:
    """The acceptance check of issue 11 for one file pi-tui wrote (see the module docstring),
    with the real pi ``pi`` (a version of tests/support/real_pi.py). ``ours``: pi-tui's
    continuation from the check of the same file with another pi (see :func:`continue_both`)."""
    assert not null_fields(session), f"{session}: null where pi writes none: {null_fields(session)}"
    outcome = continue_both(workspace, session, pi, ours)
    version = pi
    pi, ours, shown = outcome.pi, outcome.pi_tui, outcome.interactive
    assert pi.returncode == 0, f"pi {version} -p exited {pi.returncode}:\n{pi.stderr[-3000:]}"
    assert pi.stdout.strip() == f"echo: {NEXT}", pi.stdout + pi.stderr
    assert ours.returncode == 0, f"pi-tui -p exited {ours.returncode}:\n{ours.stderr[-3000:]}"
    assert len(pi.requests) == len(ours.requests) == 1
    expected = ours.messages(workspace.api)
    if workspace.api in ("openai-completions", "anthropic-messages"):
        assert expected[-1] == {"role": "user", "parts": [("text", NEXT)]}
    else:
        assert NEXT in json.dumps(expected[-1]), expected[-1]
    if version in workspace.other_replay:
        assert same_conversation(pi.messages(workspace.api)) == same_conversation(expected)
    else:
        assert pi.messages(workspace.api) == expected
    screen = shown.screen[-3000:]
    assert shown.returncode == 0, f"pi {version}'s interactive mode exited {shown.returncode}:\n{screen}"
    missing = [name for name, _, _ in VIEWS if name not in shown.shown]
    assert not missing, f"pi {version}'s interactive mode never drew {missing}:\n{screen}"
    assert not CRASH.search(shown.screen), f"pi {version}'s interactive mode crashed:\n{screen}"
    return outcome


def same_conversation(messages: Canonical) -> Canonical:
    """Chat Completions messages (canonical) without what a replay rule may change in another
    model's replies: the assistant's text (where its thinking may be folded in) and the call ids,
    numbered instead in order of appearance (a result must still answer its own call)."""
    numbers: dict[str, int] = {}
    shaped: Canonical = []
    for message in messages:
        if message["role"] == "assistant":
            calls = [part for part in message["parts"] if part[0] == "toolCall"]
            numbers.update((call[1], len(numbers)) for call in calls)
            shaped.append({"role": "assistant", "calls": [(numbers[c[1]], c[2], c[3]) for c in calls]})
        elif message["role"] == "toolResult":
            shaped.append({**message, "id": numbers.get(message["id"], message["id"])})
        else:
            shaped.append(message)
    return shaped


@contextlib.contextmanager
def serving(workspace: Workspace, *replies: Any) -> Iterator[ModelServer]:
    """A model server for the writing run, with pi-tui's models.json pointing at it."""
    with ModelServer(*replies) as server:
        workspace.use(server)
        yield server


def check_with_every_pi(workspace: Workspace, session: Path) -> dict[str, Outcome | BaseException]:
    """:func:`check_pi_continues` with every pi of :data:`PI_VERSIONS`, pi-tui's continuation
    run once for all of them; a version's failure is kept (under its version) and the next still
    checked, for the caller to raise or report per version."""
    checked: dict[str, Outcome | BaseException] = {}
    ours: Continuation | None = None
    for version in PI_VERSIONS:
        try:
            outcome = check_pi_continues(workspace, session, version, ours)
        except Exception as failure:
            checked[version] = failure
        else:
            checked[version] = outcome
            ours = outcome.pi_tui
    return checked


def raise_first_failure(checked: dict[str, Outcome | BaseException]) -> None:
    """Raise the failure of the first pi whose check failed, if any."""
    for outcome in checked.values():
        if isinstance(outcome, BaseException):
            raise outcome


def require_node(pi: str = DEFAULT_VERSION) -> None:
    """pi ``pi`` installed and a node to run it: skipped without them here, failed under CI."""
    pi_cli(pi)
