"""User shell commands (``!command``, ``!!command``, rpc ``bash``): run like the bash tool,
recorded as ``bashExecution`` messages; an extension's ``user_bash`` handler may run them its
own way.

A mixin of :class:`~pi_tui.agent.session.AgentSession`, kept in its own module so the agent loop
stays one readable size.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.hooks import AgentHooks
from pi_tui.config.settings import Settings
from pi_tui.messages import BashExecutionMessage, now_ms
from pi_tui.session import SessionManager
from pi_tui.text_safety import clean_text, show_name


class UserBashMixin:
    """``run_bash`` for :class:`~pi_tui.agent.session.AgentSession`."""

    manager: SessionManager
    settings: Settings
    hooks: AgentHooks
    cwd: Path
    _aborted: bool
    _bash_task: asyncio.Task[Any] | None

    if TYPE_CHECKING:

        async def _record(self, message: Any) -> Any: ...

    async def run_bash(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_chunk: Callable[[str], None] | None = None,
    ) -> BashExecutionMessage:
        """Run a user ``!command`` (``!!`` excludes it from the context) and record it.

        Same runner as the bash tool (own process group, bounded output with the full text in a
        temp file when cut); :meth:`abort` kills it and the message records ``cancelled``.
        ``on_chunk`` gets the output as it comes, every byte (rpc's ``bash_execution_update``),
        decoded as the output is (bytes that are not UTF-8 become U+FFFD).
        """
        import codecs

        from pi_tui.tools.bash import OutputBuffer, run_command

        if self.hooks.wants("user_bash"):
            given = await self.hooks.user_bash(command, exclude_from_context, str(self.cwd))
            if given is not None:  # an extension ran it its own way (a remote shell...)
                return await self._record_bash(command, exclude_from_context, given)
        buffers: list[OutputBuffer] = []
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        seen = [0]

        def on_output(buffer: OutputBuffer) -> None:
            if not buffers:
                buffers.append(buffer)
            if on_chunk is not None and buffer.total_bytes > seen[0]:
                # Called after each chunk the buffer took: its newest chunk is the new output.
                fresh = buffer._chunks[-1][-(buffer.total_bytes - seen[0]) :]
                seen[0] = buffer.total_bytes
                text = decoder.decode(fresh)
                if text:
                    on_chunk(clean_text(text))

        task = asyncio.ensure_future(
            run_command(
                command,
                self.cwd,
                on_output=on_output,
                shell_path=self.settings.shell_path,
                command_prefix=self.settings.shell_command_prefix,
            )
        )
        self._bash_task = task
        self._aborted = False
        exit_code: int | None = None
        cancelled = False
        try:
            result = await task
            exit_code = result.exit_code
            buffer: OutputBuffer | None = result.output
        except asyncio.CancelledError:
            if not self._aborted:
                raise
            cancelled = True
            buffer = buffers[0] if buffers else None
        finally:
            self._bash_task = None
        if on_chunk is not None:
            rest = decoder.decode(b"", final=True)
            if rest:
                on_chunk(rest)
        output, truncated, full_path = "", False, None
        if buffer is not None:
            cut = buffer.tail()
            output, truncated = cut.content, cut.truncated
            buffer.finish(keep_file=truncated)
            full_path = buffer.file_path if truncated else None
        message = BashExecutionMessage(
            command=clean_text(command),
            output=clean_text(output),
            exit_code=exit_code,
            cancelled=cancelled,
            truncated=truncated,
            timestamp=now_ms(),
            exclude_from_context=exclude_from_context,
        )
        if full_path:
            message.full_output_path = show_name(full_path)
        await self._record(message)
        self.manager.sync()
        return message

    async def _record_bash(self, command: str, exclude: bool, given: dict[str, Any]) -> BashExecutionMessage:
        """Record the result an extension's ``user_bash`` handler gave instead of a run."""
        code = given.get("exit_code", given.get("exitCode"))
        message = BashExecutionMessage(
            command=clean_text(command),
            output=clean_text(str(given.get("output", ""))),
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            cancelled=bool(given.get("cancelled", False)),
            truncated=bool(given.get("truncated", False)),
            timestamp=now_ms(),
            exclude_from_context=exclude,
        )
        await self._record(message)
        self.manager.sync()
        return message
