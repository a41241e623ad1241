"""The reference MCP servers nobody here wrote, installed with npm for the MCP tests.

pi-tui's MCP client is checked against the servers the MCP project itself publishes, the ones
pi's docs use in their examples, so a passing test means "works with what users run", not
"works with what we imagined":

- ``@modelcontextprotocol/server-everything@2026.8.31`` (:func:`everything_command`, over stdio;
  :func:`everything_http_server`, over streamable HTTP);
- ``@modelcontextprotocol/server-filesystem@2026.8.31`` (:func:`filesystem_command`).

Both are installed once into ``<user cache>/pi-tui-tests/mcp-servers-2026.8.31`` (the cache root
of :mod:`tests.support.real_pi`), under a file lock so parallel xdist workers install once, and
reused offline afterwards (``.installed`` names what was installed; a half-written install is
done again). Each runs as ``node <entry js>``, never through ``npx``, so a test or an
``mcp.json`` entry starts the server without the registry: :func:`mcp_json_entry` gives the
``{"command": node, "args": [entry js, ...]}`` entry.

What server-everything 2026.8.31 offers (from its ``tools/list`` and ``resources/list`` answers
to the SDK client, which declares no sampling, elicitation or roots capability):

- tools, in this order: ``echo`` (``message``: "Echo: <message>"), ``get-annotated-message``,
  ``get-env``, ``get-resource-links``, ``get-resource-reference``, ``get-structured-content``,
  ``get-sum`` (``a``, ``b``: "The sum of 2 and 3 is 5."), ``get-tiny-image`` (text, a PNG image,
  text), ``gzip-file-as-resource``, ``toggle-simulated-logging`` (log notifications every few
  seconds), ``toggle-subscriber-updates``, ``trigger-long-running-operation`` (``duration``,
  ``steps``: a progress notification per step when the call carries a progress token),
  ``simulate-research-query`` (an MCP task); ``get-roots-list`` joins once a client declaring
  ``roots`` has initialized, and the sampling and elicitation tools only for clients declaring
  those capabilities: those later registrations are its ``notifications/tools/list_changed``;
- resources: ``demo://resource/static/document/<file>.md`` (its own docs: architecture.md,
  extension.md, features.md, how-it-works.md, instructions.md, startup.md, structure.md) and
  the templates ``demo://resource/dynamic/text/{resourceId}`` and
  ``demo://resource/dynamic/blob/{resourceId}``; prompts ``simple-prompt``, ``args-prompt``,
  ``completable-prompt``, ``resource-prompt``.

server-filesystem takes its allowed folders as arguments and offers ``read_file`` (deprecated
alias), ``read_text_file``, ``read_media_file``, ``read_multiple_files``, ``write_file``,
``edit_file``, ``create_directory``, ``list_directory``, ``list_directory_with_sizes``,
``directory_tree``, ``move_file``, ``search_files``, ``get_file_info`` and
``list_allowed_directories``.

server-everything's HTTP mode is ``node dist/index.js streamableHttp`` with the port in ``PORT``
(its endpoint is ``/mcp``). It listens on every interface when given only a port, so
:func:`everything_http_server` preloads a few lines of JavaScript (``node --import``) that give
a bare ``listen(port)`` the host 127.0.0.1: the test server is reachable from this machine only.

Without npm the tests that need these servers skip on a developer's machine and fail under CI,
by the rule of :mod:`tests.support.requires`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.npm_cache import npm_install_once
from tests.support.real_pi import _node_version, node_for, tests_cache
from tests.support.requires import unavailable
from tests.support.waiting import poll_for

VERSION = "2026.8.31"
EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
PACKAGES = (f"{EVERYTHING}@{VERSION}", f"{FILESYSTEM}@{VERSION}")
MIN_NODE = (18, 0)
"""The oldest node both packages (and their SDK) declare in ``engines``."""
START_TIMEOUT = 60.0
"""How long :func:`everything_http_server` waits for the server to answer (a cold node on a
loaded CI machine takes a few seconds; a passing run is far below this)."""

# Gives ``server.listen(port)`` / ``listen(port, callback)`` the host 127.0.0.1 (an explicit host
# is kept): server-everything's HTTP mode calls express's ``app.listen(PORT)``.
_LOOPBACK_ONLY_JS = """
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const bare = typeof port === "number" || (typeof port === "string" && /^[0-9]+$/.test(port));
  if (bare && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
"""
LOOPBACK_ONLY_IMPORT = "data:text/javascript," + urllib.parse.quote(_LOOPBACK_ONLY_JS)


def install_root() -> Path:
    """The npm prefix both servers are installed in."""
    return tests_cache() / f"mcp-servers-{VERSION}"


def _install() -> Path:
    """``npm install`` both packages into :func:`install_root` once; return its node_modules."""
    return npm_install_once(install_root(), PACKAGES, (EVERYTHING, FILESYSTEM), "mcp")


@functools.cache
def node_binary() -> str:
    """The node that runs the servers: the one on PATH when it is new enough, else the one the
    real pi 0.73.1 runs on (installed into the test cache by :func:`tests.support.real_pi.node_for`)."""
    system = shutil.which("node")
    found = _node_version(system) if system else None
    if system and found is not None and found >= MIN_NODE:
        return system
    return node_for()


def _entry(package: str) -> Path:
    """The package's ``bin`` script (``dist/index.js`` for both at this version)."""
    script = _install() / package / "dist" / "index.js"
    if not script.is_file():
        unavailable(f"mcp: {package}@{VERSION} is installed without {script}")
    return script


def everything_entry() -> Path:
    return _entry(EVERYTHING)


def filesystem_entry() -> Path:
    return _entry(FILESYSTEM)


def everything_command(*args: str) -> list[str]:
    """``[node, <server-everything entry>, *args]``: stdio unless ``args`` say otherwise."""
    return [node_binary(), str(everything_entry()), *args]


def filesystem_command(*allowed: str | Path) -> list[str]:
    """``[node, <server-filesystem entry>, *allowed folders]``."""
    return [node_binary(), str(filesystem_entry()), *map(str, allowed)]


def everything_server_bin() -> list[str]:
    """The command that starts server-everything over stdio (an alias of :func:`everything_command`)."""
    return everything_command()


def filesystem_server_bin() -> list[str]:
    """The command that starts server-filesystem without folders (give them as arguments)."""
    return filesystem_command()


def mcp_json_entry(command: Sequence[str], **fields: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry for a command list: ``{"command": argv[0], "args": argv[1:]}``
    plus ``fields`` (``exposure``, ``env``...)."""
    return {"command": command[0], "args": list(command[1:]), **fields}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    """True once the port accepts a TCP connection (express listens only once it is ready)."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def stop_group(process: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """SIGTERM the process group ``process`` leads, then SIGKILL what is left after ``timeout``."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout)


def _came_up(process: subprocess.Popen[bytes], port: int) -> bool:
    """Wait until ``port`` accepts connections (True) or the process has ended (False)."""
    poll_for(lambda: _answers(port) or process.poll() is not None, START_TIMEOUT, 0.05)
    return process.poll() is None and _answers(port)


@dataclass(frozen=True)
class HttpServer:
    """A running server-everything over streamable HTTP."""

    url: str
    """``http://127.0.0.1:PORT/mcp``: the ``url`` of an ``mcpServers`` entry."""
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    """Its stdout and stderr (it prints a line per request)."""


@contextlib.contextmanager
def everything_http_server(log_dir: Path | None = None, attempts: int = 3) -> Iterator[HttpServer]:
    """Start server-everything in its streamable HTTP mode on a free loopback port, wait until it
    accepts connections, yield it, stop its process group after.

    The port is picked free and then handed over in ``PORT`` (the server prints only the port it
    was given, so ``PORT=0`` would leave the real one unknown); another process taking it in
    between makes the server exit at once, and then a new port is tried. Its output goes to a
    log file in ``log_dir`` (a temporary folder removed afterwards when None)."""
    command = [node_binary(), "--import", LOOPBACK_ONLY_IMPORT, str(everything_entry()), "streamableHttp"]
    with contextlib.ExitStack() as stack:
        folder = log_dir if log_dir is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        said = ""
        for _attempt in range(attempts):
            port = free_port()
            log = folder / f"server-everything-http-{port}.log"
            with open(log, "wb") as out:
                process = subprocess.Popen(
                    command,
                    env={**os.environ, "PORT": str(port)},
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            try:
                if _came_up(process, port):
                    yield HttpServer(f"http://127.0.0.1:{port}/mcp", port, process, log)
                    return
            finally:
                stop_group(process)
            said = log.read_text(errors="replace")
            if "EADDRINUSE" not in said and "already in use" not in said:
                break
        raise AssertionError(f"server-everything over HTTP did not start: {said[-2000:]}")


try:
    import pytest
except ImportError:  # pragma: no cover - the benchmarks run without pytest
    pass
else:

    @pytest.fixture
    def everything_http(tmp_path: Path) -> Iterator[HttpServer]:
        """A started server-everything over streamable HTTP (import this name into a test module)."""
        with everything_http_server(tmp_path) as server:
            yield server
