"""The provider-neutral stream of events for one assistant message.

Every API client produces exactly this sequence: ``start``; per content block
``*_start`` / ``*_delta`` ... / ``*_end``; then ``done`` or ``error``. ``partial`` on every event
is the message as assembled so far (built on demand, so consumers that only read deltas pay
nothing for it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_tui.session.messages import AssistantMessage, ToolCall

EventType = Literal[
    "start",
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
    "done",
    "error",
]


@dataclass(slots=True)
class StreamEvent:
    type: EventType
    content_index: int = -1
    delta: str = ""
    content: str = ""
    """Full text of the block, on ``text_end`` / ``thinking_end``."""
    tool_call: ToolCall | None = None
    """On ``toolcall_*``: the call with arguments parsed as far as they go."""
    reason: str | None = None
    """On ``done``: stop | length | toolUse; on ``error``: error | aborted."""
    message: AssistantMessage | None = None
    """On ``done`` / ``error``: the final message."""
    _snapshot: Callable[[], AssistantMessage] | None = field(default=None, repr=False)

    @property
    def partial(self) -> AssistantMessage:
        """The message as assembled when this event was produced."""
        if self.message is not None:
            return self.message
        assert self._snapshot is not None
        return self._snapshot()

    def to_json(self) -> dict[str, Any]:
        """pi's JSON shape of the event (for ``--mode json`` / rpc)."""
        data: dict[str, Any] = {"type": self.type}
        if self.content_index >= 0:
            data["contentIndex"] = self.content_index
        if self.type.endswith("_delta"):
            data["delta"] = self.delta
        if self.type in ("text_end", "thinking_end"):
            data["content"] = self.content
        if self.tool_call is not None and self.type == "toolcall_end":
            data["toolCall"] = self.tool_call.to_json_dict()
        if self.type == "done":
            data["reason"] = self.reason
            data["message"] = self.partial.to_json_dict()
        elif self.type == "error":
            data["reason"] = self.reason
            data["error"] = self.partial.to_json_dict()
        else:
            data["partial"] = self.partial.to_json_dict()
        return data
