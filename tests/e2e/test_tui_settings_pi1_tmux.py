"""pi 1.x's TUI settings and slash commands in the installed ``pi-tui``, through tmux.

``/name`` without an argument, ``/bug`` (a private report written here, secrets hidden, never
uploaded), the ``externalEditor`` setting over $EDITOR, ``outputPad`` and
``terminal.showTerminalProgress`` (OSC 9;4 seen in the pane's raw output), each against the
loopback model server.
"""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path
from typing import Any

from tests.e2e.test_tui_tmux import MODEL, SCRIPT, editor_text, ready
from tests.support.model_server import ModelServer
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

SECRET_SETTING = "tok-SECRET-4242xyz"
SECRET_ENV = "abcdefsecret123"


def start(
    tmp_path: Path,
    server: ModelServer,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    name: str = "run",
) -> tuple[TmuxPane, Path, Path]:
    """The installed pi-tui in tmux with these global settings, once it is ready."""
    root = tmp_path / name
    agent_dir = root / "agent"
    project = root / "project"
    agent_dir.mkdir(parents=True)
    project.mkdir()
    models = server.models_json(models=[{"id": MODEL, "name": "Tmux test model"}])
    (agent_dir / "models.json").write_text(json.dumps(models))
    if settings is not None:
        (agent_dir / "settings.json").write_text(json.dumps(settings))
    pane = TmuxPane.start(
        [SCRIPT, "--provider", "test", "--model", MODEL],
        cwd=project,
        env={"PI_CODING_AGENT_DIR": str(agent_dir), **(env or {})},
    )
    try:
        pane.wait_for(ready, "pi-tui ready", timeout=20)
    except BaseException:
        pane.kill()
        raise
    return pane, agent_dir, project


def send(pane: TmuxPane, text: str) -> None:
    """Type ``text`` into the editor and press Enter once it is there."""
    pane.type(text)
    pane.wait_for(lambda screen: editor_text(screen) == text, f"{text!r} in the editor")
    pane.press("Enter")


def session_lines(agent_dir: Path) -> list[dict[str, Any]]:
    files = list((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]


def test_name_without_an_argument_shows_the_current_name(tmp_path: Path) -> None:
    with ModelServer() as server:
        pane, _agent_dir, _project = start(tmp_path, server)
        try:
            send(pane, "/name")
            pane.wait_for(lambda screen: "This session has no name" in screen, "no name yet")
            send(pane, "/name Release prep")
            pane.wait_for(lambda screen: "Session named “Release prep”" in screen, "named")
            send(pane, "/name")
            pane.wait_for(lambda screen: "Session name: Release prep" in screen, "the name shown")
        finally:
            pane.kill()


def test_bug_writes_a_private_report_with_secrets_hidden(tmp_path: Path) -> None:
    settings = {"myServiceToken": SECRET_SETTING, "hideThinkingBlock": True}
    with ModelServer() as server:
        pane, agent_dir, project = start(tmp_path, server, settings, env={"MY_API_KEY": SECRET_ENV})
        try:
            send(pane, f"remember {SECRET_ENV} please")
            pane.wait_for(lambda screen: f"echo: remember {SECRET_ENV}" in screen, "the answer")
            send(pane, "/bug --with-transcript the footer flickers")
            pane.wait_for(lambda screen: "Bug report written to:" in screen, "the report's path", 15)
            assert "Nothing was uploaded" in " ".join(pane.last_screen.split())
        finally:
            pane.kill()
        reports = list(project.glob("pi-tui-bug-report-*.zip"))
        assert len(reports) == 1, list(project.iterdir())
        with zipfile.ZipFile(reports[0]) as archive:
            files = {name: archive.read(name).decode() for name in archive.namelist()}
        assert set(files) == {"report.json", "diagnostics.json", "session.jsonl"}
        for text in files.values():
            assert SECRET_SETTING not in text and SECRET_ENV not in text
        report = json.loads(files["report.json"])
        assert report["hint"] == "the footer flickers"
        assert report["model"]["id"] == MODEL and report["model"]["provider"] == "test"
        assert report["environment"]["version"] and report["environment"]["runtime"].startswith("python/")
        assert report["settings"]["myServiceToken"] == "<redacted>"
        assert report["settings"]["hideThinkingBlock"] is True
        assert report["session"]["included"] is True
        assert "remember" in files["session.jsonl"]  # the transcript, its secret hidden
        recorded = [line for line in session_lines(agent_dir) if line.get("customType") == "pi.bug-report"]
        assert len(recorded) == 1 and recorded[0]["data"]["path"] == str(reports[0])


def test_bug_without_the_flag_leaves_the_transcript_out(tmp_path: Path) -> None:
    with ModelServer() as server:
        pane, _agent_dir, project = start(tmp_path, server)
        try:
            send(pane, "hello there")
            pane.wait_for(lambda screen: "echo: hello there" in screen, "the answer")
            send(pane, "/bug")
            pane.wait_for(lambda screen: "Bug report written to:" in screen, "the report's path", 15)
        finally:
            pane.kill()
        (report_zip,) = project.glob("pi-tui-bug-report-*.zip")
        with zipfile.ZipFile(report_zip) as archive:
            assert sorted(archive.namelist()) == ["diagnostics.json", "report.json"]
            assert "hello there" not in archive.read("report.json").decode()


def _script(path: Path, suffix: str) -> Path:
    """An editor that appends ``suffix`` to the file it is given (as a person would)."""
    path.write_text(f'#!/bin/sh\nprintf "%s\\n" "$(cat "$1") {suffix}" > "$1.new" && mv "$1.new" "$1"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_external_editor_setting_beats_editor(tmp_path: Path) -> None:
    configured = _script(tmp_path / "configured-editor", "(setting)")
    from_env = _script(tmp_path / "env-editor", "(EDITOR)")
    with ModelServer() as server:
        pane, _agent_dir, _project = start(
            tmp_path,
            server,
            {"externalEditor": str(configured)},
            env={"EDITOR": str(from_env), "VISUAL": str(from_env)},
        )
        try:
            pane.type("fix it")
            pane.wait_for(lambda screen: editor_text(screen) == "fix it", "the draft")
            pane.press("C-g")
            edited = "fix it (setting)"
            pane.wait_for(lambda screen: editor_text(screen) == edited, "edited by the setting", 15)
        finally:
            pane.kill()


def _answer_column(tmp_path: Path, server: ModelServer, pad: int) -> int:
    """The column where the echoed answer starts with ``outputPad`` = ``pad``."""
    pane, _agent_dir, _project = start(tmp_path, server, {"outputPad": pad}, name=f"pad{pad}")
    try:
        send(pane, "padding probe")
        pane.wait_for(lambda screen: "echo: padding probe" in screen, "the answer")
        line = next(line for line in pane.last_screen.splitlines() if "echo: padding probe" in line)
        return line.index("echo: padding probe")
    finally:
        pane.kill()


def test_output_pad_zero_takes_the_blocks_side_padding_away(tmp_path: Path) -> None:
    with ModelServer() as server:
        padded = _answer_column(tmp_path, server, 1)
        flush = _answer_column(tmp_path, server, 0)
    assert padded - flush == 1, (padded, flush)


def test_terminal_progress_is_written_while_the_agent_works(tmp_path: Path) -> None:
    raw = tmp_path / "raw-output"
    with ModelServer() as server:
        pane, _agent_dir, _project = start(tmp_path, server, {"terminal": {"showTerminalProgress": True}})
        try:
            pane.tmux("pipe-pane", "-O", "-t", pane.session, f"cat >> {raw}")
            send(pane, "progress probe")
            pane.wait_for(lambda screen: "echo: progress probe" in screen, "the answer")
            pane.wait_for(
                lambda _screen: raw.exists() and b"\x1b]9;4;0\x07" in raw.read_bytes(), "progress cleared"
            )
        finally:
            pane.kill()
    output = raw.read_bytes()
    busy = output.find(b"\x1b]9;4;3\x07")
    assert busy != -1, "no OSC 9;4 busy sequence"
    assert output.rfind(b"\x1b]9;4;0\x07") > busy


def test_terminal_progress_is_off_by_default(tmp_path: Path) -> None:
    raw = tmp_path / "raw-output"
    with ModelServer() as server:
        pane, _agent_dir, _project = start(tmp_path, server)
        try:
            pane.tmux("pipe-pane", "-O", "-t", pane.session, f"cat >> {raw}")
            send(pane, "quiet probe")
            pane.wait_for(lambda screen: "echo: quiet probe" in screen, "the answer")
            pane.wait_for(lambda _screen: raw.exists() and b"quiet probe" in raw.read_bytes(), "output piped")
        finally:
            pane.kill()
    assert b"\x1b]9;4" not in raw.read_bytes()


def _alternate_screen(pane: TmuxPane) -> bool:
    """Whether the pane is on the terminal's alternate screen (tmux knows)."""
    shown = pane.tmux("display-message", "-p", "-t", pane.session, "#{alternate_on}").stdout
    return shown.strip() == "1"


def _run_and_quit(
    tmp_path: Path, server: ModelServer, name: str, argv: list[str], settings: dict[str, Any]
) -> tuple[bool, str]:
    """pi-tui started from a shell with ``argv``, one prompt, Ctrl+D: (alternate screen while it
    ran, the shell's screen after)."""
    root = tmp_path / name
    agent_dir = root / "agent"
    project = root / "project"
    agent_dir.mkdir(parents=True)
    project.mkdir()
    models = server.models_json(models=[{"id": MODEL, "name": "Tmux test model"}])
    (agent_dir / "models.json").write_text(json.dumps(models))
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    pane = TmuxPane.start(
        ["bash", "--norc", "--noprofile", "-i"],
        cwd=project,
        env={"PI_CODING_AGENT_DIR": str(agent_dir), "PS1": "shell$ "},
    )
    try:
        pane.wait_for(lambda screen: "shell$" in screen, "the shell prompt")
        pane.type("echo before-pi-tui; " + " ".join([SCRIPT, "--provider", "test", "--model", MODEL, *argv]))
        pane.press("Enter")
        # (regular mode's inline block is only as tall as its content: rows under the footer)
        pane.wait_for(lambda screen: ready(screen.rstrip("\n")), "pi-tui ready", timeout=20)
        alternate = _alternate_screen(pane)
        send(pane, f"{name} probe")
        pane.wait_for(lambda screen: f"echo: {name} probe" in screen, "the answer")
        pane.press("C-d")
        pane.wait_for(lambda screen: "To resume this session:" in screen, "the resume line", 15)
        return alternate, pane.last_screen
    finally:
        pane.kill()


def test_tui_mode_regular_runs_inline_and_fullscreen_prints_the_transcript_at_exit(tmp_path: Path) -> None:
    with ModelServer() as server:
        full_alt, full_after = _run_and_quit(tmp_path, server, "full", [], {})
        flag_alt, _flag_after = _run_and_quit(tmp_path, server, "flag", ["--tui-mode", "regular"], {})
        set_alt, set_after = _run_and_quit(tmp_path, server, "set", [], {"tuiMode": "regular"})
        hint_alt, hint_after = _run_and_quit(
            tmp_path, server, "hint", [], {"fullscreenExitOutput": "resume-hint"}
        )
    assert full_alt and hint_alt  # fullscreen: the alternate screen
    assert not flag_alt and not set_alt  # regular: inline, on the normal screen
    # fullscreen + "transcript": the conversation printed on the normal screen, then the resume line
    assert "> full probe" in full_after and "echo: full probe" in full_after
    assert full_after.index("echo: full probe") < full_after.index(
        "To resume this session: pi-tui --session "
    )
    # "resume-hint": only the resume line
    assert "hint probe" not in hint_after and "To resume this session: pi-tui --session " in hint_after
    # regular: the conversation stays on the terminal (written above the block as it went)
    assert "echo: set probe" in set_after and "> set probe" not in set_after


def _raw_colours(tmp_path: Path, true_color: bool) -> bytes:
    """The pane's raw output of a start with ``terminal.trueColor`` set."""
    raw = tmp_path / f"raw-{true_color}"
    with ModelServer() as server:
        settings = {"terminal": {"trueColor": true_color}}
        pane, _agent_dir, _project = start(tmp_path, server, settings, name=f"colour-{true_color}")
        try:
            pane.tmux("pipe-pane", "-O", "-t", pane.session, f"cat >> {raw}")
            send(pane, "colour probe")
            pane.wait_for(lambda screen: "echo: colour probe" in screen, "the answer")
            pane.wait_for(lambda _screen: raw.exists() and b"colour probe" in raw.read_bytes(), "piped")
        finally:
            pane.kill()
    return raw.read_bytes()


def test_true_color_setting_picks_24_bit_or_256_colours(tmp_path: Path) -> None:
    assert b"\x1b[38;2;" in _raw_colours(tmp_path, True)
    limited = _raw_colours(tmp_path, False)
    assert b"\x1b[38;2;" not in limited and b"\x1b[38;5;" in limited
