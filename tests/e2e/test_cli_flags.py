"""pi's start-up flags in the installed ``pi-tui``: -t / -nt / -nbt, --no-context-files / -nc,
--models (scope resolution), --theme / --no-themes, --verbose and --offline, each checked by its
effect (the request the loopback server receives, the theme loaded, the header drawn)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.scoped_models import cycle_list, next_model, resolve_scope, split_level
from tests.e2e.test_cli_agent import configure, pi_tui
from tests.support.model_server import ModelServer, Scripted


def system_prompt(request) -> str:
    return request.body["messages"][0]["content"]


def tool_names(request) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("Always answer like a pirate (marker-47).\n")
    return root


def test_tool_flags_short_and_long(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        for _ in range(4):
            server.queue(Scripted(text="ok"))
        base = ["--provider", "test", "--model", "m", "--no-session", "-p", "hi"]
        assert pi_tui(*base, "-t", "read,ls", cwd=project).returncode == 0
        assert pi_tui(*base, "-nt", cwd=project).returncode == 0
        assert pi_tui(*base, "-nbt", cwd=project).returncode == 0
        assert pi_tui(*base, "--no-builtin-tools", "--tools", "grep", cwd=project).returncode == 0
        first, second, third, fourth = server.requests
        assert tool_names(first) == ["read", "ls"]
        assert tool_names(second) == [] and tool_names(third) == []
        assert tool_names(fourth) == ["grep"]  # an explicit allow-list still applies


def test_no_context_files_leaves_agents_md_out(agent_dir: Path, project: Path) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="ok"), Scripted(text="ok"))
        base = ["--provider", "test", "--model", "m", "--no-session", "-p", "hi"]
        assert pi_tui(*base, cwd=project).returncode == 0
        assert pi_tui(*base, "-nc", cwd=project).returncode == 0
        with_files, without = server.requests
        assert "marker-47" in system_prompt(with_files)
        assert "marker-47" not in system_prompt(without)


def test_offline_and_verbose_are_accepted_and_models_warns_about_no_match(
    agent_dir: Path, project: Path
) -> None:
    with ModelServer() as server:
        configure(agent_dir, server)
        server.queue(Scripted(text="fine"))
        result = pi_tui(
            "--provider", "test", "--model", "m", "--no-session", "--offline", "--verbose",
            "--models", "test/m,nothing-like-this", "-p", "hi", cwd=project,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "fine"
        assert "nothing-like-this" in result.stderr and "Ctrl+P" in result.stderr
        assert "Traceback" not in result.stderr


def test_scope_patterns_resolve_as_pi_describes(agent_dir: Path) -> None:
    with ModelServer() as server:
        models = [{"id": "alpha-1", "reasoning": True}, {"id": "beta-2"}, {"id": "beta-3"}, {"id": "gamma"}]
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=models)))
        registry = ModelRegistry()
        assert split_level("sonnet:high") == ("sonnet", "high")
        assert split_level("host:8080") == ("host:8080", None)
        scope = resolve_scope(registry, ["test/beta*", "alpha:high", "gam", "nope*"])
        assert [(item.model.id, item.thinking) for item in scope.models] == [
            ("beta-2", None),
            ("beta-3", None),
            ("alpha-1", "high"),
            ("gamma", None),
        ]
        assert scope.unmatched == ["nope*"]
        cycle = scope.models
        current = cycle[0].model
        assert next_model(cycle, current, 1).model.id == "beta-3"
        assert next_model(cycle, current, -1).model.id == "gamma"
        outside = registry.offline_model()
        assert next_model(cycle, outside, 1).model.id == "beta-2"
        assert next_model(cycle, outside, -1).model.id == "gamma"
        assert next_model(cycle[:1], current, 1) is None
        everything = cycle_list(registry, [], outside)
        assert {item.model.id for item in everything} >= {"alpha-1", "beta-2", "beta-3", "gamma"}
