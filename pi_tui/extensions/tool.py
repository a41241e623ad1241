"""A tool an extension registers, as the agent runs it (the :class:`AgentTool` protocol).

``parameters`` is a JSON schema dict or a pydantic model class. With a model, the arguments are
validated into an instance before ``execute`` sees them, and a model's mistake comes back to it
as a tool error naming the field. ``execute`` is written in whichever of these forms suits:

- ``execute(params)``
- ``execute(tool_call_id, params)``
- ``execute(tool_call_id, params, ctx)``: ``ctx.update(...)`` streams partial output,
  ``ctx.signal.aborted`` tells that the user pressed Escape.

It may be sync (run in a worker thread, so the UI keeps drawing) or async (cancelled on abort).
It returns ``{"content": [...], "details": ..., "is_error": bool}``, a plain string (the text),
or a :class:`ToolResult`; raising an exception gives the model an error result with its message.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from pi_tui.session.messages import ImageContent, TextContent, UserBlock
from pi_tui.tools.base import ToolContext, ToolError, ToolResult

_BLOCK = TypeAdapter(UserBlock)


@dataclass(slots=True)
class RegisteredTool:
    """What ``pi.register_tool`` was given (after checking it)."""

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Callable[..., Any]
    extension: str
    label: str = ""
    model: type[BaseModel] | None = None
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)


def schema_of(parameters: Any) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """``(JSON schema, pydantic model or None)`` of what ``register_tool`` was given."""
    if inspect.isclass(parameters) and issubclass(parameters, BaseModel):
        return parameters.model_json_schema(), parameters
    if parameters is None:
        return {"type": "object", "properties": {}}, None
    if isinstance(parameters, dict):
        return parameters, None
    raise TypeError("parameters must be a JSON schema dict or a pydantic model class")


def to_result(value: Any) -> ToolResult:
    """What an extension's ``execute`` (or a ``tool_result`` handler) returned, as a result."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult([], None)
    if isinstance(value, str):
        return ToolResult.text(value)
    if isinstance(value, dict):
        return ToolResult(
            content_blocks(value.get("content", [])),
            value.get("details"),
            bool(value.get("is_error", value.get("isError", False))),
        )
    raise TypeError(f"a tool returns a dict, a string or a ToolResult, not {type(value).__name__}")


def content_blocks(content: Any) -> list[TextContent | ImageContent]:
    """Text and image blocks from a string or a list of dicts/blocks (others are refused)."""
    if isinstance(content, str):
        return [TextContent(text=content)]
    blocks: list[TextContent | ImageContent] = []
    for item in content or ():
        block = item if isinstance(item, TextContent | ImageContent) else _BLOCK.validate_python(item)
        if not isinstance(block, TextContent | ImageContent):
            raise TypeError(f"content blocks are text or image, not {getattr(block, 'type', '?')}")
        blocks.append(block)
    return blocks


def positional_count(function: Callable[..., Any]) -> int:
    """How many positional arguments to pass ``function``: its required ones, plus one for an
    optional parameter named ``ctx`` (so ``lambda event, seen=seen: ...`` gets the event alone
    and ``def handler(event, ctx=None)`` gets the context too); a ``*args`` takes them all."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return 3
    count = 0
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return 99
        if parameter.kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            continue
        if parameter.default is inspect.Parameter.empty or parameter.name in ("ctx", "context"):
            count += 1
    return count


class ExtensionTool:
    """An extension's tool behind the agent's tool protocol."""

    def __init__(self, registered: RegisteredTool, make_context: Callable[[ToolContext], Any]) -> None:
        self.registered = registered
        self.name = registered.name
        self.label = registered.label or registered.name
        self.description = registered.description
        self.parameters = registered.parameters
        self._make_context = make_context
        self._arity = positional_count(registered.execute)

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        params: Any = args
        if self.registered.model is not None:
            try:
                params = self.registered.model.model_validate(args)
            except ValidationError as error:
                raise ToolError(_validation_text(self.name, error)) from None
        context = self._make_context(ctx)
        arguments = (
            (params,)
            if self._arity <= 1
            else (call_id, params)
            if self._arity == 2
            else (call_id, params, context)
        )
        function = self.registered.execute
        try:
            if inspect.iscoroutinefunction(function):
                value = await function(*arguments)
            else:
                value = await asyncio.to_thread(function, *arguments)
                if inspect.isawaitable(value):
                    value = await value
        except (asyncio.CancelledError, ToolError):
            raise
        except Exception as error:  # the extension's way of saying the call failed
            raise ToolError(str(error) or type(error).__name__) from error
        try:
            return to_result(value)
        except (TypeError, ValidationError) as error:
            raise ToolError(f"{self.name} returned something that is not a tool result: {error}") from None


def _validation_text(name: str, error: ValidationError) -> str:
    problems = []
    for detail in error.errors()[:5]:
        where = ".".join(str(part) for part in detail["loc"]) or "arguments"
        problems.append(f"{where}: {detail['msg']}")
    return f"Invalid arguments for {name}: " + "; ".join(problems)
