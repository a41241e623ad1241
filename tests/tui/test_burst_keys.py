"""Keys sent in one burst (tmux ``send-keys``, a paste-speed typist, ssh catching up) reach the
pickers' text boxes in the order they were typed, through the real app.

The keys are posted to the app all at once, as the terminal driver does when they arrive in one
read, and only then does the test wait: Textual's ``Input`` ran its editing keys (Left,
Backspace) after the characters that followed them, so the model filter showed ``abcdefX`` for
``abcdef`` Left x4 ``X`` and /login saved the key ``ab`` for ``abcdef`` Backspace x6 ``gh``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import Input

from pi_tui.tui.screens.model_picker import ModelPicker
from pi_tui.tui.screens.prompts import TextPrompt
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, settle
from tests.tui.test_more_commands import type_command

SIZE = (100, 40)
LEFT_BURST = (*"abcdef", "left", "left", "left", "left", "X")
BACKSPACE_BURST = (*"abcdef", *["backspace"] * 6, *"gh")


def burst(app: Any, keys: tuple[str, ...]) -> None:
    """Every key queued at once, before the app has handled the first."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_the_model_filter_keeps_a_burst_in_order(project: Path, server: Any) -> None:
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/model")
        picker = await wait_for_screen(pilot, app, ModelPicker)
        box = picker.query_one(Input)
        burst(app, LEFT_BURST)
        await wait_until(pilot, lambda: len(box.value) == 7, "the burst to be typed")
        await pilot.pause()
        assert box.value == "abXcdef"
        box.value = ""
        burst(app, BACKSPACE_BURST)
        await wait_until(pilot, lambda: "g" in box.value, "the burst to be typed")
        await pilot.pause()
        assert box.value == "gh"


async def test_a_login_key_typed_in_a_burst_is_saved_as_typed(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login deepseek")
        await wait_for_screen(pilot, app, TextPrompt)
        burst(app, (*BACKSPACE_BURST, "enter"))
        await settle(pilot, app)
        auth = agent_dir / "auth.json"
        await wait_until(pilot, auth.exists, "the key to be saved")
        assert json.loads(auth.read_text())["deepseek"]["key"] == "gh"
