"""Replaying pi 1.x's system messages: the prompt text and tool loadout a branch declares.

pi 1.x keeps no separate prompt state: the first request of a session records a ``system``
message with every prompt section and tool declaration, and each later change records another
that patches ``sections`` by name and lists ``toolsAdded`` / ``toolsRemoved``. Replaying them in
path order gives the prompt and tools in force at the branch's leaf.

pi-tui has its own preamble, so pi's named ``sections`` are not sent; what pi-tui takes from a
branch is the text a user or an extension put in ``content`` (added before pi-tui's prompt, as
pi renders content before its sections) and which tools the branch has on or off. All of it is
pure functions over :class:`SystemMessage` values, easy to test without files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pi_tui.messages import SystemMessage, TextContent


def content_text(message: SystemMessage) -> str:
    """The text of a system message's ``content`` (text blocks joined by newlines)."""
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


def replayed_tools(messages: Iterable[SystemMessage]) -> list[dict[str, Any]]:
    """The tool declarations in force after every system message, in declaration order.

    A removal then an addition of the same name is how a changed definition is recorded: such
    a tool moves to the end. An addition of a name already there replaces it in place.
    """
    tools: dict[str, dict[str, Any]] = {}
    for message in messages:
        for removed in message.tools_removed or ():
            name = removed.get("name") if isinstance(removed, dict) else None
            if isinstance(name, str):
                tools.pop(name, None)
        for added in message.tools_added or ():
            name = added.get("name") if isinstance(added, dict) else None
            if isinstance(name, str):
                tools[name] = added
    return list(tools.values())


def mentioned_tools(messages: Iterable[SystemMessage]) -> set[str]:
    """Every tool name a branch ever added or removed."""
    names: set[str] = set()
    for message in messages:
        for tool in [*(message.tools_added or ()), *(message.tools_removed or ())]:
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(name, str):
                names.add(name)
    return names


def replayed_content(messages: Iterable[SystemMessage]) -> str:
    """The ``content`` texts of the system messages, non-empty ones joined by a blank line."""
    return "\n\n".join(text for text in map(content_text, messages) if text)


def system_prompt_with(content: str, own_prompt: str) -> str:
    """pi-tui's prompt with a branch's user-supplied system text before it (pi's order:
    content, then the prompt's sections, which pi-tui's own prompt stands in for)."""
    return "\n\n".join(part for part in (content, own_prompt) if part)


def checkpoint(messages: Sequence[SystemMessage]) -> SystemMessage | None:
    """One system message holding everything ``messages`` declare, for a compaction entry's
    ``systemMessage``: joined content, merged sections (None removes one), current tools.
    None when there is nothing to hold (a branch pi 1.x never declared a prompt on)."""
    if not messages:
        return None
    sections: dict[str, Any] = {}
    for message in messages:
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    fields: dict[str, Any] = {"content": replayed_content(messages), "timestamp": messages[0].timestamp}
    if sections:
        fields["sections"] = sections
    tools = replayed_tools(messages)
    if tools:
        fields["tools_added"] = tools
    return SystemMessage(**fields)


def active_tool_names(
    branch_messages: Sequence[SystemMessage], available: Sequence[str], built_in: frozenset[str]
) -> list[str] | None:
    """Which of ``available`` tools a branch has on, in the order pi would declare them; None
    when the branch declares no loadout (no system message: keep the tools as they are).

    The branch's replayed tools that pi-tui has come first; tools the branch never mentioned
    that are not built in (an extension's, registered after the branch recorded its loadout)
    are added after them. A built-in tool the branch never declared stays off, as in pi.
    """
    if not branch_messages:
        return None
    have = set(available)
    names = [tool["name"] for tool in replayed_tools(branch_messages) if tool["name"] in have]
    mentioned = mentioned_tools(branch_messages)
    names += [name for name in available if name not in mentioned and name not in built_in]
    return names
