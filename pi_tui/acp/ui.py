"""``ctx.ui`` for extensions in an ACP session: questions become ``session/request_permission``.

pi's way of making a tool need confirmation is an extension that handles ``tool_call`` and asks
``ctx.ui.confirm(...)`` before letting it through (and blocks it on "no"). Over ACP that
question is the editor's permission prompt, about the tool call being decided: Allow, Always
allow (this tool, for the rest of the session), Reject. A ``select`` with a few choices is
asked the same way, one button per choice. Notifications are said as the agent's thoughts.
Text input and editors have no ACP counterpart: they answer their default at once, as in
print mode, and say so on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.acp.tool_calls import tool_kind, tool_title
from pi_tui.extensions.ui import ExtensionUI, NotifyLevel

MAX_SELECT_BUTTONS = 8


@dataclass(slots=True)
class PermissionState:
    """What the session's permission prompts share: the call being decided, the tools always
    allowed, and how to reach the client."""

    ask: Callable[[dict[str, Any], list[dict[str, Any]]], Any]
    """(tool call, options) -> awaitable of the client's answer (``outcome``, ``option_id``)."""
    say: Callable[[str], None]
    """A line for the user (sent as a thought)."""
    current_call: tuple[str, str, Any] | None = None
    """(call id, tool name, arguments) of the tool whose start was seen last and not its end."""
    always: set[tuple[str, str]] = field(default_factory=set)
    """(extension, tool) pairs the user allowed for the rest of the session (``careful``: the
    careful mode's own questions)."""


class AcpExtensionUI(ExtensionUI):
    has_ui = True

    def __init__(self, state: PermissionState) -> None:
        super().__init__()
        self.state = state

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        prefix = "" if level == "info" else f"{level}: "
        self.state.say(f"\n[{self.extension}: {prefix}{message}]\n")

    def _call(self, title: str, message: str) -> dict[str, Any]:
        current = self.state.current_call
        text = f"{title}\n{message}".strip()
        if current is None:
            return {
                "toolCallId": f"ask-{self.extension}",
                "title": text,
                "kind": "other",
                "status": "pending",
            }
        call_id, _name, args = current
        return {"toolCallId": call_id, "title": text, "rawInput": args, "status": "pending"}

    async def confirm(self, title: str, message: str = "", *, default: bool = False) -> bool:
        current = self.state.current_call
        key = (self.extension, current[1]) if current is not None else None
        if key is not None and key in self.state.always:
            return True
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        if key is not None:
            options.insert(
                1, {"optionId": "always", "name": f"Always allow {key[1]}", "kind": "allow_always"}
            )
        chosen = await self._ask(self._call(title, message), options)
        if chosen == "always" and key is not None:
            self.state.always.add(key)
        return chosen in ("allow", "always")

    async def select(self, title: str, options: Sequence[str], *, default: str | None = None) -> str | None:
        choices = [str(option) for option in options]
        if not choices or len(choices) > MAX_SELECT_BUTTONS:
            return await super().select(title, options, default=default)
        buttons = [
            {"optionId": f"choice-{index}", "name": choice, "kind": "allow_once"}
            for index, choice in enumerate(choices)
        ]
        chosen = await self._ask(self._call(title, ""), buttons)
        if chosen is None or not chosen.startswith("choice-"):
            return None
        return choices[int(chosen.removeprefix("choice-"))]

    async def _ask(self, call: dict[str, Any], options: list[dict[str, Any]]) -> str | None:
        return await ask_option(self.state, call, options)


async def ask_option(
    state: PermissionState, call: dict[str, Any], options: list[dict[str, Any]]
) -> str | None:
    """The option the user picked, or None (dismissed, the turn cancelled, no client)."""
    try:
        answer = await state.ask(call, options)
    except Exception:
        return None
    outcome = getattr(answer, "outcome", None)
    root = getattr(outcome, "root", outcome)
    if getattr(root, "outcome", None) == "selected":
        option_id = getattr(root, "option_id", None)
        return option_id if isinstance(option_id, str) else None
    return None


async def confirm_tool(state: PermissionState, call_id: str, name: str, args: dict[str, Any]) -> bool:
    """``careful`` mode's question before a write, an edit or a command."""
    key = ("careful", name)
    if key in state.always:
        return True
    call = {
        "toolCallId": call_id,
        "title": tool_title(name, args),
        "kind": tool_kind(name),
        "rawInput": args,
        "status": "pending",
    }
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "always", "name": f"Always allow {name}", "kind": "allow_always"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    chosen = await ask_option(state, call, options)
    if chosen == "always":
        state.always.add(key)
    return chosen in ("allow", "always")
