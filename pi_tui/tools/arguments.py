"""Checking a tool call's arguments before the tool runs, and saying what was wrong as pi does.

The built-in tools declare their arguments as pydantic models (:class:`ToolArguments`
subclasses) and call :func:`parse_arguments` first thing; extension tools are checked against
their JSON schema by :mod:`pi_tui.extensions.tool`. Either way a bad call becomes a
:class:`~pi_tui.tools.base.ToolError` in pi's shape (:func:`validation_text`): one
``  - path: problem`` line per problem, then the arguments as received, so the model can see
what it sent and fix it.

Models do not always send what the schema says (a number as a string, ``""`` for an omitted
option, ``"true"`` for a flag); the field types here take those as pi's coercion does.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from pi_tui.tools.base import ToolError

__all__ = [
    "Flag",
    "NonEmptyText",
    "OptionalCount",
    "OptionalInt",
    "OptionalNonNegative",
    "OptionalNumber",
    "OptionalText",
    "Text",
    "ToolArguments",
    "parse_arguments",
    "pydantic_problems",
    "validation_text",
]


def _omitted_when_empty(value: Any) -> Any:
    """``""`` and ``null`` both mean "not given" for an optional argument."""
    return None if value == "" else value


def _whole_number(value: Any) -> Any:
    if value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("expected an integer, not true or false")
    return value.strip() if isinstance(value, str) else value


def _number(value: Any) -> Any:
    if value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("expected a number, not true or false")
    return value.strip() if isinstance(value, str) else value


def _flag(value: Any) -> bool:
    """Any spelling a model uses for yes counts as yes; everything else (absent too) as no."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


Text = Annotated[str, Field(strict=True)]
"""A required string (numbers are not turned into text)."""
NonEmptyText = Annotated[str, Field(strict=True, min_length=1)]
OptionalText = Annotated[Text | None, BeforeValidator(_omitted_when_empty)]
OptionalInt = Annotated[int | None, BeforeValidator(_whole_number)]
OptionalCount = Annotated[Annotated[int, Field(ge=1)] | None, BeforeValidator(_whole_number)]
"""An optional positive integer (a limit)."""
OptionalNonNegative = Annotated[Annotated[int, Field(ge=0)] | None, BeforeValidator(_whole_number)]
OptionalNumber = Annotated[float | None, BeforeValidator(_number)]
Flag = Annotated[bool, BeforeValidator(_flag)]


class ToolArguments(BaseModel):
    """Base of the built-in tools' argument models: unknown keys are ignored, as pi-tui always
    did (models add stray keys), and the model is frozen (it is read, never changed)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


Arguments = TypeVar("Arguments", bound=BaseModel)


def parse_arguments(model: type[Arguments], tool: str, args: dict[str, Any]) -> Arguments:
    """``args`` as ``model``, or a :class:`ToolError` in pi's words naming every problem."""
    try:
        return model.model_validate(args)
    except ValidationError as error:
        raise ToolError(validation_text(tool, pydantic_problems(error), args)) from None


def pydantic_problems(error: ValidationError) -> list[tuple[str, str]]:
    """``(dotted path or "root", message)`` for each problem pydantic found."""
    problems = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail["loc"]) or "root"
        message = detail["msg"].removeprefix("Value error, ")
        problems.append((where, message))
    return problems


def validation_text(name: str, problems: list[tuple[str, str]], args: Any) -> str:
    """pi's text for a call that breaks the tool's schema."""
    lines = "\n".join(f"  - {where}: {message}" for where, message in problems)
    received = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{name}":\n{lines}\n\nReceived arguments:\n{received}'
