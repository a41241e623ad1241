"""``pi-tui serve`` under load (issues 19 and 28), all on loopback, every loop bounded.

First, memory (issue 28): the server's RSS (``/proc/<pid>/status`` VmRSS, and VmHWM, the peak)
before and after one 100 KB reply streamed in small deltas, and again with 100 SSE clients on
raw sockets that never read. Targets: under 300 MB after the reply, under 500 MB with the 100
clients (each figure from a fresh server). Then a 100 MB request body (the answer and the RSS
after) and 100 connections that send their headers a byte every half second (how long they are
held, up to 60 s). ``--memory-only`` stops there.

Then three latency scenarios, each against a fresh ``pi-tui serve`` process:

1. ``--sessions`` sessions streaming at once (default 20), one SSE client on each;
2. ``--clients`` SSE clients on one session (default 50);
3. both at once: the sessions of (1), one of them with the clients of (2).

The model is a small provider process of this script's own speaking the Chat Completions
stream: every text delta is ``<t=SECONDS>``, the wall clock just before the chunk is written.
A client that receives a ``message_update`` carrying that delta takes ``now - t``: the delay from
the provider's write, through the agent (parsing, its event), the server (numbering, encoding,
the SSE write) to the client, an upper bound of "agent event to client". Each client also keeps
every ``id:`` it got, so the script checks that each client saw each seq exactly once and in
order (consecutive from its snapshot), and that the clients of one session saw the same events.

Figures printed: events delivered, delay p50 / p95 / p99 / max, the checks, and the server's CPU
time. Target: p99 <= 50 ms on 2 cores. Last, the 50,000-entry session of benchmarks/big_session.py
opened through the server: the open, the page's tree fetch and a client's first snapshot.

Run: ``python benchmarks/serve_load.py [--memory-only] [--sessions 20] [--clients 50] [--deltas 200]
[--interval 0.02]``. The server is ``python -m pi_tui`` of this interpreter, so ``PYTHONPATH``
pointing at another checkout measures that one (the "before" figures of issue 28).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "load-token-0123456789"


# --- the provider ------------------------------------------------------------------------------


def provider(port_queue: Any, deltas: int, interval: float) -> None:
    """A Chat Completions streaming server: ``deltas`` timestamped text deltas per request."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            base = {"id": "chatcmpl-load", "object": "chat.completion.chunk", "created": 0, "model": "m"}

            def send(payload: Any) -> None:
                body = b"data: " + json.dumps(payload).encode() + b"\n\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
                self.wfile.flush()

            def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

            try:
                send(chunk({"role": "assistant", "content": ""}))
                for _ in range(deltas):
                    time.sleep(interval)
                    send(chunk({"content": f"<t={time.time():.6f}>"}))
                send(chunk({}, "stop"))
                usage = {"prompt_tokens": 10, "completion_tokens": deltas, "total_tokens": 10 + deltas}
                send({**base, "choices": [], "usage": usage})
                body = b"data: [DONE]\n\n"
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_queue.put(server.server_address[1])
    server.serve_forever()


def reply_provider(port_queue: Any, size: int, delta: int) -> None:
    """A Chat Completions streaming server: every reply is ``size`` characters of words in
    deltas of ``delta`` characters, written as fast as the socket takes them."""
    text = "".join(f"w{n:07d} " for n in range(size // 9 + 1))[:size]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            base = {"id": "chatcmpl-mem", "object": "chat.completion.chunk", "created": 0, "model": "m"}

            def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
                payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                return b"data: " + json.dumps(payload).encode() + b"\n\n"

            events = [chunk({"role": "assistant", "content": ""})]
            events += [chunk({"content": text[i : i + delta]}) for i in range(0, len(text), delta)]
            events.append(chunk({}, "stop"))
            events.append(b"data: [DONE]\n\n")
            try:
                for start in range(0, len(events), 50):  # a few network writes' worth at a time
                    body = b"".join(events[start : start + 50])
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_queue.put(server.server_address[1])
    server.serve_forever()


# --- the server --------------------------------------------------------------------------------


def start_server(agent_dir: Path, project: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_CACHE_DIR": str(agent_dir / "cache")}
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "serve", "--port", "0", "--token", TOKEN],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    url = line.split("listening on ", 1)[1].strip()
    return process, url


def vm_mb(pid: int, field: str) -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (the peak) of ``pid``, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def wait_idle(http: httpx.Client, session: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    time.sleep(0.2)
    while http.get(f"/sessions/{session}").json()["runtime"] != "idle":
        if time.monotonic() > deadline:
            raise RuntimeError("the reply did not end")
        time.sleep(0.1)


def silent_clients(url: str, session: str, count: int) -> list[socket.socket]:
    """``count`` event-stream requests on raw sockets that will never read a byte."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sockets = []
    for _ in range(count):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect((host, int(port)))
        raw.sendall(
            f"GET /sessions/{session}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
        )
        sockets.append(raw)
    return sockets


def memory(agent_dir: Path, project: Path, clients: int) -> None:
    """Issue 28's figures: RSS after one 100 KB reply, and with ``clients`` silent SSE clients."""
    print("\nmemory: one 100 KB reply in 20-character deltas (VmRSS now / VmHWM peak, MB)")
    for silent in (0, clients):
        process, url = start_server(agent_dir, project)
        held: list[socket.socket] = []
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
                session = http.post("/sessions", json={}).json()["id"]
                if silent:
                    held = silent_clients(url, session, silent)
                    time.sleep(1)  # their snapshots are sent (or stuck) before the reply
                before = vm_mb(process.pid, "VmRSS")
                started = time.perf_counter()
                http.post(f"/sessions/{session}/commands", json={"type": "prompt", "message": "go"})
                wait_idle(http, session)
                elapsed = time.perf_counter() - started
                time.sleep(1)
                after, peak = vm_mb(process.pid, "VmRSS"), vm_mb(process.pid, "VmHWM")
            target = 500 if silent else 300
            who = f"{silent} SSE clients that never read" if silent else "no client"
            print(
                f"  {who:<32} before {before:7.0f}  after {after:7.0f}  peak {peak:7.0f}"
                f"   ({elapsed:.1f} s; target < {target} MB: {'yes' if max(after, peak) < target else 'NO'})"
            )
        finally:
            for raw in held:
                raw.close()
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def limits(agent_dir: Path, project: Path) -> None:
    """Issue 28's item 8 on a fresh server: a 100 MB body (answered how, and the RSS after), and
    100 connections sending their headers a byte every half second (how long they are held)."""
    process, url = start_server(agent_dir, project)
    host, port = url.removeprefix("http://").rsplit(":", 1)
    try:
        before = vm_mb(process.pid, "VmRSS")
        raw = socket.create_connection((host, int(port)))
        raw.sendall(
            f"POST /sessions HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n".encode()
        )
        started = time.perf_counter()
        raw.settimeout(0.01)
        piece, sent, answer = b" " * 65536, 0, b""
        while sent < 100_000_000 and not answer:
            try:
                answer = raw.recv(200)
            except TimeoutError:
                pass
            except ConnectionResetError:
                break
            try:
                raw.sendall(piece[: 100_000_000 - sent])
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        raw.settimeout(30)
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            answer = answer or raw.recv(200)
        raw.close()
        status = answer.split(b"\r\n", 1)[0].decode(errors="replace") or "no answer"
        took = time.perf_counter() - started
        after, peak = vm_mb(process.pid, "VmRSS"), vm_mb(process.pid, "VmHWM")
        print(f"\na 100 MB body: {status!r} after {sent / 1e6:.0f} MB sent, {took:.1f} s")
        print(f"  RSS {before:.0f} -> {after:.0f} MB (peak {peak:.0f})")
        slow = [socket.create_connection((host, int(port))) for _ in range(100)]
        request = f"GET /sessions HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: {'a' * 200}\r\n".encode()
        for each in slow:
            each.setblocking(False)
        started = time.perf_counter()
        open_ = set(range(len(slow)))
        index = 0
        while open_ and time.perf_counter() - started < 60:
            for number in list(open_):
                try:
                    slow[number].send(request[index : index + 1])
                    if slow[number].recv(1) == b"":
                        open_.discard(number)
                except BlockingIOError:
                    pass
                except OSError:
                    open_.discard(number)
            index = min(index + 1, len(request) - 1)
            time.sleep(0.5)
        held = time.perf_counter() - started
        for each in slow:
            each.close()
        print(
            f"100 connections sending headers a byte every 0.5 s: "
            f"{100 - len(open_)} closed by the server within {held:.0f} s, {len(open_)} still held"
        )
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the clients -------------------------------------------------------------------------------


class Client:
    def __init__(self, session: str) -> None:
        self.session = session
        self.ids: list[int] = []
        self.names: list[str] = []
        self.delays: list[float] = []
        self.snapshot: int | None = None
        self.ready = asyncio.Event()
        self.done = asyncio.Event()


async def follow(http: httpx.AsyncClient, client: Client, runs: int) -> None:
    """Read the session's events until ``runs`` agent runs have ended."""
    ended = 0
    async with http.stream("GET", f"/sessions/{client.session}/events") as response:
        seq: int | None = None
        name = "message"
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                received = time.time()
                assert seq is not None
                client.ids.append(seq)
                client.names.append(name)
                if name == "snapshot":
                    client.snapshot = seq
                    client.ready.set()
                elif name == "message_update":
                    data = json.loads(line[6:])
                    delta = data.get("assistantMessageEvent", {}).get("delta") or ""
                    if delta.startswith("<t="):
                        client.delays.append(received - float(delta[3:-1]))
                elif name == "agent_end":
                    ended += 1
                    if ended >= runs:
                        break
                seq, name = None, "message"
    client.done.set()


def check(clients: list[Client]) -> list[str]:
    """Every client: seqs consecutive from its snapshot, none twice; same session, same seqs."""
    problems = []
    by_session: dict[str, list[int]] = {}
    for client in clients:
        ids = client.ids
        if ids != list(range(ids[0], ids[0] + len(ids))):
            problems.append(f"client of {client.session[:8]}: a gap or a duplicate")
        previous = by_session.setdefault(client.session, ids)
        common = min(len(previous), len(ids))
        if previous[:common] != ids[:common]:
            problems.append(f"clients of {client.session[:8]} disagree")
    return problems


async def scenario(url: str, counts: list[int]) -> tuple[list[Client], float]:
    """One session per item of ``counts``, with that many clients; every session prompted at once."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    limits = httpx.Limits(max_connections=sum(counts) + 20, max_keepalive_connections=40)
    timeout = httpx.Timeout(30, read=None)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=timeout) as http:
        ids = [(await http.post("/sessions", json={})).json()["id"] for _ in counts]
        clients = [Client(session) for session, count in zip(ids, counts, strict=True) for _ in range(count)]
        tasks = [asyncio.create_task(follow(http, client, 1)) for client in clients]
        await asyncio.gather(*(client.ready.wait() for client in clients))
        started = time.perf_counter()
        for session in ids:
            await http.post(f"/sessions/{session}/commands", json={"type": "prompt", "message": "stream"})
        await asyncio.wait_for(asyncio.gather(*tasks), 300)
        return clients, time.perf_counter() - started


def report(title: str, clients: list[Client], elapsed: float, cpu: float) -> None:
    delays = sorted(delay for client in clients for delay in client.delays)
    events = sum(len(client.ids) for client in clients)
    problems = check(clients)
    q = statistics.quantiles(delays, n=100)
    print(f"\n{title}")
    print(f"  events delivered      {events:,} to {len(clients)} clients in {elapsed:.1f} s")
    print(f"  deltas timed          {len(delays):,}")
    print(
        f"  delay provider->client p50 {q[49] * 1000:.1f} ms  p95 {q[94] * 1000:.1f} ms  "
        f"p99 {q[98] * 1000:.1f} ms  max {delays[-1] * 1000:.1f} ms   (target p99 <= 50 ms)"
    )
    print(f"  every seq once, in order, same for all clients: {problems if problems else 'yes'}")
    print(f"  server CPU            {cpu:.1f} s")


def big_session(url: str, root: Path, project: Path) -> None:
    """The 50,000-entry session of issue 2 (benchmarks/big_session.py) opened through the
    server: open, the page's tree fetch (current branch's entries only), a client's snapshot."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from big_session import generate

    path = root / "big.jsonl"
    size = generate(path, cwd=str(project))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
        started = time.perf_counter()
        session = http.post("/sessions", json={"path": str(path)}).json()["id"]
        opened = time.perf_counter() - started
        started = time.perf_counter()
        tree = http.get(f"/sessions/{session}/tree", params={"entries": "path"})
        fetched = time.perf_counter() - started
        started = time.perf_counter()
        with http.stream("GET", f"/sessions/{session}/events") as events:
            for line in events.iter_lines():
                if line.startswith("data: "):
                    snapshot_bytes = len(line)
                    break
        snapshot = time.perf_counter() - started
    page = page_paint(url, session)
    print(f"\nthe 50,000-entry session ({size / 1e6:.1f} MB) through the server")
    print(f"  POST /sessions {{path}}  {opened:.2f} s")
    print(f"  GET /tree?entries=path {fetched:.2f} s, {len(tree.content) / 1e6:.1f} MB (the page's load)")
    print(f"  first snapshot         {snapshot:.2f} s, {snapshot_bytes / 1e6:.1f} MB")
    print(f"  the page in Chromium   {page}")


def page_paint(url: str, session: str) -> str:
    """Open the page on ``session`` in headless Chromium: seconds until its chat shows the last
    reply and the tree has rows, and how many entries are in the document then."""
    sys.path.insert(0, str(ROOT))
    from tests.support.browser import chromium

    with chromium(1400, 900) as driver:
        started = time.perf_counter()
        driver.get(f"{url}/?token={TOKEN}#session={session}")
        ready = (
            "return document.querySelectorAll('#tree .row').length > 0 && "
            "document.getElementById('conversation').innerText.includes('closing-words-of-the-last-reply')"
        )
        while not driver.execute_script(ready):
            if time.perf_counter() - started > 120:
                seen = driver.execute_script(
                    "return JSON.stringify({session: window.piServe && window.piServe.state.current,"
                    " rows: document.querySelectorAll('#tree .row').length,"
                    " chat: document.getElementById('conversation').innerText.slice(-300)})"
                )
                return f"not drawn after 120 s: {seen} {driver.get_log('browser')[-3:]}"
            time.sleep(0.05)
        painted = time.perf_counter() - started
        count = driver.execute_script("return document.querySelectorAll('#conversation .entry').length")
        return f"{painted:.2f} s to the last reply and the tree ({count} entries in the document)"


def write_models(agent_dir: Path, port: int) -> None:
    """The agent dir's models.json and settings.json: the one model is the provider on ``port``."""
    models = {
        "providers": {
            "load": {
                "baseUrl": f"http://127.0.0.1:{port}",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "m", "name": "Load"}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "load", "defaultModel": "m"}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between deltas")
    parser.add_argument("--big-only", action="store_true", help="only the 50,000-entry session part")
    parser.add_argument("--memory-only", action="store_true", help="only the memory figures (issue 28)")
    parser.add_argument("--silent", type=int, default=100, help="SSE clients that never read (memory)")
    args = parser.parse_args()
    if not args.big_only:
        mem_ports: Any = multiprocessing.Queue()
        mem_model = multiprocessing.Process(target=reply_provider, args=(mem_ports, 100_000, 20), daemon=True)
        mem_model.start()
        with tempfile.TemporaryDirectory(prefix="pi-tui-serve-mem-") as work:
            agent_dir, project = Path(work) / "agent", Path(work) / "project"
            agent_dir.mkdir()
            project.mkdir()
            write_models(agent_dir, mem_ports.get(timeout=10))
            memory(agent_dir, project, args.silent)
            limits(agent_dir, project)
        mem_model.terminate()
        if args.memory_only:
            return
    ports: Any = multiprocessing.Queue()
    model = multiprocessing.Process(target=provider, args=(ports, args.deltas, args.interval), daemon=True)
    model.start()
    port = ports.get(timeout=10)
    print(
        f"provider: {args.deltas} deltas per reply, one every {args.interval * 1000:.0f} ms "
        f"({1 / args.interval:.0f} tokens/s per session); {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory(prefix="pi-tui-serve-load-") as work:
        root = Path(work)
        agent_dir, project = root / "agent", root / "project"
        agent_dir.mkdir()
        project.mkdir()
        write_models(agent_dir, port)
        both = [args.clients] + [1] * (args.sessions - 1)
        scenarios = (
            []
            if args.big_only
            else [
                (f"{args.sessions} sessions streaming at once, 1 client each", [1] * args.sessions),
                (f"{args.clients} clients on one session", [args.clients]),
                (f"both at once: {args.sessions} sessions, one of them with {args.clients} clients", both),
            ]
        )
        for title, counts in scenarios:
            process, url = start_server(agent_dir, project)
            try:
                before = cpu_seconds(process.pid)
                clients, elapsed = asyncio.run(scenario(url, counts))
                report(title, clients, elapsed, cpu_seconds(process.pid) - before)
            finally:
                process.terminate()
                process.wait(20)
        process, url = start_server(agent_dir, project)
        try:
            big_session(url, root, project)
        finally:
            process.terminate()
            process.wait(20)
    model.terminate()


if __name__ == "__main__":
    main()
