"""TTSR in the agent loop: watch deltas, interrupt, inject, remind.

The coordinator holds the per-message state the agent needs and nothing else; AgentSession
calls it at fixed points:

- ``turn_started`` / ``turn_ended``: reset the stream buffers / count completed turns;
- ``check(event)`` for each provider stream event: feeds text, thinking and tool-call argument
  deltas to the manager and returns True when the stream must be cut *now*;
- ``message_ended(message)``: an ``aborted``/``error`` reply drops the reminders waiting for its
  tool calls (those rules stay eligible);
- ``take_interrupt()`` / ``take_prose()``: the rules to inject as a hidden message before the
  retry / after a successful reply;
- ``reminder_for(call_id)``: the ``<system-reminder>`` blocks to prepend to a tool result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.ai.events import StreamEvent
from pi_tui.ttsr.model import MatchContext, Rule
from pi_tui.ttsr.rules import display_path

INJECTION_TYPE = "ttsr-injection"

INTERRUPT_TEMPLATE = """<system-interrupt reason="rule_violation" rule="{name}" path="{path}">
Output interrupted: violated user-defined rule.
Not prompt injection; coding agent enforcing project rules.
MUST comply:

{content}
</system-interrupt>"""

REMINDER_TEMPLATE = """<system-reminder reason="rule_violation" rule="{name}" path="{path}">
User-defined rule matched tool-call arguments. Rule configured not to interrupt → tool ran. \
MUST comply with the following instruction on subsequent tool calls and responses. NOT prompt \
injection — coding agent enforcing project rules.

{content}
</system-reminder>"""


def render(template: str, rules: list[Rule], cwd: Path) -> str:
    return "\n\n".join(
        template.format(
            name=rule.name,
            path=display_path(rule.path, cwd) if rule.path is not None else "",
            content=rule.content.strip(),
        )
        for rule in rules
    )


@dataclass(slots=True)
class TtsrCoordinator:
    manager: Any
    """A TtsrManager (check_delta, interrupts, mark_injected, restore_injected, ...)."""
    cwd: Path
    context_mode: str = "discard"
    abort_pending: bool = False
    """True from the interrupting delta until the injection is made: the UI shows the cut
    reply as a normal stop, not as an error."""
    _interrupt: dict[str, Rule] = field(default_factory=dict)
    _prose: dict[str, Rule] = field(default_factory=dict)
    _per_tool: dict[str, dict[str, Rule]] = field(default_factory=dict)
    _attached: set[str] = field(default_factory=set)
    """Rules already attached to a tool call of the current message (one call per rule)."""

    # --- the stream ----------------------------------------------------------------------------

    def turn_started(self) -> None:
        self.manager.reset_buffers()
        self._attached.clear()

    def turn_ended(self) -> None:
        self.manager.turn_completed()

    def check(self, event: StreamEvent) -> list[Rule] | None:
        """Feed one stream event; returns the rules to inject now when the stream must be cut."""
        if self.abort_pending:
            return None  # already cutting: later deltas of the same reply do not count
        if event.type == "text_delta":
            context = MatchContext("text")
        elif event.type == "thinking_delta":
            context = MatchContext("thinking")
        elif event.type == "toolcall_delta" and event.tool_call is not None:
            call = event.tool_call
            context = MatchContext("tool", call.name.lower(), call.id, call.arguments)
        else:
            return None
        matched = self.manager.check_delta(event.delta, context)
        if not matched:
            return None
        if any(self.manager.interrupts(rule, context.source) for rule in matched):
            for rule in matched:
                self._interrupt.setdefault(rule.name, rule)
            self.abort_pending = True
            return list(self._interrupt.values())
        for rule in matched:
            if context.source == "tool":
                if rule.name not in self._attached and context.tool_call_id:
                    self._attached.add(rule.name)
                    self._per_tool.setdefault(context.tool_call_id, {})[rule.name] = rule
            else:
                self._prose.setdefault(rule.name, rule)
        return None

    def message_ended(self, stop_reason: str | None) -> None:
        """A reply that did not finish cleanly never ran its tools: forget their reminders."""
        if stop_reason in ("aborted", "error"):
            self._per_tool.clear()
            self._attached.clear()
            if not self.abort_pending:
                self._prose.clear()

    # --- what to inject ------------------------------------------------------------------------

    def take_interrupt(self) -> list[Rule]:
        rules = list(self._interrupt.values())
        self._interrupt.clear()
        self.abort_pending = False
        return rules

    def cancel_interrupt(self) -> None:
        """The user acted during the pause before the retry: drop the pending injection."""
        self._interrupt.clear()
        self.abort_pending = False

    def take_prose(self) -> list[Rule]:
        rules = list(self._prose.values())
        self._prose.clear()
        return rules

    def injection_text(self, rules: list[Rule]) -> str:
        return render(INTERRUPT_TEMPLATE, rules, self.cwd)

    def reminder_for(self, call_id: str) -> tuple[str | None, list[str]]:
        """The reminder text for a tool call's result (None when no rule is attached)."""
        rules = list(self._per_tool.pop(call_id, {}).values())
        if not rules:
            return None, []
        return render(REMINDER_TEMPLATE, rules, self.cwd), [rule.name for rule in rules]

    def mark_injected(self, names: list[str]) -> None:
        self.manager.mark_injected(names)

    # --- branch state --------------------------------------------------------------------------

    def restore(self, names: list[str]) -> None:
        """The injected set of the current branch (on start, resume and tree moves)."""
        self.manager.clear_injected()
        self.manager.restore_injected(names)
        self._interrupt.clear()
        self._prose.clear()
        self._per_tool.clear()
        self.abort_pending = False
