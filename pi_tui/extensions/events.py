"""The events extensions receive: their names, and the object a handler gets.

Handlers are Python: fields are snake_case attributes (``event.tool_name``), and the same
fields can be read as keys (``event["tool_name"]``, ``event.get("input")``), which is how most
JavaScript examples read once ported. Messages are pi-tui's typed messages (snake_case
attributes; ``to_json_dict()`` gives pi's JSON).
"""

from __future__ import annotations

import re
from typing import Any

SESSION_EVENTS = (
    "session_start",
    "session_before_switch",
    "session_before_fork",
    "session_before_compact",
    "session_compact",
    "session_before_tree",
    "session_tree",
    "session_shutdown",
)
AGENT_EVENTS = (
    "before_agent_start",
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "context",
    "before_provider_request",
    "after_provider_response",
)
OTHER_EVENTS = (
    "tool_call",
    "tool_result",
    "input",
    "user_bash",
    "model_select",
    "thinking_level_select",
    "ttsr_triggered",
)
EVENT_NAMES = frozenset(SESSION_EVENTS + AGENT_EVENTS + OTHER_EVENTS)
"""Every event ``pi.on`` accepts."""

BRIDGED_EVENTS = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "ttsr_triggered",
    }
)
"""Agent bus events handed to extensions as they are (notification only: results ignored).
``message_end`` is not among them: its handlers run before the message is saved, and may
replace it (see :meth:`ExtensionRunner.message_end`)."""


class ExtensionEvent:
    """One event: ``type`` and its fields, as attributes and as keys."""

    __slots__ = ("_fields", "type")

    def __init__(self, type: str, **fields: Any) -> None:
        self.type = type
        self._fields = fields

    def __getattr__(self, name: str) -> Any:
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"{self.type} event has no field {name!r}") from None

    def __getitem__(self, name: str) -> Any:
        if name == "type":
            return self.type
        return self._fields[name]

    def __contains__(self, name: object) -> bool:
        return name == "type" or name in self._fields

    def get(self, name: str, default: Any = None) -> Any:
        if name == "type":
            return self.type
        return self._fields.get(name, default)

    def keys(self) -> list[str]:
        return ["type", *self._fields]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self._fields}

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={_short(value)}" for key, value in self._fields.items())
        return f"ExtensionEvent({self.type}{', ' if fields else ''}{fields})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake(name: str) -> str:
    """``toolCallId`` -> ``tool_call_id`` (the agent bus speaks pi's JSON names)."""
    return _CAMEL.sub(r"_\1", name).lower()


class Record(dict[str, Any]):
    """A plain dict whose keys also read as attributes (``rule.name`` and ``rule["name"]``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def from_bus(event_type: str, data: dict[str, Any]) -> ExtensionEvent:
    """An agent bus event as extensions see it (field names in snake_case; a TTSR event's rules
    as records: ``rule.name``, ``rule.path``, ``rule.interrupt_mode``...)."""
    fields = {snake(key): value for key, value in data.items()}
    if event_type == "ttsr_triggered":
        fields["rules"] = [Record({snake(k): v for k, v in rule.items()}) for rule in fields.get("rules", [])]
    return ExtensionEvent(event_type, **fields)
