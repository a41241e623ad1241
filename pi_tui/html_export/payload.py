"""What an exported page knows about a session, as plain data: the tree, the entries, a summary.

The page does its own layout (any filter, any search, any branch), so this module hands it the
tree flattened the way ``/tree`` flattens it (:meth:`TreeModel.flat`: the same order, row texts
and search texts, so the page cannot drift from the selector), the raw entries in that same
order as JSON lines (parsed by the page only when an entry is drawn), and the figures of the
header. Nothing here knows about HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_tui.checkpoints.timeline import by_turn, checkpoints
from pi_tui.jsonio import dumps
from pi_tui.view.stats import UsageTotals, add_raw_usage
from pi_tui.view.tree_model import FILTER_MODES, KIND_NAMES, TreeModel, allowed_kinds
from pi_tui.view.tree_text import raw_text

if TYPE_CHECKING:
    from pi_tui.secrets.obfuscator import Obfuscator
    from pi_tui.session.manager import SessionManager


@dataclass(slots=True)
class SessionPayload:
    tree: dict[str, Any]
    """The flattened tree and the filter rules (small: no message bodies)."""
    entries: bytes
    """One compact JSON object per line, line ``i`` being tree index ``i``."""
    summary: dict[str, Any]


def session_payload(
    manager: SessionManager, hide: Obfuscator | None = None, *, path_entries_only: bool = False
) -> SessionPayload:
    """Everything the page shows about ``manager``'s session (the whole file, every branch),
    with ``hide``'s secrets as placeholders (pages are made to be passed around).
    ``path_entries_only`` leaves every entry off the current branch as an empty line (the live
    page draws that branch only, and refetches it after each turn)."""
    roots = manager.get_tree()
    leaf = manager.get_leaf_id()
    flat = TreeModel(roots, leaf).flat()
    raws = [manager.get_raw_entry(entry_id) or {} for entry_id in flat.ids]
    name_system_rows(raws, flat.parents, flat.texts, flat.haystacks)
    label_times = {entry_id: manager.get_label_timestamp(entry_id) for entry_id in flat.labels}
    tree = {
        "ids": flat.ids,
        "parents": flat.parents,
        "ends": flat.ends,
        "kinds": flat.kinds,
        "texts": flat.texts,
        "hay": [_unless_derivable(hay, text) for hay, text in zip(flat.haystacks, flat.texts, strict=True)],
        "labels": flat.labels,
        "labelTimes": label_times,
        "path": flat.path,
        "leaf": leaf,
        "filters": list(FILTER_MODES),
        "allowed": allowed_kinds(),
        "kindNames": list(KIND_NAMES),
        "files": files_changed(raws),
    }
    summary = session_summary(manager, raws)
    if hide is not None and not hide.empty:
        if hide.might_hide(dumps(tree)):
            tree = hide.hide(tree)
        summary = hide.hide(summary)
    if path_entries_only:
        on_path = set(flat.path)
        shown = [raw if index in on_path else None for index, raw in enumerate(raws)]
        return SessionPayload(tree, entry_lines(shown, hide), summary)
    return SessionPayload(tree, entry_lines(raws, hide), summary)


def files_changed(raws: Sequence[dict[str, Any]]) -> dict[str, dict[str, list[Any]]]:
    """Each turn's changed files, by the id of the assistant message whose tools made them
    (the session's ``pi-tui.files`` checkpoint entries, read without git): ``changes`` as
    ``[status, path]`` or ``[status, path, from]``, ``skipped`` the paths left out. The page
    lists them under the turn's tool calls."""
    out: dict[str, dict[str, list[Any]]] = {}
    for turn, found in by_turn(checkpoints(raws)).items():
        changes: list[Any] = []
        for change in found.changes:
            row = [change.get("status", "?"), change.get("path", "")]
            if "from" in change:
                row.append(change["from"])
            changes.append(row)
        if changes or found.skipped:
            out[turn] = {"changes": changes, "skipped": list(found.skipped)}
    return out


def carries_system_state(raw: dict[str, Any]) -> bool:
    """A system message, or a compaction holding the replayed prompt (pi 1.x's checkpoint)."""
    if raw.get("type") == "compaction":
        return isinstance(raw.get("systemMessage"), dict)
    message = raw.get("message") if raw.get("type") == "message" else None
    return isinstance(message, dict) and message.get("role") == "system"


def system_text(message: dict[str, Any], leading: bool) -> str:
    """The prompt text a system message holds: for the first one on a branch its content and
    every section; for a later one its content and what it does to each section by name."""
    content = message.get("content")
    own = content if isinstance(content, str) else raw_text(content)
    sections = message.get("sections")
    if not isinstance(sections, dict):
        sections = {}
    parts = [own] if own else []
    for name, value in sections.items():
        if leading:
            if isinstance(value, str) and value:
                parts.append(value)
        elif value is None:
            parts.append(f'Section "{name}" removed.')
        else:
            parts.append(f'Section "{name}" set to:\n\n{value}')
    return "\n\n".join(parts)


def system_changes(message: dict[str, Any]) -> str:
    """What a later system message changes, in one line: ``instructions, -rules, tools +bash -write``."""
    parts = []
    content = message.get("content")
    if content if isinstance(content, str) else raw_text(content):
        parts.append("instructions")
    sections = message.get("sections")
    for name, value in sections.items() if isinstance(sections, dict) else ():
        parts.append(f"-{name}" if value is None else str(name))
    tools = [f"+{name}" for name in _tool_names(message.get("toolsAdded"))]
    tools += [f"-{name}" for name in _tool_names(message.get("toolsRemoved"))]
    if tools:
        parts.append("tools " + " ".join(tools))
    return ", ".join(parts)


def _tool_names(tools: object) -> list[str]:
    if not isinstance(tools, list):
        return []
    return [str(tool.get("name")) for tool in tools if isinstance(tool, dict)]


def name_system_rows(
    raws: Sequence[dict[str, Any]], parents: Sequence[int], texts: list[str], haystacks: list[str]
) -> None:
    """Give system messages the rows pi 1.x's export gives them, in place.

    ``/tree`` draws every system message as ``[system]`` (pi's selector does too); the page
    says more, as pi's export page does: ``[system prompt]`` for the first one on its branch (no
    ancestor holds a prompt: no system message, no compaction checkpoint) and ``[system update:
    <changes>]`` for later ones, searchable by those words, the prompt text, the section and the
    tool names. ``parents`` point backwards (pre-order), so one pass finds the first ones.
    """
    count = len(raws)
    holds = bytearray(count)  # an entry or one of its ancestors carries system state
    for index in range(count):
        parent = parents[index]
        above = parent >= 0 and holds[parent]
        raw = raws[index]
        holds[index] = 1 if above or carries_system_state(raw) else 0
        message = raw.get("message") if raw.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "system":
            continue
        leading = not above
        if leading:
            texts[index] = "[system prompt]"
        else:
            changes = system_changes(message)
            cut = changes[:100] + "..." if len(changes) > 100 else changes
            texts[index] = f"[system update: {cut}]" if cut else "[system update]"
        words = ["system", "system prompt" if leading else "system update", system_text(message, leading)]
        sections = message.get("sections")
        words += [str(name) for name in (sections if isinstance(sections, dict) else ())]
        words += _tool_names(message.get("toolsAdded")) + _tool_names(message.get("toolsRemoved"))
        haystacks[index] = " ".join(words).lower()


def derived_haystack(text: str) -> str:
    """The search text the page derives from a row text when none is sent (``page.js`` does the
    same): the row text lower-cased, its ``user:``/``assistant:`` prefix made a plain word."""
    lowered = text.lower()
    for prefix in ("user: ", "assistant: "):
        if lowered.startswith(prefix):
            return prefix[:-2] + " " + lowered[len(prefix) :]
    return lowered


def _unless_derivable(haystack: str, text: str) -> str:
    """``""`` when the page's derived search text holds the same words (search matches within
    words, so equal word lists find the same rows); the haystack otherwise."""
    return "" if haystack.split() == derived_haystack(text).split() else haystack


def entry_lines(raws: Sequence[dict[str, Any] | None], hide: Obfuscator | None = None) -> bytes:
    """The entries as JSON lines (JSON escapes every newline inside a value, so lines stay lines),
    each with its secrets hidden when ``hide`` finds any; ``None`` stays an empty line."""
    if hide is None or hide.empty:
        return b"\n".join(b"" if raw is None else dumps(raw) for raw in raws)
    lines = []
    for raw in raws:
        if raw is None:
            lines.append(b"")
            continue
        line = dumps(raw)
        lines.append(dumps(hide.hide(raw)) if hide.might_hide(line) else line)
    return b"\n".join(lines)


def session_summary(manager: SessionManager, raws: list[dict[str, Any]]) -> dict[str, Any]:
    """The header's figures: name, folder, dates, models, token and cost totals of the whole file."""
    header = manager.get_header()
    totals = add_raw_usage(UsageTotals(), raws)
    models: dict[str, None] = {}
    last_time = header.timestamp
    for raw in raws:
        stamp = raw.get("timestamp")
        if isinstance(stamp, str) and stamp > (last_time or ""):
            last_time = stamp
        kind = raw.get("type")
        if kind == "message":
            message = raw.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                model = _model_name(message.get("provider"), message.get("model"))
                if model:
                    models[model] = None
        elif kind == "model_change":
            model = _model_name(raw.get("provider"), raw.get("modelId"))
            if model:
                models[model] = None
    path = manager.session_file
    return {
        "id": manager.session_id,
        "name": manager.get_session_name(),
        "cwd": header.cwd,
        "file": path.name if path is not None else None,
        "created": header.timestamp,
        "modified": last_time,
        "models": list(models),
        "entryCount": len(raws),
        "tokens": {
            "input": totals.input,
            "output": totals.output,
            "cacheRead": totals.cache_read,
            "cacheWrite": totals.cache_write,
        },
        "cost": round(totals.cost, 6),
    }


def _model_name(provider: object, model: object) -> str | None:
    if not isinstance(model, str) or not model:
        return None
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model
