"""pi's settings arrays that name resources, through the installed ``pi-tui``: ``prompts``
(template files or folders beside the settings file), ``skills`` (already read) and
``enableSkillCommands: false`` (no ``/skill:name``), checked by the text the loopback model
server receives; ``themes`` by what /settings offers (tests/tui)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_cli_agent import configure, pi_tui
from tests.support.model_server import ModelServer, Scripted

BASE = ("--provider", "test", "--model", "m")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    return root


def user_text(request: object) -> str:
    """The last user message's text of an openai-completions request."""
    messages = request.body["messages"]  # type: ignore[attr-defined]
    content = [m for m in messages if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def write_settings(agent_dir: Path, data: dict[str, object]) -> None:
    path = agent_dir / "settings.json"
    current = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**current, **data}))


def test_prompts_setting_loads_templates_beside_the_settings_file(agent_dir: Path, project: Path) -> None:
    folder = agent_dir / "team-prompts"
    folder.mkdir()
    (folder / "review.md").write_text("---\ndescription: review\n---\nReview ${1:-everything} carefully.\n")
    single = agent_dir / "one.md"
    single.write_text("Summarise $@ in one line.\n")
    write_settings(agent_dir, {"prompts": ["team-prompts", str(single)]})
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"), Scripted(text="ok"))
        result = pi_tui(*BASE, "-p", "/review src/app.py", cwd=project)
        assert result.returncode == 0, result.stderr
        assert user_text(server.requests[-1]) == "Review src/app.py carefully."
        server.queue(Scripted(text="ok"))
        result = pi_tui(*BASE, "-p", "/review", cwd=project)  # pi 1.x's ${1:-default}
        assert result.returncode == 0, result.stderr
        assert user_text(server.requests[-1]) == "Review everything carefully."
        result = pi_tui(*BASE, "-p", "/one the diff", cwd=project)
        assert result.returncode == 0, result.stderr
        assert user_text(server.requests[-1]) == "Summarise the diff in one line."
        server.queue(Scripted(text="ok"))
        result = pi_tui(*BASE, "-np", "-p", "/review x", cwd=project)  # -np: configured ones too
        assert user_text(server.requests[-1]) == "/review x"


def test_a_missing_listed_prompt_is_one_warning(agent_dir: Path, project: Path) -> None:
    write_settings(agent_dir, {"prompts": ["nowhere"]})
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"))
        result = pi_tui(*BASE, "-p", "hi", cwd=project)
        assert result.returncode == 0, result.stderr
        assert "settings prompts" in result.stderr and "nowhere" in result.stderr
        assert "Traceback" not in result.stderr


def test_enable_skill_commands_false_leaves_skill_lines_as_typed(agent_dir: Path, project: Path) -> None:
    skill = agent_dir / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: ships it\n---\nRun the deploy script.\n")
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"), Scripted(text="ok"))
        result = pi_tui(*BASE, "-p", "/skill:deploy now", cwd=project)
        assert result.returncode == 0, result.stderr
        assert "Run the deploy script." in user_text(server.requests[-1])
        write_settings(agent_dir, {"enableSkillCommands": False})
        result = pi_tui(*BASE, "-p", "/skill:deploy now", cwd=project)
        assert result.returncode == 0, result.stderr
        assert user_text(server.requests[-1]) == "/skill:deploy now"
        assert "deploy" in json.dumps(server.requests[-1].body["messages"][0])  # still in the prompt
