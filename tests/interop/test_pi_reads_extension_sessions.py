"""A session written with the example extensions (a panel producer and a tool with details)
opens in pi 0.73.1 and pi 1.5.2 and continues with the same request as in pi-tui (issues 15, 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.continuation import (
    Workspace,
    check_with_every_pi,
    entries,
    raise_first_failure,
    require_node,
    serving,
)
from tests.support.model_server import Scripted, ToolCallSpec
from tests.support.real_pi import PI_VERSIONS

pytestmark = pytest.mark.pi_interop

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


@pytest.fixture(autouse=True, scope="module")
def real_pi() -> None:
    for version in PI_VERSIONS:
        require_node(version)


def test_a_session_with_extension_panels_and_tool_details_continues_in_pi(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "case")
    (workspace.project / "app.py").write_text("print('hi')  # TODO: use the logger\n")
    replies = [
        Scripted(text="Counting first.", tool_calls=[ToolCallSpec("word_count", {"paths": ["app.py"]})]),
        Scripted(text="The TODO is in a 6-word file; I would switch to logging."),
    ]
    extensions = ["-e", str(EXAMPLES / "todo_panel.py"), "-e", str(EXAMPLES / "word_count.py")]
    with serving(workspace, *replies):
        result = workspace.pi_tui(*extensions, "-p", "/todos fix")
        assert result.returncode == 0, result.stderr
    session = workspace.session_file()
    written = entries(session)
    panel = next(entry for entry in written if entry["type"] == "custom_message")
    assert panel["customType"] == "todo-report" and panel["display"] is True
    assert panel["details"]["todos"][0]["file"] == "app.py"
    result_entry = next(e for e in written if e.get("message", {}).get("role") == "toolResult")
    assert result_entry["message"]["details"] == {"totals": {"app.py": {"lines": 1, "words": 6, "chars": 36}}}
    raise_first_failure(check_with_every_pi(workspace, session))
