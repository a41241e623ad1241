"""The real pi (0.73.1 and 1.5.2) continues a session that pi-tui exported (``--export SESSION OUT.jsonl``):
every earlier turn of the exported branch is sent with pi's next prompt."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer
from tests.support.real_pi import PI_VERSIONS, pi_cli

pytestmark = pytest.mark.pi_interop
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


@pytest.mark.parametrize("pi", PI_VERSIONS)
def test_pi_continues_an_exported_branch(pi: str, tmp_path: Path, agent_dir: Path) -> None:
    command = pi_cli(pi)
    project = tmp_path / "project"
    project.mkdir()
    agent = agent_dir
    with ModelServer() as server:
        (agent / "models.json").write_text(json.dumps(server.models_json()))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(tmp_path), "PI_OFFLINE": "1"}
        model = ["--provider", "test", "--model", "m"]
        for args in (["-p", "one"], ["-c", "-p", "two"], ["-c", "-p", "three"]):
            subprocess.run([SCRIPT, *model, *args], cwd=project, env=env, check=True, capture_output=True)
        (source,) = list((agent / "sessions").rglob("*.jsonl"))
        subprocess.run([SCRIPT, "--export", str(source), "copy.jsonl"], cwd=project, env=env, check=True)
        done = subprocess.run(
            [*command, *model, "--session", str(project / "copy.jsonl"), "-p", "four"],
            cwd=project,
            env={**env, "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "echo: four"
        sent = server.requests[-1].body["messages"]
    replies = [message["content"] for message in sent if message["role"] == "assistant"]
    assert replies == ["echo: one", "echo: two", "echo: three"]
