"""The footer names the provider before the model when the user has more than one to choose
from (pi's rule: the providers of the Ctrl+P scope, else of every model with a key): after
choosing opencode/claude-sonnet-4-6 pi shows ``(opencode) claude-sonnet-4-6``, pi-tui showed only
``claude-sonnet-4-6``, which Anthropic, OpenCode and OpenRouter all sell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.tui.widgets.footer import PiFooter
from tests.tui.conftest import make_app, settle

SIZE = (100, 30)


def footer_text(app: Any) -> str:
    return str(app.query_one(PiFooter).render())


async def test_one_provider_shows_the_model_alone(project: Path, server: Any) -> None:
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        text = footer_text(app)
        assert "r • thinking off" in text or "r • " in text
        assert "(test)" not in text


async def test_two_providers_show_the_provider_before_the_model(
    project: Path, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCODE_API_KEY", "k")
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "(test) r • " in footer_text(app)
        app.agent.set_model(app.started.registry.get("opencode", "claude-sonnet-4-6"), source="test")
        app.refresh_footer()
        await pilot.pause()
        assert "(opencode) claude-sonnet-4-6" in footer_text(app)


async def test_a_scope_of_one_provider_shows_the_model_alone(
    project: Path, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCODE_API_KEY", "k")
    app = make_app(project, provider="test", model="r", models=["test/*"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "(test)" not in footer_text(app)
