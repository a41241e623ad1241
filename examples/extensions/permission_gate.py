"""Ask before the model runs a destructive shell command.

``rm -rf``, ``git push --force`` (or ``-f``), ``git reset --hard`` and ``sudo`` in a bash call
need a yes from the user. Without a user to ask (print or json mode) the call is blocked, and
the model is told why.

    pi-tui -e examples/extensions/permission_gate.py
"""

from __future__ import annotations

import re
from typing import Any

from pi_tui.extensions import ExtensionAPI

DANGEROUS = [
    (re.compile(r"\brm\s+(-\w*r\w*f|-\w*f\w*r)\b"), "rm -rf"),
    (re.compile(r"\bgit\s+push\b.*(\s--force\b|\s-f\b)"), "git push --force"),
    (re.compile(r"\bgit\s+reset\s+--hard\b"), "git reset --hard"),
    (re.compile(r"(^|[;&|]\s*)sudo\b"), "sudo"),
]


def danger_in(command: str) -> str | None:
    """The name of the first dangerous pattern in ``command``, if any."""
    for pattern, name in DANGEROUS:
        if pattern.search(command):
            return name
    return None


def activate(pi: ExtensionAPI) -> None:
    async def gate(event: Any, ctx: Any) -> dict[str, Any] | None:
        if event.tool_name != "bash":
            return None
        command = str(event.input.get("command", ""))
        danger = danger_in(command)
        if danger is None:
            return None
        if not ctx.has_ui:
            return {
                "block": True,
                "reason": f"{danger} needs the user's approval, and no one can approve here",
            }
        if await ctx.ui.confirm(f"Allow {danger}?", command):
            return None
        return {"block": True, "reason": f"The user did not allow {danger}"}

    pi.on("tool_call", gate)
