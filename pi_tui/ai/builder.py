"""Assembling one assistant message from wire deltas, and the events that describe it.

Every API parser drives a :class:`MessageBuilder` with the same few calls (open a block, add to
it, close it, finish or fail). The builder owns the rules all APIs share: block indices, one
``*_end`` per opened block, partial tool-call arguments, usage cost, and never losing what
streamed when the stream fails. Text is kept as lists of fragments and joined when a snapshot is
asked for, so long streams stay linear.

Some servers cut strings by UTF-16 code units, so an emoji can arrive as a high surrogate at the
end of one delta and the low surrogate at the start of the next. Python does not merge two
halves that were concatenated, so a block holds a trailing high surrogate back until the next
delta shows whether its other half follows (:func:`_pair_up`); a half that never finds its pair
is kept as it is when the block ends (Node keeps it too, and :mod:`pi_tui.jsonio` writes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pi_tui import jsonio
from pi_tui.ai.events import StreamEvent
from pi_tui.ai.partial_json import PartialJson
from pi_tui.ai.types import Model, compute_cost
from pi_tui.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)

_new_event = tuple.__new__
"""Builds a StreamEvent from a full tuple, skipping the generated ``__new__`` (per-token path)."""


@dataclass(slots=True)
class _Block:
    kind: str  # "text" | "thinking" | "toolCall"
    parts: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: bool = False
    call_id: str = ""
    name: str = ""
    json: PartialJson | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    open: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    high: str = ""
    """A high surrogate that ended the last delta, waiting for its low half."""

    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def to_content(self) -> TextContent | ThinkingContent | ToolCall:
        if self.kind == "text":
            block = TextContent(text=self.text())
            if self.signature is not None:
                block.text_signature = self.signature
            return block
        if self.kind == "thinking":
            thinking = ThinkingContent(thinking=self.text())
            if self.signature is not None:
                thinking.thinking_signature = self.signature
            if self.redacted:
                thinking.redacted = True
            return thinking
        call = ToolCall(id=self.call_id, name=self.name, arguments=self.arguments)
        if self.signature is not None:
            call.thought_signature = self.signature
        return call


_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH = frozenset(chr(code) for code in range(0xD800, 0xDC00))
"""High (leading) surrogates; a set lookup on the last character is the cheap per-delta test."""


def _pair_up(block: _Block, delta: str) -> str:
    """``delta`` with a held high surrogate joined to its low half, and its own trailing high
    surrogate held back (``block.high``); what is left to add (may be empty)."""
    held = block.high
    if held:
        block.high = ""
        first = delta[0]
        if "\udc00" <= first <= "\udfff":
            delta = chr(0x10000 + ((ord(held) - 0xD800) << 10) + (ord(first) - 0xDC00)) + delta[1:]
        elif ord(first) > 0xFFFF and chr(0xD800 + ((ord(first) - 0x10000) >> 10)) == held:
            pass  # the server sent the whole character again (a final text): the half is in it
        else:
            delta = held + delta
    if delta and delta[-1] in _HIGH:
        block.high = delta[-1]
        delta = delta[:-1]
    return delta


def _with_lone_halves(text: str) -> dict[str, Any] | None:
    """Arguments whose JSON holds a surrogate half that never found its pair, which the partial
    parser (orjson) cuts short: parsed as Node would, keeping the half. None when that fails."""
    try:
        value = jsonio.loads(text)
    except jsonio.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class MessageBuilder:
    """Collects blocks and usage for one assistant message; queues the events it produces."""

    def __init__(self, model: Model, *, started: bool = False) -> None:
        """``started``: a ``start`` event already went out (a retry continues the same stream)."""
        self.model = model
        self.events: list[StreamEvent] = []
        self.blocks: list[_Block] = []
        self.usage = Usage()
        self.stop_reason = "stop"
        self.response_id: str | None = None
        self.error_message: str | None = None
        self.provider_thinking_level: str | None = None
        """pi 1.5.2's ``providerThinkingLevel``: the effort a managed-effort Claude answered at
        (kept on the message so later requests repeat it before this reply)."""
        self.timestamp = now_ms()
        self.finished = False
        self._started = started
        self._snap = self.snapshot  # one bound method for every event, not one per event

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        if not self._started:
            self._started = True
            self.events.append(StreamEvent("start", snapshot=self.snapshot))

    @property
    def has_output(self) -> bool:
        return bool(self.blocks)

    def finish(self, stop_reason: str | None = None) -> None:
        """The stream ended normally: close open blocks, emit ``done``."""
        if self.finished:
            return
        self.start()
        self.close_all()
        if stop_reason is not None:
            self.stop_reason = stop_reason
        if self.stop_reason == "stop" and any(b.kind == "toolCall" for b in self.blocks):
            self.stop_reason = "toolUse"
        self.finished = True
        message = self.snapshot()
        self.events.append(StreamEvent("done", reason=message.stop_reason, message=message))

    def fail(self, error_message: str, *, aborted: bool = False) -> None:
        """The stream failed or was aborted: keep what streamed, emit ``error``."""
        if self.finished:
            return
        self.start()
        self.close_all()
        self.stop_reason = "aborted" if aborted else "error"
        self.error_message = error_message
        self.finished = True
        message = self.snapshot()
        self.events.append(StreamEvent("error", reason=self.stop_reason, message=message))

    def take_events(self) -> list[StreamEvent]:
        events, self.events = self.events, []
        return events

    # --- blocks ---------------------------------------------------------------------------------

    def text_start(self) -> int:
        return self._open(_Block("text"), "text_start")

    def text_delta(self, index: int, delta: str) -> None:
        if delta:
            block = self.blocks[index]
            if block.high or delta[-1] >= "\ud800":
                delta = _pair_up(block, delta)
                if not delta:
                    return
            block.parts.append(delta)
            self.events.append(
                _new_event(StreamEvent, ("text_delta", index, delta, "", None, None, None, self._snap))
            )

    def thinking_start(self, *, redacted: bool = False) -> int:
        return self._open(_Block("thinking", redacted=redacted), "thinking_start")

    def thinking_delta(self, index: int, delta: str) -> None:
        if delta:
            block = self.blocks[index]
            if block.high or delta[-1] >= "\ud800":
                delta = _pair_up(block, delta)
                if not delta:
                    return
            block.parts.append(delta)
            self.events.append(
                _new_event(StreamEvent, ("thinking_delta", index, delta, "", None, None, None, self._snap))
            )

    def append_prose(self, kind: str, text: str) -> int:
        """More ``text`` or ``thinking`` for APIs that stream one block at a time.

        Extends the last block when it is still open and of this kind; otherwise ends it (if
        open) and opens a new block. Returns the block's index. Empty text changes nothing.
        """
        index = len(self.blocks) - 1
        last = self.blocks[index] if index >= 0 else None
        if last is None or not last.open or last.kind != kind:
            if last is not None and last.open:
                self.end(index)
            index = self.text_start() if kind == "text" else self.thinking_start()
        if kind == "text":
            self.text_delta(index, text)
        else:
            self.thinking_delta(index, text)
        return index

    def set_signature(self, index: int, signature: str, *, append: bool = False) -> None:
        block = self.blocks[index]
        block.signature = (block.signature or "") + signature if append else signature

    def toolcall_start(self, call_id: str, name: str) -> int:
        block = _Block("toolCall", call_id=call_id, name=name, json=PartialJson())
        return self._open(block, "toolcall_start", self._call(block))

    def toolcall_delta(self, index: int, fragment: str) -> None:
        if not fragment:
            return
        block = self.blocks[index]
        if block.high or fragment[-1] >= "\ud800":
            fragment = _pair_up(block, fragment)
            if not fragment:
                return
        assert block.json is not None
        block.arguments = block.json.feed(fragment)
        self.events.append(
            StreamEvent(
                "toolcall_delta", index, fragment, tool_call=self._call(block), snapshot=self.snapshot
            )
        )

    def toolcall_set_arguments(self, index: int, arguments: dict[str, Any]) -> None:
        """For APIs that send whole arguments objects (Gemini)."""
        block = self.blocks[index]
        block.arguments = arguments
        block.json = None

    def end(self, index: int) -> None:
        """Close block ``index`` (idempotent)."""
        block = self.blocks[index]
        if not block.open:
            return
        if block.high:  # its low half never came: keep the lone half, as Node does
            lone, block.high = block.high, ""
            self._add_lone_half(index, block, lone)
        block.open = False
        if block.kind == "text":
            self.events.append(StreamEvent("text_end", index, content=block.text(), snapshot=self.snapshot))
        elif block.kind == "thinking":
            self.events.append(
                StreamEvent("thinking_end", index, content=block.text(), snapshot=self.snapshot)
            )
        else:
            if block.json is not None:
                text = block.json.text
                lenient = _with_lone_halves(text) if _SURROGATE.search(text) else None
                block.arguments = lenient or block.json.final()
            self.events.append(
                StreamEvent("toolcall_end", index, tool_call=self._call(block), snapshot=self.snapshot)
            )

    def _add_lone_half(self, index: int, block: _Block, lone: str) -> None:
        """Add a held half as the block's last delta (past :func:`_pair_up`, which would hold it
        back again)."""
        if block.kind == "toolCall":
            if block.json is not None:
                block.arguments = block.json.feed(lone)
                self.events.append(
                    StreamEvent(
                        "toolcall_delta", index, lone, tool_call=self._call(block), snapshot=self.snapshot
                    )
                )
            return
        block.parts.append(lone)
        kind = "text_delta" if block.kind == "text" else "thinking_delta"
        self.events.append(StreamEvent(kind, index, lone, snapshot=self.snapshot))  # type: ignore[arg-type]

    def close_all(self) -> None:
        for index, block in enumerate(self.blocks):
            if block.open:
                self.end(index)

    def _open(self, block: _Block, event: str, call: ToolCall | None = None) -> int:
        self.start()
        self.blocks.append(block)
        index = len(self.blocks) - 1
        self.events.append(StreamEvent(event, index, tool_call=call, snapshot=self.snapshot))  # type: ignore[arg-type]
        return index

    @staticmethod
    def _call(block: _Block) -> ToolCall:
        return ToolCall(id=block.call_id, name=block.name, arguments=dict(block.arguments))

    # --- usage and result -----------------------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> None:
        usage = self.usage
        if input is not None:
            usage.input = input
        if output is not None:
            usage.output = output
        if cache_read is not None:
            usage.cache_read = cache_read
        if cache_write is not None:
            usage.cache_write = cache_write
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        usage.cost = compute_cost(usage, self.model.cost)

    def snapshot(self) -> AssistantMessage:
        """The message as it stands."""
        message = AssistantMessage(
            content=[block.to_content() for block in self.blocks],
            api=self.model.api,
            provider=self.model.provider,
            model=self.model.id,
            usage=self.usage.model_copy(deep=True),
            stop_reason=self.stop_reason,
            timestamp=self.timestamp,
        )
        if self.error_message is not None:
            message.error_message = self.error_message
        if self.response_id is not None:
            message.response_id = self.response_id
        if self.provider_thinking_level is not None:
            setattr(message, "providerThinkingLevel", self.provider_thinking_level)  # noqa: B010 (an extra key)
        return message
