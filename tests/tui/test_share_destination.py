"""``sessionShareDestination`` (pi 1.x) in /share: a gist for ``auto`` and ``gist``; ``radius``
(pi's makers' hosted service, never a gist in pi) is refused in one line, with nothing run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_export_jsonl import said
from tests.tui.conftest import make_app
from tests.tui.test_export_share import fake_gh, project_with_session, run_and_wait

__all__ = ["fake_gh"]  # the fixture, used by name below


@pytest.mark.parametrize("destination", ["auto", "gist"])
async def test_auto_and_gist_share_a_gist(
    destination: str, fake_gh: Path, tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"sessionShareDestination": destination}))
    project, source = project_with_session(tmp_path)
    monkeypatch.setenv("GH_LOGGED_IN", "1")
    app = make_app(project, session=str(source), model="offline/demo")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        await run_and_wait(pilot, app, "share", "", "Gist:")
        assert "Gist: https://gist.github.com/someone/0123456789abcdef" in said(app)


async def test_radius_is_refused_and_nothing_is_uploaded(
    fake_gh: Path, tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"sessionShareDestination": "radius"}))
    project, source = project_with_session(tmp_path)
    monkeypatch.setenv("GH_LOGGED_IN", "1")
    app = make_app(project, session=str(source), model="offline/demo")
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        await run_and_wait(pilot, app, "share", "", "sessionShareDestination")
        assert 'sessionShareDestination is "radius": pi-tui shares by GitHub gist only' in said(app)
    assert not (fake_gh / "gh.log").exists()  # gh was never run
