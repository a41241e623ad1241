"""``pi-tui serve`` under abuse, against the real server on loopback (issue 28, items 3 and 8):
events carry deltas and the replay ring is bounded in bytes; a client that stops reading is cut
off and resyncs; bodies over the limit get 413 unread, bad JSON 400; slow headers are dropped;
the page is not a cookie for every port, not frameable, and other Host names and Origins are
refused; a copy of a session file opens as its own session."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.support.model_server import ModelServer, Scripted, model_server  # noqa: F401
from tests.support.requires import requires
from tests.support.serve import (
    EventReader,
    ServeProcess,
    configure_agent,
    one_turn,
    wait_idle,
)

pytestmark = requires("pi-tui")

REPLY = "".join(f"word{n:05d} " for n in range(10_000))  # 100,000 characters


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def serve(project: Path, agent_dir: Path, model: ModelServer, *args: str, **env: str) -> ServeProcess:
    configure_agent(agent_dir, model)
    return ServeProcess(
        project, *args, env={f"PI_TUI_SERVE_{key.upper()}": value for key, value in env.items()}
    )


def vm(pid: int, field: str) -> int:
    """A figure of /proc/<pid>/status in bytes (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def connect(server: ServeProcess, rcvbuf: int | None = None) -> socket.socket:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.connect((host, int(port)))
    return raw


def closed_within(raw: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``raw`` within ``seconds`` (whatever it sent before)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        raw.settimeout(left)
        try:
            if not raw.recv(65536):
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def response_of(raw: socket.socket, timeout: float = 10.0) -> tuple[int, bytes]:
    """The status and what came of one response on ``raw`` (read until the server closes or the
    body's length is in)."""
    raw.settimeout(timeout)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = raw.recv(65536)
        if not chunk:
            break
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = raw.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(head.split(b" ")[1]), body


# --- events: deltas, a ring bounded in bytes, slow readers ------------------------------------


def read_reply(server: ServeProcess, client: httpx.Client, session: str) -> list[tuple[str, int, dict]]:
    """Prompt ``session`` while following its events; every event up to ``agent_end``."""
    events: list[tuple[str, int, dict]] = []
    headers = {"Authorization": f"Bearer {server.token}"}
    timeout = httpx.Timeout(20, read=30)
    with (
        httpx.Client(base_url=server.url, headers=headers, timeout=timeout) as reader,
        reader.stream("GET", f"/sessions/{session}/events") as stream,
    ):
        lines = stream.iter_lines()
        for line in lines:
            if line.startswith("event: snapshot"):
                break
        client.post(f"/sessions/{session}/commands", json={"type": "prompt", "message": "go"})
        name, seq = "", 0
        for line in lines:
            if line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, seq, json.loads(line[6:])))
                if name == "agent_end":
                    break
    return events


def test_a_long_reply_streams_linear_deltas_and_the_server_stays_small(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    model_server.queue(Scripted(text=REPLY, delta_size=500))
    with serve(project, agent_dir, model_server) as server, server.client() as client:
        assert server.process is not None
        session = client.post("/sessions", json={}).json()["id"]
        before = vm(server.process.pid, "VmRSS")
        events = read_reply(server, client, session)
        updates = [(seq, data) for name, seq, data in events if name == "message_update"]
        frame_bytes = sum(
            len(f"id: {seq}\nevent: message_update\ndata: ".encode())
            + len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
            + 2
            for seq, data in updates
        )
        assert len(updates) > 200
        # Linear: each frame carries its own delta (text_end the whole text once, as pi's).
        assert frame_bytes < 3 * len(REPLY), frame_bytes
        assert all(set(data) == {"type", "usage", "assistantMessageEvent"} for _, data in updates)
        assert all("partial" not in data["assistantMessageEvent"] for _, data in updates)
        streamed = "".join(
            data["assistantMessageEvent"].get("delta", "")
            for _, data in updates
            if data["assistantMessageEvent"]["type"] == "text_delta"
        )
        assert streamed == REPLY
        grown = vm(server.process.pid, "VmHWM") - before
        assert grown < 100 * 1024 * 1024, grown  # was more than 1 GB for this reply


def test_a_client_joining_mid_reply_continues_the_snapshot_draft_with_the_deltas(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    text = "".join(f"piece{n:04d} " for n in range(1500))
    model_server.queue(Scripted(text=text, delta_size=30, event_delay=0.003))
    with serve(project, agent_dir, model_server) as server, server.client() as client:
        session = client.post("/sessions", json={}).json()["id"]
        first = EventReader(server, session)
        late: EventReader | None = None
        try:
            first.wait_named("snapshot")
            client.post(f"/sessions/{session}/commands", json={"type": "prompt", "message": "go"})
            first.wait_named("message_update", 50)
            late = EventReader(server, session)
            events = late.wait_named("agent_end", timeout=60)
        finally:
            first.close()
            if late is not None:
                late.close()
        snapshot = events[0]
        assert snapshot.name == "snapshot"
        draft = snapshot.data["draft"]["message"]
        assert draft is not None and draft["content"], "the snapshot came before the reply started"
        rebuilt = draft["content"][0]["text"]
        assert 0 < len(rebuilt) < len(text)
        for event in events[1:]:
            change = event.data.get("assistantMessageEvent") or {}
            if event.name == "message_update" and change.get("type") == "text_delta":
                rebuilt += change["delta"]
        assert rebuilt == text  # nothing twice, nothing missing


def test_the_replay_ring_is_bounded_in_bytes(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    model_server.queue(Scripted(text=REPLY, delta_size=64))
    with serve(project, agent_dir, model_server, ring_bytes="600000") as server, server.client() as client:
        session = client.post("/sessions", json={}).json()["id"]
        reader = EventReader(server, session)
        try:
            start = reader.wait_last("snapshot").data["seq"]
        finally:
            reader.close()
        client.post(f"/sessions/{session}/commands", json={"type": "prompt", "message": "go"})
        wait_idle(client, session)
        # ~1,600 events, about 1 MB (the reply's end comes as a few events carrying it whole):
        # far fewer than the ring's count, more than its 600 KB. A client that saw only the
        # start is given a snapshot holding the reply, not a replay.
        late = EventReader(server, session, last_id=start)
        try:
            snapshot = late.wait_last("snapshot")
        finally:
            late.close()
        end = snapshot.data["seq"]
        assert end - start > 1500
        assert REPLY.strip() in json.dumps(snapshot.data["messages"][-1])
        # The tail is still there: a client a few events behind gets exactly those.
        recent = EventReader(server, session, last_id=end - 5)
        try:
            replayed = recent.wait_for(lambda events: len(events) >= 5)
        finally:
            recent.close()
        assert [event.id for event in replayed[:5]] == list(range(end - 4, end + 1))
        assert replayed[0].name != "snapshot"


def test_a_client_that_stops_reading_is_cut_off_and_resyncs_on_reconnect(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    big = "".join(f"chunk{n:06d} " for n in range(200_000))  # 2.4 MB: past every socket buffer
    model_server.queue(Scripted(text=big, delta_size=120))
    with (
        serve(project, agent_dir, model_server, client_budget="100000") as server,
        server.client(timeout=60) as client,
    ):
        session = client.post("/sessions", json={}).json()["id"]
        host = server.url.removeprefix("http://")
        raw = connect(server, rcvbuf=4096)
        raw.sendall(
            f"GET /sessions/{session}/events HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {server.token}\r\n\r\n".encode()
        )
        received = b""
        while b"\n\n" not in received.partition(b"event: snapshot")[2]:
            received += raw.recv(65536)
        last_seen = int(received.split(b"event: snapshot")[0].rsplit(b"id: ", 1)[1].split(b"\n")[0])
        client.post(f"/sessions/{session}/commands", json={"type": "prompt", "message": "go"})
        wait_idle(client, session, timeout=120)
        # It never read during the reply; the server dropped it rather than queue the reply for it.
        assert closed_within(raw, 10), "a client that stopped reading was kept"
        raw.close()
        again = EventReader(server, session, last_id=last_seen)
        try:
            first = again.wait_for(lambda events: len(events) >= 1)[0]
            if first.name == "snapshot":
                assert big.strip() in json.dumps(first.data["messages"][-1])
            else:
                assert first.id == last_seen + 1
                again.wait_named("agent_end", timeout=60)
        finally:
            again.close()
    log = server.stderr()
    assert "Traceback" not in log and "ERROR" not in log, log[-2000:]


# --- request bodies ----------------------------------------------------------------------------


def test_a_body_over_the_limit_gets_413_unread(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with serve(project, agent_dir, model_server, max_body="1000000") as server:
        assert server.process is not None
        host = server.url.removeprefix("http://")
        # Declared too large: answered at once, before a byte of it was sent.
        raw = connect(server)
        raw.sendall(
            f"POST /sessions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n".encode()
        )
        status, body = response_of(raw)
        raw.close()
        assert status == 413 and b"limit" in body
        # Chunked, no length: counted as it comes, refused past the limit, the rest never read.
        before = vm(server.process.pid, "VmRSS")
        raw = connect(server)
        raw.sendall(
            f"POST /sessions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        )
        piece = b"x" * 65536
        sent = 0
        try:
            while sent < 100_000_000:
                raw.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert sent < 50_000_000, "the server kept reading a body past its limit"
        raw.close()
        assert vm(server.process.pid, "VmRSS") - before < 30_000_000
        with server.client() as client:
            assert client.get("/sessions").status_code == 200  # and it serves on


def test_malformed_or_too_deep_json_gets_one_line_400(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with serve(project, agent_dir, model_server) as server, server.client() as client:
        deep = '{"a":' * 5000 + "1" + "}" * 5000
        for body in (deep, '{"cwd": ', "[" * 100_000):
            answer = client.post("/sessions", content=body, headers={"Content-Type": "application/json"})
            assert answer.status_code == 400, (body[:20], answer.status_code, answer.text[:200])
            message = answer.json()["error"]
            assert "\n" not in message and "Traceback" not in message and len(message) < 300
        assert client.get("/sessions").status_code == 200
    assert "Traceback" not in server.stderr()


# --- connections -------------------------------------------------------------------------------


def test_slow_or_silent_headers_are_dropped_after_the_header_timeout(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with serve(project, agent_dir, model_server, header_timeout="1") as server:
        host = server.url.removeprefix("http://")
        silent = connect(server)
        slow = connect(server)
        started = time.monotonic()
        request = f"GET /sessions HTTP/1.1\r\nHost: {host}\r\nX-Padding: {'a' * 100}\r\n".encode()
        dropped = False
        for byte in request:
            try:
                slow.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                dropped = True
                break
            slow.settimeout(0.05)
            try:
                if not slow.recv(1):
                    dropped = True
                    break
            except TimeoutError:
                pass
            except ConnectionResetError:
                dropped = True
                break
            if time.monotonic() - started > 5:
                break
        assert dropped or closed_within(slow, 0.5), "a connection sending headers byte by byte was kept"
        assert time.monotonic() - started < 3
        assert closed_within(silent, 1.0), "a connection that never sent a byte was kept"
        # A prompt client is not hurt, and a kept-alive connection still serves its next request.
        with server.client() as client:
            assert client.get("/sessions").status_code == 200
            time.sleep(1.2)  # time is what is tested: longer than the header deadline above
            assert client.get("/sessions").status_code == 200


def test_a_body_that_does_not_arrive_in_time_gets_408(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with serve(project, agent_dir, model_server, body_timeout="1") as server:
        host = server.url.removeprefix("http://")
        raw = connect(server)
        raw.sendall(
            f"POST /sessions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {server.token}\r\n"
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"cwd": '.encode()
        )
        started = time.monotonic()
        status, body = response_of(raw, timeout=10)
        raw.close()
        assert status == 408 and b"in time" in body
        assert time.monotonic() - started < 5


def test_the_page_is_bound_to_its_origin_and_not_frameable(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
) -> None:
    with serve(project, agent_dir, model_server, "--allow-host", "box.example") as server:
        port = server.url.rsplit(":", 1)[1]
        with server.client() as client:
            page = client.get("/")
            assert page.status_code == 200 and "set-cookie" not in page.headers
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
            assert page.headers["x-frame-options"] == "DENY"
            # DNS rebinding: a name that is not this server's is refused, token or not.
            for host in (f"attacker.example:{port}", "127.0.0.1.nip.io"):
                answer = client.get("/sessions", headers={"Host": host})
                assert answer.status_code == 403 and "Host" in answer.json()["error"], host
            assert client.get("/", headers={"Host": f"attacker.example:{port}"}).status_code == 403
            for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"box.example:{port}"):
                assert client.get("/sessions", headers={"Host": host}).status_code == 200, host
            # A state-changing request from another origin (another port is another origin).
            for origin in (f"http://127.0.0.1:{int(port) + 1}", "http://attacker.example", "null"):
                answer = client.post("/sessions", json={}, headers={"Origin": origin})
                assert answer.status_code == 403, origin
            own = client.post("/sessions", json={}, headers={"Origin": f"http://127.0.0.1:{port}"})
            assert own.status_code == 201


# --- copies of a session file ------------------------------------------------------------------


def test_a_copy_of_a_session_file_opens_as_its_own_session(
    project: Path,
    agent_dir: Path,
    model_server: ModelServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    with serve(project, agent_dir, model_server) as server, server.client() as client:
        original_id, original_path = one_turn(client, "first")
        copy_path = tmp_path / "copy.jsonl"
        shutil.copyfile(original_path, copy_path)
        copy = client.post("/sessions", json={"path": str(copy_path)}).json()
        assert copy["path"] == str(copy_path) and not copy["readOnly"], copy
        assert copy["id"] != original_id and copy["id"].startswith(original_id)
        original = client.get(f"/sessions/{original_id}").json()
        assert original["path"] == original_path and not original["readOnly"], original
        for key, text in ((original_id, "to the original"), (copy["id"], "to the copy")):
            answer = client.post(f"/sessions/{key}/commands", json={"type": "prompt", "message": text})
            assert answer.status_code == 200 and answer.json()["success"], answer.text
            wait_idle(client, key)
        assert "to the original" in Path(original_path).read_text()
        assert "to the copy" not in Path(original_path).read_text()
        assert "to the copy" in copy_path.read_text() and "to the original" not in copy_path.read_text()
        listed = {row["path"]: row["id"] for row in client.get("/sessions").json()["sessions"]}
        assert listed[original_path] == original_id
