"""Running the tool calls of one assistant reply: extension gates, steering skips, aborts,
secrets revealed to the tool, results cleaned and saved in order.

A mixin of :class:`~pi_tui.agent.session.AgentSession`, kept in its own module so the agent loop
stays one readable size.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.hooks import AgentHooks
from pi_tui.config.settings import Settings
from pi_tui.messages import ImageContent, TextContent, ToolCall, ToolResultMessage, now_ms
from pi_tui.secrets.active import inbound as reveal_secrets
from pi_tui.session import SessionManager
from pi_tui.text_safety import clean_text, clean_value
from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult
from pi_tui.ttsr.coordinator import TtsrCoordinator

if TYPE_CHECKING:
    from pi_tui.agent.events import AgentEvent

SKIPPED_TEXT = "Skipped: the user sent a new message before this tool ran."
ABORTED_TOOL_TEXT = "Aborted by the user."
BLOCKED_PREFIX = "Blocked: "
"""Start of the result of a tool call an extension refused (the reason follows)."""


class ToolCallsMixin:
    """Tool execution for :class:`~pi_tui.agent.session.AgentSession`."""

    manager: SessionManager
    settings: Settings
    hooks: AgentHooks
    cwd: Path
    ttsr: TtsrCoordinator | None
    steering: Sequence[Any]
    _aborted: bool
    _tool_task: asyncio.Task[ToolResult] | None

    if TYPE_CHECKING:

        def emit(self, event_type: str, **data: Any) -> AgentEvent: ...

        def active_tools(self) -> list[AgentTool]: ...

        async def _save(self, message: Any, produced: list[Any]) -> None: ...

    async def _run_tools(
        self, calls: list[ToolCall], results: list[ToolResultMessage], produced: list[Any]
    ) -> None:
        by_name = {tool.name: tool for tool in self.active_tools()}
        hooks = self.hooks
        gated, reshaped = hooks.wants("tool_call"), hooks.wants("tool_result")
        for index, call in enumerate(calls):
            self.emit("tool_execution_start", toolCallId=call.id, toolName=call.name, args=call.arguments)
            duration_ms: int | None = None
            # Extensions may change the arguments in place: never the saved call's own dict.
            arguments = copy.deepcopy(call.arguments) if gated or reshaped else dict(call.arguments)
            # Placeholders the model was shown become the real values again (a new dict: the
            # saved call keeps what the model sent).
            arguments = reveal_secrets(arguments)
            blocked = None
            if gated and not self._aborted:
                await hooks.drain()  # a gate has seen every event before the call it judges
                blocked = await hooks.tool_call(call.id, call.name, arguments)
            if self._aborted:
                result = ToolResult.text(ABORTED_TOOL_TEXT)
                result.is_error = True
            elif self.steering and index > 0:
                result = ToolResult.text(SKIPPED_TEXT)
                result.is_error = True
            elif blocked is not None:
                result = ToolResult.text(f"{BLOCKED_PREFIX}{blocked}")
                result.is_error = True
            else:
                tool = by_name.get(call.name)
                began = time.monotonic()
                result = await self._execute(tool, call, arguments)
                if tool is not None:  # pi 1.x: how long execute() took; absent when it did not run
                    duration_ms = max(0, round((time.monotonic() - began) * 1000))
            result = clean_result(result)
            if reshaped:
                result = clean_result(await hooks.tool_result(call.id, call.name, arguments, result))
            reminder, reminded = self.ttsr.reminder_for(call.id) if self.ttsr is not None else (None, [])
            content = list(result.content)
            if reminder is not None:
                content.insert(0, TextContent(text=reminder))
                result.content = content
            message = ToolResultMessage(
                tool_call_id=call.id,
                tool_name=call.name,
                content=[*content],
                is_error=result.is_error,
                timestamp=now_ms(),
            )
            if result.details is not None:
                message.details = result.details
            results.append(message)
            self.emit(
                "tool_execution_end",
                toolCallId=call.id,
                toolName=call.name,
                result={"content": result.content, "details": result.details},
                isError=result.is_error,
                **({} if duration_ms is None else {"durationMs": duration_ms}),
            )
            await self._save(message, produced)
            if reminded and self.ttsr is not None:
                self.manager.append_ttsr_injection(reminded)
                self.ttsr.mark_injected(reminded)

    async def _execute(self, tool: AgentTool | None, call: ToolCall, arguments: dict[str, Any]) -> ToolResult:
        if tool is None:
            available = ", ".join(t.name for t in self.active_tools()) or "none"
            return _error_result(f"Tool {call.name!r} is not available (available: {available}).")

        def on_update(partial: ToolResult) -> None:
            partial = clean_result(partial)
            self.emit(
                "tool_execution_update",
                toolCallId=call.id,
                toolName=call.name,
                args=call.arguments,
                partialResult={"content": partial.content, "details": partial.details},
            )

        context = ToolContext(
            cwd=self.cwd,
            on_update=on_update,
            shell_path=self.settings.shell_path,
            command_prefix=self.settings.shell_command_prefix,
        )
        task = asyncio.ensure_future(tool.execute(call.id, arguments, context))
        self._tool_task = task
        try:
            return await task
        except asyncio.CancelledError:
            if not self._aborted:
                raise  # our own task is being cancelled: let it go
            return _error_result(ABORTED_TOOL_TEXT)
        except ToolError as error:
            return _error_result(str(error), error.details if error.details is not None else {})
        except Exception as error:  # a tool bug: the model hears about it, the loop goes on
            return _error_result(f"{call.name} failed: {type(error).__name__}: {error}", {})
        finally:
            self._tool_task = None


def clean_result(result: ToolResult) -> ToolResult:
    """``result`` with no lone surrogate left in its text or details (see
    :mod:`pi_tui.text_safety`): a path or an error message from a tool may hold bytes that are
    not UTF-8, and the message must still save, send and print."""
    content = [_clean_block(block) for block in result.content]
    return ToolResult(content, clean_value(result.details), result.is_error)


def _clean_block(block: TextContent | ImageContent) -> TextContent | ImageContent:
    if isinstance(block, TextContent):
        text = clean_text(block.text)
        if text is not block.text:
            return block.model_copy(update={"text": text})
    return block


def _error_result(text: str, details: Any = None) -> ToolResult:
    return ToolResult([TextContent(text=text)], details, is_error=True)
