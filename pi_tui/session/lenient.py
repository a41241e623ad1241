"""Typed views of entries that do not quite fit the models, built the way pi reads them.

Session files come from pi, oh-my-pi, older versions and crashes. pi reads a field when it needs
it and copes with a wrong one; pydantic refuses the whole entry. So a typed view is built in
rounds: validate, and where a field does not fit, drop it (its default applies, as a missing
field does in pi) or, for a required text field, put in an empty string; inside a list of content
blocks a block that cannot be repaired is left out. What cannot be repaired that way (a user
message whose ``content`` is a number) gives no view, and the caller leaves the message out of
the model's context with a warning.

Only the typed view is repaired: the raw dict, which is what is on disk and what is copied when
a session is forked, is never changed.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

REQUIRED_TEXT_FIELDS = frozenset(
    {
        "toolName",
        "command",
        "customType",
        "summary",
        "fromId",
        "targetId",
        "mimeType",
        "name",
        "thinking",
        "text",
        "timestamp",
    }
)
"""Required fields for which pi would carry on with an empty value (it reads them as text)."""

_MAX_ROUNDS = 24

T = TypeVar("T")


class Unrepairable(Exception):
    """The value has no typed view; ``problem`` says which field stood in the way."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def validate(adapter: TypeAdapter[T], raw: Any) -> tuple[T, list[str]]:
    """``(typed view, what was repaired)``; raises :class:`Unrepairable`.

    The common case, a value that fits, costs one validation and copies nothing.
    """
    try:
        return adapter.validate_python(raw), []
    except ValidationError as first:
        failure = first
    data = copy.deepcopy(raw)
    repaired: list[str] = []
    dropped: dict[str, Any] = {}
    for _ in range(_MAX_ROUNDS):
        repaired.append(_repair_one(data, failure, dropped))
        try:
            return adapter.validate_python(data), repaired
        except ValidationError as again:
            failure = again
    raise Unrepairable(_describe(failure.errors()[0]))


def _repair_one(data: Any, error: ValidationError, dropped: dict[str, Any]) -> str:
    """Change ``data`` so that the first error of ``error`` goes away; say what was done.

    ``dropped`` remembers the fields taken out, so that when one of them turns out to be
    required the problem is told as the value that was there, not as a missing field.
    """
    detail = error.errors()[0]
    loc = detail["loc"]
    container: Any = None
    key: Any = None
    block: tuple[list[Any], int] | None = None
    current = data
    for part in loc:
        if isinstance(current, dict) and isinstance(part, str) and part in current:
            container, key, current = current, part, current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            block = (current, part)
            container, key, current = current, part, current[part]
        # else: a union or discriminator tag in the location, not a step into the data
    if detail["type"] == "missing":
        field = loc[-1] if loc else None
        if isinstance(current, dict) and field in REQUIRED_TEXT_FIELDS:
            current[field] = ""
            return f"{field} was missing"
        if block is not None:
            del block[0][block[1]]
            return f"left out a content block without {field}"
        if field in dropped:
            raise cannot_hold(str(field), dropped[field])
        raise Unrepairable(f"it has no {field}")
    if isinstance(container, dict) and key in container:
        if key in ("role", "type") and container is data:
            raise Unrepairable(_describe(detail))
        del container[key]
        dropped.setdefault(str(key), current)
        return f"ignored {key} ({short(current)})"
    if isinstance(container, list) and isinstance(key, int):
        del container[key]
        return f"left out a content block ({short(current)})"
    raise Unrepairable(_describe(detail))


def _describe(detail: Any) -> str:
    path = ".".join(str(part) for part in detail["loc"] if not str(part).startswith(("list[", "tagged")))
    return f"{path or 'value'}: {detail['msg']}"


def cannot_hold(field: str, value: Any) -> Unrepairable:
    """The problem of a field whose value leaves no message to send."""
    return Unrepairable(f"its {field} is {short(value)}, which no message can hold")


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
