"""A status line and a widget: the footer shows the turn count and the tool running now; above
the editor, the tools used in this session and how often.

    pi-tui -e examples/extensions/turn_status.py
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pi_tui.extensions import ExtensionAPI


def activate(pi: ExtensionAPI) -> None:
    turns = 0
    used: Counter[str] = Counter()

    def show(ctx: Any, running: str | None = None) -> None:
        now = f" · running {running}" if running else ""
        ctx.ui.set_status("turns", f"turns: {turns}{now}")
        if used:
            ctx.ui.set_widget(
                "tools", ["tools used: " + ", ".join(f"{name} x{n}" for name, n in used.most_common())]
            )

    def turn_start(event: Any, ctx: Any) -> None:
        nonlocal turns
        turns += 1
        show(ctx)

    def tool_start(event: Any, ctx: Any) -> None:
        used[event.tool_name] += 1
        show(ctx, event.tool_name)

    def tool_end(event: Any, ctx: Any) -> None:
        show(ctx)

    pi.on("turn_start", turn_start)
    pi.on("tool_execution_start", tool_start)
    pi.on("tool_execution_end", tool_end)
