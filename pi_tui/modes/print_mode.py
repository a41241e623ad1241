"""``-p``: run the prompt(s) without a UI, print the final answer (text) or every event (json).

Exit codes: 0 when the last reply ended normally, 1 when it ended in an error (the message goes
to stderr), 2 when session entries could not be saved (a full disk: said on stderr), 130 when
interrupted with Ctrl+C, 143 on SIGTERM and 129 on SIGHUP (a closed
terminal). On each of these signals running commands are killed with everything they started,
the run is aborted and recorded as such and the session file is closed (see ``exit_signals``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TextIO

from pi_tui import jsonio
from pi_tui.agent.events import AgentEvent, progress_line
from pi_tui.agent.session import AgentSession
from pi_tui.ai.http import close_shared_client
from pi_tui.extensions.setup import ExtensionSetup
from pi_tui.messages import AssistantMessage, TextContent
from pi_tui.modes.attachments import Prompt
from pi_tui.modes.exit_signals import STOP_SIGNALS, ExitSignals, say, signal_name
from pi_tui.modes.mcp_status import McpReply, close_mcp, mcp_words, run_mcp_command
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
    agent: AgentSession,
    prompts: list[Prompt],
    *,
    json_mode: bool,
    out: TextIO | None = None,
    extensions: ExtensionSetup | None = None,
) -> int:
    """Run ``prompts`` in order (a ``/command`` of an extension runs as in the TUI) and print
    the last reply (json mode: every event). Extensions can ask nothing here: their dialogs
    answer their defaults, and say so on stderr."""
    out = out if out is not None else sys.stdout  # looked up now: it may have been replaced
    signals = ExitSignals(
        lambda _signum: agent.abort(),
        signals=(signal.SIGINT, *STOP_SIGNALS),
        last_resort=agent.manager.close,
    )
    signals.install()
    # A failed save (disk full, I/O error) is one line on stderr; the run goes on and the entries
    # are written as soon as the file can take them.
    agent.set_save_listener(
        lambda text: print(f"pi-tui: {for_terminal(clean_text(text))}", file=sys.stderr, flush=True)
    )

    def show_progress(event: AgentEvent) -> None:
        """Retries and stalls on stderr, as the TUI's status line shows them."""
        line = progress_line(event)
        if line is not None:
            print(f"pi-tui: {for_terminal(line)}", file=sys.stderr, flush=True)

    agent.subscribe(show_progress)

    if json_mode:
        # jsonio, not orjson: a session read from disk may hold a lone surrogate (see jsonio),
        # which must come out as its JSON escape instead of ending the run.
        out.write(jsonio.dumps(agent.manager.get_header().to_json_dict()).decode() + "\n")
        out.flush()

        def write_event(event: AgentEvent) -> None:
            try:
                out.write(jsonio.dumps(event.to_json()).decode() + "\n")
                out.flush()
            except OSError:
                # The reader is gone (`| head`, Ctrl+C took it down, the terminal was closed):
                # stop writing, quietly.
                unsubscribe()
                _silence(out)

        unsubscribe = agent.subscribe(write_event)

    # Replies of runs an extension starts (a command's trigger_turn) count as the prompt's reply.
    replies: list[AssistantMessage] = []

    def keep_reply(event: AgentEvent) -> None:
        message = event.get("message") if event.type == "message_end" else None
        if isinstance(message, AssistantMessage):
            replies.append(message)

    agent.subscribe(keep_reply)

    def show_mcp(reply: McpReply) -> None:
        """``/mcp``'s answer: a record in json mode; else stdout, and errors on stderr."""
        if json_mode:
            out.write(jsonio.dumps(reply.record()).decode() + "\n")
        elif reply.level == "error":
            print(f"pi-tui: {for_terminal(reply.text)}", file=sys.stderr, flush=True)
            return
        else:
            out.write(reply.text + "\n")
        out.flush()

    runner = extensions.runner if extensions is not None else None
    last: AssistantMessage | None = None
    mcp_failed = False
    choices = getattr(runner, "mcp_choices", None)
    mcp_on = choices is None or choices.enabled  # --no-mcp: /mcp is no command, as in pi
    try:
        if extensions is not None and runner is not None:
            await _start_extensions(extensions)
        for prompt in prompts:
            words = mcp_words(prompt.text) if mcp_on else None
            if words is not None:  # /mcp: server status or an action, never a turn
                mcp_failed = not await run_mcp_command(agent.mcp, words, show_mcp) or mcp_failed
                continue
            seen = len(replies)
            await agent.prompt(prompt.text, prompt.images, source="print")
            if runner is not None:
                await runner.settle()
            last = replies[-1] if len(replies) > seen else None
            ended = last is not None and last.stop_reason in ("error", "aborted")
            asked_to_stop = runner is not None and runner.shutdown_requested  # ctx.shutdown()
            if signals.received is not None or ended or asked_to_stop:
                break
        if signals.received is None and not json_mode and last is not None and last.stop_reason != "error":
            # written before the servers and the session close: a script reading the answer
            # does not wait for MCP servers to stop
            text = clean_text(final_text(last))
            if _is_terminal(out):  # a terminal gets no escape sequence from the model; a pipe the exact text
                text = for_terminal(text)
            out.write(text + ("" if text.endswith("\n") else "\n"))
            out.flush()
    finally:
        if runner is not None:
            await runner.session_shutdown("quit")
        await close_mcp(agent.mcp)  # no MCP server outlives the run
        agent.manager.close()
        await close_shared_client()
        signals.remove()

    if signals.received is not None:
        received = signals.received
        say("interrupted" if received == signal.SIGINT else f"stopped by {signal_name(received)}")
        return signals.exit_code or 1
    if last is not None and last.stop_reason == "error":
        error = for_terminal(last.error_message or "the model request failed")
        print(f"pi-tui: {error}", file=sys.stderr)
        return 1
    if agent.manager.unsaved_count:
        return 2  # the reply was printed, but the session lost entries ("Lost on exit" was said)
    return 1 if mcp_failed else 0


def _stderr_line(line: str) -> None:
    print(f"pi-tui: {for_terminal(clean_text(line))}", file=sys.stderr, flush=True)


def say_start_notice(notice: str) -> None:
    """Start-up's notice (config problems, warnings: lines joined with newlines) on stderr, each
    line its own ``pi-tui:`` line, so a script that filters stderr by the prefix misses none."""
    for line in notice.splitlines():
        if line.strip():
            _stderr_line(line)


async def _start_extensions(extensions: ExtensionSetup) -> None:
    """Say what start-up had to say about extensions, finish their activation, start them."""
    for line in extensions.lines:
        _stderr_line(line)
    extensions.runner.report = _stderr_line
    await extensions.runner.finish_activation()
    await extensions.runner.session_start("startup")


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
