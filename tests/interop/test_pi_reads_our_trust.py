"""The real pi 1.5.2 starts on an agent folder where pi-tui saved trust decisions, and follows
them: a parent folder pi-tui trusted covers the project below it, a folder marked never is not
trusted. pi reads ``trust.json`` before anything else and refuses to start on a shape it does
not know, which is what pi-tui's first format made it do.

The project holds ``.pi/APPEND_SYSTEM.md`` (a resource pi loads only for a trusted folder), so
the system prompt pi sends to the loopback model says whether pi trusted the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.extensions.trust import TrustStore
from tests.support.model_server import ModelServer
from tests.support.real_pi import run_pi, write_models_json

pytestmark = pytest.mark.pi_interop
MARKER = "TRUSTED-PROJECT-INSTRUCTIONS-7f3a"


def project_with_protected_resource(folder: Path) -> Path:
    (folder / ".pi").mkdir(parents=True)
    (folder / ".pi" / "APPEND_SYSTEM.md").write_text(f"{MARKER}\n")
    return folder


def system_prompt(body: dict) -> str:
    """The system text of an openai-completions request."""
    return "\n".join(
        str(message.get("content"))
        for message in body["messages"]
        if message["role"] in ("system", "developer")
    )


def test_pi_starts_and_follows_the_folders_pi_tui_trusted(tmp_path: Path, agent_dir: Path) -> None:
    work = tmp_path / "work"
    trusted = project_with_protected_resource(work / "trusted-parent" / "project")
    refused = project_with_protected_resource(work / "refused")
    store = TrustStore(agent_dir)
    # a file in pi-tui's first format, which pi 1.5.2 refuses; pi-tui's next write converts it
    store.path.write_text(json.dumps({"folders": {str(refused.resolve()): "never"}}))
    store.decide(work / "trusted-parent", "trusted")  # what "Trust this folder" saves
    assert json.loads(store.path.read_text()) == {
        str((work / "trusted-parent").resolve()): True,
        str(refused.resolve()): False,
    }

    with ModelServer() as server:
        write_models_json(agent_dir, server.base_url)
        for cwd, expect_marker in ((trusted, True), (refused, False)):
            done = run_pi(
                ["--provider", "loop", "--model", "m", "--no-session", "-p", "hello"],
                agent_dir=agent_dir,
                cwd=cwd,
                env={"HOME": str(tmp_path)},
                pi="1.5.2",
            )
            assert done.returncode == 0, done.stderr
            assert "Invalid trust store" not in done.stderr
            assert done.stdout.strip() == "echo: hello"
            assert (MARKER in system_prompt(server.requests[-1].body)) is expect_marker, cwd
    # pi read it and left it as it was: the same decisions, still private
    assert json.loads(store.path.read_text())[str(refused.resolve())] is False
