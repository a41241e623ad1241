"""The hooks the agent awaits (:class:`~pi_tui.agent.hooks.AgentHooks`), answered by calling the
extensions' handlers in load order, each seeing what the previous one made.

A mixin of :class:`~pi_tui.extensions.runner.ExtensionRunner`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pi_tui.agent.hooks import InputOutcome, StartOutcome
from pi_tui.extensions.base import AbortSignal, ExtensionError
from pi_tui.extensions.context import CommandContext, ContextRunner
from pi_tui.extensions.events import ExtensionEvent
from pi_tui.extensions.tool import content_blocks, positional_count
from pi_tui.messages import CustomMessage, ImageContent
from pi_tui.tools.base import ToolResult

if TYPE_CHECKING:
    from pi_tui.extensions.registrations import Handler, RegisteredCommand

FAILED = object()
"""What a handler that raised returned (its failure already reported)."""


class HookCalls:
    """The hook-answering half of the runner."""

    handlers: dict[str, list[Handler]]
    commands: dict[str, RegisteredCommand]
    signal: AbortSignal
    _next_turn: list[CustomMessage]

    if TYPE_CHECKING:  # provided by ExtensionRunner and the other mixins

        async def _call(self, handler: Handler, event: ExtensionEvent) -> Any: ...
        def failed(self, extension: str, where: str, error: BaseException) -> None: ...
        async def emit(self, event_type: str, **fields: Any) -> list[Any]: ...
        def tool_prompt_section(self) -> str: ...
        def custom_message(self, message: Any) -> CustomMessage: ...
        def _as_runner(self) -> ContextRunner: ...

    # --- hooks the agent awaits --------------------------------------------------------------------

    async def run_command(self, text: str) -> bool:
        from pi_tui.commands import parse_slash

        parsed = parse_slash(text)
        if parsed is None:
            return False
        name, args = parsed
        command = self.commands.get(name.lower())
        if command is None:
            return False
        await self.run_registered_command(command, args)
        return True

    async def run_registered_command(self, command: RegisteredCommand, args: str) -> None:
        context = CommandContext(self._as_runner(), command.extension)
        try:
            arity = positional_count(command.handler)
            value = command.handler(args) if arity <= 1 else command.handler(args, context)
            if inspect.isawaitable(value):
                await value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.failed(command.extension, f"/{command.name}", error)

    async def input(self, text: str, images: Sequence[ImageContent], source: str) -> InputOutcome:
        outcome = InputOutcome(text, list(images))
        for handler in list(self.handlers.get("input", ())):
            event = ExtensionEvent("input", text=outcome.text, images=list(outcome.images), source=source)
            value = await self._call(handler, event)
            if not isinstance(value, dict):
                continue
            action = value.get("action", "continue")
            if action == "handled":
                outcome.handled = True
                return outcome
            if action == "transform":
                if isinstance(value.get("text"), str):
                    outcome.text = value["text"]
                if value.get("images") is not None:
                    outcome.images = [
                        block for block in content_blocks(value["images"]) if isinstance(block, ImageContent)
                    ]
        return outcome

    async def before_agent_start(
        self, prompt: str, images: Sequence[ImageContent], system_prompt: str
    ) -> StartOutcome:
        outcome = StartOutcome()
        chained = system_prompt
        section = self.tool_prompt_section()
        if section:
            chained = f"{chained}\n\n{section}" if chained else section
            outcome.system_prompt = chained
        for handler in list(self.handlers.get("before_agent_start", ())):
            event = ExtensionEvent(
                "before_agent_start", prompt=prompt, images=list(images), system_prompt=chained
            )
            value = await self._call(handler, event)
            if not isinstance(value, dict):
                continue
            for item in [value.get("message"), *(value.get("messages") or [])]:
                if item is None:
                    continue
                try:
                    outcome.messages.append(self.custom_message(item))
                except (ExtensionError, ValueError, TypeError) as error:
                    self.failed(handler.extension, "before_agent_start", error)
            if isinstance(value.get("system_prompt"), str):
                chained = value["system_prompt"]
                outcome.system_prompt = chained
        return outcome

    def take_next_turn_messages(self) -> list[Any]:
        taken, self._next_turn = self._next_turn, []
        return taken

    async def context(self, messages: list[Any]) -> list[Any]:

        current = messages
        for handler in list(self.handlers.get("context", ())):
            copied = [message.model_copy(deep=True) for message in current]
            value = await self._call(handler, ExtensionEvent("context", messages=copied))
            if isinstance(value, dict) and isinstance(value.get("messages"), list):
                try:
                    current = [typed_message(item) for item in value["messages"]]
                except ValueError as error:
                    self.failed(handler.extension, "context", error)
        return current

    async def before_provider_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        for handler in list(self.handlers.get("before_provider_request", ())):
            value = await self._call(handler, ExtensionEvent("before_provider_request", payload=payload))
            if isinstance(value, dict):
                payload = value
        return payload

    async def after_provider_response(self, status: int, headers: dict[str, str]) -> None:
        await self.emit("after_provider_response", status=status, headers=dict(headers))

    async def tool_call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> str | None:
        for handler in list(self.handlers.get("tool_call", ())):
            event = ExtensionEvent("tool_call", tool_call_id=call_id, tool_name=tool_name, input=arguments)
            value = await self._call(handler, event)
            if value is FAILED:  # a gate that breaks must not wave the call through
                return f"the extension {handler.extension} failed while checking this call"
            if isinstance(value, dict) and value.get("block"):
                reason = value.get("reason")
                return str(reason) if reason else f"blocked by the extension {handler.extension}"
        return None

    async def tool_result(
        self, call_id: str, tool_name: str, arguments: dict[str, Any], result: ToolResult
    ) -> ToolResult:
        for handler in list(self.handlers.get("tool_result", ())):
            event = ExtensionEvent(
                "tool_result",
                tool_call_id=call_id,
                tool_name=tool_name,
                input=arguments,
                content=list(result.content),
                details=result.details,
                is_error=result.is_error,
            )
            value = await self._call(handler, event)
            if not isinstance(value, dict):
                continue
            try:
                content = content_blocks(value["content"]) if "content" in value else result.content
            except (TypeError, ValueError) as error:
                self.failed(handler.extension, "tool_result", error)
                continue
            result = ToolResult(
                content,
                value.get("details", result.details),
                bool(value.get("is_error", result.is_error)),
            )
        return result

    async def message_end(self, message: Any) -> Any:

        for handler in list(self.handlers.get("message_end", ())):
            value = await self._call(handler, ExtensionEvent("message_end", message=message))
            if not isinstance(value, dict) or value.get("message") is None:
                continue
            try:
                replacement = typed_message(value["message"])
            except ValueError as error:
                self.failed(handler.extension, "message_end", error)
                continue
            if replacement.role != message.role:
                self.failed(
                    handler.extension,
                    "message_end",
                    ExtensionError(f"a {message.role} message cannot become a {replacement.role} message"),
                )
                continue
            message = replacement
        return message

    async def user_bash(self, command: str, exclude_from_context: bool, cwd: str) -> dict[str, Any] | None:
        for handler in list(self.handlers.get("user_bash", ())):
            event = ExtensionEvent(
                "user_bash", command=command, exclude_from_context=exclude_from_context, cwd=cwd
            )
            value = await self._call(handler, event)
            if isinstance(value, dict) and isinstance(value.get("result"), dict):
                result: dict[str, Any] = value["result"]
                return result
        return None

    async def before(self, event: str, **fields: Any) -> dict[str, Any] | None:
        for handler in list(self.handlers.get(event, ())):
            value = await self._call(handler, ExtensionEvent(event, **fields))
            if isinstance(value, dict) and value:
                return value
        return None

    def aborted(self) -> None:
        self.signal.set()

    def run_started(self) -> None:
        if self.signal.aborted:
            self.signal = AbortSignal()


def typed_message(item: Any) -> Any:
    """A message an extension handed back (a dict, or a typed message it may have changed with
    ``model_copy``, which does not check), validated as one read from a file would be."""
    from pi_tui.messages import Wire
    from pi_tui.session.context import parse_message

    if isinstance(item, Wire):
        item = item.model_dump(by_alias=True, exclude_unset=True, warnings=False)
    return parse_message(item)
