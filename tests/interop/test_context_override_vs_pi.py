"""``AGENTS.override.md`` (pi 1.x): pi 1.5.2 and pi-tui, run in the same folder, both send the
override's text instead of that folder's AGENTS.md / CLAUDE.md, and still send the agent dir's
and the parent folder's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.test_max_thinking_vs_pi import pi_tui
from tests.support.model_server import ModelServer
from tests.support.real_pi import run_pi, write_models_json

pytestmark = pytest.mark.pi_interop
SENT = ("GLOBAL-RULES", "REPO-RULES", "LOCAL-OVERRIDE")
NOT_SENT = ("SHARED-PACKAGE-RULES", "CLAUDE-PACKAGE-RULES")


def system_text(body: dict) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer"))


def test_both_send_the_override_in_place_of_its_folders_file(tmp_path: Path, agent_dir: Path) -> None:
    repo = tmp_path / "repo"
    pkg = repo / "pkg"
    pkg.mkdir(parents=True)
    (repo / ".git").mkdir()
    (agent_dir / "AGENTS.md").write_text("GLOBAL-RULES\n")
    (repo / "AGENTS.md").write_text("REPO-RULES\n")
    (pkg / "AGENTS.md").write_text("SHARED-PACKAGE-RULES\n")
    (pkg / "CLAUDE.md").write_text("CLAUDE-PACKAGE-RULES\n")
    (pkg / "AGENTS.override.md").write_text("LOCAL-OVERRIDE\n")
    args = ["--provider", "loop", "--model", "m", "--no-session", "-p", "hi"]
    with ModelServer() as server:
        write_models_json(agent_dir, server.base_url)
        done = run_pi(args, agent_dir=agent_dir, cwd=pkg, env={"HOME": str(tmp_path)}, pi="1.5.2")
        assert done.returncode == 0, done.stderr
        theirs = system_text(server.requests[-1].body)
        ours_run = pi_tui(*args, agent_dir=agent_dir, cwd=pkg, home=tmp_path)
        assert ours_run.returncode == 0, ours_run.stderr
        ours = system_text(server.requests[-1].body)
    for prompt in (theirs, ours):
        assert all(text in prompt for text in SENT), prompt
        assert not any(text in prompt for text in NOT_SENT), prompt
    order = [theirs.index(text) for text in SENT]
    assert order == sorted(order) and [ours.index(t) for t in SENT] == sorted(ours.index(t) for t in SENT)
