"""/scoped-models over pi's catalogue: typing filters the list with pi's fuzzy search (typing
``deep`` changed nothing), Ctrl+A / Ctrl+X act on the listed models as in pi, Space still
toggles while the filter is empty, and the key help is read whole at 80 and 140 columns (one
long line was cut at "esc keep for now ·")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from pi_tui.tui.screens.scoped_models import ScopedModelsScreen
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, screen_text


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two providers with many models between them (OpenCode's and DeepSeek's)."""
    monkeypatch.setenv("OPENCODE_API_KEY", "k")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")


async def open_screen(app: Any, pilot: Any) -> ScopedModelsScreen:
    app.run_slash("scoped-models", "")
    screen = await wait_for_screen(pilot, app, ScopedModelsScreen)
    await wait_until(pilot, lambda: bool(screen.shown), "the list to fill")
    return screen


async def test_typing_filters_and_ctrl_a_turns_on_the_listed_models(
    project: Path, agent_dir: Path, keys: None
) -> None:
    app = make_app(project, provider="deepseek")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await open_screen(app, pilot)
        everything = list(screen.shown)
        assert len(everything) > 20
        await pilot.press("space")  # the filter is empty: Space toggles the first model
        assert screen.enabled == [everything[0]] and screen.query_one(Input).value == ""
        await pilot.press("ctrl+x")
        await pilot.press(*"deepseek")
        await wait_until(pilot, lambda: len(screen.shown) < len(everything), "the list to narrow")
        assert screen.shown[0].startswith("deepseek/")
        await pilot.press("ctrl+a")
        assert set(screen.enabled) == set(screen.shown)
        await pilot.press("enter")  # the highlighted (first) listed model off again
        assert screen.shown[0] not in screen.enabled
        chosen = [key for key in screen.shown if key in screen.enabled]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, ScopedModelsScreen), "the screen to close")
        saved = json.loads((agent_dir / "settings.json").read_text())["enabledModels"]
        assert saved == chosen and len(chosen) == len(screen.shown) - 1


@pytest.mark.parametrize("width", [80, 140])
async def test_the_key_help_is_read_whole(project: Path, keys: None, width: int) -> None:
    app = make_app(project, provider="deepseek")
    async with app.run_test(size=(width, 40)) as pilot:
        await open_screen(app, pilot)
        text = screen_text(app)
        for part in ("enter toggle", "ctrl+p provider", "alt+↑↓ order", "ctrl+s save", "esc keep for now"):
            assert part in text, (width, part)
