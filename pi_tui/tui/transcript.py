"""What the chat shows, as plain data: session entries in, display items out.

The chat never looks at session entries itself. This module turns a branch (the entries from
the root to the leaf) into a flat list of items, one per thing on screen: a user message, an
assistant reply, one card per tool call with its result folded in, a ``!command``, a summary
panel, a custom-message panel, a TTSR notification. Keeping it pure makes the rules easy to
test and lets the chat rebuild itself from any branch (resume, /new, later /tree).

Rules that are about *display* live here:

- a tool call and its result are one item (the result finds its call by id);
- a ``custom_message`` with ``display: false`` shows nothing;
- a reply cut by a rule (``aborted``, followed by the rule's ``ttsr-injection`` message) is a
  normal stop, not an error, and its tool calls that never ran are dropped; the injection
  itself shows as a TTSR notification instead;
- a label set on an entry shows beside that entry's item.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.messages import AssistantMessage, CustomMessage, ToolResultMessage

# The message models (pydantic) are imported inside the functions that need them: this module is
# imported before the first frame, and those imports are a large part of the start-up time.


@dataclass(slots=True)
class Item:
    entry_id: str | None = field(default=None, kw_only=True)
    label: str | None = field(default=None, kw_only=True)


@dataclass(slots=True)
class UserItem(Item):
    text: str
    image_count: int = 0


@dataclass(slots=True)
class AssistantItem(Item):
    text: str = ""
    thinking: str = ""
    stop_reason: str | None = None
    error: str | None = None
    interrupted_by_rule: bool = False
    """The reply was cut by a TTSR rule: shown as a normal stop, never as an error."""

    @property
    def failed(self) -> bool:
        return not self.interrupted_by_rule and self.stop_reason in ("error", "aborted")


@dataclass(slots=True)
class ToolItem(Item):
    call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    status: str = "pending"
    """``pending`` (streaming or running), ``success`` or ``error``."""
    output: str = ""
    details: Any = None
    seconds: float | None = None
    """How long the tool ran (``Took 1.2s`` on bash cards): timed live, not kept in the session."""


@dataclass(slots=True)
class BashItem(Item):
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    excluded: bool = False
    running: bool = False
    full_output_path: str | None = None
    seconds: float | None = None
    """How long the command ran, timed live (pi keeps no duration in the session either)."""


@dataclass(slots=True)
class SummaryItem(Item):
    kind: str
    """``compaction`` or ``branch_summary``."""
    summary: str
    tokens_before: int = 0


@dataclass(slots=True)
class CustomItem(Item):
    custom_type: str
    text: str
    details: Any = None


@dataclass(slots=True)
class RuleNote:
    name: str
    text: str
    """The rule's description or its first lines."""


@dataclass(slots=True)
class RuleNoticeItem(Item):
    rules: list[RuleNote] = field(default_factory=list)


@dataclass(slots=True)
class InfoItem(Item):
    """A line from pi-tui itself (command output, warnings); not part of the session."""

    text: str
    level: str = "info"
    """``info``, ``warning`` or ``error``."""
    title: str | None = None
    markdown: bool = False
    """Render ``text`` as markdown (``/changelog``) instead of plain lines."""
    fold: bool = False
    """Long lines fold at the edge instead of wrapping at spaces, so a label keeps its value
    beside it (``/session``'s File: and a long path)."""


ChatItem = (
    UserItem | AssistantItem | ToolItem | BashItem | SummaryItem | CustomItem | RuleNoticeItem | InfoItem
)


def searchable_text(item: ChatItem, *, show_thinking: bool = True) -> str:
    """What transcript search looks through for one item: the words the item shows (thinking
    only while thinking is shown), without the decoration around them."""
    import json

    if isinstance(item, UserItem | CustomItem | InfoItem):
        parts = [item.text]
    elif isinstance(item, AssistantItem):
        parts = [item.thinking if show_thinking else "", item.text, item.error or ""]
    elif isinstance(item, ToolItem):
        parts = [item.name, json.dumps(item.args, ensure_ascii=False), item.output]
    elif isinstance(item, BashItem):
        parts = [item.command, item.output]
    elif isinstance(item, SummaryItem):
        parts = [item.summary]
    else:
        parts = [f"{note.name} {note.text}" for note in item.rules]
    if item.label:
        parts.append(f"[{item.label}]")
    return "\n".join(part for part in parts if part)


def blocks_text(content: str | list[Any]) -> str:
    """The text of a message's content, blocks joined the way they were written."""
    if isinstance(content, str):
        return content
    from pi_tui.messages import TextContent

    return "".join(block.text for block in content if isinstance(block, TextContent))


def rule_note(name: str, description: str | None, content: str | None) -> RuleNote:
    """What a notification says about one rule: its description first, then the rule itself.

    The whole text is kept; the notification shows the first lines until expanded (Ctrl+O).
    """
    body = "\n".join(line for line in (content or "").strip().splitlines() if line.strip())
    if description and description.strip():
        return RuleNote(name, f"{description.strip()}\n{body}".rstrip())
    return RuleNote(name, body)


_RULE_BLOCK = re.compile(
    r'<system-(interrupt|reminder)\b[^>]*\brule="([^"]*)"[^>]*>\n?(.*?)</system-\1>', re.S
)


def notes_from_injection(message: CustomMessage) -> list[RuleNote]:
    """The rules a saved injection message carries, each with its own first lines.

    The injection holds one tagged block per rule: a fixed preamble, a blank line, then the
    rule's text. Names come from the blocks, falling back to ``details.rules``.
    """
    text = blocks_text(message.content)
    notes = []
    for match in _RULE_BLOCK.finditer(text):
        body = match.group(3)
        _preamble, _, rule_text = body.partition("\n\n")
        notes.append(rule_note(html.unescape(match.group(2)), None, rule_text or body))
    if notes:
        return notes
    details = message.details if isinstance(message.details, dict) else {}
    return [RuleNote(str(name), "") for name in details.get("rules", [])] or [rule_note("rule", None, text)]


def is_rule_injection(message: Any) -> bool:
    from pi_tui.ttsr.coordinator import INJECTION_TYPE

    return getattr(message, "custom_type", None) == INJECTION_TYPE


def build_transcript(entries: Iterable[Any], label_of: Callable[[str], str | None]) -> list[ChatItem]:
    """The display items of a branch, oldest first. ``label_of`` gives an entry's label."""
    from pi_tui.messages import AssistantMessage, CustomMessage, ToolResultMessage

    items: list[ChatItem] = []
    tools: dict[str, ToolItem] = {}
    entries = list(entries)
    for index, entry in enumerate(entries):
        label = label_of(entry.id)
        if entry.type == "compaction":
            items.append(SummaryItem("compaction", entry.summary, entry.tokens_before, entry_id=entry.id))
        elif entry.type == "branch_summary":
            items.append(SummaryItem("branch_summary", entry.summary, entry_id=entry.id))
        elif entry.type == "custom_message":
            message = CustomMessage(
                custom_type=entry.custom_type,
                content=entry.content,
                display=entry.display,
                details=entry.details,
            )
            items.extend(message_items(message, entry.id, label))
        elif entry.type == "message":
            message = entry.message
            if isinstance(message, AssistantMessage) and message.stop_reason == "aborted":
                following = _next_message(entries, index)
                if following is not None and is_rule_injection(following):
                    items.append(rule_cut_item(message, entry.id, label))
                    continue
            if isinstance(message, ToolResultMessage):
                card = tools.get(message.tool_call_id)
                if card is not None:
                    apply_result(card, message)
                    continue
            for item in message_items(message, entry.id, label):
                if isinstance(item, ToolItem):
                    tools[item.call_id] = item
                items.append(item)
    return items


def _next_message(entries: list[Any], index: int) -> Any | None:
    """The next message-like entry after ``index`` (skipping bookkeeping entries)."""
    from pi_tui.messages import CustomMessage

    for entry in entries[index + 1 :]:
        if entry.type == "message":
            return entry.message
        if entry.type == "custom_message":
            return CustomMessage(custom_type=entry.custom_type, content=entry.content, details=entry.details)
    return None


def rule_cut_item(message: AssistantMessage, entry_id: str | None, label: str | None) -> AssistantItem:
    """A reply a rule interrupted: what streamed, as a normal stop, without its tool calls."""
    item = assistant_item(message, entry_id, label)
    item.interrupted_by_rule = True
    item.stop_reason = "stop"
    item.error = None
    return item


def assistant_item(message: AssistantMessage, entry_id: str | None, label: str | None) -> AssistantItem:
    from pi_tui.messages import TextContent, ThinkingContent

    text = "".join(block.text for block in message.content if isinstance(block, TextContent))
    thinking = "\n".join(block.thinking for block in message.content if isinstance(block, ThinkingContent))
    return AssistantItem(
        text=text,
        thinking=thinking,
        stop_reason=message.stop_reason,
        error=message.error_message,
        entry_id=entry_id,
        label=label,
    )


def message_items(message: Any, entry_id: str | None, label: str | None) -> list[ChatItem]:
    """The items one finished message shows as (tool calls become their own cards)."""
    from pi_tui.messages import (
        AssistantMessage,
        BashExecutionMessage,
        CustomMessage,
        ImageContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )

    if isinstance(message, UserMessage):
        images = (
            0
            if isinstance(message.content, str)
            else sum(isinstance(block, ImageContent) for block in message.content)
        )
        return [UserItem(blocks_text(message.content), images, entry_id=entry_id, label=label)]
    if isinstance(message, AssistantMessage):
        items: list[ChatItem] = []
        reply = assistant_item(message, entry_id, label)
        if reply.text or reply.thinking or reply.failed:
            items.append(reply)
        items.extend(
            ToolItem(block.id, block.name, dict(block.arguments), entry_id=entry_id)
            for block in message.content
            if isinstance(block, ToolCall)
        )
        if not items:
            items.append(reply)  # an empty reply still marks where the turn ended
        return items
    if isinstance(message, ToolResultMessage):
        card = ToolItem(message.tool_call_id, message.tool_name, entry_id=entry_id, label=label)
        apply_result(card, message)
        return [card]
    if isinstance(message, BashExecutionMessage):
        return [
            BashItem(
                message.command,
                message.output,
                message.exit_code,
                message.cancelled,
                message.truncated,
                bool(message.exclude_from_context),
                full_output_path=message.full_output_path,
                entry_id=entry_id,
                label=label,
            )
        ]
    if isinstance(message, CustomMessage):
        if is_rule_injection(message):
            return [RuleNoticeItem(notes_from_injection(message), entry_id=entry_id, label=label)]
        if not message.display:
            return []
        return [
            CustomItem(
                message.custom_type,
                blocks_text(message.content),
                message.details,
                entry_id=entry_id,
                label=label,
            )
        ]
    role = getattr(message, "role", None)
    if role in ("compactionSummary", "branchSummary"):
        kind = "compaction" if role == "compactionSummary" else "branch_summary"
        return [
            SummaryItem(
                kind, message.summary, getattr(message, "tokens_before", 0), entry_id=entry_id, label=label
            )
        ]
    return []


def apply_result(card: ToolItem, message: ToolResultMessage) -> None:
    card.status = "error" if message.is_error else "success"
    card.output = blocks_text(message.content)
    card.details = message.details
