"""/secrets and the /settings switch in the app (issue 17)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pi_tui.secrets.active import current_setup
from pi_tui.tui.transcript import InfoItem
from tests.tui.conftest import make_app, settle
from tests.tui.test_settings import SIZE, choose, open_settings, value_of


def said(app: object) -> list[InfoItem]:
    return [item for item in app.chat.items if isinstance(item, InfoItem)]  # type: ignore[attr-defined]


async def test_secrets_command_and_switch(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789abcdef")
    (agent_dir / "secrets.yml").write_text("- content: zebra-42-orbit\n- type: regex\n  content: '(bad'\n")
    app = make_app(project, model="offline/demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.run_slash("secrets", "")
        await pilot.pause()
        assert said(app)[-1].title == "Secrets"
        text = said(app)[-1].text
        assert text.startswith("Hiding secrets: off.") and "tok-0123456789abcdef" not in text
        # the switch in /settings gathers them again at once, saves it, and says what is wrong
        screen = await open_settings(pilot, app)
        assert value_of(screen, "secrets") == "false"
        await choose(pilot, app, screen, "secrets")
        assert value_of(screen, "secrets") == "true"
        await pilot.press("escape")
        await settle(pilot, app)
        assert json.loads((agent_dir / "settings.json").read_text())["secrets"] == {"enabled": True}
        setup = current_setup()
        assert setup is not None and setup.enabled
        assert {"tok-0123456789abcdef", "zebra-42-orbit"} <= set(setup.obfuscator.plain)
        assert any("bad regex" in item.text for item in said(app))
        app.run_slash("secrets", "")
        await pilot.pause()
        text = said(app)[-1].text
        assert text.startswith("Hiding secrets: on")
        assert re.search(r"^  environment variables: [1-9]", text, re.M) and "secrets.yml: 1" in text
        assert "Built-in patterns: aws-access-key" in text
        assert "zebra" not in text and "tok-0123" not in text  # never the values
