"""The server's small parts on their own: the event log's numbering, replay and resync; the
page's policy and code rules; which hosts count as loopback."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from importlib import resources

import pytest

from pi_tui.server.app import host_allowed
from pi_tui.server.command import is_loopback
from pi_tui.server.event_log import EventLog, sse_frame
from pi_tui.server.page import _script, render_page
from tests.support.waiting import async_wait_until


def frames(data: bytes) -> list[tuple[int, str, dict]]:
    out = []
    for block in data.decode().split("\n\n"):
        if not block or block.startswith(":"):
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return out


def test_a_frame_is_one_event_on_one_data_line_whatever_the_text() -> None:
    frame = sse_frame(7, "message_update", {"text": "two\nlines\r\nand \u2028 a separator"})
    assert frame.count(b"\n") == 4 and frame.endswith(b"\n\n")
    assert frames(frame) == [(7, "message_update", {"text": "two\nlines\r\nand \u2028 a separator"})]


def test_numbers_follow_on_and_the_ring_keeps_the_last_events() -> None:
    log = EventLog(ring_size=4, start=100)
    assert [log.publish("e", {"n": n}) for n in range(10)] == list(range(101, 111))
    assert log.oldest == 107
    assert log.can_replay_after(106) and log.can_replay_after(110)
    assert not log.can_replay_after(105)  # 106 has left the ring
    assert not log.can_replay_after(99) and not log.can_replay_after(111)  # never ours
    assert [seq for seq, _, _ in frames(log.frames_after(107))] == [108, 109, 110]
    assert frames(log.frames_after(110)) == []


def test_the_ring_is_bounded_in_bytes_and_chunks_are_bounded_too() -> None:
    log = EventLog(ring_size=1000, start=0, ring_bytes=10_000)
    for n in range(100):
        log.publish("e", {"n": n, "pad": "x" * 400})  # ~450 bytes a frame
    assert log.ring_held <= 10_000 and log.seq - log.oldest + 1 < 25  # bytes trimmed, not count
    assert not log.can_replay_after(50) and log.bytes_after(50) is None
    assert log.bytes_after(log.seq) == 0 and 0 < log.bytes_after(log.seq - 2) < 1000
    chunk, last = log.chunk_after(log.oldest - 1, limit=1000)
    assert [seq for seq, _, _ in frames(chunk)] == [log.oldest, log.oldest + 1] and last == log.oldest + 1
    big = log.publish("big", {"pad": "y" * 50_000})  # bigger than the ring: kept alone
    assert log.oldest == big and log.frames_after(big - 1).count(b"y" * 50_000) == 1


async def test_a_follower_gets_bursts_in_order_and_a_snapshot_when_left_behind() -> None:
    log = EventLog(ring_size=3, start=0)
    log.publish("a", {})

    def snapshot() -> bytes:
        return sse_frame(log.seq, "snapshot", {"seq": log.seq})

    async def until(condition: Callable[[], bool]) -> None:
        await async_wait_until(condition, "the follower to move", timeout=5)

    got: list[bytes] = []

    async def follow(after: int) -> None:
        async for chunk in log.follow(after, snapshot):
            got.append(chunk)

    follower = asyncio.create_task(follow(1))
    await asyncio.sleep(0.01)
    log.publish("b", {})
    log.publish("c", {})  # both before the follower runs again: one chunk
    await until(lambda: len(got) == 1)
    log.publish("d", {})
    await until(lambda: len(got) == 2)
    follower.cancel()
    assert [name for _, name, _ in frames(got[0])] == ["b", "c"]
    assert [name for _, name, _ in frames(got[1])] == ["d"]

    got.clear()
    for _ in range(5):
        log.publish("x", {})
    behind = asyncio.create_task(follow(2))  # 3..9 are not all in a ring of 3
    await until(lambda: len(got) == 1)
    behind.cancel()
    assert frames(got[0]) == [(9, "snapshot", {"seq": 9})]


async def test_an_idle_follower_gets_heartbeats_and_ends_when_the_log_closes() -> None:
    log = EventLog(start=0)
    chunks = []

    async def read() -> None:
        async for chunk in log.follow(0, lambda: b"", heartbeat=0.05):
            chunks.append(chunk)

    task = asyncio.create_task(read())
    await asyncio.sleep(0.18)  # time is what is tested: about three heartbeats' worth
    log.close()
    await asyncio.wait_for(task, 2)
    assert chunks and set(chunks) == {b": heartbeat\n\n"}


def test_the_page_runs_only_its_own_code_and_builds_text_as_text() -> None:
    page, policy = render_page("tok</script><b>x")
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert page.count(f'nonce="{nonce}"') == 2  # the one style and the one script
    assert "{{" not in page
    carried = re.search(r'id="pi-serve">(.*?)</script>', page, re.S).group(1)
    assert json.loads(carried) == {"token": "tok</script><b>x"} and "<" not in carried
    assert not re.search(
        r"\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write|eval\(", _script()
    )
    folder = resources.files("pi_tui.server").joinpath("web")
    for name in ("app.js", "app.css"):
        text = folder.joinpath(name).read_text(encoding="utf-8").lower()
        assert "</script" not in text and "</style" not in text and "<!--" not in text, name
    assert json.loads(re.search(r'id="pi-themes">(.*?)</script>', page, re.S).group(1))[0]["colors"]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.4", False),
        ("::", False),
        ("example.com", False),
    ],
)
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:4217", True),
        ("localhost:4217", True),
        ("[::1]:4217", True),
        ("10.1.2.3", True),
        ("app.localhost:4217", True),
        ("box.example:4217", True),  # listed with --allow-host
        ("attacker.example:4217", False),
        ("127.0.0.1.nip.io", False),
        ("attacker.example@127.0.0.1:4217", False),
        ("[nonsense]:4217", False),
        ("", False),
    ],
)
def test_the_host_header_must_name_this_server_without_dns(host: str, allowed: bool) -> None:
    assert host_allowed(host, {"box.example"}) is allowed
