"""The real pi (0.73.1 and 1.5.2) continues a session that pi-tui exported (``--export SESSION OUT.jsonl``):
every earlier turn of the exported branch is sent with pi's next prompt."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer
from tests.support.real_pi import PI_VERSIONS, pi_cli

pytestmark = pytest.mark.pi_interop
SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))


@dataclass
class Exported:
    """A session pi-tui wrote in three runs and exported, with the server it was written against."""

    project: Path
    env: dict[str, str]
    server: ModelServer
    copy: Path


MODEL = ["--provider", "test", "--model", "m"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """pi-tui's three turns and its ``--export``, once for every pi version (four pi-tui runs)."""
    root = tmp_path_factory.mktemp("exported")
    project, agent = root / "project", root / "agent"
    project.mkdir()
    agent.mkdir()
    with ModelServer() as server:
        (agent / "models.json").write_text(json.dumps(server.models_json()))
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(root), "PI_OFFLINE": "1"}
        for args in (["-p", "one"], ["-c", "-p", "two"], ["-c", "-p", "three"]):
            subprocess.run([SCRIPT, *MODEL, *args], cwd=project, env=env, check=True, capture_output=True)
        (source,) = list((agent / "sessions").rglob("*.jsonl"))
        subprocess.run([SCRIPT, "--export", str(source), "copy.jsonl"], cwd=project, env=env, check=True)
        yield Exported(project, env, server, project / "copy.jsonl")


@pytest.mark.xdist_group("pi-reads-exports")  # one worker writes the export (pyproject addopts)
@pytest.mark.parametrize("pi", PI_VERSIONS)
def test_pi_continues_an_exported_branch(pi: str, exported: Exported, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"  # each pi continues its own copy (pi appends to the file)
    shutil.copy(exported.copy, copy)
    agent = tmp_path / "pi-agent"  # and has an agent folder of its own
    agent.mkdir()
    shutil.copy(Path(exported.env["PI_CODING_AGENT_DIR"]) / "models.json", agent / "models.json")
    before = len(exported.server.requests)
    done = subprocess.run(
        [*pi_cli(pi), *MODEL, "--session", str(copy), "-p", "four"],
        cwd=exported.project,
        env={
            **exported.env,
            "PI_CODING_AGENT_DIR": str(agent),
            "HOME": str(tmp_path),
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "echo: four"
    (request,) = exported.server.requests[before:]
    sent = request.body["messages"]
    replies = [message["content"] for message in sent if message["role"] == "assistant"]
    assert replies == ["echo: one", "echo: two", "echo: three"]
