"""The real pi 0.73.1 uses the Anthropic subscription logins pi-tui writes to auth.json: one
saved by ``pi-tui auth login`` (the browser sign-in against the loopback authorization server of
tests/e2e/test_auth_login.py) and one renewed by ``pi-tui -p`` into pi's own file (the token
server of tests/integration/test_oauth_credentials.py).

pi 0.73.1 has no ``auth check`` (pi 1.5.2's tests use that): the proof is a ``pi -p`` run against
a loopback Anthropic model server, which must answer and carry the login's access token as the
bearer, with pi's OAuth beta header. A file pi could not read would leave pi without a key
("No API key"), a token it took for expired would be renewed at Anthropic (unreachable here).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_auth_login import Login, browse, env, server  # noqa: F401  (fixtures)
from tests.integration.test_oauth_credentials import renew_in_pis_file
from tests.support.model_server import ModelServer, RecordedRequest
from tests.support.provider_auth_server import ProviderAuthServer
from tests.support.real_pi import run_pi

pytestmark = pytest.mark.pi_interop
PI = "0.73.1"
MODEL = "claude-sonnet-4-5"
"""An Anthropic model of pi 0.73.1's catalogue."""


def pi073_request(agent_dir: Path, cwd: Path) -> RecordedRequest:
    """pi 0.73.1's ``-p`` with ``agent_dir``'s auth.json and Anthropic moved to a loopback
    server (models.json ``baseUrl`` only: no key anywhere but the login); its request."""
    with ModelServer() as model_server:
        models = {"providers": {"anthropic": {"baseUrl": model_server.base_url}}}
        (agent_dir / "models.json").write_text(json.dumps(models))
        done = run_pi(
            ["--provider", "anthropic", "--model", MODEL, "--no-session", "-p", "hello from pi 0.73.1"],
            agent_dir=agent_dir,
            cwd=cwd,
            pi=PI,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "echo: hello from pi 0.73.1", done.stdout + done.stderr
        (request,) = model_server.requests
    assert request.path.endswith("/messages")
    assert "oauth-2025-04-20" in (request.header("anthropic-beta") or "").split(",")
    assert request.header("x-api-key") is None
    return request


def test_pi073_uses_a_login_pi_tui_saved(
    server: ProviderAuthServer,  # noqa: F811
    env: dict[str, str],  # noqa: F811
    agent_dir: Path,
    tmp_path: Path,
) -> None:
    login = Login(["anthropic"], env, tmp_path)
    assert browse(login.line(r"^(http://\S+/anthropic/authorize\?\S+)$").group(1)) == 200
    assert login.finish()[0] == 0
    credential = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    assert credential["type"] == "oauth" and credential["access"] == server.issued["access"][-1]
    request = pi073_request(agent_dir, tmp_path)
    assert request.header("authorization") == f"Bearer {credential['access']}"
    assert json.loads((agent_dir / "auth.json").read_text())["anthropic"] == credential  # not renewed


def test_pi073_uses_a_login_pi_tui_renewed(tmp_path: Path, agent_dir: Path) -> None:
    pi_auth = renew_in_pis_file(tmp_path, agent_dir)
    renewed = json.loads(pi_auth.read_text())["anthropic"]
    request = pi073_request(pi_auth.parent, tmp_path)
    assert request.header("authorization") == "Bearer sk-ant-oat01-renewed-1"
    assert json.loads(pi_auth.read_text())["anthropic"] == renewed
