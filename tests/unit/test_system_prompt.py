"""The system prompt: base text, tools, context files from the agent dir and the repository."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pi_tui.agent.system_prompt import BASE_PROMPT, build_system_prompt, context_files
from pi_tui.tools import default_tools


def test_context_files_from_agent_dir_then_repo_root_down(agent_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "pkg" / "sub"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    (agent_dir / "AGENTS.md").write_text("global rules")
    (repo / "CLAUDE.md").write_text("repo rules")
    (repo / "pkg" / "AGENTS.md").write_text("package rules")
    (repo / "pkg" / "CLAUDE.md").write_text("ignored: AGENTS.md wins in the same folder")
    (tmp_path / "AGENTS.md").write_text("outside the repository: never read")
    found = context_files(deep)
    assert found == [agent_dir / "AGENTS.md", repo / "CLAUDE.md", repo / "pkg" / "AGENTS.md"]


def test_an_override_replaces_only_its_own_folders_file(agent_dir: Path, tmp_path: Path) -> None:
    """pi 1.x: ``AGENTS.override.md`` stands in for AGENTS.md / CLAUDE.md of its folder; the agent
    dir's file and the other folders' still load, and its text reaches the prompt."""
    repo = tmp_path / "repo"
    pkg = repo / "pkg"
    pkg.mkdir(parents=True)
    (repo / ".git").mkdir()
    (agent_dir / "AGENTS.md").write_text("global rules")
    (repo / "AGENTS.md").write_text("repo rules")
    (pkg / "AGENTS.md").write_text("shared package rules")
    (pkg / "CLAUDE.md").write_text("claude package rules")
    (pkg / "AGENTS.override.md").write_text("my local package rules")
    found = context_files(pkg)
    assert found == [agent_dir / "AGENTS.md", repo / "AGENTS.md", pkg / "AGENTS.override.md"]
    prompt = build_system_prompt(pkg, [])
    assert "my local package rules" in prompt and "repo rules" in prompt and "global rules" in prompt
    assert "shared package rules" not in prompt and "claude package rules" not in prompt
    (agent_dir / "AGENTS.override.md").write_text("global override")
    assert context_files(pkg)[0] == agent_dir / "AGENTS.override.md"


def test_prompt_parts_in_order(agent_dir: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("Use tabs.")
    tools = default_tools(str(tmp_path))
    moment = datetime(2026, 11, 21, 9, 30).astimezone()
    prompt = build_system_prompt(tmp_path, tools, append="Be brief.", now=moment)
    assert prompt.startswith(BASE_PROMPT)
    assert [line.split(":")[0] for line in prompt.split("Available tools:\n")[1].splitlines()[:4]] == [
        "- read",
        "- bash",
        "- edit",
        "- write",
    ]
    assert prompt.index("Use tabs.") < prompt.index("Working directory:") < prompt.index("Be brief.")
    assert "2026-11-21" in prompt and str(tmp_path) in prompt


def test_custom_prompt_replaces_the_base_and_no_tools_is_said(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path, [], custom="You are a poet.")
    assert prompt.startswith("You are a poet.") and BASE_PROMPT not in prompt
    assert "No tools are available" in prompt
