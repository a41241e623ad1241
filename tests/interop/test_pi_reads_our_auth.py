"""The real pi 0.73.1 uses an API key pi-tui saved in auth.json (what ``/login`` writes), with no
key in the environment or models.json; pi-tui's own CLI sends the same key."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.config.auth import AuthStore, auth_file
from tests.support.model_server import ModelServer
from tests.support.real_pi import pi_cli

pytestmark = pytest.mark.pi_interop
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
KEY = "gsk_interop_0123456789abcdef"


def test_pi_sends_the_key_pi_tui_saved(tmp_path: Path, agent_dir: Path) -> None:
    command = pi_cli()
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer() as server:
        # groq is built in for both: models.json only points it at the loopback server, no apiKey
        models = {"providers": {"groq": {"baseUrl": server.base_url, "api": "openai-completions"}}}
        models["providers"]["groq"]["models"] = [{"id": "m", "name": "Loop"}]
        (agent_dir / "models.json").write_text(json.dumps(models))
        AuthStore(auth_file(agent_dir)).set_api_key("groq", KEY)
        env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")} | {
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "HOME": str(tmp_path),
            "PI_OFFLINE": "1",
        }
        done = subprocess.run(
            [*command, "--provider", "groq", "--model", "m", "--no-session", "-p", "hello pi"],
            cwd=project,
            env={**env, "PI_SKIP_VERSION_CHECK": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "echo: hello pi"
        assert server.requests[-1].header("authorization") == f"Bearer {KEY}"

        ours = subprocess.run(
            [SCRIPT, "--provider", "groq", "--model", "m", "--no-session", "-p", "hello pi-tui"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ours.returncode == 0, ours.stderr
        assert server.requests[-1].header("authorization") == f"Bearer {KEY}"
    path = auth_file(agent_dir)
    assert json.loads(path.read_text()) == {"groq": {"type": "api_key", "key": KEY}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
