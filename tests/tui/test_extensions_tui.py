"""Extensions in the real app (pilot): the trust question, ctx.ui dialogs and lines, commands in
the menu, keys, custom-message panels, /extensions and /reload."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from textual.widgets import Input

from pi_tui.start_options import StartOptions
from pi_tui.tui.app import PiApp
from pi_tui.tui.screens.prompts import ChoiceMenu, TextPrompt
from pi_tui.tui.transcript import CustomItem, InfoItem
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import screen_text, settle
from tests.tui.test_more_commands import type_command

SIZE = (110, 40)

EVIL = """
from pathlib import Path
Path(__file__).parents[3].joinpath("MARKER").write_text("ran")

def activate(pi):
    pi.register_command("evil", handler=lambda args, ctx: ctx.ui.notify("evil ran " + args),
                        description="from the project")
"""


def background_app(project: Path, **options: object) -> PiApp:
    """The app as ``pi-tui`` starts it: first frame, then the agent in a thread."""
    return PiApp(start_options=StartOptions(cwd=str(project), interactive=True, **options), cwd=str(project))


async def choose(pilot, app: PiApp, label_start: str) -> None:
    """Pick the row of the open ChoiceMenu whose label starts with ``label_start``, once the menu
    has mounted (its mount puts the highlight on the first row, which would undo ours)."""
    from textual.widgets import OptionList

    menu = await wait_for_screen(pilot, app, ChoiceMenu)
    await wait_until(pilot, lambda: bool(menu.query(OptionList)), "the menu's list")
    options = menu.query_one(OptionList)
    await wait_until(pilot, lambda: options.has_focus and options.highlighted == 0, "the menu mounted")
    index = next(i for i, (_value, label) in enumerate(menu.choices) if label.startswith(label_start))
    for _ in range(3):  # the highlight must stay where it was put for a few frames
        options.highlighted = index
        await pilot.pause()
        if options.highlighted == index:
            break
    assert options.highlighted == index
    await pilot.press("enter")
    await pilot.pause()


def infos(app: PiApp) -> list[str]:
    return [item.text for item in app.chat.items if isinstance(item, InfoItem)]


async def test_project_code_waits_for_the_users_answer(project: Path, agent_dir: Path) -> None:
    (project / ".agent" / "extensions").mkdir(parents=True)
    (project / ".agent" / "extensions" / "evil.py").write_text(EVIL)
    marker = project.parent / "MARKER"
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        menu = await wait_for_screen(pilot, app, ChoiceMenu)
        assert menu.title_text == "This project folder has its own settings and resources. Load them?"
        await wait_until(pilot, lambda: "evil.py" in screen_text(app), "the file named in the question")
        await pilot.pause(0.3)  # time is what is tested: it passes and nothing is imported
        assert not marker.exists()  # nothing imported while the question is open
        await choose(pilot, app, "Trust this folder")
        await wait_until(pilot, marker.exists, "the trusted extension loaded")
        trust = json.loads((agent_dir / "trust.json").read_text())
        assert trust == {str(project.resolve()): True}  # pi's format: pi starts after this
        await wait_until(pilot, lambda: "evil" in app.commands, "/evil in the menu")
        await type_command(pilot, app, "/evil now")
        await wait_until(
            pilot, lambda: any("evil: evil ran now" in text for text in infos(app)), "the notice"
        )
    marker.unlink()

    again = background_app(project)  # trusted: loads without a question
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, marker.exists, "loaded at start")
        assert not isinstance(again.screen, ChoiceMenu)


async def test_never_is_remembered_and_not_now_is_not(project: Path, agent_dir: Path) -> None:
    (project / ".agent" / "extensions").mkdir(parents=True)
    (project / ".agent" / "extensions" / "evil.py").write_text(EVIL)
    marker = project.parent / "MARKER"
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "Not now")
        await wait_until(pilot, lambda: any("Started without" in text for text in infos(app)), "said")
    assert not (agent_dir / "trust.json").exists() and not marker.exists()
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "Never")
        await wait_until(pilot, lambda: any("will not be loaded" in text for text in infos(app)), "said")
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: any("marked never" in text for text in infos(app)), "the notice")
        assert not isinstance(app.screen, ChoiceMenu)
    assert not marker.exists()


UI_EXTENSION = """
def activate(pi):
    async def ask(args, ctx):
        if await ctx.ui.confirm("Deploy?", "to " + args):
            name = await ctx.ui.input("Tag name", "v1.2")
            ctx.ui.set_status("deploy", f"deployed {args} as {name}")
            ctx.ui.set_widget("deploy", ["last deploy:", f"  {args} {name}"])
        else:
            ctx.ui.notify("not deployed", "warning")
    pi.register_command("deploy", handler=ask, description="Deploy somewhere")
    pi.register_shortcut("f6", handler=lambda ctx: ctx.ui.notify("f6 pressed"), description="say hi")

    def panel(message, expanded):
        return f"PANEL {message.details['n']}: {message.content}"
    pi.register_message_renderer("report", panel)
    pi.register_command("report", handler=lambda args: pi.send_message(
        {"custom_type": "report", "content": "all green", "display": True, "details": {"n": 7}}))
"""


async def test_dialogs_status_widgets_keys_and_panels(project: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "deployer.py").write_text(textwrap.dedent(UI_EXTENSION))
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "deploy" in app.commands, "/deploy registered")
        await pilot.press(*"/dep")
        await pilot.pause()
        assert "Deploy somewhere" in screen_text(app)  # the completion menu lists it
        await pilot.press("ctrl+u")
        await type_command(pilot, app, "/deploy staging")
        await choose(pilot, app, "Yes")
        prompt = await wait_for_screen(pilot, app, TextPrompt)
        prompt.query_one(Input).value = "v2"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "deployed staging as v2" in screen_text(app), "the status line")
        assert "last deploy:" in screen_text(app) and "staging v2" in screen_text(app)

        await type_command(pilot, app, "/deploy prod")
        await choose(pilot, app, "No")
        await wait_until(pilot, lambda: any("deployer: not deployed" in t for t in infos(app)), "warning")

        await pilot.press("f6")
        await wait_until(pilot, lambda: any("deployer: f6 pressed" in t for t in infos(app)), "the key ran")

        await type_command(pilot, app, "/report")
        await wait_until(pilot, lambda: any(isinstance(i, CustomItem) for i in app.chat.items), "the panel")
        await pilot.pause()
        assert "PANEL 7: all green" in screen_text(app)
        entries = list(app.agent.manager.iter_raw_entries())  # on disk with the first reply, as pi
        assert any(e["type"] == "custom_message" and e["customType"] == "report" for e in entries)


async def test_extensions_lists_them_and_reload_reads_the_files_again(project: Path, agent_dir: Path) -> None:
    folder = agent_dir / "extensions"
    folder.mkdir()
    (folder / "one.py").write_text("def activate(pi):\n    pi.register_command('one', handler=print)\n")
    (folder / "broken.py").write_text("def activate(pi):\n    raise ValueError('nope')\n")
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "one" in app.commands, "loaded")
        await type_command(pilot, app, "/extensions")
        await wait_until(pilot, lambda: any("commands: /one" in t for t in infos(app)), "the list")
        listing = next(t for t in infos(app) if "commands: /one" in t)
        assert "one (agent dir: " in listing and "Not loaded:" in listing and "ValueError: nope" in listing
        (folder / "one.py").write_text("def activate(pi):\n    pi.register_command('two', handler=print)\n")
        (folder / "broken.py").write_text("def activate(pi):\n    pass\n")
        await type_command(pilot, app, "/reload")
        await wait_until(pilot, lambda: "two" in app.commands, "reloaded")
        assert "one" not in app.commands
        assert any("Extensions: 2 of 2 loaded" in t for t in infos(app))


async def test_a_turn_an_extension_starts_is_the_users_run(project: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "asker.py").write_text(
        textwrap.dedent(
            """
            def activate(pi):
                pi.register_command("ask", handler=lambda args: pi.send_user_message("Question: " + args))
            """
        )
    )
    with ModelServer(Scripted(text="An answer.", first_byte_delay=0.5)) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        app = background_app(project, provider="test", model="m")
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: "ask" in app.commands, "loaded")
            await type_command(pilot, app, "/ask why")
            await wait_until(pilot, lambda: app.busy, "the run shows as running")
            await settle(pilot, app)
            assert "An answer." in screen_text(app)
            assert server.requests[0].body["messages"][-1]["content"][0]["text"] == "Question: why"


async def test_argument_completion_and_a_footer_of_its_own(project: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "envs.py").write_text(
        textwrap.dedent(
            """
            def activate(pi):
                def complete(prefix):
                    envs = [{"value": "staging", "label": "staging", "description": "the test bed"},
                            {"value": "prod", "label": "prod", "description": "careful"}, "preview"]
                    return [e for e in envs if (e if isinstance(e, str) else e["value"]).startswith(prefix)]
                def focus(args, ctx):
                    ctx.ui.set_footer(None if args == "off" else "FOCUS MODE: " + args)
                pi.register_command("focus", handler=focus, get_argument_completions=complete)
            """
        )
    )
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "focus" in app.commands, "loaded")
        await pilot.press(*"/focus p")
        await pilot.pause()
        await wait_until(pilot, lambda: "careful" in screen_text(app), "the suggestions")
        assert "preview" in screen_text(app) and "the test bed" not in screen_text(app)
        await pilot.press("tab")
        await pilot.pause()
        assert app.editor.text == "/focus prod"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "FOCUS MODE: prod" in screen_text(app), "the footer")
        footer = "\n".join(screen_text(app).splitlines()[-3:])
        assert "FOCUS MODE: prod" in footer and project.name not in footer  # ours is replaced
        await type_command(pilot, app, "/focus off")
        await wait_until(pilot, lambda: "FOCUS MODE" not in screen_text(app), "the footer back")


async def test_labels_and_names_set_by_an_extension_show_at_once(project: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "marks.py").write_text(
        textwrap.dedent(
            """
            def activate(pi):
                def mark(args, ctx):
                    pi.set_label(ctx.session_manager.get_leaf_id(), args)
                    pi.set_session_name("named by " + args)
                pi.register_command("mark", handler=mark)
            """
        )
    )
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "mark" in app.commands, "loaded")
        await pilot.press(*"hello", "enter")
        await settle(pilot, app)
        await type_command(pilot, app, "/mark checkpoint")
        await wait_until(pilot, lambda: "checkpoint" in screen_text(app), "the label on the reply")
        await wait_until(pilot, lambda: "named by checkpoint" in screen_text(app), "the name in the footer")


async def test_reload_finds_new_skills_and_templates(project: Path, agent_dir: Path) -> None:
    app = background_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and "extensions" in app.commands, "started")
        assert "tidy" not in app.commands
        (agent_dir / "prompts").mkdir()
        (agent_dir / "prompts" / "tidy.md").write_text("---\ndescription: Tidy a file\n---\nTidy $1.\n")
        skill = agent_dir / "skills" / "notes" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: notes\ndescription: Keep notes in NOTES.md.\n---\nWrite them down.\n")
        await type_command(pilot, app, "/reload")
        await wait_until(pilot, lambda: "tidy" in app.commands and "skill:notes" in app.commands, "found")
        assert "<name>notes</name>" in app.agent.system_prompt
        assert any("Skills and prompt templates: 1 skills, 1 templates" in text for text in infos(app))


async def test_clone_tells_extensions_the_session_it_left(project: Path, agent_dir: Path) -> None:
    log = project.parent / "moves.jsonl"
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "moves.py").write_text(
        textwrap.dedent(
            f"""
            import json

            def activate(pi):
                def started(e):
                    with open({str(log)!r}, "a") as out:
                        out.write(json.dumps([e.reason, e.get("previous_session_file")]) + "\\n")
                pi.on("session_start", started)
            """
        )
    )

    def moves() -> list[list[str | None]]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    with ModelServer(Scripted(text="One.")) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        app = background_app(project, provider="test", model="m")
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: ["startup", None] in moves(), "the extension started")
            await pilot.press(*"hello", "enter")
            await settle(pilot, app)
            original = app.agent.manager.session_file
            assert original is not None
            app.run_slash("clone", "")
            await wait_until(pilot, lambda: any(move[0] == "fork" for move in moves()), "the clone told")
            assert app.agent.manager.session_file != original
            assert ["fork", str(original)] in moves()  # the file left, not the clone itself
