"""Agent events and the bus that delivers them.

One event type with a name and a payload keeps the bus trivial and the JSON output exact: the
payload holds Python objects (messages, stream events, tool results) and :meth:`AgentEvent.to_json`
renders pi's field names. Subscribers are plain callables; one that raises is reported (logged and
announced as a ``subscriber_error`` event) and never breaks the agent loop.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_tui.ai.events import StreamEvent
from pi_tui.ai.stream import notice_after
from pi_tui.messages import Usage, Wire
from pi_tui.text_safety import clean_text

log = logging.getLogger(__name__)

EVENT_TYPES = frozenset(
    {
        "agent_start",
        "agent_end",
        "agent_settled",  # pi 1.x: nothing more happens without the user (after retries, compaction)
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "queue_update",
        "entry_appended",  # pi 1.x: an extension saved a custom entry
        "session_info_changed",
        "thinking_level_changed",
        "compaction_start",
        "compaction_end",
        "auto_retry_start",
        "auto_retry_end",
        "stream_stall",  # pi-tui's own: the server is silent (idleSeconds), 0 when data flows again
        "ttsr_triggered",
        "subscriber_error",
    }
)


@dataclass(slots=True)
class AgentEvent:
    type: str
    data: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_json(self) -> dict[str, Any]:
        """pi's JSON shape: ``{"type": ..., <camelCase fields>}``.

        ``message_update`` is delta-only on the wire, as pi 1.x's JSON/RPC output: the latest
        cumulative ``usage`` and the stream event without its ``partial`` message. Carrying the
        partial message on every token would make a reply's events quadratic in its length (a
        100 KB reply was gigabytes on the server's stream); a consumer rebuilds the message from
        the deltas by ``contentIndex`` and takes ``message_end``'s message as the final word.
        """
        stream_event = self.data.get("assistantMessageEvent")
        if self.type == "message_update" and isinstance(stream_event, StreamEvent):
            return {
                "type": "message_update",
                "usage": _stream_usage(stream_event),
                "assistantMessageEvent": stream_event.to_json(),
            }
        out: dict[str, Any] = {"type": self.type}
        for key, value in self.data.items():
            out[key] = _jsonable(value)
        return out


def _stream_usage(stream_event: StreamEvent) -> dict[str, Any]:
    """The reply's usage so far: read off the live builder behind the event (its ``snapshot``
    is the builder's bound method) rather than assembling the whole message for every token."""
    usage: Usage | None = getattr(getattr(stream_event.snapshot, "__self__", None), "usage", None)
    if usage is None or stream_event.message is not None:
        usage = stream_event.partial.usage or Usage()  # a message without usage reports zeros
    return usage.model_dump(by_alias=True, mode="json")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Wire):
        return value.to_json_dict()
    if isinstance(value, StreamEvent):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return value


def progress_line(event: AgentEvent) -> str | None:
    """The line that tells a user without the TUI why nothing happens (print mode's stderr), or None.

    A retry wait: its reason, the wait in whole seconds and the attempt. A silent server: when
    the silence is first reported, then every 10 s (the events come once a second).
    """
    if event.type == "auto_retry_start":
        reason = clean_text(str(event.get("errorMessage") or "Request failed"))
        wait = math.ceil(int(event.get("delayMs") or 0) / 1000)
        attempt = f"attempt {event.get('attempt', 1)}/{event.get('maxAttempts', 1)}"
        return f"{reason} - retrying in {wait} s ({attempt}) - Ctrl+C to cancel"
    if event.type == "stream_stall" and event.get("stalled"):
        idle = int(event.get("idleSeconds") or 0)
        first = notice_after(float(event.get("timeoutSeconds") or 0))
        if idle == first or (idle > first and idle % 10 == 0):
            return f"no data for {idle} s - Ctrl+C to stop"
    return None


Subscriber = Callable[[AgentEvent], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add ``subscriber``; returns the function that removes it."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def emit(self, event_type: str, **data: Any) -> AgentEvent:
        event = AgentEvent(event_type, data)
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception as error:  # a broken subscriber must never break the agent
                detailed = log.isEnabledFor(logging.DEBUG)
                log.warning("an event subscriber failed on %s: %s", event_type, error, exc_info=detailed)
                if event_type != "subscriber_error":
                    self.emit("subscriber_error", event=event_type, error=f"{type(error).__name__}: {error}")
        return event
