"""/login, /logout, /import, /reload and /changelog through the real app (pilot)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pi_tui.messages import AssistantMessage, TextContent, UserMessage
from pi_tui.session import SessionManager
from pi_tui.tui.screens.prompts import ChoiceMenu, ConfirmPrompt, TextPrompt
from pi_tui.tui.transcript import InfoItem, UserItem
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (100, 50)
SECRET = "sk-pilot-secret-0123456789"


async def type_command(pilot, app, text: str) -> None:
    await pilot.press(*text)
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


async def choose(pilot, app, label_start: str) -> None:
    """Pick the row of the open ChoiceMenu whose label starts with ``label_start``."""
    from textual.widgets import OptionList

    menu = await wait_for_screen(pilot, app, ChoiceMenu)
    index = next(i for i, (_value, label) in enumerate(menu.choices) if label.startswith(label_start))
    menu.query_one(OptionList).highlighted = index
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


def infos(app) -> list[InfoItem]:
    return [item for item in app.chat.items if isinstance(item, InfoItem)]


def keyless_server_models(agent_dir: Path, server: ModelServer) -> None:
    """Provider ``test`` served by the loopback server, with no key anywhere."""
    document = server.models_json()
    del document["providers"]["test"]["apiKey"]
    (agent_dir / "models.json").write_text(json.dumps(document))


# --- /login -------------------------------------------------------------------------------------------


async def test_login_saves_a_key_that_the_next_message_uses(project: Path, agent_dir: Path) -> None:
    with ModelServer() as server:
        keyless_server_models(agent_dir, server)
        app = make_app(project)
        async with app.run_test(size=SIZE) as pilot:
            assert app.agent.model.provider == "offline"
            await type_command(pilot, app, "/login")
            menu = await wait_for_screen(pilot, app, ChoiceMenu)
            labels = [label for _value, label in menu.choices]
            assert any(label.startswith("test  • not configured") for label in labels)
            assert any(label.startswith("Groq") for label in labels)
            assert not any(label.startswith(("Ollama", "offline")) for label in labels)
            await choose(pilot, app, "test")
            await wait_for_screen(pilot, app, TextPrompt)
            await pilot.press(*SECRET)
            await pilot.pause()
            assert SECRET not in screen_text(app)  # typed as dots
            assert "•" * 8 in screen_text(app)
            await pilot.press("enter")
            await settle(pilot, app)
            auth = agent_dir / "auth.json"
            assert json.loads(auth.read_text()) == {"test": {"type": "api_key", "key": SECRET}}
            assert stat.S_IMODE(auth.stat().st_mode) == 0o600
            said = infos(app)[-1].text
            assert said.startswith("Saved API key for test. Selected test/m.")
            assert str(auth) in said
            assert (app.agent.model.provider, app.agent.model.id) == ("test", "m")

            server.queue(Scripted(text="hello from the server"))
            await pilot.press(*"hi", "enter")
            await settle(pilot, app)
            assert server.requests[-1].header("authorization") == f"Bearer {SECRET}"
            assert SECRET not in screen_text(app)
            session_file = app.agent.manager.session_file
            assert session_file is not None and SECRET not in session_file.read_text()


async def test_login_cancelled_or_empty_saves_nothing(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login")
        await choose(pilot, app, "Groq")
        await wait_for_screen(pilot, app, TextPrompt)
        await pilot.press("enter")
        await settle(pilot, app)
        assert infos(app)[-1].text == "Failed to save API key for Groq: the key is empty."
        await type_command(pilot, app, "/login")
        await choose(pilot, app, "Groq")
        await wait_for_screen(pilot, app, TextPrompt)
        await pilot.press("escape")
        await settle(pilot, app)
        assert not (agent_dir / "auth.json").exists()


async def test_login_into_a_broken_auth_file_says_so_and_keeps_it(project: Path, agent_dir: Path) -> None:
    (agent_dir / "auth.json").write_text('{"groq": ')
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/login")
        await choose(pilot, app, "Groq")
        await wait_for_screen(pilot, app, TextPrompt)
        await pilot.press(*SECRET, "enter")
        await settle(pilot, app)
        said = infos(app)[-1]
        assert said.level == "error" and "invalid JSON" in said.text and "auth.json" in said.text
        assert SECRET not in said.text
        assert (agent_dir / "auth.json").read_text() == '{"groq": '


# --- /logout ------------------------------------------------------------------------------------------


async def test_logout_removes_one_saved_key_and_keeps_the_rest(project: Path, agent_dir: Path) -> None:
    oauth = {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}
    # a login of a provider listed after groq: groq's key still chooses the model at start
    saved = {"groq": {"type": "api_key", "key": "gsk-123456"}, "kimi-coding": oauth}
    (agent_dir / "auth.json").write_text(json.dumps(saved))
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/logout")
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert [label for _v, label in menu.choices] == [
            "Groq  • API key",
            "Kimi For Coding  • subscription",
        ]
        await choose(pilot, app, "Groq")
        await settle(pilot, app)
        removed, warning = infos(app)[-2:]
        assert removed.text.startswith("Removed the saved API key for Groq.")
        # the key chose the model at start; without it the next message would fail: say so now
        assert app.agent.model.provider == "groq"
        assert warning.level == "warning" and "has no API key now" in warning.text
        path = agent_dir / "auth.json"
        assert json.loads(path.read_text()) == {"kimi-coding": oauth}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_logout_with_nothing_saved_says_what_it_removes(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, app, "/logout")
        await settle(pilot, app)
        assert infos(app)[-1].text.startswith("No saved credentials to remove.")
        assert not isinstance(app.screen, ChoiceMenu)


# --- /import ------------------------------------------------------------------------------------------


def outside_session(project: Path, folder: Path, text: str) -> Path:
    manager = SessionManager.create(str(project), folder)
    manager.append_model_change("offline", "demo")
    manager.append_message(UserMessage(content=text, timestamp=1))
    manager.append_message(
        AssistantMessage(content=[TextContent(text="ok")], provider="offline", model="demo", timestamp=2)
    )
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


async def test_import_copies_the_file_into_the_session_folder_and_continues_in_it(
    project: Path, tmp_path: Path
) -> None:
    source = outside_session(project, tmp_path / "elsewhere", "IMPORTED QUESTION")
    before = source.read_bytes()
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        folder = app.agent.manager.session_dir
        await type_command(pilot, app, f"/import {source}")
        confirm = await wait_for_screen(pilot, app, ConfirmPrompt)
        assert confirm.question == f"Replace current session with {source}?"
        await pilot.press("y")
        await settle(pilot, app)
        assert app.agent.manager.session_file == folder / source.name
        assert stat.S_IMODE((folder / source.name).stat().st_mode) == 0o600
        assert any(isinstance(i, UserItem) and "IMPORTED QUESTION" in i.text for i in app.chat.items)
        assert infos(app)[-1].text == f"Session imported from: {source}"
        await pilot.press(*"and more", "enter")
        await settle(pilot, app)
        assert "and more" in (folder / source.name).read_text()
        assert source.read_bytes() == before  # the original is not touched


async def test_import_never_overwrites_a_session_of_the_same_name(project: Path, tmp_path: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        folder = app.agent.manager.session_dir
        source = outside_session(project, tmp_path / "elsewhere", "NEW ONE")
        folder.mkdir(parents=True, exist_ok=True)
        clash = folder / source.name
        clash.write_text(outside_session(project, tmp_path / "other", "OLD ONE").read_text())
        await type_command(pilot, app, f"/import {source}")
        await wait_for_screen(pilot, app, ConfirmPrompt)
        await pilot.press("y")
        await settle(pilot, app)
        assert "OLD ONE" in clash.read_text()
        assert app.agent.manager.session_file == folder / f"{source.stem}-imported-1.jsonl"
        assert "(saved as" in infos(app)[-1].text


async def test_import_mistakes_are_one_line_and_change_nothing(project: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("this is not a session\n")
    source = outside_session(project, tmp_path / "elsewhere", "X")
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        first = app.agent.manager.session_file
        await type_command(pilot, app, "/import")
        assert infos(app)[-1].text == "Usage: /import <path.jsonl>"
        await type_command(pilot, app, "/import missing.jsonl")
        assert infos(app)[-1].text == f"Failed to import session: File not found: {project / 'missing.jsonl'}"
        await type_command(pilot, app, f"/import {broken}")
        said = infos(app)[-1]
        assert said.level == "error" and "not a session file" in said.text and "\n" not in said.text
        await type_command(pilot, app, f"/import {source}")
        await wait_for_screen(pilot, app, ConfirmPrompt)
        await pilot.press("n")
        await settle(pilot, app)
        assert infos(app)[-1].text == "Import cancelled"
        assert app.agent.manager.session_file == first
        assert not list(app.agent.manager.session_dir.glob(source.name))


# --- /reload ------------------------------------------------------------------------------------------


async def test_reload_reads_context_files_settings_and_keybindings_again(
    project: Path, agent_dir: Path
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        assert "RELOADED PROJECT RULE" not in app.agent.system_prompt
        assert app.show_thinking
        (project / "AGENTS.md").write_text("RELOADED PROJECT RULE\n")
        (agent_dir / "settings.json").write_text(json.dumps({"hideThinkingBlock": True}))
        (agent_dir / "keybindings.json").write_text(json.dumps({"app.thinking.toggle": "ctrl+k"}))
        await type_command(pilot, app, "/reload")
        await settle(pilot, app)
        assert "RELOADED PROJECT RULE" in app.agent.system_prompt
        assert not app.show_thinking
        assert app.agent.settings.hide_thinking_block is True
        said = [item.text for item in infos(app)]
        assert any(t.startswith("Reloaded settings, models.json, auth.json and keybindings.") for t in said)
        assert "AGENTS.md" in " ".join(said)
        assert "AGENTS.md" in screen_text(app)  # the header's Loaded line
        assert not [item for item in infos(app)[1:] if item.level == "warning"]  # [0]: offline demo
        await pilot.press("ctrl+k")  # the key keybindings.json gives the action now
        await pilot.pause()
        assert app.show_thinking
        await pilot.press("ctrl+t")  # and no longer the old one
        await pilot.pause()
        assert app.show_thinking


async def test_reload_says_each_problem_in_one_line_and_keeps_going(project: Path, agent_dir: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        (agent_dir / "keybindings.json").write_text('{"app.nope": "ctrl+k"}')
        (agent_dir / "settings.json").write_text("{not json")
        (project / "AGENTS.md").write_text("STILL READ\n")
        await type_command(pilot, app, "/reload")
        await settle(pilot, app)
        warnings = [item.text for item in infos(app) if item.level == "warning"]
        assert any(w.startswith("settings: ") for w in warnings)
        assert any(w.startswith("keybindings: ") and "app.nope" in w for w in warnings)
        assert all("\n" not in w for w in warnings)
        assert "STILL READ" in app.agent.system_prompt


async def test_reload_waits_for_a_running_reply(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        import asyncio

        sleeper = asyncio.ensure_future(asyncio.sleep(30))
        app.track_cancellable(sleeper)  # cancellable work (a branch summary) makes the app busy
        await type_command(pilot, app, "/reload")
        await wait_until(pilot, lambda: infos(app), "/reload to answer")
        assert "Wait for the current response" in infos(app)[-1].text
        app.abort()
        await settle(pilot, app)


# --- /changelog ---------------------------------------------------------------------------------------


async def test_changelog_shows_the_packaged_changelog_as_markdown(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=(120, 200)) as pilot:
        await type_command(pilot, app, "/changelog")
        await settle(pilot, app)
        item = infos(app)[-1]
        assert item.markdown and item.title == "What's New"
        assert item.text.startswith("## [0.1.0]")
        text = screen_text(app)
        assert "What's New" in text
        assert "## [" not in text and "### " not in text  # rendered, not shown as source
        assert "Sessions" in text and "`/login`" not in text


# --- snapshots ----------------------------------------------------------------------------------------


def test_login_provider_picker_snapshot(snap_compare, project: Path, monkeypatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-from-the-environment")
    assert snap_compare(make_app(project), press=[*"/login", "enter"], terminal_size=(100, 30))


def test_login_key_prompt_snapshot(snap_compare, project: Path) -> None:
    app = make_app(project)

    async def run_before(pilot) -> None:
        await type_command(pilot, app, "/login")
        await choose(pilot, app, "Groq")
        await wait_for_screen(pilot, app, TextPrompt)
        await pilot.press(*SECRET)
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=(100, 30))


async def test_logout_then_login_switches_the_current_models_key_without_restart(
    project: Path, agent_dir: Path, monkeypatch
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    with ModelServer() as server:
        models = {"groq": {"baseUrl": server.base_url, "api": "openai-completions", "models": [{"id": "m"}]}}
        (agent_dir / "models.json").write_text(json.dumps({"providers": models}))
        saved = {"groq": {"type": "api_key", "key": "gsk-old-key-1"}}
        (agent_dir / "auth.json").write_text(json.dumps(saved))
        app = make_app(project, provider="groq", model="m")
        async with app.run_test(size=SIZE) as pilot:
            server.queue(Scripted(text="one"))
            await pilot.press(*"first", "enter")
            await settle(pilot, app)
            assert server.requests[-1].header("authorization") == "Bearer gsk-old-key-1"
            await type_command(pilot, app, "/logout")
            await choose(pilot, app, "Groq")
            await settle(pilot, app)
            assert "has no API key now" in infos(app)[-1].text
            await type_command(pilot, app, "/login")
            await choose(pilot, app, "Groq")
            await wait_for_screen(pilot, app, TextPrompt)
            await pilot.press(*"gsk-new-key-2", "enter")
            await settle(pilot, app)
            assert infos(app)[-1].text.startswith("Saved API key for Groq. Credentials saved to")
            server.queue(Scripted(text="two"))
            await pilot.press(*"second", "enter")
            await settle(pilot, app)
            assert server.requests[-1].header("authorization") == "Bearer gsk-new-key-2"
            assert (app.agent.model.provider, app.agent.model.id) == ("groq", "m")
