"""A panel producer: ``/todos`` finds the TODO and FIXME comments of the project and shows them
as a panel in the chat, which the model also reads (a custom message with ``details``).

The panel is drawn by a registered message renderer from ``details`` (the list of findings), so
it survives a restart: a resumed session draws it again from the saved entry. With an argument,
``/todos fix`` also asks the model to deal with the first one.

    pi-tui -e examples/extensions/todo_panel.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pi_tui.extensions import ExtensionAPI

MARK = re.compile(r"\b(TODO|FIXME)\b[:\s]*(.*)")
SKIP = {".git", ".agent", "node_modules", "__pycache__", ".venv"}


def find_todos(root: Path, limit: int = 50) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        for name in sorted(files):
            path = Path(folder, name)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                match = MARK.search(line)
                if match:
                    where = str(path.relative_to(root))
                    found.append({"file": where, "line": number, "kind": match[1], "text": match[2].strip()})
                    if len(found) >= limit:
                        return found
    return found


def activate(pi: ExtensionAPI) -> None:
    def todos(args: str, ctx: Any) -> None:
        found = find_todos(Path(ctx.cwd))
        listing = "\n".join(f"{t['file']}:{t['line']} {t['kind']} {t['text']}" for t in found)
        pi.send_message(
            {
                "custom_type": "todo-report",
                "content": f"Open TODO/FIXME comments in the project ({len(found)}):\n{listing or '(none)'}",
                "display": True,
                "details": {"todos": found},
            },
            trigger_turn=args.strip() == "fix" and bool(found),
        )

    def panel(message: Any, expanded: bool) -> str:
        items = (message.details or {}).get("todos", [])
        if not items:
            return "No TODO or FIXME comments."
        shown = items if expanded else items[:5]
        lines = [f"{t['kind']:5} {t['file']}:{t['line']}  {t['text']}" for t in shown]
        if len(shown) < len(items):
            lines.append(f"... {len(items) - len(shown)} more (Ctrl+O)")
        return f"{len(items)} open:\n" + "\n".join(lines)

    pi.register_command(
        "todos", handler=todos, description="List TODO/FIXME comments (add 'fix' to work on one)"
    )
    pi.register_message_renderer("todo-report", panel)
