"""rpc ``get_session_stats`` on a pi 1.x file: the totals and counts pi 1.5.2 gives for it.

The file (tests/data/pi1-totals) spends tokens outside replies: ``usage`` entries, the usage of a
compaction and a branch summary, a tool result's usage. pi 1.5.2's ``getSessionStats`` on it
(README.md there says how it was run) gives the figures below; the real CLI must answer the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_rpc_mode import project, server  # noqa: F401 (fixtures)
from tests.support.model_server import ModelServer
from tests.support.rpc_client import RpcClient

SESSION = Path(__file__).resolve().parents[1] / "data" / "pi1-totals" / "session.jsonl"
PI_STATS = {
    "userMessages": 4,
    "assistantMessages": 5,
    "toolCalls": 1,
    "toolResults": 1,
    "totalMessages": 12,
    "tokens": {"input": 5070, "output": 350, "cacheRead": 55200, "cacheWrite": 1500, "total": 62120},
}
PI_COST = 0.042645


def test_session_stats_of_a_pi_1x_file_equal_pis(server: ModelServer, project: Path) -> None:  # noqa: F811
    lines = SESSION.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(project)
    path = project / "pi1.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]) + b"\n")
    client = RpcClient(project, "--session", str(path))
    try:
        stats = client.request({"type": "get_session_stats"})["data"]
        assert {key: stats[key] for key in PI_STATS} == PI_STATS
        assert stats["cost"] == pytest.approx(PI_COST, abs=1e-12)
        assert stats["sessionFile"] == str(path)
        assert client.close() == 0
    finally:
        client.kill()
