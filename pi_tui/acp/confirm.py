"""The ``careful`` mode: the editor asks before each edit, write and command.

pi runs tools without asking (an extension can add questions), and that stays the ``code``
mode. Editors' users often want to approve changes one by one, as Claude Code asks before edits:
in ``careful`` mode ``write``, ``edit`` and ``bash`` (pi-tui's own or the editor's) ask
``session/request_permission`` about the call first: Allow, Always allow *tool* (for the rest of
the session), or Reject, which the model hears as the user's refusal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pi_tui.tools.base import AgentTool, ToolContext, ToolError, ToolResult, WrappedTool

CHANGING_TOOLS = frozenset({"write", "edit", "bash"})

Ask = Callable[[str, str, dict[str, Any]], Awaitable[bool]]
"""(call id, tool name, arguments) -> whether the user allowed the call."""


class ConfirmFirst(WrappedTool):
    """A tool that asks before it runs."""

    def __init__(self, inner: AgentTool, ask: Ask) -> None:
        super().__init__(inner)
        self.ask = ask

    async def execute(self, call_id: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not await self.ask(call_id, self.name, args):
            raise ToolError(f"The user did not allow this {self.name} call; ask them what to do instead.")
        return await self.inner.execute(call_id, args, ctx)


def confirming(tools: list[AgentTool], ask: Ask) -> list[AgentTool]:
    """``tools`` with every write, edit and command asking first."""
    return [ConfirmFirst(tool, ask) if tool.name in CHANGING_TOOLS else tool for tool in tools]
