"""Google Vertex AI: pi-tui sends the request pi 1.5.2 (through Google's SDK) sends.

Both run ``-p hello`` on google-vertex with a Vertex API key (express mode) and
``GOOGLE_VERTEX_BASE_URL`` pointing at the loopback model server (the variable Google's SDK
reads); the path, the key header and the body must agree, the system prompt's and tools' texts
aside (each program has its own). The ADC path cannot be compared this way: Google's auth
library asks Google's own token endpoint, which a test cannot stand in for; its requests differ
from these only in the URL's project path and the Bearer header (tests/integration/
test_google_vertex.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_google_vs_pi import SIGNATURE, check_tool_round_trip, run_both
from tests.interop.test_pi_reads_exports import SCRIPT
from tests.support.in_process import Ran, run_main
from tests.support.model_server import ModelServer, RecordedRequest, Scripted, ToolCallSpec
from tests.support.real_pi import run_pi

pytestmark = pytest.mark.pi_interop

STRICT_TOOLS = {"functionCallingConfig": {"mode": "VALIDATED"}}
"""The one known difference: pi 1.5.2 marks its four built-in tools for JSON-schema constrained
sampling, so on Gemini 3 and later it adds this ``toolConfig`` (and sends the tools' schemas made
strict); pi-tui's tools carry no such mark yet (docs/pi-parity.md)."""


def shape(request: RecordedRequest) -> dict[str, Any]:
    body = dict(request.body)
    body.pop("toolConfig", None)  # see STRICT_TOOLS
    system = body.pop("systemInstruction", None)
    tools = body.pop("tools", None) or []
    return {
        "path": request.path,
        "query": request.query,
        "key": request.headers.get("x-goog-api-key"),
        "authorization": request.headers.get("authorization"),
        "body": body,
        "system parts": [sorted(part) for part in (system or {}).get("parts", [])],
        "tool groups": [sorted(group) for group in tools],
        "tool fields": sorted(
            {key for group in tools for d in group.get("functionDeclarations", []) for key in d}
        ),
    }


CASES = [
    *(("gemini-2.5-flash", level) for level in ("minimal", "low", "medium", "high", "off")),
    ("gemini-2.5-pro", "high"),
    ("gemini-3.1-pro-preview", "medium"),
    ("gemini-3.1-pro-preview", "off"),
    ("gemini-3.1-flash-lite", "minimal"),
]


@pytest.mark.parametrize(("model", "level"), CASES)
def test_express_mode_request_matches_pi(model: str, level: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ours_dir, pis_dir = tmp_path / "ours", tmp_path / "pis"
    for folder in (ours_dir, pis_dir):
        folder.mkdir()
    args = ["--provider", "google-vertex", "--model", model, "--thinking", level, "-p", "hello"]
    with ModelServer() as server:
        env = {
            "HOME": str(tmp_path),
            "GOOGLE_CLOUD_API_KEY": "test-key",
            "GOOGLE_VERTEX_BASE_URL": server.base_url,
        }
        done = run_pi(args, agent_dir=pis_dir, cwd=project, env=env, pi="1.5.2")
        assert done.returncode == 0, done.stderr
        theirs = server.requests[-1]
        full = {
            k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("GOOGLE_")
        }
        full.update({"PI_CODING_AGENT_DIR": str(ours_dir), **env})
        ours_run: subprocess.CompletedProcess[str] | Ran
        if (model, level) == CASES[0]:  # the first case through the installed script
            ours_run = subprocess.run(
                [SCRIPT, *args], cwd=project, env=full, capture_output=True, text=True, timeout=120
            )
        else:  # the others through its entry point in process (tests/support/in_process.py)
            ours_run = run_main(args, cwd=project, env=full)
        assert ours_run.returncode == 0, ours_run.stderr
        assert ours_run.stdout.strip() == "echo: hello"
        ours = server.requests[-1]
    assert shape(ours) == shape(theirs)
    assert "toolConfig" not in ours.body
    assert theirs.body.get("toolConfig") == (STRICT_TOOLS if model.startswith("gemini-3") else None)
    assert shape(ours)["path"] == f"/v1/publishers/google/models/{model}:streamGenerateContent"
    assert shape(ours)["query"] == {"alt": "sse"} and shape(ours)["key"] == "test-key"


def vertex_express(_folder: Path, server: ModelServer) -> dict[str, str]:
    return {"GOOGLE_CLOUD_API_KEY": "test-key", "GOOGLE_VERTEX_BASE_URL": server.base_url}


@pytest.mark.parametrize(("model", "ids"), [("gemini-2.5-flash", False), ("gemini-3-flash-preview", True)])
def test_a_tool_call_goes_back_as_pi_sends_it_to_vertex(model: str, ids: bool, tmp_path: Path) -> None:
    """The shared Gemini body (tests/interop/test_google_vs_pi.py) at Vertex: Gemini 3 gets the
    call ids back, Gemini 2.5 none."""
    reply = Scripted(
        tool_calls=[ToolCallSpec("read", {"path": "note.txt"}, id="call-1", signature=SIGNATURE)]
    )
    ours, theirs = run_both(tmp_path, "google-vertex", vertex_express, model, "low", "read note.txt", reply)
    check_tool_round_trip(ours, theirs, ids)
    assert ours[1].path == f"/v1/publishers/google/models/{model}:streamGenerateContent"
