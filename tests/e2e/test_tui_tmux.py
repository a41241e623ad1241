"""The installed ``pi-tui`` in interactive mode, driven through a real terminal (tmux).

One session, end to end: the TUI starts and shows its editor, a typed prompt runs a tool call
(shown as a card) and a streamed answer, a slow answer is stopped with Escape, Ctrl+D on the
empty editor leaves, and the session file holds the whole conversation.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.support.requires import requires
from tests.support.tmux import TmuxPane, exit_status
from tests.support.waiting import poll_until

SCRIPT = shutil.which("pi-tui") or str(Path(sys.executable).with_name("pi-tui"))
MODEL = "tmux-model"
pytestmark = requires("tmux", "pi-tui")

README = "# Demo\n\nA tiny demo project.\n"
ANSWER = "This is the Marmalade demo, a tiny project with one README."
SLOW_WORDS = [f"tick{i:03d}" for i in range(1, 301)]
SLOW_DELAY = 0.1  # seconds per word: the whole slow answer would take 30 s


# --- reading the screen --------------------------------------------------------------------------


def editor_text(screen: str) -> str | None:
    """The text inside the editor box (the last ╭...╰ box on screen), None when there is none."""
    lines = screen.splitlines()
    tops = [i for i, line in enumerate(lines) if line.lstrip().startswith("╭")]
    if not tops:
        return None
    inside: list[str] = []
    for line in lines[tops[-1] + 1 :]:
        if line.lstrip().startswith("╰"):
            return "\n".join(inside).strip()
        inside.append(line.strip().strip("│").strip())
    return None


def chat_lines(screen: str) -> list[str]:
    """The lines above the editor box (header, chat, status line), stripped."""
    lines = screen.splitlines()
    tops = [i for i, line in enumerate(lines) if line.lstrip().startswith("╭")]
    return [line.strip() for line in lines[: tops[-1] if tops else len(lines)]]


def line_index(lines: list[str], text: str) -> int:
    return next((i for i, line in enumerate(lines) if text in line), -1)


def ready(screen: str) -> bool:
    """Header, an empty editor and the footer with the model: the app has mounted."""
    return "pi-tui" in screen and editor_text(screen) == "" and MODEL in screen.splitlines()[-1]


def ticks_shown(screen: str) -> int:
    """The highest slow-answer word on screen (0: none yet)."""
    return max((int(n) for n in re.findall(r"tick(\d{3})", "\n".join(chat_lines(screen)))), default=0)


def working(screen: str) -> bool:
    return "Working..." in screen


# --- the session file ----------------------------------------------------------------------------


def read_session(path: Path) -> list[dict[str, Any]]:
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as error:
            pytest.fail(f"{path.name} line {number} is not valid JSON ({error}): {line!r}")
    return entries


def kind(entry: dict[str, Any]) -> str:
    return entry["message"]["role"] if entry["type"] == "message" else entry["type"]


def texts(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")


def start_pi_tui(
    agent_dir: Path, project: Path, server: ModelServer, status_file: Path | None = None
) -> TmuxPane:
    """The installed pi-tui in tmux on the loopback server, once its editor and footer show."""
    models = server.models_json(models=[{"id": MODEL, "name": "Tmux test model"}])
    (agent_dir / "models.json").write_text(json.dumps(models))
    pane = TmuxPane.start(
        [SCRIPT, "--provider", "test", "--model", MODEL],
        cwd=project,
        env={"PI_CODING_AGENT_DIR": str(agent_dir)},
        width=120,
        height=40,
        status_file=status_file,
    )
    try:
        pane.wait_for(ready, "the header, an empty editor and the footer naming the model", timeout=15)
    except BaseException:
        pane.kill()
        raise
    return pane


# --- the test ------------------------------------------------------------------------------------


def test_tui_in_tmux_tool_card_streaming_escape_abort_ctrl_d_exit_and_session_file(
    agent_dir: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text(README)
    status_file = tmp_path / "exit-status"
    replies = [
        Scripted(tool_calls=[ToolCallSpec("read", {"path": "README.md"})]),
        Scripted(text=ANSWER),
        Scripted(text=" ".join(SLOW_WORDS), event_delay=SLOW_DELAY),
    ]
    with ModelServer(*replies) as server:
        pane = start_pi_tui(agent_dir, project, server, status_file)  # 1. the app shows an empty editor
        try:
            # 2. a prompt: the read tool runs (a card), then the answer streams in
            pane.type("What is this project?")
            pane.wait_for(
                lambda s: editor_text(s) == "What is this project?", "the typed prompt in the editor"
            )
            pane.press("Enter")
            screen = pane.wait_for(
                lambda s: ANSWER in " ".join(chat_lines(s)) and not working(s) and s,
                "the final answer with the run finished",
            )
            lines = chat_lines(screen)
            prompt_at = line_index(lines, "What is this project?")
            card_at = next((i for i, line in enumerate(lines) if line == "read README.md"), -1)
            body_at = line_index(lines, "A tiny demo project.")
            answer_at = line_index(lines, "Marmalade demo")
            assert prompt_at >= 0, f"the prompt is not in the chat:\n{screen}"
            assert card_at >= 0, f"no tool card titled 'read README.md':\n{screen}"
            assert body_at > card_at, f"the card does not show the file's text under its title:\n{screen}"
            assert prompt_at < card_at < answer_at, f"prompt, card, answer are out of order:\n{screen}"
            assert editor_text(screen) == "", f"the editor was not cleared after Enter:\n{screen}"
            assert len(server.requests) == 2
            assert "A tiny demo project." in json.dumps(server.requests[1].body["messages"][-1])

            # 3. a slow answer: words arrive one by one; Escape stops it
            pane.type("Count slowly")
            pane.wait_for(lambda s: editor_text(s) == "Count slowly", "the second prompt in the editor")
            pane.press("Enter")
            pane.wait_for(lambda s: ticks_shown(s) >= 3, "the first words of the slow answer")
            pane.wait_for(lambda s: ticks_shown(s) >= 6, "more words of the slow answer (streaming)")
            assert working(pane.last_screen), f"no 'Working...' while streaming:\n{pane.last_screen}"
            pressed = time.monotonic()
            pane.press("Escape")
            screen = pane.wait_for(
                lambda s: "Aborted" in chat_lines(s) and not working(s) and s,
                "'Aborted' in the chat and the status line idle after Escape",
                timeout=2.0,
            )
            abort_seconds = time.monotonic() - pressed
            shown = ticks_shown(screen)
            assert 6 <= shown < len(SLOW_WORDS), f"unexpected words on screen after the abort:\n{screen}"
            # stopped for real: nothing more arrives in the time several more words would take
            deadline = time.monotonic() + 5 * SLOW_DELAY  # time is what is tested here
            while time.monotonic() < deadline:
                later = pane.capture() or ""
                assert ticks_shown(later) == shown, f"words kept coming after 'Aborted':\n{later}"
                time.sleep(0.05)
            aborted_request = server.requests[2]
            poll_until(
                lambda: aborted_request.client_disconnected,
                "the slow request's connection to close",
                timeout=3,
            )
            assert not aborted_request.completed

            # 4. Ctrl+D on the empty editor leaves; the process ends with status 0
            assert editor_text(screen) == "", f"the editor is not empty before Ctrl+D:\n{screen}"
            pane.press("C-d")
            assert pane.wait_gone(timeout=10), f"pi-tui still running 10 s after Ctrl+D:\n{pane.last_screen}"
            assert exit_status(status_file) == "0"
        finally:
            pane.kill()
        assert len(server.requests) == 3, "a request was made after the abort"

    # 5. the session file holds the whole conversation, chained entry to entry
    files = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    assert files[0].parent.name == "--" + str(project).lstrip("/").replace("/", "-") + "--"
    entries = read_session(files[0])
    header, body = entries[0], entries[1:]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == str(project)
    assert [kind(e) for e in body] == [
        "model_change",
        "thinking_level_change",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    ids = [e["id"] for e in body]
    assert len(set(ids)) == len(ids), f"repeated ids: {ids}"
    assert [e["parentId"] for e in body] == [None, *ids[:-1]], "entries are not chained by parentId"

    messages = [e["message"] for e in body if e["type"] == "message"]
    first_prompt, tool_turn, tool_result, answer, second_prompt, aborted = messages
    assert texts(first_prompt) == "What is this project?"
    (call,) = [block for block in tool_turn["content"] if block["type"] == "toolCall"]
    assert call["name"] == "read" and call["arguments"] == {"path": "README.md"}
    assert tool_turn["stopReason"] == "toolUse"
    assert tool_result["toolCallId"] == call["id"] and tool_result["toolName"] == "read"
    assert tool_result["isError"] is False and "A tiny demo project." in texts(tool_result)
    assert texts(answer) == ANSWER and answer["stopReason"] == "stop"
    assert texts(second_prompt) == "Count slowly"
    assert aborted["role"] == "assistant" and aborted["stopReason"] == "aborted"
    saved_words = texts(aborted).split()
    assert shown <= len(saved_words) < len(SLOW_WORDS), saved_words
    assert saved_words == SLOW_WORDS[: len(saved_words)], "the aborted reply is not the streamed prefix"
    assert abort_seconds < 2.0
