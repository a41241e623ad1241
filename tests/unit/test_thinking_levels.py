"""pi 1.x's thinking levels per model: which a model has (``thinkingLevelMap``), and what a level
it lacks becomes (the nearest stronger one, else the nearest weaker), for the agent and for
every request builder."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.agent.session import AgentSession
from pi_tui.ai.models import ModelRegistry
from pi_tui.ai.thinking import clamp_level, request_level, supported_levels
from pi_tui.ai.types import Model
from pi_tui.session import SessionManager


def model(**fields: Any) -> Model:
    return Model(**{"id": "m", "provider": "loop", "api": "openai-completions", "reasoning": True, **fields})


def test_levels_a_model_has() -> None:
    assert supported_levels(model(reasoning=False)) == ("off",)
    assert supported_levels(model()) == ("off", "minimal", "low", "medium", "high")
    assert supported_levels(model(thinking_level_map={"max": "max"}))[-2:] == ("high", "max")
    gpt = model(thinking_level_map={"off": None, "minimal": None, "xhigh": "xhigh", "max": None})
    assert supported_levels(gpt) == ("low", "medium", "high", "xhigh")


@pytest.mark.parametrize(
    ("level_map", "asked", "runs"),
    [
        (None, "max", "high"),  # an ordinary reasoning model
        (None, "xhigh", "high"),
        ({"max": "max"}, "xhigh", "max"),  # stronger first
        ({"xhigh": "xhigh"}, "max", "xhigh"),  # then weaker
        ({"minimal": None}, "minimal", "low"),
        ({"off": None}, "off", "minimal"),
        (None, "nonsense", "off"),
    ],
)
def test_a_missing_level_becomes_the_nearest(level_map: Any, asked: str, runs: str) -> None:
    assert clamp_level(model(thinking_level_map=level_map), asked) == runs


def test_requests_ask_for_no_thinking_when_off_or_not_reasoning() -> None:
    assert request_level(model(), "off") is None
    assert request_level(model(reasoning=False), "max") is None
    assert request_level(model(), "max") == "high"


def test_the_catalogue_knows_which_of_its_models_have_max(agent_dir: Any) -> None:
    registry = ModelRegistry()
    opus = registry.find("anthropic/claude-opus-4-7")
    haiku = registry.find("anthropic/claude-haiku-4-5")
    assert opus is not None and haiku is not None
    assert clamp_level(opus.model, "max") == "max" and clamp_level(opus.model, "xhigh") == "xhigh"
    assert clamp_level(haiku.model, "max") == "high"


def test_the_agent_records_the_level_that_runs(tmp_path: Any) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    agent = AgentSession(manager, model(thinking_level_map={"max": "max"}))
    agent.set_thinking_level("max")
    assert agent.thinking_level == "max"
    agent.set_model(model(id="plain"))  # no max here: the nearest level it has
    assert agent.thinking_level == "high"
    agent.set_model(model(id="flat", reasoning=False))
    assert agent.thinking_level == "off"
    entries = manager.get_entries()
    recorded = [entry.thinking_level for entry in entries if entry.type == "thinking_level_change"]
    assert recorded[-3:] == ["max", "high", "off"]
