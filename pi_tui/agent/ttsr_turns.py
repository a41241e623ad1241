"""TTSR inside the agent loop: a rule that cuts a reply is injected as a hidden message and the
turn goes again; ``contextMode: keep`` keeps the cut reply in what the model sees.

A mixin of :class:`~pi_tui.agent.session.AgentSession` and the helpers its stream loop uses,
kept in their own module so the agent loop stays one readable size.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_tui.messages import AssistantMessage, CustomMessage, TextContent, ThinkingContent, ToolCall, now_ms
from pi_tui.session import SessionManager
from pi_tui.ttsr.coordinator import INJECTION_TYPE, TtsrCoordinator

if TYPE_CHECKING:
    from pi_tui.agent.events import AgentEvent

TTSR_RETRY_DELAY = 0.05
"""Pause between a rule's interrupt and the retry, so a user action in between wins."""


class TtsrMixin:
    """Rule injection for :class:`~pi_tui.agent.session.AgentSession`."""

    manager: SessionManager
    ttsr: TtsrCoordinator | None
    _aborted: bool

    if TYPE_CHECKING:

        def emit(self, event_type: str, **data: Any) -> AgentEvent: ...

    async def _ttsr_retry(self, produced: list[Any]) -> bool:
        """After a rule cut the stream: wait a moment, inject the rule, go again.

        The pause lets a user action (Escape, a new prompt) win: then nothing is injected.
        """
        assert self.ttsr is not None
        await asyncio.sleep(TTSR_RETRY_DELAY)
        if self._aborted:
            self.ttsr.cancel_interrupt()
            return False
        rules = self.ttsr.take_interrupt()
        if not rules:
            return False
        self._inject_rules(rules, produced)
        return True

    def _inject_rules(self, rules: list[Any], produced: list[Any]) -> None:
        """The hidden ``ttsr-injection`` message + the ``ttsr_injection`` entry."""
        assert self.ttsr is not None
        names = [rule.name for rule in rules]
        details = {"rules": names, "contextMode": self.ttsr.context_mode}
        text = self.ttsr.injection_text(rules)
        message = CustomMessage(
            custom_type=INJECTION_TYPE,
            content=text,
            display=False,
            details=details,
            timestamp=now_ms(),
        )
        self.emit("message_start", message=message)
        self.manager.append_custom_message_entry(INJECTION_TYPE, text, False, details)
        self.manager.append_ttsr_injection(names)
        self.ttsr.mark_injected(names)
        produced.append(message)
        self.emit("message_end", message=message)


def stream_scope(event: Any) -> str:
    """Where a rule matched: ``text``, ``thinking`` or ``tool:<name>`` (as rules scope it)."""
    if event.type == "thinking_delta":
        return "thinking"
    if event.type == "toolcall_delta" and event.tool_call is not None:
        return f"tool:{event.tool_call.name}"
    return "text"


def cut_text(event: Any) -> str:
    """The reply's output of that scope up to the cut (what the rule saw break it)."""
    if event.type == "toolcall_delta" and event.tool_call is not None:
        return _json_text(event.tool_call.arguments)
    kind = ThinkingContent if event.type == "thinking_delta" else TextContent
    block = (
        event.partial.content[event.content_index]
        if event.content_index < len(event.partial.content)
        else None
    )
    if isinstance(block, kind):
        return block.thinking if isinstance(block, ThinkingContent) else block.text
    return event.delta or ""


def _json_text(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def rule_summary(rule: Any) -> dict[str, Any]:
    """A rule as events carry it (JSON-friendly)."""
    return {
        "name": rule.name,
        "path": str(rule.path) if rule.path else None,
        "description": rule.description,
        "content": rule.content,
        "interruptMode": rule.interrupt_mode,
    }


def keep_ttsr_partials(messages: list[Any]) -> list[Any]:
    """With ``contextMode: keep`` the reply a rule cut stays in the context the model sees.

    Saved replies keep ``stopReason: aborted`` (which providers never resend); a reply directly
    followed by a keep-mode injection is resent as a normal reply, without the tool calls that
    never ran.
    """
    out = list(messages)
    for index, message in enumerate(out):
        if (
            index > 0
            and isinstance(message, CustomMessage)
            and message.custom_type == INJECTION_TYPE
            and isinstance(message.details, dict)
            and message.details.get("contextMode") == "keep"
        ):
            previous = out[index - 1]
            if isinstance(previous, AssistantMessage) and previous.stop_reason == "aborted":
                kept = [block for block in previous.content if not isinstance(block, ToolCall)]
                out[index - 1] = previous.model_copy(update={"stop_reason": "stop", "content": kept})
    return out
