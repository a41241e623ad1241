"""No credential from models.json or the environment reaches what pi-tui prints or logs: rpc
state and model lists, json mode, crash logs (which are also the user's alone)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui import cli
from pi_tui.redact import REDACTED, redact_secrets
from tests.support.model_server import ModelServer
from tests.support.rpc_client import ROOT, RpcClient

HEADER_NAME = "x-custom-auth"
HEADER_VALUE = "hv-3c1f9a7e5b2d4"


@pytest.fixture
def server(agent_dir: Path) -> ModelServer:
    with ModelServer() as model_server:
        config = model_server.models_json()
        for provider in config["providers"].values():
            provider["headers"] = {HEADER_NAME: HEADER_VALUE}
        (agent_dir / "models.json").write_text(json.dumps(config))
        yield model_server


def test_rpc_state_and_model_lists_leave_headers_out(server: ModelServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    rpc = RpcClient(project)
    try:
        state = rpc.request({"type": "get_state"})
        models = rpc.request({"type": "get_available_models"})
        printed = json.dumps([state, models])
    finally:
        rpc.kill()
    assert state["data"]["model"]["id"] == "m" and models["data"]["models"]
    assert HEADER_VALUE not in printed and HEADER_NAME not in printed
    assert server.requests == []  # nothing was asked of the model: the header is only for requests


def test_json_mode_leaves_headers_out_and_the_request_still_carries_them(
    server: ModelServer, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pi_tui", "--provider", "test", "--model", "m", "--mode", "json", "-p", "hi"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert HEADER_VALUE not in done.stdout + done.stderr and HEADER_NAME not in done.stdout
    assert server.requests[-1].header(HEADER_NAME) == HEADER_VALUE


def test_a_crash_log_is_private_and_holds_no_credential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("EXAMPLE_API_KEY", "ek-2b9d0c4e8f1a")
    try:
        raise RuntimeError(
            "request failed: Authorization: Bearer tok-8f3e2d1c0b9a, key ek-2b9d0c4e8f1a, sk-live-0a1b2c3d4e"
        )
    except RuntimeError:
        where = Path(cli._crash_log())
    text = where.read_text()
    assert "request failed" in text and "RuntimeError" in text
    for secret in ("tok-8f3e2d1c0b9a", "ek-2b9d0c4e8f1a", "live-0a1b2c3d4e"):
        assert secret not in text
    assert stat.S_IMODE(where.stat().st_mode) == 0o600
    assert stat.S_IMODE(where.parent.stat().st_mode) == 0o700


def test_redact_keeps_ordinary_text() -> None:
    text = "Cannot reach http://127.0.0.1:8080/v1 (connection refused); retry 3 of 3"
    assert redact_secrets(text, environ={}) == text
    assert redact_secrets("x-api-key: abcdefgh123", environ={}) == f"x-api-key: {REDACTED}"
    known = redact_secrets("value 0123456789 here", known=["0123456789"], environ={})
    assert known == f"value {REDACTED} here"


def test_an_error_body_quoting_the_key_or_a_header_shows_neither(server: ModelServer, tmp_path: Path) -> None:
    from tests.support.model_server import HttpError

    server.queue(HttpError(401, message=f"Invalid key test-key; you sent {HEADER_NAME}: {HEADER_VALUE}"))
    done = subprocess.run(
        [sys.executable, "-m", "pi_tui", "--provider", "test", "--model", "m", "--no-session", "-p", "hi"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 1
    assert "Invalid key" in done.stderr and REDACTED in done.stderr
    assert HEADER_VALUE not in done.stderr and "test-key" not in done.stderr
