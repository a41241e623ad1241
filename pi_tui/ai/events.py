"""The provider-neutral stream of events for one assistant message.

Every API client produces exactly this sequence: ``start``; per content block
``*_start`` / ``*_delta`` ... / ``*_end``; then ``done`` or ``error``. ``partial`` on every event
is the message as assembled so far (built on demand, so consumers that only read deltas pay
nothing for it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from pi_tui.messages import AssistantBlock, AssistantMessage, TextContent, ThinkingContent, ToolCall

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


class StreamEvent(NamedTuple):
    """One event of an assistant message stream.

    ``type``; ``content_index`` of the block; ``delta`` text on ``*_delta``; ``content`` (full
    block text) on ``text_end`` / ``thinking_end``; ``tool_call`` (arguments parsed as far as
    they go) on ``toolcall_*``; ``reason`` on ``done`` (stop | length | toolUse) and ``error``
    (error | aborted); ``message`` (the final message) on ``done`` / ``error``; ``snapshot``
    builds the message as it stood (see :attr:`partial`).

    A named tuple: one is made per streamed token, and a tuple is the cheapest object Python
    can build (the builder's delta path calls ``tuple.__new__`` directly), with C-level field
    access for consumers.
    """

    type: EventType
    content_index: int = -1
    delta: str = ""
    content: str = ""
    tool_call: ToolCall | None = None
    reason: str | None = None
    message: AssistantMessage | None = None
    snapshot: Callable[[], AssistantMessage] | None = None

    @property
    def partial(self) -> AssistantMessage:
        """The message as assembled so far.

        Built when read, from the live builder: events are delivered a network chunk at a time,
        so it may already include deltas of events still queued behind this one.
        """
        if self.message is not None:
            return self.message
        assert self.snapshot is not None
        return self.snapshot()

    def to_json(self) -> dict[str, Any]:
        """pi 1.x's wire shape of the event inside ``message_update`` (``--mode json``, rpc, the
        server): its own fields and no ``partial`` message, so a reply's events stay linear in
        its length; ``toolcall_start`` names the call (``id``, ``toolName``)."""
        kind = self.type
        data: dict[str, Any] = {"type": kind}
        if self.content_index >= 0:
            data["contentIndex"] = self.content_index
        if kind.endswith("_delta"):
            data["delta"] = self.delta
        elif kind in ("text_end", "thinking_end"):
            data["content"] = self.content
        elif kind == "toolcall_start" and self.tool_call is not None:
            data["id"], data["toolName"] = self.tool_call.id, self.tool_call.name
        elif kind == "toolcall_end" and self.tool_call is not None:
            data["toolCall"] = self.tool_call.to_json_dict()
        elif kind == "done":
            data["reason"] = self.reason
            data["message"] = self.partial.to_json_dict()
        elif kind == "error":
            data["reason"] = self.reason
            data["error"] = self.partial.to_json_dict()
        return data


def without_events(message: AssistantMessage, unseen: list[StreamEvent]) -> AssistantMessage:
    """``message`` as it stood before ``unseen`` (events built into it but never delivered).

    Blocks those events opened are dropped and the text or thinking they added is cut off the
    end of its block. A tool call's argument fragments stay (the call of a cut reply never
    runs). The message itself is not changed: a copy comes back when anything was dropped.
    """
    dropped: set[int] = set()
    cut: dict[int, int] = {}
    for event in unseen:
        index = event.content_index
        if event.type in ("text_start", "thinking_start", "toolcall_start"):
            dropped.add(index)
        elif event.type in ("text_delta", "thinking_delta") and index not in dropped:
            cut[index] = cut.get(index, 0) + len(event.delta)
    if not dropped and not cut:
        return message
    content: list[AssistantBlock] = []
    for index, block in enumerate(message.content):
        if index in dropped:
            continue
        size = cut.get(index, 0)
        if size and isinstance(block, TextContent):
            block = block.model_copy(update={"text": block.text[: max(len(block.text) - size, 0)]})
        elif size and isinstance(block, ThinkingContent):
            kept = block.thinking[: max(len(block.thinking) - size, 0)]
            block = block.model_copy(update={"thinking": kept})
        content.append(block)
    return message.model_copy(update={"content": content})
