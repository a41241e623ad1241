"""The TUI with bytes that are not UTF-8 and terminal escapes in command output and file names.

Before, a ``!printf '\\xff'`` left a string the session writer refused, and every later prompt
went unsaved. Now the output is text (U+FFFD), the next prompt is saved, and escape sequences
from output or names are drawn as visible symbols, never sent to the terminal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson

from pi_tui.tui.transcript import BashItem, ToolItem
from tests.support.model_server import ModelServer, Scripted, ToolCallSpec
from tests.tui.conftest import make_app, screen_text, settle

SIZE = (100, 50)


def strict_lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


async def submit(pilot, app, text: str) -> None:
    app.editor.load_text(text)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot, app)


async def test_bang_command_with_invalid_bytes_then_a_prompt_is_saved(
    project: Path, server: ModelServer
) -> None:
    with open(os.fsencode(project) + b"/esc\x1b[2Jname\xff.txt", "wb") as handle:
        handle.write(b"x\n")
    server.queue(Scripted(tool_calls=[ToolCallSpec("ls", {})]), Scripted(text="listed"))
    app = make_app(project, provider="test", model="m", tools=["read", "bash", "ls"])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, r"!printf 'raw\xff\xfe \033[31mred\033[0m\n'")
        bash = next(item for item in app.chat.items if isinstance(item, BashItem))
        assert bash.output == "raw\ufffd\ufffd \x1b[31mred\x1b[0m\n"  # the data, as the model gets it

        await submit(pilot, app, "what is in the folder?")
        tool = next(item for item in app.chat.items if isinstance(item, ToolItem))
        assert "esc\\x1b[2Jname\\xff.txt" in tool.output
        screen = screen_text(app)
        assert "raw\ufffd\ufffd ␛[31mred␛[0m" in screen
        assert "\x1b" not in screen

        path = app.agent.manager.session_file
        assert path is not None
        saved = [line["message"] for line in strict_lines(path) if line["type"] == "message"]
        assert [message["role"] for message in saved] == [
            "bashExecution",
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]
        assert saved[0]["output"] == "raw\ufffd\ufffd \x1b[31mred\x1b[0m\n"
        assert saved[1]["content"][0]["text"] == "what is in the folder?"
        sent = json.dumps(server.requests[0].body)
        assert "raw\\ufffd\\ufffd" in sent  # the !command output went to the model as text
