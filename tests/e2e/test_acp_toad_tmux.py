"""``pi-tui acp`` as a person meets it through Toad, an ACP front end somebody else wrote.

Toad (``tests/support/toad.py``: installed once into the test cache, on Python 3.13 with a small
start-up shim when no 3.14 is around) runs in tmux as ``toad acp "<pi-tui> acp" <project>``. The
test types into Toad's prompt and reads Toad's screen: each answer the loopback model streams to
pi-tui must show in Toad's conversation, below the prompt that asked for it, and the model must
see the conversation so far on the second turn.

The first test runs the same harness against a stand-in agent of a few lines, so a failure of the
second one points at pi-tui, not at Toad on this machine.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer, Scripted, last_user_text
from tests.support.requires import PI_TUI, requires
from tests.support.tmux import TmuxPane
from tests.support.toad import send_prompt, stand_in_agent_command, stand_in_answer, start_in_tmux

pytestmark = requires("tmux")

ANSWER_TIMEOUT = 30.0
"""A reply crosses Toad, the agent and (for pi-tui) the model server: well under a second here."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Pond\n\nWhere the toads live.\n")
    return root


def row_of(screen: str, text: str) -> int:
    """The first screen row showing ``text`` (-1: none)."""
    return next((number for number, row in enumerate(screen.splitlines()) if text in row), -1)


def wait_for_answer(pane: TmuxPane, prompt: str, answer: str) -> str:
    """Wait until ``answer`` shows below ``prompt`` in Toad's conversation; return that screen."""

    def answered(screen: str) -> bool:
        return 0 <= row_of(screen, prompt) < row_of(screen, answer)

    pane.wait_for(answered, f"the answer {answer!r} below the prompt {prompt!r}", ANSWER_TIMEOUT)
    return pane.last_screen


def test_toad_shows_a_stand_in_agents_streamed_answers(project: Path, tmp_path: Path) -> None:
    first, second = "where do toads sleep", "and in winter"
    with start_in_tmux(
        stand_in_agent_command(), project=project, state=tmp_path / "toad", title="stand-in agent"
    ) as pane:
        send_prompt(pane, first)
        wait_for_answer(pane, first, stand_in_answer(1, first))
        send_prompt(pane, second)
        screen = wait_for_answer(pane, second, stand_in_answer(2, second))
        assert row_of(screen, stand_in_answer(1, first)) < row_of(screen, second), screen


@requires("pi-tui")
def test_toad_holds_a_conversation_with_pi_tui_acp(agent_dir: Path, project: Path, tmp_path: Path) -> None:
    first, second = "Which pond is nearest", "How deep is it"
    answers = ["The lily pond is nearest.", "About two metres at the middle."]
    with ModelServer(*(Scripted(text=answer) for answer in answers)) as server:
        (agent_dir / "models.json").write_text(json.dumps(server.models_json()))
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "test", "defaultModel": "m"}))
        with start_in_tmux(
            shlex.join([PI_TUI, "acp"]),
            project=project,
            state=tmp_path / "toad",
            title="pi-tui under test",
            env={"PI_CODING_AGENT_DIR": str(agent_dir)},
        ) as pane:
            send_prompt(pane, first)
            wait_for_answer(pane, first, answers[0])
            send_prompt(pane, second)
            screen = wait_for_answer(pane, second, answers[1])
            assert row_of(screen, answers[0]) < row_of(screen, second), screen

        asked = [request for request in server.requests if request.api is not None]
        assert [last_user_text(request.api, request.body) for request in asked] == [first, second]
        history = json.dumps(asked[1].body)
        assert first in history and answers[0] in history, history
