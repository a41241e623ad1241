"""The points where extensions may change what the agent does.

:class:`AgentHooks` changes nothing and is what an agent without extensions has; the extension
runner (:mod:`pi_tui.extensions.runner`) overrides it. Every hook is asked only when
:meth:`AgentHooks.wants` says someone listens, so an agent without listeners pays one set
lookup per point (the ``context`` hook would otherwise copy every message of a long session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.messages import ImageContent
from pi_tui.tools.base import ToolResult


@dataclass(slots=True)
class InputOutcome:
    """What the ``input`` hook made of the user's text: go on with ``text`` and ``images``,
    or stop (``handled``: an extension answered it itself)."""

    text: str
    images: list[ImageContent] = field(default_factory=list)
    handled: bool = False


@dataclass(slots=True)
class StartOutcome:
    """What ``before_agent_start`` adds to a run: custom messages saved after the prompt, and
    the system prompt for this run (None: unchanged)."""

    messages: list[Any] = field(default_factory=list)
    system_prompt: str | None = None


class AgentHooks:
    """No extension: nothing changes."""

    def wants(self, event: str) -> bool:
        return False

    def notify(self, event: str, **fields: Any) -> None:
        """A notification nobody can answer (``model_select``, ``session_compact``...)."""

    async def run_command(self, text: str) -> bool:
        """Run ``text`` (``/name args``) if it is an extension command; whether it was one."""
        return False

    async def input(self, text: str, images: Sequence[ImageContent], source: str) -> InputOutcome:
        return InputOutcome(text, list(images))

    async def before_agent_start(
        self, prompt: str, images: Sequence[ImageContent], system_prompt: str
    ) -> StartOutcome:
        return StartOutcome()

    def take_next_turn_messages(self) -> list[Any]:
        """Custom messages an extension queued for the next prompt (taken once)."""
        return []

    async def context(self, messages: list[Any]) -> list[Any]:
        return messages

    async def before_provider_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    async def after_provider_response(self, status: int, headers: dict[str, str]) -> None:
        return None

    async def tool_call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> str | None:
        """None to run the tool (``arguments`` may have been changed in place), else the reason
        it is blocked."""
        return None

    async def tool_result(
        self, call_id: str, tool_name: str, arguments: dict[str, Any], result: ToolResult
    ) -> ToolResult:
        return result

    async def message_end(self, message: Any) -> Any:
        """The message to save in place of ``message`` (same role), or ``message`` itself."""
        return message

    async def user_bash(self, command: str, exclude_from_context: bool, cwd: str) -> dict[str, Any] | None:
        """A result that replaces running ``command`` (output, exit_code...), or None to run it."""
        return None

    async def before(self, event: str, **fields: Any) -> dict[str, Any] | None:
        """A ``session_before_*`` event: the first handler's answer (``{"cancel": True}``, a
        summary...), or None."""
        return None

    def aborted(self) -> None:
        """The user stopped the run."""

    def run_started(self) -> None:
        """A run starts (a fresh abort signal for it)."""

    async def drain(self) -> None:
        """Wait until every notification emitted so far has been handled."""
