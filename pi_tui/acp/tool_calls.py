"""How a tool call looks to an ACP client: its kind, title and locations, and the plan a todo
tool's result holds.

Pure functions over the call's name and arguments, so the live stream and a loaded session's
history describe a call the same way. Editors use ``kind`` to pick an icon and ``locations`` to
follow the agent through the files ("jump to the file being edited"); the title is the line
they show, so it says what the call does, not which tool it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "tool_search": "search",
    "web_fetch": "fetch",
    "fetch": "fetch",
    "web_search": "fetch",
}
TODO_TOOLS = frozenset({"todo", "todo_write", "todowrite", "todos"})
"""Extension tools whose results hold a todo list, shown to the client as its plan."""
TITLE_WIDTH = 120


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a pi-tui tool (MCP and extension tools are ``other``)."""
    return KINDS.get(name, "other")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_WIDTH else line[: TITLE_WIDTH - 1] + "…"


def tool_title(name: str, args: Any) -> str:
    """The line an editor shows for the call: ``Read src/app.py``, ``ls -la``, ``grep "x" in src``."""
    args = args if isinstance(args, dict) else {}
    path = _text(args.get("path")) or _text(args.get("file_path"))
    if name == "bash" and _text(args.get("command")):
        return _one_line(args["command"])
    if name in ("read", "write", "edit") and path:
        verb = {"read": "Read", "write": "Write", "edit": "Edit"}[name]
        return _one_line(f"{verb} {path}")
    if name == "ls":
        return _one_line(f"List {path or '.'}")
    if name in ("grep", "find") and _text(args.get("pattern")):
        where = f" in {path}" if path else ""
        return _one_line(f'{name} "{args["pattern"]}"{where}')
    if name.startswith("mcp__") or "__" in name:
        return _one_line(name.replace("__", " / "))
    return _one_line(name)


def tool_locations(name: str, args: Any, cwd: str | Path) -> list[dict[str, Any]]:
    """The files the call touches, as absolute paths (with the first line read when known)."""
    args = args if isinstance(args, dict) else {}
    raw = _text(args.get("path")) or _text(args.get("file_path"))
    if raw is None or name not in ("read", "write", "edit", "ls", "grep", "find"):
        return []
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(cwd) / path
    location: dict[str, Any] = {"path": str(path)}
    offset = args.get("offset")
    if name == "read" and isinstance(offset, int) and not isinstance(offset, bool) and offset > 0:
        location["line"] = offset
    return [location]


def absolute_path(raw: str, cwd: str | Path) -> str:
    path = Path(raw).expanduser()
    return str(path if path.is_absolute() else Path(cwd) / path)


def plan_entries(details: Any) -> list[dict[str, Any]] | None:
    """A todo tool's list as ACP plan entries, or None when the result holds no list.

    Accepts the shapes todo extensions write: ``{"todos": [{"text"|"content"|"title", "done"
    | "completed" | "status", "priority"?}]}``.
    """
    todos = details.get("todos") if isinstance(details, dict) else None
    if not isinstance(todos, list):
        return None
    entries = []
    for item in todos:
        if not isinstance(item, dict):
            continue
        content = _text(item.get("text")) or _text(item.get("content")) or _text(item.get("title"))
        if content is None:
            continue
        status = item.get("status")
        if status not in ("pending", "in_progress", "completed"):
            done = item.get("done", item.get("completed"))
            status = "completed" if done is True else "pending"
        priority = item.get("priority")
        entries.append(
            {
                "content": content,
                "status": status,
                "priority": priority if priority in ("high", "medium", "low") else "medium",
            }
        )
    return entries
