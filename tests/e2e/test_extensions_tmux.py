"""The example extensions in the installed ``pi-tui``, in a real terminal (tmux).

The project holds an extension of its own that writes a marker file when imported: nothing is
written while pi-tui asks whether to trust the folder, and the marker appears once the user says
yes. Then the examples do their work on screen: ``/todos`` draws its panel, the model's
``word_count`` call gets the extension's own card, the turn counter and the tools widget update,
and the permission gate stops an ``rm -rf`` the user refuses.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e.test_tui_tmux import MODEL, SCRIPT, read_session, ready
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.tmux import TmuxPane

pytestmark = requires("tmux", "pi-tui")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
MARKER_EXTENSION = """
from pathlib import Path
Path(__file__).parents[3].joinpath("MARKER").write_text("project code ran")

def activate(pi):
    pass
"""


def test_examples_in_tmux_after_the_trust_question(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "work" / "project"
    (project / ".agent" / "extensions").mkdir(parents=True)
    (project / ".agent" / "extensions" / "marker.py").write_text(MARKER_EXTENSION)
    (project / "app.py").write_text("print('hi')  # TODO: use the logger\n")
    (project / "build").mkdir()
    marker = project.parent / "MARKER"
    (agent_dir / "extensions").mkdir()
    for name in ("todo_panel", "word_count", "turn_status", "permission_gate"):
        shutil.copy(EXAMPLES / f"{name}.py", agent_dir / "extensions" / f"{name}.py")
    replies = [
        Scripted(tool_calls=[ToolCallSpec("word_count", {"paths": ["app.py"]})]),
        Scripted(text="Six words."),
        Scripted(tool_calls=[ToolCallSpec("bash", {"command": "rm -rf build"})]),
        Scripted(text="Left it alone."),
    ]
    with ModelServer(*replies) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json(models=[{"id": MODEL}])))
        pane = TmuxPane.start(
            [SCRIPT, "--provider", "test", "--model", MODEL],
            cwd=project,
            env={"PI_CODING_AGENT_DIR": str(agent_dir), "PI_TUI_LOG_DIR": str(tmp_path / "logs")},
            width=120,
            height=40,
        )
        try:
            pane.wait_for(
                lambda s: "This project folder has its own settings" in s and "marker.py" in s,
                "the question",
                20,
            )
            assert not marker.exists()
            pane.press("Enter")  # the first choice: trust the folder
            pane.wait_for(lambda s: "loaded the project's extensions: marker" in s, "loaded", 10)
            assert marker.exists()
            pane.wait_for(ready, "the editor and the footer")

            pane.type("/todos")
            pane.press("Enter")
            pane.wait_for(lambda s: "[todo-report]" in s and "1 open:" in s, "the panel")
            assert "TODO  app.py:1  use the logger" in pane.last_screen

            pane.type("count the words of app.py")
            pane.press("Enter")
            pane.wait_for(lambda s: "Six words." in s, "the answer")
            screen = pane.last_screen
            assert "word_count app.py" in screen and "6 words in 1 file" in screen
            assert "turns: 2" in screen and "tools used: word_count x1" in screen

            pane.type("clean the build")
            pane.press("Enter")
            pane.wait_for(lambda s: "Allow rm -rf?" in s, "the gate's question")
            pane.press("Down", "Enter")  # No
            pane.wait_for(lambda s: "Left it alone." in s, "the reply after the refusal")
            assert "The user did not allow rm -rf" in pane.last_screen
            assert (project / "build").is_dir()
            pane.press("C-d")
            pane.wait_gone()
        finally:
            pane.kill()
    session = read_session(next((agent_dir / "sessions").rglob("*.jsonl")))
    assert any(
        entry["type"] == "custom_message" and entry["customType"] == "todo-report" for entry in session
    )
