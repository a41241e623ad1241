"""From agent events to chat items, while a run is going.

The agent emits events (see ``pi_tui.agent.events``); :class:`LiveFeed` keeps the few pieces of
state needed to turn them into items and calls the chat and status widgets' methods. It is the
live twin of :func:`pi_tui.tui.transcript.build_transcript`: what it shows for a run must match
what a reload of the same session shows, which the tests check.

Two TTSR rules are applied here: a reply the rule engine cut (``aborted`` while the agent's
``ttsr_abort_pending`` is set) ends as a normal stop and its tool cards, whose calls never ran,
are removed; rule notifications that arrive while the previous one is the last item merge into it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pi_tui.agent.events import AgentEvent
from pi_tui.messages import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    UserMessage,
)
from pi_tui.tui.transcript import (
    AssistantItem,
    BashItem,
    ChatItem,
    InfoItem,
    RuleNote,
    RuleNoticeItem,
    SummaryItem,
    ToolItem,
    assistant_item,
    blocks_text,
    is_rule_injection,
    message_items,
    notes_from_injection,
    rule_note,
)
from pi_tui.tui.widgets.chat import ChatView
from pi_tui.tui.widgets.chat_items import AssistantView
from pi_tui.tui.widgets.status import StatusLine

WORKING = "Working..."


class LiveFeed:
    def __init__(self, chat: ChatView, status: StatusLine, agent: Any, changed: Callable[[], None]) -> None:
        self.chat = chat
        self.status = status
        self.agent = agent
        self.changed = changed
        """Called when totals may have moved (the footer redraws)."""
        self.reply: AssistantItem | None = None
        self.reply_view: AssistantView | None = None
        self.reply_calls: list[str] = []
        self.cards: dict[str, ToolItem] = {}
        self.bash: BashItem | None = None
        self.bash_started_at = 0.0
        self.started_at: dict[str, float] = {}
        """When each running tool call started (monotonic), for its card's ``Took``."""
        self.announced: set[str] = set()
        self.started_items: list[ChatItem] = []
        """Items shown for the message that started last; they get its entry id when it ends."""

    def handle(self, event: AgentEvent) -> None:
        handler = getattr(self, f"on_{event.type}", None)
        if handler is not None:
            handler(event.data)

    def add(self, item: ChatItem, *, live: bool = False) -> Any:
        return self.chat.add(item, live=live)

    # --- run ------------------------------------------------------------------------------------

    def on_agent_start(self, data: dict[str, Any]) -> None:
        self.status.activity = WORKING
        self.announced.clear()

    def on_agent_end(self, data: dict[str, Any]) -> None:
        self.status.activity = None
        self.status.retry_until = None
        self.status.reply_started = None
        self.status.stalled = 0
        self.cards.clear()
        self.changed()

    def on_turn_start(self, data: dict[str, Any]) -> None:
        """A model reply is requested now: the status line counts its time from here."""
        self.status.reply_started = time.monotonic()
        self.status.stalled = 0

    def on_stream_stall(self, data: dict[str, Any]) -> None:
        self.status.stalled = int(data.get("idleSeconds") or 0)

    def on_queue_update(self, data: dict[str, Any]) -> None:
        self.status.steering = tuple(data.get("steering", ()))
        self.status.follow_ups = tuple(data.get("followUp", ()))

    # --- messages -------------------------------------------------------------------------------

    def on_message_start(self, data: dict[str, Any]) -> None:
        message = data["message"]
        if isinstance(message, AssistantMessage):
            self.reply = AssistantItem()
            self.reply_calls = []
            self.reply_view = self.add(self.reply, live=True)
        elif isinstance(message, CustomMessage) and is_rule_injection(message):
            fresh = [note for note in notes_from_injection(message) if note.name not in self.announced]
            if fresh:
                self._notify(fresh)
        elif isinstance(message, BashExecutionMessage) and self.bash is not None:
            pass  # the running !command's item is finished on message_end
        elif isinstance(message, (UserMessage, CustomMessage, BashExecutionMessage)):
            self.started_items = message_items(message, None, None)
            for item in self.started_items:
                self.add(item)

    def on_message_update(self, data: dict[str, Any]) -> None:
        event = data["assistantMessageEvent"]
        kind = event.type
        if kind == "text_delta":
            if self.reply_view is not None:
                self.reply_view.append_text(event.delta)
        elif kind == "thinking_delta":
            if self.reply_view is not None:
                self.reply_view.append_thinking(event.delta)
        elif kind.startswith("toolcall_") and event.tool_call is not None:
            call = event.tool_call
            card = self.cards.get(call.id)
            if card is None:
                card = ToolItem(call.id, call.name, dict(call.arguments))
                self.cards[call.id] = card
                self.reply_calls.append(call.id)
                self.add(card)
            else:
                card.args = dict(call.arguments)
                self.chat.refresh_item(card)

    def on_message_end(self, data: dict[str, Any]) -> None:
        message = data["message"]
        entry_id = self.agent.manager.get_leaf_id()  # the message was saved just before this event
        if isinstance(message, AssistantMessage):
            self.status.reply_started = None  # tools run next: no reply is being waited for
            self.status.stalled = 0
            if self.reply is not None:
                self.reply.entry_id = entry_id
            for call_id in self.reply_calls:
                if call_id in self.cards:
                    self.cards[call_id].entry_id = entry_id
            self._finish_reply(message)
            self.changed()
            return
        for item in self.started_items:
            item.entry_id = entry_id
        self.started_items = []
        if isinstance(message, BashExecutionMessage) and self.bash is not None:
            self.bash.entry_id = entry_id
            item = self.bash
            self.bash = None
            item.running = False
            item.output = message.output
            item.exit_code = message.exit_code
            item.cancelled = message.cancelled
            item.truncated = message.truncated
            item.full_output_path = message.full_output_path
            item.seconds = time.monotonic() - self.bash_started_at
            self.chat.refresh_item(item)

    def _finish_reply(self, message: AssistantMessage) -> None:
        item, view = self.reply, self.reply_view
        self.reply = self.reply_view = None
        if item is None or view is None:
            return
        final = assistant_item(message, item.entry_id, item.label)  # what a resume would show
        item.text, item.thinking = final.text, final.thinking
        item.stop_reason, item.error = final.stop_reason, final.error
        if message.stop_reason == "aborted" and self.agent.ttsr_abort_pending:
            # Cut by a rule, not by the user: a normal stop, and the calls never ran.
            item.interrupted_by_rule = True
            item.stop_reason = "stop"
            item.error = None
            for call_id in self.reply_calls:
                card = self.cards.pop(call_id, None)
                if card is not None:
                    self.chat.remove_item(card)
        if not (item.text.strip() or item.thinking.strip() or item.failed or item.stop_reason == "length"):
            self.chat.remove_item(item)  # a reply that only called tools: the cards say it all
            return
        view.call_later(view.finish)

    # --- tools ----------------------------------------------------------------------------------

    def on_tool_execution_start(self, data: dict[str, Any]) -> None:
        call_id = data["toolCallId"]
        card = self.cards.get(call_id)
        if card is None:
            card = ToolItem(call_id, data["toolName"], dict(data.get("args") or {}))
            self.cards[call_id] = card
            self.add(card)
        else:
            card.args = dict(data.get("args") or card.args)
            self.chat.refresh_item(card)
        self.started_at[call_id] = time.monotonic()

    def on_tool_execution_update(self, data: dict[str, Any]) -> None:
        card = self.cards.get(data["toolCallId"])
        partial = data.get("partialResult") or {}
        if card is not None:
            card.output = blocks_text(partial.get("content") or [])
            self.chat.refresh_item(card)

    def on_tool_execution_end(self, data: dict[str, Any]) -> None:
        card = self.cards.get(data["toolCallId"])
        if card is None:
            return
        result = data.get("result") or {}
        card.status = "error" if data.get("isError") else "success"
        card.output = blocks_text(result.get("content") or [])
        card.details = result.get("details")
        started = self.started_at.pop(data["toolCallId"], None)
        card.seconds = time.monotonic() - started if started is not None else None
        self.chat.refresh_item(card)

    # --- !commands ------------------------------------------------------------------------------

    def bash_started(self, command: str, excluded: bool) -> BashItem:
        """The app starts a ``!command``: show it running; output arrives on message_end."""
        self.bash = BashItem(command, excluded=excluded, running=True)
        self.bash_started_at = time.monotonic()
        self.add(self.bash)
        return self.bash

    # --- TTSR -----------------------------------------------------------------------------------

    def on_ttsr_triggered(self, data: dict[str, Any]) -> None:
        notes = [
            rule_note(rule.get("name", "rule"), rule.get("description"), rule.get("content"))
            for rule in data.get("rules", [])
        ]
        self.announced.update(note.name for note in notes)
        self._notify(notes)

    def _notify(self, notes: list[RuleNote]) -> None:
        """A notification, merged into the previous one while that is still the last item."""
        last = self.chat.last_item()
        if self.reply is not None and last is self.reply:
            last = None
        if isinstance(last, RuleNoticeItem):
            known = {note.name for note in last.rules}
            last.rules.extend(note for note in notes if note.name not in known)
            self.chat.refresh_item(last)
        else:
            self.add(RuleNoticeItem(notes))

    # --- compaction and retries -----------------------------------------------------------------

    def on_compaction_start(self, data: dict[str, Any]) -> None:
        self.status.activity = "Compacting the conversation..."

    def on_compaction_end(self, data: dict[str, Any]) -> None:
        self.status.activity = WORKING if self.agent.is_streaming else None
        result = data.get("result")
        if result:
            self.add(SummaryItem("compaction", result.get("summary", ""), result.get("tokensBefore", 0)))
        elif data.get("errorMessage"):
            self.add(InfoItem(f"Compaction failed: {data['errorMessage']}", "error"))
        elif data.get("aborted"):
            self.add(InfoItem("Compaction cancelled.", "warning"))
        self.changed()

    def on_auto_retry_start(self, data: dict[str, Any]) -> None:
        attempt, most = data.get("attempt", 1), data.get("maxAttempts", 1)
        self.status.retry_text = f"attempt {attempt}/{most}: {data.get('errorMessage') or 'Request failed'}"
        self.status.retry_until = time.monotonic() + data.get("delayMs", 0) / 1000

    def on_files_notice(self, data: dict[str, Any]) -> None:
        """File checkpoints said something (switched off, a store problem): one notice line."""
        message = " ".join(str(data.get("message") or "").split())
        if message:
            self.add(InfoItem(message, "warning"))

    def on_auto_retry_end(self, data: dict[str, Any]) -> None:
        self.status.retry_until = None
