"""The conversation as plain text for a summarisation request, and the files it touched.

The model is given the conversation as one text block rather than as real turns, so it
summarises instead of continuing it. The format is pi's, byte for byte (it is what pi sends and
what summaries in existing sessions were made from)::

    [User]: ...

    [Assistant thinking]: ...

    [Assistant]: ...

    [Assistant tool calls]: read(path="README.md"); edit(path="a.py", edits=[...])

    [Tool result]: ... (cut at 2000 characters)

Files the conversation read and changed are tracked from the ``read`` / ``write`` / ``edit``
tool calls and carried from one summary to the next in ``details``; they are appended to the
stored summary as ``<read-files>`` / ``<modified-files>`` blocks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pi_tui.js_semantics import js_length, js_object_keys, js_sorted, js_stringify
from pi_tui.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.session.context import convert_to_llm

TOOL_RESULT_MAX_CHARS = 2000
"""Tool output beyond this many characters is left out: the summary needs what was done, not
every line that was read."""


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """``text`` cut to ``max_chars`` (JS characters) with a note of how much was dropped."""
    length = js_length(text)
    if length <= max_chars:
        return text
    if length == len(text):
        head = text[:max_chars]
    else:  # astral characters: cut at the same UTF-16 offset pi does
        head = text.encode("utf-16-le", "surrogatepass")[: max_chars * 2].decode("utf-16-le", "ignore")
    return f"{head}\n\n[... {length - max_chars} more characters truncated]"


def _texts(content: str | Iterable[Any]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def format_tool_call(call: ToolCall) -> str:
    """``name(key=<JSON value>, ...)`` as in the serialised conversation."""
    arguments = call.arguments or {}
    rendered = ", ".join(f"{key}={js_stringify(arguments[key])}" for key in js_object_keys(arguments))
    return f"{call.name}({rendered})"


def serialize_conversation(messages: Iterable[Any]) -> str:
    """Agent messages as the plain-text transcript a summarisation request embeds.

    Messages are first converted as for the model (summaries, custom messages and ``!commands``
    become user text; ``!!commands`` and unknown roles disappear), so the summariser sees what
    the model saw. Images are left out; empty parts are skipped.
    """
    parts: list[str] = []
    for message in convert_to_llm(messages):
        if isinstance(message, UserMessage):
            text = _texts(message.content)
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            texts: list[str] = []
            thinking: list[str] = []
            calls: list[str] = []
            for block in message.content:
                if isinstance(block, TextContent):
                    texts.append(block.text)
                elif isinstance(block, ThinkingContent):
                    thinking.append(block.thinking)
                elif isinstance(block, ToolCall):
                    calls.append(format_tool_call(block))
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif isinstance(message, ToolResultMessage):
            text = _texts(message.content)
            if text:
                parts.append(f"[Tool result]: {truncate_for_summary(text)}")
    return "\n\n".join(parts)


# --- file operations ------------------------------------------------------------------------

READ_TOOLS = frozenset({"read"})
WRITE_TOOLS = frozenset({"write"})
EDIT_TOOLS = frozenset({"edit"})


@dataclass(slots=True)
class FileOperations:
    """Paths read, written and edited, gathered from tool calls and earlier summaries."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_message(self, message: Any) -> None:
        """Record the ``path`` argument of every read / write / edit call of an assistant message."""
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if not isinstance(block, ToolCall):
                continue
            path = (block.arguments or {}).get("path")
            if not isinstance(path, str) or not path:
                continue
            if block.name in READ_TOOLS:
                self.read.add(path)
            elif block.name in WRITE_TOOLS:
                self.written.add(path)
            elif block.name in EDIT_TOOLS:
                self.edited.add(path)

    def add_messages(self, messages: Iterable[Any]) -> None:
        for message in messages:
            self.add_message(message)

    def add_details(self, details: Any) -> None:
        """Carry over the lists of an earlier summary's ``details`` (``readFiles``/``modifiedFiles``)."""
        if not isinstance(details, dict):
            return
        read = details.get("readFiles")
        if isinstance(read, list):
            self.read.update(path for path in read if isinstance(path, str))
        modified = details.get("modifiedFiles")
        if isinstance(modified, list):
            self.edited.update(path for path in modified if isinstance(path, str))

    def file_lists(self) -> tuple[list[str], list[str]]:
        """(read-only files, modified files), each sorted; a file both read and changed is only
        listed as modified."""
        modified = self.written | self.edited
        return js_sorted(self.read - modified), js_sorted(modified)

    def details(self) -> dict[str, list[str]]:
        """The ``details`` stored with a summary entry: ``{readFiles, modifiedFiles}``."""
        read_files, modified_files = self.file_lists()
        return {"readFiles": read_files, "modifiedFiles": modified_files}


def format_file_tags(read_files: list[str], modified_files: list[str]) -> str:
    """The blocks appended to a stored summary: ``"\\n\\n<read-files>\\n...\\n</read-files>"`` and
    ``<modified-files>``, each only when non-empty ("" when both are)."""
    sections: list[str] = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


_TRAILING_FILE_TAGS = re.compile(
    r"(?:\s*<(read-files|modified-files)>\n.*?\n</\1>)+\s*\Z",
    re.DOTALL,
)


def strip_file_tags(summary: str) -> str:
    """``summary`` without the file blocks at its end.

    An earlier summary is sent to the model for updating without them (the lists travel in
    ``details`` and are appended again afterwards), so the model does not copy them into its
    text and they do not pile up.
    """
    return _TRAILING_FILE_TAGS.sub("", summary)
