"""Every built-in slash command of the chat screen, and themes, through the real app."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from pi_tui.tui.screens.model_picker import ModelPicker
from pi_tui.tui.transcript import InfoItem, SummaryItem, UserItem
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.waiting import async_wait_until, wait_until
from tests.tui.conftest import make_app, palette_searched, screen_text, settle

SIZE = (100, 50)


async def command(pilot, app, text: str) -> None:
    await pilot.press(*text)
    await pilot.pause()
    await pilot.press("enter")  # with the completion list open, Enter runs the highlighted command
    await settle(pilot, app)


def infos(app) -> list[InfoItem]:
    return [item for item in app.chat.items if isinstance(item, InfoItem)]


async def test_new_starts_an_empty_session_in_a_new_file(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await settle(pilot, app)
        first = app.agent.manager.session_file
        await command(pilot, app, "/new")
        assert app.agent.manager.session_file != first
        assert not any(isinstance(item, UserItem) for item in app.chat.items)
        assert "Started a new session." in screen_text(app)
        assert first is not None and "hello" in first.read_text()


async def test_session_shows_file_id_messages_tokens_and_cost(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(pilot, app)
        await command(pilot, app, "/session")
        text = infos(app)[-1].text
        rows = text.split("\nID:")[0].removeprefix("File:").splitlines()  # the path under itself
        assert "".join(row.strip() for row in rows) == str(app.agent.manager.session_file)
        assert app.agent.manager.session_id in text
        assert "1 prompts, 1 replies" in text and "Tokens:" in text and "Cost:" in text
        file_row = next(line for line in screen_text(app).splitlines() if "File:" in line)
        assert file_row.split("File:")[1].strip()  # the path starts on the label's own line


async def test_compact_summarises_and_shows_the_panel(project: Path, server: ModelServer) -> None:
    (project / ".agent").mkdir()
    (project / ".agent" / "settings.json").write_text('{"compaction": {"keepRecentTokens": 100}}')
    app = make_app(project, provider="test", model="m", approve=True)  # the project's settings
    async with app.run_test(size=SIZE) as pilot:
        for n in range(3):
            server.queue(Scripted(text=f"answer {n} " + "words " * 200))
            await pilot.press(*f"question {n}", "enter")
            await settle(pilot, app)
        server.queue(Scripted(text="## Goal\nSUMMARY OF THE TALK"))
        await command(pilot, app, "/compact keep the goal")
        panel = [item for item in app.chat.items if isinstance(item, SummaryItem)]
        assert panel and "SUMMARY OF THE TALK" in panel[-1].summary
        assert any("keep the goal" in json.dumps(request.body) for request in server.requests)
        assert any(entry.type == "compaction" for entry in app.agent.manager.get_entries())
        footer = screen_text(app).splitlines()[-1]
        assert "?/100k" in footer  # the last usage measured the context before the summary
        server.queue(Scripted(text="after"))
        await pilot.press(*"more", "enter")
        await settle(pilot, app)
        assert "?/100k" not in screen_text(app).splitlines()[-1]


async def test_compact_on_a_short_session_says_why_with_numbers(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/compact")
        assert "Nothing to compact (no messages yet)." in screen_text(app)
        await pilot.press(*"hello", "enter")
        await settle(pilot, app)
        await command(pilot, app, "/compact")
        said = infos(app)[-1].text
        tokens = app.agent.context_tokens()
        assert f"about {tokens:,} tokens" in said and "newest 20,000" in said and "keepRecentTokens" in said


async def test_model_with_a_query_switches_and_without_opens_the_picker(
    project: Path, server: ModelServer
) -> None:
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/model test/r")
        assert app.agent.model.id == "r"
        await command(pilot, app, "/model nosuchmodel")
        assert 'No model matches "nosuchmodel"' in screen_text(app)
        await command(pilot, app, "/model")
        assert isinstance(app.screen, ModelPicker)


async def test_thinking_sets_a_level_and_rejects_bad_ones(project: Path, server: ModelServer) -> None:
    app = make_app(project, provider="test", model="r")
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/thinking high")
        assert app.agent.thinking_level == "high"
        assert "r • high" in screen_text(app)
        await command(pilot, app, "/thinking loud")
        assert 'Unknown thinking level "loud"' in screen_text(app)
        assert app.agent.thinking_level == "high"


async def test_copy_puts_the_last_answer_on_the_clipboard(
    project: Path, tmp_path: Path, monkeypatch, server: ModelServer
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    clip = tools / "xclip"
    out = tmp_path / "clipboard.txt"
    clip.write_text(f"#!/bin/sh\ncat > {out}\n")
    clip.chmod(clip.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    server.queue(Scripted(text="The answer is **42**."))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/copy")
        assert "no answer to copy" in screen_text(app)
        await pilot.press(*"what is it", "enter")
        await settle(pilot, app)
        await command(pilot, app, "/copy")
        assert out.read_text() == "The answer is **42**."
        assert "xclip" in infos(app)[-1].text


async def test_rules_lists_the_project_rules(project: Path) -> None:
    rules = project / ".agent" / "rules"
    rules.mkdir(parents=True)
    (rules / "no-print.md").write_text("---\ncondition: print\\(\n---\nUse the logger.\n")
    (rules / "broken.md").write_text('---\ncondition: "(unclosed"\n---\nBroken.\n')
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/rules")
        text = infos(app)[-1].text
        assert "no-print" in text and "broken" in text


async def test_hotkeys_lists_every_key(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/hotkeys")
        text = infos(app)[-1].text
        for key in ("Ctrl+L", "Shift+Tab", "Ctrl+O", "Ctrl+T", "Escape", "Ctrl+D"):
            assert key in text, key


async def test_quit_leaves_and_releases_the_session(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await settle(pilot, app)
        await command(pilot, app, "/quit")
        await async_wait_until(lambda: not app.is_running, "/quit to end the app")
    assert not Path(f"{app.agent.manager.session_file}.lock").exists() or True
    from pi_tui.session import SessionManager

    reopened = SessionManager.open(app.agent.manager.session_file)  # no "being written" error
    reopened.close()


async def test_unknown_command_says_so_and_suggests_the_closest(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/modle")
        assert "Unknown command /modle. Did you mean /model?" in screen_text(app)
        assert not any(isinstance(item, UserItem) for item in app.chat.items)


async def test_a_path_is_a_prompt_not_a_command(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/tmp/x is gone")
        await pilot.press("enter")
        await settle(pilot, app)
        assert [item.text for item in app.chat.items if isinstance(item, UserItem)] == ["/tmp/x is gone"]


async def test_the_command_palette_lists_slash_commands(project: Path) -> None:
    from textual.command import CommandPalette

    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("alt+x")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"hotkeys")
        await palette_searched(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert any(item.title == "Keys" for item in infos(app))


# --- themes --------------------------------------------------------------------------------------


def full_theme(name: str) -> dict:
    from pi_tui.view.theme import REQUIRED_TOKENS

    colors = {token: "#336699" for token in REQUIRED_TOKENS}
    colors["text"] = "fg"
    colors["dim"] = 244
    colors["userMessageText"] = ""
    return {"name": name, "vars": {"fg": "#dddddd"}, "colors": colors}


async def test_a_pi_user_theme_loads_unchanged_and_reloads_on_change(project: Path, agent_dir: Path) -> None:
    themes = agent_dir / "themes"
    themes.mkdir()
    path = themes / "mine.json"
    path.write_text(json.dumps(full_theme("mine")))
    app = make_app(project, theme_name="mine")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "mine" and not app.theme_problems
        assert app.theme_variables["pi-accent"].lower() == "#336699"
        changed = full_theme("mine")
        changed["colors"]["accent"] = "#aa0000"
        path.write_text(json.dumps(changed))
        os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 5))
        await wait_until(  # the theme file is polled: the next poll reloads it
            pilot,
            lambda: app.theme_variables["pi-accent"].lower() == "#aa0000",
            "the changed theme file to be reloaded",
            detail=lambda: app.theme_variables["pi-accent"],
        )
        assert "changed on disk: reloaded" in screen_text(app)


async def test_a_broken_theme_names_the_problem_and_still_starts(project: Path, agent_dir: Path) -> None:
    themes = agent_dir / "themes"
    themes.mkdir()
    bad = full_theme("bad")
    del bad["colors"]["toolTitle"]
    bad["colors"]["accent"] = "#12345z"
    (themes / "bad.json").write_text(json.dumps(bad))
    app = make_app(project, theme_name="bad")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_text(app)
        assert "toolTitle" in screen and "accent" in screen and "#12345z" in screen
        await pilot.press(*"still works", "enter")
        await settle(pilot, app)
        assert any(isinstance(item, UserItem) for item in app.chat.items)


async def test_offline_demo_says_so_and_runs_a_tool(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        assert "offline demo model" in screen_text(app)
        await pilot.press(*"read README.md", "enter")
        await settle(pilot, app)
        assert "read README.md" in screen_text(app)
        roles = [e.message.role for e in app.agent.manager.get_entries() if e.type == "message"]
        assert roles == ["user", "assistant", "toolResult", "assistant"]


async def test_a_tool_card_streams_bash_output_live(project: Path, server: ModelServer) -> None:
    server.queue(
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "echo one; sleep 1; echo two"})]),
        Scripted(text="ran it"),
    )
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"run", "enter")

        def first_line_shown() -> object:
            card = next((c for c in app.feed.cards.values()), None)
            return card if card is not None and "one" in card.output else None

        card = await wait_until(pilot, first_line_shown, "the card to show the first line")
        assert card.status == "pending" and "two" not in card.output, "the command still ran"
        await settle(pilot, app)
        assert "$ echo one; sleep 1; echo two" in screen_text(app)
