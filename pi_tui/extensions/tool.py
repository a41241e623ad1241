"""A tool an extension registers, as the agent runs it (the :class:`AgentTool` protocol).

``parameters`` is a JSON schema dict or a pydantic model class. Every call is checked before
``execute`` runs, as pi checks every call: with a model, the arguments are validated into an
instance; with a JSON schema, by jsonschema after pi's light coercion (``"42"`` for a number,
one value for a list, ``null`` for an optional property left out). A model's mistake comes back
to it as an error result naming each bad field and echoing the arguments, and the tool does not
run. ``execute`` is written in whichever of these forms suits:

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
import copy
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from pi_tui.messages import ImageContent, TextContent, UserBlock
from pi_tui.tools.arguments import pydantic_problems, validation_text
from pi_tui.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

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
        self._validator: Validator | None = None
        self._compiled = False

    def checked_arguments(self, args: dict[str, Any]) -> Any:
        """The arguments ``execute`` gets (a model instance, or the coerced dict), or a
        :class:`ToolError` in pi's words when they break the tool's schema."""
        model = self.registered.model
        if model is not None:
            try:
                return model.model_validate(args)
            except ValidationError as error:
                raise ToolError(validation_text(self.name, pydantic_problems(error), args)) from None
        validator = self._schema_validator()
        if validator is None:
            return args
        from referencing.exceptions import Unresolvable

        value = coerce(copy.deepcopy(args), self.parameters)  # the transcript keeps what was sent
        try:
            errors = list(validator.iter_errors(value))
        except Unresolvable:
            return value  # a $ref that names nothing: the schema's fault, not the model's
        if errors:
            problems = [
                (".".join(str(part) for part in error.absolute_path) or "root", error.message)
                for error in errors
            ]
            raise ToolError(validation_text(self.name, problems, args))
        return value

    def _schema_validator(self) -> Validator | None:
        """The compiled schema (once per tool); None when the schema itself is not valid JSON
        schema, so a sloppy schema keeps working as it did rather than failing every call."""
        if not self._compiled:
            self._compiled = True
            from jsonschema.exceptions import SchemaError  # imported on first use: 0.1 s
            from jsonschema.validators import validator_for

            try:
                cls = validator_for(self.parameters)
                cls.check_schema(self.parameters)
                self._validator = cls(self.parameters)
            except (SchemaError, TypeError):
                self._validator = None
        return self._validator

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        params: Any = self.checked_arguments(args)
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


def coerce(value: Any, schema: Any) -> Any:
    """Loosen what models commonly get wrong, as pi does before validating: a numeric or
    ``true``/``false`` string where the schema wants a number or boolean, a number where it
    wants a string, one value where it wants a list, ``null`` for an optional property."""
    if not isinstance(schema, dict):
        return value
    types = schema.get("type")
    wanted = set(types) if isinstance(types, list) else {types} if isinstance(types, str) else set()
    if isinstance(value, dict) and "object" in wanted | ({"object"} if "properties" in schema else set()):
        properties = schema.get("properties")
        required = set(schema.get("required") or ())
        if isinstance(properties, dict):
            for key in list(value):
                if value[key] is None and key not in required and "null" not in _types(properties.get(key)):
                    del value[key]
                elif key in properties:
                    value[key] = coerce(value[key], properties[key])
        return value
    if "array" in wanted and value is not None and not isinstance(value, list):
        value = [value]
    if isinstance(value, list):
        return [coerce(item, schema.get("items")) for item in value]
    if isinstance(value, str) and not wanted & {"string"}:
        return _from_string(value, wanted)
    if isinstance(value, int | float) and not isinstance(value, bool) and wanted == {"string"}:
        return json.dumps(value)
    return value


def _types(schema: Any) -> set[str]:
    types = schema.get("type") if isinstance(schema, dict) else None
    return set(types) if isinstance(types, list) else {types} if isinstance(types, str) else set()


def _from_string(value: str, wanted: set[str]) -> Any:
    text = value.strip()
    if "boolean" in wanted and text in ("true", "false"):
        return text == "true"
    if wanted & {"integer", "number"}:
        try:
            number = float(text)
        except ValueError:
            return value
        if number.is_integer() and "integer" in wanted:
            return int(number)
        if "number" in wanted and number == number and abs(number) != float("inf"):
            return number
    return value
