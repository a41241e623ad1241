"""Start-up flags and settings the interactive mode shows: --theme / --no-themes, quietStartup
and --verbose, the header's key help (Ctrl+O expands it), Ctrl+P / Shift+Ctrl+P over the
enabledModels scope."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.start_options import StartOptions
from pi_tui.startup import start
from pi_tui.tui.app import PiApp
from pi_tui.tui.widgets.header import PiHeader
from tests.support.model_server import ModelServer
from tests.support.waiting import wait_for_screen
from tests.tui.conftest import make_app, screen_text

SIZE = (120, 40)


def app_with(project: Path, **options) -> PiApp:
    started = start(StartOptions(cwd=str(project), **options))
    return PiApp(started, cwd=str(project), display_cwd="~/project")


def write_theme(folder: Path, name: str, accent: str) -> Path:
    source = json.loads((Path(__file__).resolve().parents[2] / "themes" / "dark.json").read_text())
    source["name"] = name
    source.setdefault("vars", {})
    source["colors"]["accent"] = accent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(source))
    return path


async def test_theme_flag_loads_a_theme_file_and_no_themes_hides_the_agent_dirs(
    project: Path, agent_dir: Path, tmp_path: Path
) -> None:
    write_theme(agent_dir / "themes", "mine", "#ff0000")
    given = write_theme(tmp_path / "elsewhere", "sunrise", "#00ff00")
    app = app_with(project, theme_paths=[str(given)], no_themes=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.pi_theme_name == "sunrise"
        assert "sunrise" in app.theme_files() and "mine" not in app.theme_files()
    app = app_with(project, theme_paths=["light"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.pi_theme_name == "light" and "mine" in app.theme_files()


def test_themes_setting_offers_the_themes_it_names(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    """pi's settings ``themes``: files or folders (relative: beside settings.json) offered like
    ``--theme`` folders; ``--no-themes`` leaves them out as it does the agent dir's."""
    write_theme(agent_dir / "team-themes", "harbour", "#0000ff")
    single = write_theme(tmp_path / "loose", "dusk", "#00ffff")
    (agent_dir / "settings.json").write_text(json.dumps({"themes": ["team-themes", str(single), "gone"]}))
    offered = app_with(project).theme_files()
    assert offered["harbour"] == agent_dir / "team-themes" / "harbour.json"
    assert offered["dusk"] == single
    hidden = app_with(project, no_themes=True).theme_files()
    assert "harbour" not in hidden and "dusk" not in hidden


async def test_header_help_expands_with_ctrl_o_and_quiet_startup_hides_it(
    project: Path, agent_dir: Path
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "for every key" in text and "alt+x palette" in text and "ctrl+p next model" in text
        assert "Edit the message in $VISUAL / $EDITOR" not in text
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.query_one(PiHeader).expanded
        assert "Edit the message in $VISUAL / $EDITOR" in screen_text(app)
    (agent_dir / "settings.json").write_text(json.dumps({"quietStartup": True}))
    app = app_with(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        header = str(app.query_one(PiHeader).render())
        assert "pi-tui" in header and "palette" not in header and "Loaded" not in header
    app = app_with(project, verbose=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "palette" in str(app.query_one(PiHeader).render())


async def test_ctrl_p_and_shift_ctrl_p_walk_the_enabled_models(project: Path, agent_dir: Path) -> None:
    with ModelServer() as server:
        models = [{"id": "one", "reasoning": True}, {"id": "two"}, {"id": "three"}]
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=models)))
        (agent_dir / "settings.json").write_text(
            json.dumps({"enabledModels": ["test/one:low", "test/three"]})
        )
        app = app_with(project, provider="test", model="one")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+p")
            assert app.agent.model.id == "three"
            await pilot.press("ctrl+p")
            assert app.agent.model.id == "one" and app.agent.thinking_level == "low"
            await pilot.press("ctrl+shift+p")
            assert app.agent.model.id == "three"
            assert "three" in screen_text(app).splitlines()[-1]
            entries = [raw for raw in app.agent.manager.iter_raw_entries() if raw["type"] == "model_change"]
            assert [raw["modelId"] for raw in entries][-3:] == ["three", "one", "three"]


async def test_scoped_models_screen_chooses_orders_and_saves_the_cycle(
    project: Path, agent_dir: Path
) -> None:
    from pi_tui.tui.screens.scoped_models import ScopedModelsScreen

    with ModelServer() as server:
        models = [{"id": "one"}, {"id": "two"}, {"id": "three"}]
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=models)))
        app = app_with(project, provider="test", model="one")
        async with app.run_test(size=SIZE) as pilot:
            app.run_slash("scoped-models", "")
            screen = await wait_for_screen(pilot, app, ScopedModelsScreen)
            assert isinstance(screen, ScopedModelsScreen)
            test_keys = [key for key in screen.order if key.startswith("test/")]
            assert test_keys == ["test/one", "test/two", "test/three"]
            start = screen.order.index("test/one")
            screen.query_one("OptionList").highlighted = start
            await pilot.press("space", "down", "down", "space")  # one and three on
            assert screen.enabled == ["test/one", "test/three"]
            await pilot.press("alt+up")  # three before one
            assert screen.enabled == ["test/three", "test/one"]
            await pilot.press("ctrl+s")
            await pilot.pause()
            saved = json.loads((agent_dir / "settings.json").read_text())
            assert saved["enabledModels"] == ["test/three", "test/one"]
            await pilot.press("ctrl+p")
            assert app.agent.model.id == "three"
            await pilot.press("ctrl+p")
            assert app.agent.model.id == "one"
            app.run_slash("scoped-models", "")
            await wait_for_screen(pilot, app, ScopedModelsScreen)
            await pilot.press("ctrl+x", "escape")  # none, for this session only
            await pilot.pause()
            assert app.started.scoped_models == []
            assert json.loads((agent_dir / "settings.json").read_text())["enabledModels"] == [
                "test/three",
                "test/one",
            ]
