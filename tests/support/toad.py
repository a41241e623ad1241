"""Toad, a front end for ACP agents that pi-tui's authors did not write, for the ACP tests.

Toad (PyPI ``batrachian-toad``, Will McGugan's Textual app) starts an Agent Client Protocol agent
as a subprocess and gives it a chat screen. ``toad acp "<command>" <project>`` runs any command
as the agent, with no registry entry, and that is how :func:`start_in_tmux` launches it: a
passing test means a person using Toad can talk to ``pi-tui acp``, not only that our own client
agrees with our own agent.

**Python.** Every Toad release declares ``Requires-Python >= 3.14``, and none is on this
project's machines (Debian 12 has 3.11; pyenv has up to 3.13). Toad 0.6.20's code parses on 3.13;
what it needs from 3.14 is found by running it:

- lazily evaluated annotations (PEP 649): ``toad/app.py`` annotates a function with a class it
  imports further down, a ``NameError`` at import on 3.13;
- ``toad/jsonrpc.py`` reads the types of its handlers' parameters with ``inspect.signature`` and
  ``eval``\\ s any that are strings *in its own module*, so annotations kept as strings name
  things (``protocol.SessionUpdate``) it cannot see;
- ``concurrent.futures.InterpreterPoolExecutor``, new in 3.14, in its ``@`` file picker.

The install therefore adds a small start-up module of ours to Toad's virtual environment
(:data:`_STARTUP_SOURCE`, loaded by a ``.pth`` file). On a Python older than 3.14 it compiles
Toad's own modules with ``from __future__ import annotations`` (annotations stay strings, as
unevaluated as 3.14 leaves them), makes ``toad.jsonrpc`` evaluate them where they were written
(``eval_str``), and gives 3.13 a thread pool under the 3.14 name. On every Python it turns off
Toad's version check (see **Quiet**). Toad's files are not changed. :func:`toad_python` picks
the interpreter: ``$PI_TUI_TOAD_PYTHON``, else ``python3.14`` or ``python3.13`` on PATH, else
pyenv's newest 3.14 or 3.13.

**Install.** Once into ``<user cache>/pi-tui-tests/toad-<VERSION>/venv`` (the cache root of
:mod:`tests.support.real_pi`), under a file lock so parallel xdist workers install once.
``.installed`` names the release and the interpreter: a different interpreter, or a half-written
install, is installed again; a start-up module that differs from :data:`_STARTUP_SOURCE` is
written again. ``toad --version`` must then print :data:`VERSION` (it imports the whole app, so a
broken start-up module shows here, not in a test's screen). Without a usable Python, or when pip
fails, the tests skip on a developer's machine and fail under CI (:mod:`tests.support.requires`).

**Quiet.** Toad posts anonymous usage events to a web service unless told not to, may raise
desktop notifications and sounds, and a second after it starts fetches its newest version number
from its web site (no setting stops that one: the start-up module makes the check fail at once,
as it does offline, without a DNS query). :func:`toad_env` gives every run its own XDG folders
with a settings file that turns the rest off, so nothing leaves the machine and the user's Toad
settings are never read.

:func:`run_stand_in_agent` (``python -m tests.support.toad stand-in-agent``) is a minimal ACP
agent in plain JSON lines, so the harness itself (this Toad on this Python, in tmux) can be
checked apart from ``pi-tui acp``: when both tests fail, Toad is the suspect; when only the
pi-tui one does, pi-tui is.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from tests.support.real_pi import tests_cache
from tests.support.requires import unavailable
from tests.support.tmux import TmuxPane

PACKAGE = "batrachian-toad"
VERSION = "0.6.20"
NATIVE_PYTHON = (3, 14)
"""The Python Toad declares; on it Toad runs as published."""
MIN_PYTHON = (3, 13)
"""The oldest Python Toad was seen to run on here with :data:`_STARTUP_SOURCE` (a full conversation
in tmux); 3.12 imports it too but was not tried further."""
PYTHON_ENV = "PI_TUI_TOAD_PYTHON"
"""An interpreter to use instead of the one :func:`toad_python` would find."""
REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
"""How long :func:`start_in_tmux` waits for the agent to be ready (Toad compiles its modules
at every start on 3.13 and pi-tui loads its tools; a loaded CI machine takes seconds, not this)."""

_STARTUP_MODULE = "pi_tui_tests_toad_startup"
_STARTUP_SOURCE = '''\
"""Toad as pi-tui's tests run it (written by tests/support/toad.py there, loaded by a .pth file).

Only modules of the ``toad`` package are touched, and only as they are compiled and run: the
files on disk stay as published.

- No version check: Toad asks its web site for its newest release a second after it starts; the
  tests run offline, so the check fails at once, as Toad already allows it to.
- On a Python older than 3.14, which Toad declares: annotations are compiled as strings (3.14
  evaluates them only when asked; Toad annotates with names defined later), its JSON-RPC server
  gets its handlers' parameter types evaluated where the handlers were written, and
  ``concurrent.futures`` gets 3.14's InterpreterPoolExecutor name for a thread pool.
"""

import __future__
import concurrent.futures
import functools
import importlib.abc
import importlib.machinery
import inspect
import sys

_OLD_PYTHON = sys.version_info < (3, 14)
_KEEP_ANNOTATIONS_AS_STRINGS = __future__.annotations.compiler_flag


class _ToadLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        if not _OLD_PYTHON:
            return super().get_code(fullname)
        # From source every time: the bytecode pip cached was compiled without the flag.
        path = self.get_filename(fullname)
        return compile(
            self.get_data(path), path, "exec", flags=_KEEP_ANNOTATIONS_AS_STRINGS, dont_inherit=True
        )

    def exec_module(self, module):
        name = module.__name__
        if name == "toad" and not hasattr(concurrent.futures, "InterpreterPoolExecutor"):
            concurrent.futures.InterpreterPoolExecutor = concurrent.futures.ThreadPoolExecutor
        super().exec_module(module)
        if name == "toad.jsonrpc" and _OLD_PYTHON:
            module.signature = functools.partial(inspect.signature, eval_str=True)
        elif name == "toad.version":
            failed = module.VersionCheckFailed

            async def check_version():
                raise failed("no version check in pi-tui's offline tests")

            module.check_version = check_version


class _ToadFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "toad" and not fullname.startswith("toad."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _ToadLoader(fullname, spec.origin)
        return spec


sys.meta_path.insert(0, _ToadFinder())
'''

SETTINGS = {
    "statistics": {"allow_collect": False},
    "notifications": {"system": "never", "enable_sounds": False, "blink_title": False},
}
"""Toad's own settings file for every run: no usage events, no desktop notifications or sounds."""


# --- the interpreter -------------------------------------------------------------------------------


def _version_of(python: str) -> tuple[str, tuple[int, int, int]] | None:
    """The real executable behind ``python`` (pyenv shims resolve here) and its version."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(sys.executable); print(*sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 2:
        return None
    major, minor, micro = (int(part) for part in lines[1].split())
    return lines[0], (major, minor, micro)


def _candidates() -> Iterator[str]:
    if chosen := os.environ.get(PYTHON_ENV):
        yield chosen
        return
    for name in ("python3.14", "python3.13"):
        if found := shutil.which(name):
            yield found
    # the account's own home, not $HOME: tests point HOME at a scratch folder
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".pyenv")
    for minor in ("3.14", "3.13"):
        for folder in sorted((pyenv_root / "versions").glob(f"{minor}*"), reverse=True):
            yield str(folder / "bin" / f"python{minor}")


@functools.cache
def toad_python() -> tuple[str, tuple[int, int, int]]:
    """The interpreter Toad runs on and its version, or skip (fail under CI) saying what to get."""
    tried: list[str] = []
    for candidate in _candidates():
        found = _version_of(candidate)
        tried.append(f"{candidate}: {'not runnable' if found is None else '.'.join(map(str, found[1]))}")
        if found is not None and found[1][:2] >= MIN_PYTHON:
            return found
    unavailable(
        f"toad: no Python >= {'.'.join(map(str, MIN_PYTHON))} for {PACKAGE} {VERSION} "
        f"(set {PYTHON_ENV}, or install one with pyenv; tried: {'; '.join(tried) or 'nothing'})"
    )


# --- the install -----------------------------------------------------------------------------------


def install_root() -> Path:
    """The folder Toad's virtual environment and its markers live in."""
    return tests_cache() / f"toad-{VERSION}"


def _run(argv: list[str], what: str, timeout: float = 900) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        unavailable(f"toad: {what} failed ({done.returncode}): {(done.stderr or done.stdout)[-2000:]}")
    return done.stdout


def _site_packages(venv: Path) -> Path:
    """Where the start-up module goes (``lib/pythonX.Y/site-packages`` of the venv)."""
    (found,) = (venv / "lib").glob("python3.*/site-packages")
    return found


@functools.cache
def install() -> Path:
    """Install Toad once (see the module docstring) and return its ``toad`` script."""
    python, version = toad_python()
    root = install_root()
    venv = root / "venv"
    toad = venv / "bin" / "toad"
    marker = root / ".installed"
    wanted = f"{PACKAGE}=={VERSION}\n{python}\n"

    def packages_installed() -> bool:
        return marker.is_file() and marker.read_text() == wanted and toad.is_file()

    def startup_current() -> bool:
        startup = _site_packages(venv) / f"{_STARTUP_MODULE}.py"
        return startup.is_file() and startup.read_text() == _STARTUP_SOURCE

    if packages_installed() and startup_current():
        return toad
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:  # parallel test processes install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not packages_installed():
            marker.unlink(missing_ok=True)
            shutil.rmtree(venv, ignore_errors=True)
            _run([python, "-m", "venv", str(venv)], f"making a virtual environment with {python}")
            # Toad declares Python >= 3.14; on 3.13 it runs with the start-up module.
            _run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                 "--disable-pip-version-check", "--ignore-requires-python", f"{PACKAGE}=={VERSION}"],
                f"pip install {PACKAGE}=={VERSION} on Python {'.'.join(map(str, version))}",
            )  # fmt: skip
        if not startup_current():  # new, or changed here since the last install
            site = _site_packages(venv)
            (site / f"{_STARTUP_MODULE}.py").write_text(_STARTUP_SOURCE)
            (site / f"{_STARTUP_MODULE}.pth").write_text(f"import {_STARTUP_MODULE}\n")
        shown = _run([str(toad), "--version"], "toad --version", timeout=120).strip()
        if shown != VERSION:
            unavailable(f"toad: --version printed {shown!r}, expected {VERSION}")
        marker.write_text(wanted)
    return toad


# --- running it ------------------------------------------------------------------------------------


def toad_env(state: Path) -> dict[str, str]:
    """Toad's own config, data and state folders under ``state``, with :data:`SETTINGS` written.

    Only the three folders Toad uses move (``XDG_CACHE_HOME`` stays: the test cache is found
    through it)."""
    folders = {name: state / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    config = folders["XDG_CONFIG_HOME"] / "toad"
    config.mkdir(exist_ok=True)
    (config / "toad.json").write_text(json.dumps(SETTINGS, indent=2))
    return {name: str(folder) for name, folder in folders.items()}


def ready(title: str) -> Callable[[str], bool]:
    """A screen check: Toad has finished the agent's ``initialize`` and ``session/new``.

    Until then the footer's agent box says "Initializing…"; afterwards it names the agent by the
    ``--title`` it was given."""

    def check(screen: str) -> bool:
        return "Initializing" not in screen and title in screen and "How can I help you" in screen

    return check


@contextlib.contextmanager
def start_in_tmux(
    agent_command: str,
    *,
    project: Path,
    state: Path,
    title: str,
    env: Mapping[str, str] | None = None,
    width: int = 160,
    height: int = 50,
) -> Iterator[TmuxPane]:
    """``toad acp <agent_command> <project>`` in a tmux pane, once the agent is ready; the pane
    (Toad, and with it the agent, whose stdin closes) is ended on leaving.

    ``agent_command`` is a shell command line (Toad runs it with the shell, in ``project``, with
    Toad's environment: ``env`` reaches the agent too). Toad gets its own folders under ``state``.
    """
    toad = install()
    folders = toad_env(state)
    stderr = agent_stderr(state)
    pane = TmuxPane.start(
        [str(toad), "acp", "--title", title, f"{agent_command} 2>>{shlex.quote(str(stderr))}", str(project)],
        cwd=project,
        env={**folders, **(env or {})},
        width=width,
        height=height,
    )
    try:
        try:
            pane.wait_for(ready(title), f"Toad to start {agent_command!r} and open a session", START_TIMEOUT)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{what_toad_saw(state)}") from None
        yield pane
    finally:
        pane.kill()


def agent_stderr(state: Path) -> Path:
    """Where :func:`start_in_tmux` sends the agent's stderr (Toad reads it but shows none of it)."""
    return state / "agent.stderr"


def what_toad_saw(state: Path, limit: int = 4000) -> str:
    """The ends of the agent's stderr and of Toad's protocol log (every JSON-RPC line both ways,
    which Toad writes under its state folder), for a failure message: a silent or dead agent
    leaves Toad saying "Initializing…" and nothing more."""
    parts = []
    stderr = agent_stderr(state)
    parts.append(
        "the agent's stderr:\n"
        + (stderr.read_text(errors="replace")[-limit:] if stderr.exists() else "(none)")
    )
    for log in sorted((state / "xdg_state_home" / "toad" / "logs").glob("*.txt")):
        parts.append(f"Toad's protocol log {log.name}:\n" + log.read_text(errors="replace")[-limit:])
    return "\n".join(parts)


def send_prompt(pane: TmuxPane, text: str) -> None:
    """Type ``text`` into Toad's prompt and send it (Enter sends; Shift+Enter would add a line)."""
    pane.type(text)
    pane.wait_for(lambda screen: text in screen, f"the typed prompt {text!r}")
    pane.press("Enter")


# --- a stand-in agent ------------------------------------------------------------------------------


def stand_in_agent_command() -> str:
    """The shell command that runs :func:`run_stand_in_agent` with this interpreter."""
    python = shlex.quote(sys.executable)
    return f"PYTHONPATH={shlex.quote(str(REPO))} {python} -m tests.support.toad stand-in-agent"


def stand_in_answer(number: int, prompt: str) -> str:
    """What the stand-in answers to its ``number``-th prompt (from 1): the prompt in capitals, so
    the answer on screen cannot be the prompt's own echo."""
    return f"Stand-in answer {number}: {prompt.upper()}"


def run_stand_in_agent() -> None:
    """Serve ACP v1 on stdin/stdout: ``initialize``, ``session/new``, and ``session/prompt``
    answered with :func:`stand_in_answer` streamed as three ``agent_message_chunk`` updates.
    Anything else asked is answered "method not found"; notifications are ignored."""
    prompts = 0

    def send(message: dict[str, object]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, ident, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None or ident is None:  # a response to us, or a notification
            continue
        if method == "initialize":
            send({"id": ident, "result": {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": False},
                "authMethods": [],
                "agentInfo": {"name": "stand-in", "version": "1"},
            }})  # fmt: skip
        elif method == "session/new":
            send({"id": ident, "result": {"sessionId": "stand-in-session"}})
        elif method == "session/prompt":
            prompts += 1
            said = " ".join(
                block.get("text", "") for block in params.get("prompt", []) if block.get("type") == "text"
            )
            answer = stand_in_answer(prompts, said)
            third = len(answer) // 3
            for piece in (answer[:third], answer[third : 2 * third], answer[2 * third :]):
                chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": piece}}
                send(
                    {
                        "method": "session/update",
                        "params": {"sessionId": params.get("sessionId"), "update": chunk},
                    }
                )
            send({"id": ident, "result": {"stopReason": "end_turn"}})
        else:
            send({"id": ident, "error": {"code": -32601, "message": f"stand-in: no method {method}"}})


if __name__ == "__main__":
    if sys.argv[1:] != ["stand-in-agent"]:
        sys.exit("usage: python -m tests.support.toad stand-in-agent")
    run_stand_in_agent()
