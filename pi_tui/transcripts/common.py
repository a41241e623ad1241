"""What every transcript converter produces: pi session entries with ids derived from the source.

A converter turns another agent's transcript into pi v3 entries (plain dicts in pi's exact
shapes). Ids are the first 8 hex digits of a hash of the agent and the source's own id, so
importing the same line twice gives the same entry (idempotent) and an import can continue
where the last one stopped. :func:`append_order` puts the entries in pi's append order: each
parent before its children, and the branch the source ended on last, so ``pi-tui -c`` (and pi)
continue where the other agent stopped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pi_tui import jsonio

ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def entry_id(agent: str, source_id: str) -> str:
    """A pi entry id (8 hex digits) for a source record, the same at every import."""
    return hashlib.sha256(f"{agent}:{source_id}".encode()).hexdigest()[:8]


def iso_time(value: object, fallback: str) -> str:
    """An ISO timestamp with milliseconds and ``Z`` (pi's form) from the source's, or ``fallback``."""
    if isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return fallback
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return fallback


def epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


@dataclass(slots=True)
class Converted:
    """One transcript as pi entries, and what the conversion saw."""

    agent: str
    session_id: str
    cwd: str
    started: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    leaf: str | None = None
    """The entry the source's current branch ends at."""
    counts: dict[str, int] = field(default_factory=dict)
    """users, assistants, tool_calls, tool_results, paired, compactions, custom, skipped..."""
    title: str | None = None
    forked_from: str | None = None
    """The source session this one was forked from (Codex ``forked_from_id``; the parent
    session of a Claude Code sub-agent file imported on its own)."""
    sub_agent: str | None = None
    """The agent id of a Claude Code sub-agent conversation (``agent-<id>.jsonl``)."""
    call_entries: dict[str, str] = field(default_factory=dict)
    """Tool call id -> the entry holding the call (where a sub-agent's branch starts)."""
    agent_calls: dict[str, str] = field(default_factory=dict)
    """Sub-agent id -> the id of the tool call that started it (from the call's result)."""
    prompt_calls: dict[str, str] = field(default_factory=dict)
    """A sub-agent call's prompt -> its call id (for results that do not name the agent)."""
    warnings: list[str] = field(default_factory=list)
    """What the user should hear about the conversion (one line each)."""

    def count(self, what: str, by: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + by


def break_cycles(entries: list[dict[str, Any]]) -> list[str]:
    """Cut every cycle of ``parentId`` links (a source's parent uuids can form one: each entry
    of it has a parent, so none is reached from a root and all would be lost). Each cycle is
    cut at the member that comes first in ``entries``: it becomes a root, the others follow it.
    Deterministic; returns the ids cut. Iterative, as long chains are."""
    by_id = {entry["id"]: entry for entry in entries}
    order = {entry["id"]: index for index, entry in enumerate(entries)}
    done: set[str] = set()
    cut: list[str] = []
    for entry in entries:
        path: list[dict[str, Any]] = []
        on_path: set[str] = set()
        current: dict[str, Any] | None = entry
        while current is not None and current["id"] not in done and current["id"] not in on_path:
            path.append(current)
            on_path.add(current["id"])
            parent = current.get("parentId")
            current = by_id.get(parent) if isinstance(parent, str) else None
        if current is not None and current["id"] in on_path:
            members = path[next(i for i, item in enumerate(path) if item is current) :]
            first = min(members, key=lambda item: order[item["id"]])
            first["parentId"] = None
            cut.append(first["id"])
        done.update(on_path)
    return cut


def append_order(entries: Iterable[dict[str, Any]], leaf: str | None) -> list[dict[str, Any]]:
    """Entries ordered so that every parent comes before its children and the path to ``leaf``
    comes last (an entry whose parent is missing becomes a root). Iterative: a transcript's
    chain is as deep as it is long."""
    entries = list(entries)
    by_id = {entry["id"]: entry for entry in entries}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for entry in entries:
        parent = entry.get("parentId")
        if parent not in by_id:
            parent = entry["parentId"] = None
        children.setdefault(parent, []).append(entry)
    on_path: set[str] = set()
    current = leaf
    while current is not None and current in by_id and current not in on_path:
        on_path.add(current)
        current = by_id[current].get("parentId")
    ordered: list[dict[str, Any]] = []
    stack = [entry for entry in reversed(_path_last(children.get(None, []), on_path))]
    seen: set[str] = set()
    while stack:
        entry = stack.pop()
        if entry["id"] in seen:
            continue
        seen.add(entry["id"])
        ordered.append(entry)
        stack.extend(reversed(_path_last(children.get(entry["id"], []), on_path)))
    return ordered


def _path_last(nodes: list[dict[str, Any]], on_path: set[str]) -> list[dict[str, Any]]:
    """Siblings in source order, the one on the current branch moved to the end."""
    return [node for node in nodes if node["id"] not in on_path] + [
        node for node in nodes if node["id"] in on_path
    ]


def json_records(lines: Iterable[bytes], result: Converted) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL stream; a line that is not one is counted as skipped."""
    for raw in lines:
        if not raw.strip():
            continue
        try:
            record = jsonio.loads(raw)
        except ValueError:
            result.count("skipped")
            continue
        if isinstance(record, dict):
            yield record
        else:
            result.count("skipped")


def parts_text(content: object) -> str:
    """The text of a content string or a list of parts with ``text`` (Codex, Gemini)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def custom_entry(own: str, stamp: str, custom_type: str, data: Any) -> dict[str, Any]:
    """A pi ``custom`` entry keeping what pi has no entry for (its parent is set by whoever
    places it)."""
    return {"type": "custom", "id": own, "timestamp": stamp, "customType": custom_type, "data": data}


def user_entry(own: str, stamp: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """A pi user message entry (its parent is set by whoever places it)."""
    return {
        "type": "message",
        "id": own,
        "timestamp": stamp,
        "message": {
            "role": "user",
            "content": content or [{"type": "text", "text": ""}],
            "timestamp": epoch_ms(stamp),
        },
    }


def tool_result_entry(
    own: str, stamp: str, call_id: str, name: str, content: list[dict[str, Any]], is_error: bool
) -> dict[str, Any]:
    """A pi tool result entry answering the call ``call_id``."""
    return {
        "type": "message",
        "id": own,
        "timestamp": stamp,
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": content,
            "isError": is_error,
            "timestamp": epoch_ms(stamp),
        },
    }


def usage_of(source: object, names: dict[str, str], total: str | None = None) -> dict[str, Any]:
    """pi's usage from another agent's token counts: ``names`` maps pi's input, output,
    cacheRead and cacheWrite to the source's keys (missing or odd values count as 0)."""
    counts = source if isinstance(source, dict) else {}

    def number(key: str | None) -> int:
        value = counts.get(key) if key else None
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    usage: dict[str, Any] = {
        field: number(names.get(field)) for field in ("input", "output", "cacheRead", "cacheWrite")
    }
    usage["totalTokens"] = number(total) or sum(usage.values())
    usage["cost"] = dict(ZERO_COST)
    return usage
