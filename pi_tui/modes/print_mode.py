"""``-p``: run the prompt(s) without a UI, print the final answer (text) or every event (json).

Exit codes: 0 when the last reply ended normally, 1 when it ended in an error (the message goes
to stderr), 130 when interrupted with Ctrl+C (the run is aborted and recorded as such).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import TextIO

from pi_tui import jsonio
from pi_tui.agent.events import AgentEvent
from pi_tui.agent.session import AgentSession
from pi_tui.ai.http import close_shared_client
from pi_tui.modes.attachments import Prompt
from pi_tui.session.messages import AssistantMessage, TextContent
from pi_tui.text_safety import clean_text, for_terminal


def _silence(out: TextIO) -> None:
    """Point ``out`` at /dev/null so the interpreter's final flush does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())


def final_text(message: AssistantMessage | None) -> str:
    if message is None:
        return ""
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


async def run_print(
    agent: AgentSession, prompts: list[Prompt], *, json_mode: bool, out: TextIO | None = None
) -> int:
    out = out if out is not None else sys.stdout  # looked up now: it may have been replaced
    interrupted = False

    def on_interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        agent.abort()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
    # A failed save (disk full, I/O error) is one line on stderr; the run goes on and the entries
    # are written as soon as the file can take them.
    agent.set_save_listener(
        lambda text: print(f"pi-tui: {for_terminal(clean_text(text))}", file=sys.stderr, flush=True)
    )

    if json_mode:
        # jsonio, not orjson: a session read from disk may hold a lone surrogate (see jsonio),
        # which must come out as its JSON escape instead of ending the run.
        out.write(jsonio.dumps(agent.manager.get_header().to_json_dict()).decode() + "\n")
        out.flush()

        def write_event(event: AgentEvent) -> None:
            try:
                out.write(jsonio.dumps(event.to_json()).decode() + "\n")
                out.flush()
            except BrokenPipeError:
                # The reader is gone (`| head`, or Ctrl+C took it down): stop writing, quietly.
                unsubscribe()
                _silence(out)

        unsubscribe = agent.subscribe(write_event)

    last: AssistantMessage | None = None
    try:
        for prompt in prompts:
            last = await agent.prompt(prompt.text, prompt.images)
            if interrupted or (last is not None and last.stop_reason in ("error", "aborted")):
                break
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        agent.manager.close()
        await close_shared_client()

    if interrupted:
        print("pi-tui: interrupted", file=sys.stderr)
        return 130
    if last is not None and last.stop_reason == "error":
        print(f"pi-tui: {last.error_message or 'the model request failed'}", file=sys.stderr)
        return 1
    if not json_mode:
        text = clean_text(final_text(last))
        out.write(text + ("" if text.endswith("\n") else "\n"))
        out.flush()
    return 0
