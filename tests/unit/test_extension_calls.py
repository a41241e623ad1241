"""How handlers and tools are called: with the context when they take one."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.events import ExtensionEvent, Record, from_bus, snake
from pi_tui.extensions.tool import positional_count, to_result


def test_the_context_is_passed_to_handlers_that_ask_for_it() -> None:
    seen: list[str] = []

    def two(event: Any, ctx: Any) -> None: ...
    def optional_ctx(event: Any, ctx: Any = None) -> None: ...
    def star(*args: Any) -> None: ...

    assert positional_count(lambda event: None) == 1
    assert positional_count(lambda event, seen=seen: None) == 1  # a bound default is no context
    assert positional_count(two) == 2 and positional_count(optional_ctx) == 2
    assert positional_count(star) == 99 and positional_count(lambda: None) == 0


def test_events_read_as_attributes_and_keys() -> None:
    event = from_bus("tool_execution_end", {"toolCallId": "c1", "isError": False, "result": {"x": 1}})
    assert event.type == "tool_execution_end" and event.tool_call_id == "c1" and event["is_error"] is False
    assert (
        event.get("missing", 7) == 7
        and "result" in event
        and event.keys()
        == [
            "type",
            "tool_call_id",
            "is_error",
            "result",
        ]
    )
    rules = from_bus("ttsr_triggered", {"rules": [{"name": "r", "interruptMode": "always"}]}).rules
    assert isinstance(rules[0], Record) and rules[0].name == "r" and rules[0]["interrupt_mode"] == "always"
    assert snake("assistantMessageEvent") == "assistant_message_event"
    try:
        ExtensionEvent("x").nope  # noqa: B018
    except AttributeError as error:
        assert "x event has no field 'nope'" in str(error)
    else:
        raise AssertionError("a missing field must be an AttributeError")


def test_what_a_tool_returns_becomes_a_result() -> None:
    assert to_result("plain").content[0].text == "plain"
    result = to_result({"content": [{"type": "text", "text": "a"}], "details": {"n": 1}, "is_error": True})
    assert (result.content[0].text, result.details, result.is_error) == ("a", {"n": 1}, True)
    assert to_result({"content": "text", "isError": True}).is_error is True
    assert to_result(None).content == []
