"""Ctrl+Z and Ctrl+G in the installed ``pi-tui``, through a real terminal (tmux).

Ctrl+Z hands the terminal back to the shell that started pi-tui (job control: "Stopped"), and
``fg`` brings the app back with the draft intact. Ctrl+G opens the draft in $EDITOR (a script
here, which edits the file the way a person would) and the edited text comes back.
"""

from __future__ import annotations

import shlex
import stat
from pathlib import Path

from tests.e2e.test_tui_tmux import MODEL, SCRIPT, editor_text, ready
from tests.support.model_server import ModelServer
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")


def prepare(tmp_path: Path, server: ModelServer) -> tuple[Path, Path]:
    import json

    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=[{"id": MODEL}])))
    return agent_dir, project


def test_ctrl_z_suspends_to_the_shell_and_fg_returns(tmp_path: Path) -> None:
    with ModelServer() as server:
        agent_dir, project = prepare(tmp_path, server)
        pane = TmuxPane.start(
            ["bash", "--norc", "--noprofile", "-i"],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PS1": "shell$ "},
        )
        try:
            pane.wait_for(lambda screen: "shell$" in screen, "the shell prompt")
            pane.type(shlex.join([SCRIPT, "--provider", "test", "--model", MODEL]))
            pane.press("Enter")
            pane.wait_for(ready, "pi-tui ready", timeout=15)
            pane.type("my draft")
            pane.wait_for(lambda screen: editor_text(screen) == "my draft", "the draft in the editor")
            pane.press("C-z")
            pane.wait_for(lambda screen: "Stopped" in screen and "shell$" in screen, "the shell after Ctrl+Z")
            pane.type("fg")
            pane.press("Enter")
            pane.wait_for(lambda screen: editor_text(screen) == "my draft", "pi-tui back with the draft", 15)
            pane.press("C-c", "C-d")
            pane.wait_for(lambda screen: "shell$" in screen.splitlines()[-1] or "shell$" in screen, "exit")
        finally:
            pane.kill()


def test_ctrl_g_edits_the_draft_in_the_external_editor(tmp_path: Path) -> None:
    editor = tmp_path / "fake-editor"
    editor.write_text('#!/bin/sh\nprintf "%s\\n" "$(cat "$1") (edited)" > "$1.new" && mv "$1.new" "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    with ModelServer() as server:
        agent_dir, project = prepare(tmp_path, server)
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", MODEL],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "EDITOR": str(editor), "VISUAL": ""},
        )
        try:
            pane.wait_for(ready, "pi-tui ready", timeout=15)
            pane.type("fix the bug")
            pane.wait_for(lambda screen: editor_text(screen) == "fix the bug", "the draft")
            pane.press("C-g")
            pane.wait_for(
                lambda screen: editor_text(screen) == "fix the bug (edited)", "the edited draft", timeout=15
            )
            assert "pi-tui" in pane.last_screen  # the app drew itself again after the editor
        finally:
            pane.kill()
