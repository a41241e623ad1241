"""The session picker (``/resume``, ``pi-tui -r``) driven through the real app."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from pi_tui.config.paths import session_dir_for_cwd
from pi_tui.messages import AssistantMessage, TextContent, Usage, UserMessage
from pi_tui.modes.attachments import Prompt
from pi_tui.session import SessionManager
from pi_tui.session.info import session_info
from pi_tui.session.store import SessionLock
from pi_tui.startup import StartOptions, start
from pi_tui.tui.app import PiApp
from pi_tui.tui.screens.resume import ConfirmPrompt, ResumePicker, SessionList, TextPrompt, format_age
from pi_tui.tui.transcript import AssistantItem, InfoItem, UserItem
from tests.support.model_server import ModelServer, Scripted
from tests.support.waiting import wait_for_screen, wait_until
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (110, 40)
HOUR_MS = 3_600_000


def make_session(
    cwd: Path,
    prompt: str,
    answer: str,
    *,
    hours_ago: float,
    name: str | None = None,
    now_ms: int | None = None,
) -> Path:
    """A written session of ``cwd`` whose last message is ``hours_ago`` before ``now_ms`` (or now)."""
    at = int((time.time() * 1000 if now_ms is None else now_ms) - hours_ago * HOUR_MS)
    manager = SessionManager.create(str(cwd), session_dir_for_cwd(str(cwd)))
    manager.append_message(UserMessage(content=prompt, timestamp=at - 1000))
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text=answer)],
            provider="test",
            model="m",
            usage=Usage(),
            stop_reason="stop",
            timestamp=at,
        )
    )
    if name:
        manager.append_session_info(name)
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


@pytest.fixture
def three(project: Path) -> dict[str, Path]:
    """Three sessions of the project, newest first: greeting (named), parser, cherry."""
    return {
        "greeting": make_session(
            project, "Fix the greeting in notes.txt", "Done: it says hello now.", hours_ago=0.5, name="Deploy"
        ),
        "parser": make_session(
            project, "Why does the parser crash?", "The tokenizer skips a quote.", hours_ago=5
        ),
        "cherry": make_session(project, "cherry pick the fix", "Picked onto main.", hours_ago=50),
    }


async def open_picker(pilot: Pilot[None], app: PiApp) -> ResumePicker:
    """Type /resume and wait until the picker has read its list."""
    await pilot.press(*"/resume")
    await pilot.pause()
    await pilot.press("enter")  # Enter on the completion list runs the command
    return await picker_ready(pilot, app)


async def picker_ready(pilot: Pilot[None], app: PiApp) -> ResumePicker:
    picker = await wait_for_screen(pilot, app, ResumePicker)
    await wait_until(pilot, lambda: picker.loaded, "the picker to load its sessions")
    await pilot.pause()
    return picker


def titles(picker: ResumePicker) -> list[str]:
    return [row.title for row in picker._shown]


def message(picker: ResumePicker) -> str:
    widget = picker.query_one("#resume-message")
    return str(widget.render()) if widget.display else ""


async def highlight(pilot: Pilot[None], picker: ResumePicker, title: str) -> None:
    """Move the highlight with the arrow keys onto the row titled ``title``."""
    for _ in range(len(picker._shown) + 1):
        current = picker._highlighted()
        if current is not None and current.title == title:
            return
        await pilot.press("down")
    raise AssertionError(f"no row titled {title!r} in {titles(picker)}")


async def test_lists_newest_first_with_name_or_first_message_count_and_age(
    project: Path, three: dict[str, Path]
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        assert titles(picker) == ["Deploy", "Why does the parser crash?", "cherry pick the fix"]
        text = screen_text(app)
        assert "Resume a session · this folder · forks under their parent" in text
        rows = {line.strip("│ ").split("  ")[0]: line for line in text.splitlines() if "msgs" in line}
        assert "2 msgs" in rows["Deploy"] and rows["Deploy"].rstrip(" │").endswith("30m")
        assert rows["Why does the parser crash?"].rstrip(" │").endswith("5h")
        assert rows["cherry pick the fix"].rstrip(" │").endswith("2d")


async def test_type_to_search_by_name_first_message_and_any_message(
    project: Path, three: dict[str, Path]
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await pilot.press(*"deploy")
        assert titles(picker) == ["Deploy"]
        await pilot.press("ctrl+u", *"PARSER why")  # AND of words, any order, any case
        assert titles(picker) == ["Why does the parser crash?"]
        await pilot.press("ctrl+u", *"tokenizer quote")  # only in the assistant's answer
        assert titles(picker) == ["Why does the parser crash?"]
        await pilot.press("ctrl+u", *"fix")  # the greeting's first message and the cherry pick
        assert titles(picker) == ["Deploy", "cherry pick the fix"]
        await pilot.press("ctrl+u", *"parser banana")
        assert titles(picker) == []
        assert "No session matches “parser banana”" in screen_text(app)


async def test_enter_opens_the_session_and_the_chat_shows_it(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await pilot.press(*"parser")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.agent.manager.session_file == three["parser"].resolve(), "the switch"
        )
        assert not isinstance(app.screen, ResumePicker) and picker not in app.screen_stack
        users = [item.text for item in app.chat.items if isinstance(item, UserItem)]
        answers = [item.text for item in app.chat.items if isinstance(item, AssistantItem)]
        assert users == ["Why does the parser crash?"] and answers == ["The tokenizer skips a quote."]
        assert "The tokenizer skips a quote." in screen_text(app)
        # The new session continues in the resumed file.
        await pilot.press(*"and now?", "enter")
        await settle(pilot, app)
        lines = [json.loads(line) for line in three["parser"].read_text().splitlines()]
        contents = [line["message"]["content"] for line in lines if line["type"] == "message"]
        assert contents[2] == [{"type": "text", "text": "and now?"}]


async def test_escape_keeps_the_current_session(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        before = app.agent.manager
        await open_picker(pilot, app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ResumePicker)
        assert app.agent.manager is before


async def test_rename_writes_session_info_and_the_list_shows_the_new_name(
    project: Path, three: dict[str, Path]
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await highlight(pilot, picker, "Why does the parser crash?")
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        await pilot.press(*"Parser bug", "enter")
        await wait_until(pilot, lambda: "Renamed" in message(picker), "the rename")
        assert app.screen is picker
        assert message(picker) == "Renamed to “Parser bug”."
        info = session_info(three["parser"])
        assert info is not None and info.name == "Parser bug"
        entries = [json.loads(line) for line in three["parser"].read_text().splitlines()]
        assert entries[-1]["type"] == "session_info" and entries[-1]["name"] == "Parser bug"
        assert not three["parser"].with_name(three["parser"].name + ".lock").exists()
        assert "Parser bug" in titles(picker) and "Parser bug" in screen_text(app)
        # The new name is searchable at once.
        await pilot.press(*"bug")
        assert titles(picker) == ["Parser bug"]


async def test_renaming_the_current_session_goes_through_the_apps_own_manager(
    project: Path, three: dict[str, Path]
) -> None:
    app = make_app(project, session=str(three["cherry"]))
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await highlight(pilot, picker, "cherry pick the fix")
        await pilot.press("ctrl+r", *"Cherry", "enter")
        await wait_until(pilot, lambda: "Renamed" in message(picker), "the rename")
        assert app.agent.manager.get_session_name() == "Cherry"
        info = session_info(three["cherry"])
        assert info is not None and info.name == "Cherry"
        assert "Cherry" in titles(picker)


async def test_rename_of_a_session_another_process_writes_is_one_line(
    project: Path, three: dict[str, Path]
) -> None:
    held = SessionLock(three["parser"])  # flock is per open file: it conflicts with our own open
    held.acquire()
    try:
        app = make_app(project)
        async with app.run_test(size=SIZE) as pilot:
            picker = await open_picker(pilot, app)
            await highlight(pilot, picker, "Why does the parser crash?")
            await pilot.press("ctrl+r", *"x", "enter")
            await wait_until(pilot, lambda: "Could not rename" in message(picker), "the error")
            assert "is being written by process" in message(picker)
            assert "\n" not in message(picker)
            assert session_info(three["parser"]).name is None  # type: ignore[union-attr]
    finally:
        held.release()


async def test_delete_asks_then_removes_the_file(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await highlight(pilot, picker, "Why does the parser crash?")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmPrompt)
        assert "Delete “Why does the parser crash?”? y/n" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is picker and three["parser"].exists()
        await pilot.press("ctrl+d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert app.screen is picker
        assert not three["parser"].exists()
        assert not three["parser"].with_name(three["parser"].name + ".lock").exists()
        assert titles(picker) == ["Deploy", "cherry pick the fix"]
        assert message(picker) == "Deleted “Why does the parser crash?”."
        assert "Why does the parser crash?" not in screen_text(app).replace(
            "Deleted “Why does the parser", ""
        )


async def test_deleting_the_current_session_is_refused(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project, session=str(three["greeting"]))
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await highlight(pilot, picker, "Deploy")
        assert "● Deploy" in screen_text(app)  # the session we are in is marked
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.screen is picker  # no question asked
        assert message(picker) == "This is the session you are in; it cannot be deleted."
        assert three["greeting"].exists() and "Deploy" in titles(picker)


async def test_deleting_a_session_another_process_writes_is_refused(
    project: Path, three: dict[str, Path]
) -> None:
    held = SessionLock(three["cherry"])
    held.acquire()
    try:
        app = make_app(project)
        async with app.run_test(size=SIZE) as pilot:
            picker = await open_picker(pilot, app)
            await highlight(pilot, picker, "cherry pick the fix")
            await pilot.press("ctrl+d", "y")
            await pilot.pause()
            assert message(picker).startswith("Could not delete: Session ")
            assert three["cherry"].exists() and "cherry pick the fix" in titles(picker)
    finally:
        held.release()


async def test_tab_shows_every_folder_and_back(project: Path, tmp_path: Path, three: dict[str, Path]) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    make_session(other, "Question from elsewhere", "An answer.", hours_ago=1)
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        assert "Question from elsewhere" not in titles(picker)
        await pilot.press("tab")
        await picker_ready(pilot, app)
        assert picker.scope == "all"
        assert titles(picker) == [
            "Deploy",
            "Question from elsewhere",
            "Why does the parser crash?",
            "cherry pick the fix",
        ]
        text = screen_text(app)
        assert "all folders" in text
        line = next(line for line in text.splitlines() if "Question from elsewhere" in line)
        assert "elsewhere" in line.split("Question from elsewhere", 1)[1]  # the folder column
        await pilot.press("tab")
        await pilot.pause()
        assert picker.scope == "current" and "Question from elsewhere" not in titles(picker)
        assert "this folder" in screen_text(app)


async def test_ctrl_s_cycles_threaded_recent_and_name(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        assert picker.sort == "threaded" and "forks under their parent" in screen_text(app)
        await pilot.press("ctrl+s")
        assert titles(picker) == ["Deploy", "Why does the parser crash?", "cherry pick the fix"]
        assert "newest first" in screen_text(app)
        await pilot.press("ctrl+s")
        assert titles(picker) == ["cherry pick the fix", "Deploy", "Why does the parser crash?"]
        assert "by name" in screen_text(app)
        await pilot.press("ctrl+s")
        assert picker.sort == "threaded"


def fork_of(parent: Path, name: str) -> Path:
    """A fork of ``parent`` as /fork makes it: a new file whose header names ``parent``."""
    manager = SessionManager.open(parent)
    try:
        leaf = manager.get_leaf_id()
        assert leaf is not None
        path = manager.create_branched_session(leaf)
        manager.append_session_info(name)
    finally:
        manager.close()
    assert path is not None
    return path


async def test_forks_are_listed_under_the_session_they_came_from(
    project: Path, three: dict[str, Path]
) -> None:
    first = fork_of(three["parser"], "parser fork A")
    time.sleep(0.01)  # time is what is tested: the later fork is newer
    fork_of(first, "parser fork A.1")
    fork_of(three["parser"], "parser fork B")
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        shown = [(prefix, row.title) for row, prefix in zip(picker._shown, picker._prefixes, strict=True)]
        parser = shown.index(("", "Why does the parser crash?"))
        children = shown[parser + 1 : parser + 4]
        depth = {title: len(prefix) // 3 for prefix, title in children}
        assert depth == {"parser fork A": 1, "parser fork B": 1, "parser fork A.1": 2}, children
        a = [title for _, title in children].index("parser fork A")
        assert children[a + 1][1] == "parser fork A.1"  # the fork of a fork right under it
        assert children[-1][0].endswith("└─ ") and children[0][0] == "├─ "
        assert "├─ parser fork" in screen_text(app) and "└─ parser fork A.1" in screen_text(app)
        await pilot.press(*"fork")  # a search lists flat
        assert picker._prefixes == [] and set(titles(picker)) >= {"parser fork A", "parser fork B"}


async def test_ctrl_n_shows_named_sessions_only_and_ctrl_p_shows_paths(
    project: Path, three: dict[str, Path]
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await pilot.press("ctrl+n")
        assert titles(picker) == ["Deploy"] and "named only" in screen_text(app)
        await pilot.press("ctrl+n")
        assert len(titles(picker)) == 3
        assert three["parser"].name[:12] not in screen_text(app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert three["parser"].name[-12:] in screen_text(app)  # the file's name, its end kept


async def test_search_modes_words_phrase_and_regex(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        await pilot.press(*"quote tokenizer")  # words in any order
        assert titles(picker) == ["Why does the parser crash?"]
        picker.query_one("#picker-filter").value = '"skips a quote"'
        await pilot.pause()
        assert titles(picker) == ["Why does the parser crash?"]
        picker.query_one("#picker-filter").value = '"a quote skips"'  # a phrase keeps its order
        await pilot.pause()
        assert titles(picker) == []
        picker.query_one("#picker-filter").value = "re:pick(ed)? (the|onto)"
        # a regex runs off the UI thread: the list changes when its answer comes
        await wait_until(pilot, lambda: titles(picker) == ["cherry pick the fix"], "the regex's match")
        picker.query_one("#picker-filter").value = "re:(unclosed"
        await pilot.pause()
        assert titles(picker) == [] and message(picker).startswith("Bad regex:")
        picker.query_one("#picker-filter").value = ""
        await pilot.pause()
        assert len(titles(picker)) == 3 and message(picker) == ""


async def test_resuming_a_session_another_process_writes_says_so(
    project: Path, three: dict[str, Path]
) -> None:
    held = SessionLock(three["parser"])
    held.acquire()
    try:
        app = make_app(project)
        async with app.run_test(size=SIZE) as pilot:
            before = app.agent.manager
            await open_picker(pilot, app)
            await pilot.press(*"parser", "enter")
            await wait_until(pilot, lambda: any(i.level == "error" for i in infos(app)), "the error")
            assert app.agent.manager is before
            assert "is being written by process" in infos(app)[-1].text
    finally:
        held.release()


def infos(app: PiApp) -> list[InfoItem]:
    return [item for item in app.chat.items if isinstance(item, InfoItem)]


async def test_choosing_the_current_session_changes_nothing(project: Path, three: dict[str, Path]) -> None:
    app = make_app(project, session=str(three["cherry"]))
    async with app.run_test(size=SIZE) as pilot:
        before = app.agent.manager
        await open_picker(pilot, app)
        await pilot.press(*"cherry", "enter")
        await wait_until(pilot, lambda: "Already in this session." in screen_text(app), "the notice")
        assert app.agent.manager is before


async def test_resume_is_refused_while_the_agent_runs(project: Path, server: ModelServer) -> None:
    server.queue(Scripted(text=" ".join(f"w{n}" for n in range(200)), event_delay=0.03))
    app = make_app(project, provider="test", model="m")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go slowly", "enter")
        await wait_until(pilot, lambda: app.busy, "the run")
        app.run_slash("resume", "")
        await wait_until(
            pilot, lambda: any("switching sessions" in i.text for i in infos(app)), "the refusal"
        )
        assert not isinstance(app.screen, ResumePicker)
        await pilot.press("escape")
        await settle(pilot, app)


async def test_an_empty_folder_says_so(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        assert titles(picker) == []
        assert "No sessions in this folder yet (tab: all folders)" in screen_text(app)
        await pilot.press("enter", "ctrl+d", "ctrl+r")  # nothing to act on: nothing happens
        await pilot.pause()
        assert app.screen is picker


async def test_open_resume_opens_the_picker_at_start(project: Path, three: dict[str, Path]) -> None:
    started = start(StartOptions(cwd=str(project)))
    app = PiApp(started, cwd=str(project), open_resume=True)
    async with app.run_test(size=SIZE) as pilot:
        picker = await picker_ready(pilot, app)
        assert titles(picker)[0] == "Deploy"
        assert not app.agent.manager.is_persisted  # a bare start: a new, unwritten session
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.agent.manager.session_file == three["greeting"].resolve(), "the switch"
        )
        assert "Done: it says hello now." in screen_text(app)


async def test_a_long_list_scrolls_with_the_highlight_and_a_click_opens(project: Path) -> None:
    paths = [make_session(project, f"question number {n:02d}", "ok", hours_ago=n) for n in range(40)]
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app)
        assert len(titles(picker)) == 40
        text = screen_text(app)
        assert "question number 00" in text and "question number 39" not in text  # 20 rows at most
        await pilot.press("up")  # wraps to the oldest, which scrolls into view
        assert picker._highlighted().title == "question number 39"  # type: ignore[union-attr]
        assert "question number 39" in screen_text(app) and "question number 00" not in screen_text(app)
        await pilot.press("down")  # and back round to the newest
        assert picker._highlighted().title == "question number 00"  # type: ignore[union-attr]
        await pilot.press("pagedown")
        assert picker._highlighted().title == "question number 19"  # type: ignore[union-attr]
        expected = paths[round(picker.session_list.scroll_offset.y) + 2].resolve()
        await pilot.click(SessionList, offset=(5, 2))  # the third visible row
        await wait_until(pilot, lambda: app.agent.manager.session_file == expected, "the switch")


def test_cli_resume_starts_the_interactive_mode_with_the_picker(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pi_tui import cli
    from pi_tui.modes import piped_input
    from pi_tui.tui import run

    calls: list[dict[str, object]] = []

    def fake_run(
        options: StartOptions,
        cwd: str,
        initial_prompts: list[Prompt] | None = None,
        resume_picker: bool = False,
    ) -> int:
        # The interactive mode starts the agent itself, after its first frame: nothing is
        # opened or written before it runs.
        calls.append({"persisted": options.session is not None, "resume": resume_picker})
        return 0

    monkeypatch.setattr(run, "run_interactive", fake_run)
    # pytest captures stdout: stand in for the terminal a user starts pi-tui from (without one,
    # pi-tui runs print mode, as pi 1.x does)
    monkeypatch.setattr(piped_input, "streams_are_terminals", lambda: True)
    monkeypatch.chdir(project)
    assert cli.main(["-r"]) == 0
    assert cli.main(["--resume"]) == 0
    assert cli.main([]) == 0
    assert calls == [
        {"persisted": False, "resume": True},
        {"persisted": False, "resume": True},
        {"persisted": False, "resume": False},
    ]
    assert cli.main(["-r", "-p", "hi"]) == 2
    assert "-r opens the session picker, which needs the interactive mode" in capsys.readouterr().err


def test_format_age_uses_short_units() -> None:
    now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    ages = [timedelta(seconds=20), timedelta(minutes=5), timedelta(hours=3), timedelta(days=2)]
    ages += [timedelta(days=15), timedelta(days=100), timedelta(days=800)]
    assert [format_age(now - age, now) for age in ages] == ["now", "5m", "3h", "2d", "2w", "3mo", "2y"]
