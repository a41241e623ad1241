"""The text of each ``/tree`` row and the words search looks at, from the raw entry dicts.

Split from :mod:`pi_tui.view.tree_model` (which decides which rows show, and where) because the
texts are a job of their own: they follow pi's tree selector word for word, JavaScript's
``String()`` and ``JSON.stringify`` included (:mod:`pi_tui.js_semantics`), and the HTML export and the
server send the same texts to their pages. Everything here is a pure function of one entry.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.cells import cell_len, get_character_cell_size

from pi_tui.js_semantics import UNDEFINED, js_stringify, math_round, number_to_string, to_number, to_string

_CONTENT_LIMIT = 200
"""Message text taken for display and search, as pi does: the widget cuts to width anyway."""
_ARGUMENT_WORDS = 64
"""Argument values of one tool call taken into the search text."""


def has_text(content: object) -> bool:
    """Whether a message has non-blank text (``isspace`` stops at the first visible character)."""
    if isinstance(content, list):
        for block in content:
            if block.__class__ is dict and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str) and text and not text.isspace():
                    return True
        return False
    return isinstance(content, str) and bool(content) and not content.isspace()


def extract_text(content: object) -> str:
    """The first ``_CONTENT_LIMIT`` characters of the text blocks (images and calls left out)."""
    if isinstance(content, str):
        return content[:_CONTENT_LIMIT]
    if not isinstance(content, list):
        return ""
    result = ""
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                result += text
                if len(result) >= _CONTENT_LIMIT:
                    return result[:_CONTENT_LIMIT]
    return result


def raw_text(content: object) -> str:
    """All text of raw message content (a string or blocks), e.g. a custom message's, which pi
    does not shorten."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def _one_line(text: str) -> str:
    """Newlines and tabs become spaces (``\\r`` too: it would move the terminal cursor)."""
    return text.replace("\n", " ").replace("\t", " ").replace("\r", " ").strip()


def entry_text(raw: dict[str, Any], call: dict[str, Any] | None = None) -> str:
    """The text the tree shows for one entry (before the widget cuts it to the width).

    ``call`` is the toolCall block a tool result answers, when known.
    """
    kind = raw.get("type")
    if kind == "message":
        message = raw.get("message")
        if not isinstance(message, dict):
            return "[message]"
        role = message.get("role")
        if role == "user":
            return "user: " + _one_line(extract_text(message.get("content")))
        if role == "assistant":
            text = _one_line(extract_text(message.get("content")))
            if text:
                return "assistant: " + text
            if message.get("stopReason") == "aborted":
                return "assistant: (aborted)"
            error = message.get("errorMessage")
            if error:
                return "assistant: " + _one_line(to_string(error))[:80]
            return "assistant: (no content)"
        if role == "toolResult":
            if call is not None:
                return format_tool_call(to_string(call.get("name") or "tool"), call.get("arguments"))
            return f"[{to_string(message.get('toolName') or 'tool')}]"
        if role == "bashExecution":
            return "[bash]: " + _one_line(to_string(message.get("command") or ""))
        return f"[{_js_field(message, 'role')}]"
    if kind == "custom_message":
        content = raw.get("content")
        text = content if isinstance(content, str) else raw_text(content)
        return f"[{raw.get('customType', '')}]: " + _one_line(text)
    if kind == "compaction":
        return f"[compaction: {_round_thousands(raw.get('tokensBefore', UNDEFINED))}k tokens]"
    if kind == "branch_summary":
        return "[branch summary]: " + _one_line(to_string(raw.get("summary") or ""))
    if kind == "model_change":
        return f"[model: {to_string(raw.get('modelId') or raw.get('model') or '')}]"
    if kind == "thinking_level_change":
        return f"[thinking: {_js_field(raw, 'thinkingLevel')}]"
    if kind == "custom":
        return f"[custom: {_js_field(raw, 'customType')}]"
    if kind == "label":
        label = raw.get("label")
        return f"[label: {to_string(label) if label else '(cleared)'}]"
    if kind == "session_info":
        name = raw.get("name")
        return f"[title: {to_string(name) if name else 'empty'}]"
    if kind == "context_edit":
        return f"[context {context_edit_verb(raw)}: {_js_field(raw, 'targetId')}]"
    return ""  # pi draws an entry type it does not know as a row with no text


def tools_text(message: dict[str, Any]) -> str | None:
    """``assistant: (write, bash)``: what an assistant message without text ran, by tool name
    (the /tree row of a turn marked for its file changes)."""
    content = message.get("content")
    names = [
        str(block.get("name") or "tool")
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") == "toolCall"
    ]
    return f"assistant: ({', '.join(dict.fromkeys(names))})" if names else None


def search_parts(
    raw: dict[str, Any], tool_call: Callable[[int], dict[str, Any] | None], index: int
) -> list[str]:
    """The words search looks at in one entry, without its label (labels change; the caller adds
    them); ``tool_call(index)`` finds the toolCall block a tool result answers, asked only for
    those (a bound method and the entry's index: no closure per entry over 20,000 entries)."""
    kind = raw.get("type")
    if kind == "message":
        message = raw.get("message")
        if not isinstance(message, dict):
            return ["message"]
        role = message.get("role")
        parts = [str(role)]
        content = message.get("content")
        if content:
            parts.append(extract_text(content))
        if role == "bashExecution":
            parts.append(to_string(message.get("command") or ""))
        elif role == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    parts.extend(call_words(block))
        elif role == "toolResult":
            call = tool_call(index)
            if call is not None:
                parts.extend(call_words(call))
            else:
                parts.append(to_string(message.get("toolName") or ""))
        return parts
    if kind == "custom_message":
        content = raw.get("content")
        text = content if isinstance(content, str) else raw_text(content)
        return [str(raw.get("customType", "")), text]
    if kind == "compaction":
        return ["compaction"]
    if kind == "branch_summary":
        return ["branch summary", str(raw.get("summary", ""))]
    if kind == "session_info":
        return ["title", str(raw.get("name") or "")]
    if kind == "model_change":
        return ["model", str(raw.get("modelId") or raw.get("model") or "")]
    if kind == "thinking_level_change":
        return ["thinking", join_part(raw.get("thinkingLevel"))]
    if kind == "custom":
        return ["custom", join_part(raw.get("customType"))]
    if kind == "label":
        return ["label", str(raw.get("label") or "")]
    if kind == "context_edit":
        return ["context edit", context_edit_verb(raw), join_part(raw.get("targetId"))]
    return []  # pi searches an entry type it does not know by its label only


def context_edit_verb(raw: dict[str, Any]) -> str:
    """``omit`` for a context edit whose replacement is null, ``replace`` otherwise (pi tests
    ``=== null``, so a missing replacement reads as a replacement too)."""
    return "omit" if raw.get("replacement", UNDEFINED) is None else "replace"


def join_part(value: object) -> str:
    """A value as JavaScript's ``Array.join`` writes it: null and missing become nothing."""
    return "" if value is None else to_string(value)


def _js_field(raw: dict[str, Any], key: str) -> str:
    """``${entry.key}`` as pi's template strings write it: ``undefined`` when the key is missing."""
    return to_string(raw.get(key, UNDEFINED))


def _round_thousands(value: object) -> str:
    """``String(Math.round(Number(value) / 1000))``: how pi prints a compaction's token count,
    ``NaN`` included when ``tokensBefore`` is not a number."""
    return number_to_string(math_round(to_number(value) / 1000))


ELLIPSIS = "…"
"""One column, so a cut row keeps two more columns of text than pi's ``...`` (issue 14)."""
_ZWJ = "\u200d"


def cut_to_width(line: str, width: int) -> str:
    """A row cut to ``width`` terminal columns where pi cuts tree lines (its ``truncateToWidth``),
    but marked with ``…`` (one column) instead of pi's ``...``.

    A line that fits is left whole; otherwise whole characters are kept while they fit in
    ``width - 1`` columns and ``…`` follows. Columns, not characters: CJK and emoji take two,
    combining marks and joiners none (they stay with the character before them).
    """
    if len(line) <= width and line.isascii():
        return line
    if cell_len(line) <= width:
        return line
    target = width - len(ELLIPSIS)
    kept = 0
    end = 0
    joined = False
    for position, char in enumerate(line):
        size = get_character_cell_size(char)
        if size == 0 or joined:  # part of the cluster before it
            joined = char == _ZWJ
            if position == end:
                end += 1
            continue
        joined = False
        if kept + size > target:
            break
        kept += size
        end = position + 1
    return line[:end] + ELLIPSIS


def _shorten_home(path: str) -> str:
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    return f"~{path[len(home) :]}" if home and path.startswith(home) else path


def _number(value: object) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if isinstance(value, float) and value.is_integer() else value


def format_tool_call(name: str, args: object) -> str:
    """``[read: path:1-20]``, ``[bash: cmd]``, ... : how the tree names a tool result by its call."""
    arguments: dict[str, Any] = args if isinstance(args, dict) else {}

    def path_arg(*keys: str, default: str = "") -> str:
        for key in keys:
            value = arguments.get(key)
            if value:
                return _shorten_home(to_string(value))
        return _shorten_home(default)

    if name == "read":
        display = path_arg("path", "file_path")
        offset = _number(arguments.get("offset"))
        limit = _number(arguments.get("limit"))
        if offset is not None or limit is not None:
            start = offset if offset is not None else 1
            end = start + limit - 1 if limit is not None else None
            display += f":{to_string(start)}" + (f"-{to_string(end)}" if end else "")
        return f"[read: {display}]"
    if name in ("write", "edit"):
        return f"[{name}: {path_arg('path', 'file_path')}]"
    if name == "bash":
        command = to_string(arguments.get("command") or "")
        suffix = "..." if len(command) > 50 else ""
        return f"[bash: {_one_line(command)[:50]}{suffix}]"
    if name == "grep":
        return f"[grep: /{to_string(arguments.get('pattern') or '')}/ in {path_arg('path', default='.')}]"
    if name == "find":
        return f"[find: {to_string(arguments.get('pattern') or '')} in {path_arg('path', default='.')}]"
    if name == "ls":
        return f"[ls: {path_arg('path', default='.')}]"
    encoded = js_stringify(args)
    return f"[{name}: {encoded[:40]}{'...' if len(encoded) > 40 else ''}]"


def find_call(content: object, call_id: str) -> dict[str, Any] | None:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("id") == call_id:
                return block
    return None


def call_words(call: dict[str, Any]) -> list[str]:
    """A tool call's name and its argument values (path, command, an edit's old text...), for search.

    Nested values count too, up to ``_ARGUMENT_WORDS`` of them: enough for any real tool call.
    """
    words = [str(call.get("name") or "tool")]
    pending: list[object] = [call.get("arguments")]
    while pending and len(words) <= _ARGUMENT_WORDS:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str | int | float):
            words.append(str(value))
    return words


def has_all(haystack: str, tokens: list[str]) -> bool:
    return all(token in haystack for token in tokens)


def format_label_time(iso: str, now: datetime | None = None) -> str | None:
    """Label time in local time: ``HH:MM`` today, ``M/D HH:MM`` this year, else ``YY/M/D HH:MM``."""
    try:
        moment = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return None
    local = moment.astimezone()
    today = (now or datetime.now()).astimezone()
    clock = f"{local.hour:02d}:{local.minute:02d}"
    if local.date() == today.date():
        return clock
    if local.year == today.year:
        return f"{local.month}/{local.day} {clock}"
    return f"{local.year % 100:02d}/{local.month}/{local.day} {clock}"
