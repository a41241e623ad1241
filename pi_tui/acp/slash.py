"""Slash commands typed in the editor's prompt box, and the ``_pi/*`` extension methods.

An editor has no ``/tree`` selector, so the tree is drawn as text (the TUI selector's rows, each
with its entry id) and a move names the entry:

- ``/tree`` draws the tree; ``/tree <id>`` continues from that entry (a prompt puts the leaf on
  its parent, so the next prompt becomes its sibling, as in the TUI); ``/tree <id> summarize``
  also summarises the branch being left; ``/tree <id> files`` brings that point's files back;
- ``/label <id> <text>`` labels an entry (no text: removes the label); ``/label <text>`` labels
  the last message;
- ``/branch <id>`` starts a new branch just before that prompt, in this session (the TUI's
  ``/branch`` makes a new file; an editor keeps one session id per conversation, so here the
  branch stays in the same tree, where ``/tree`` shows both);
- ``/name <text>`` names the session (the editor's title follows).

The extension methods carry the same moves for clients that draw a tree themselves:
``_pi/get_tree`` (rpc mode's ``get_tree``: the forest and the leaf), ``_pi/navigate_tree``
(rpc mode's ``navigate_tree``: ``targetId``, ``summarize``, ``restoreFiles``, ...), and
``_pi/set_label`` (``entryId``, ``label``). Everything else that starts with ``/`` goes to the
agent, where extension commands and prompt templates are expanded as in the TUI.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from pi_tui.acp.session import AcpSession
from pi_tui.acp.updates import message_chunk
from pi_tui.agent.session_ops import message_text, user_message_entry
from pi_tui.modes.rpc_commands_pi1 import Pi1Commands
from pi_tui.modes.rpc_commands_tree import TreeCommands
from pi_tui.modes.rpc_protocol import CommandError
from pi_tui.view.tree_model import TreeModel

COMMANDS = {
    "tree": ("Show the session tree, or continue from an entry", "[entry id] [summarize] [files]"),
    "label": ("Label an entry (no text: remove the label)", "[entry id] [text]"),
    "branch": ("Start a new branch before an earlier prompt", "<entry id>"),
    "name": ("Name this session", "<name>"),
}


class SlashError(Exception):
    """A command typed wrong: said to the user as the answer, one line."""


def available_commands(session: AcpSession) -> list[dict[str, Any]]:
    """Ours, then prompt templates and extension commands (the agent expands those)."""
    out = [
        {"name": name, "description": description, "input": {"hint": hint}}
        for name, (description, hint) in COMMANDS.items()
    ]
    seen = set(COMMANDS)
    agent = session.agent
    if agent.expander is not None:
        for command in agent.expander.commands():  # prompt templates and /skill:name
            if command.name not in seen:
                seen.add(command.name)
                entry: dict[str, Any] = {"name": command.name, "description": command.description}
                if command.usage:
                    entry["input"] = {"hint": command.usage}
                out.append(entry)
    setup = session.started.extensions
    if setup is not None:
        for command in setup.runner.commands.values():
            if command.name not in seen:
                seen.add(command.name)
                out.append({"name": command.name, "description": command.description or "Extension command"})
    return out


def tree_text(session: AcpSession) -> str:
    manager = session.agent.manager
    leaf = manager.get_leaf_id()
    model = TreeModel(manager.get_tree(), leaf)
    if not model.rows:
        return "The session is empty."
    lines = [
        f"{model.line(index, row.entry_id == leaf)}  ·{row.entry_id}" for index, row in enumerate(model.rows)
    ]
    body = "\n".join(lines)
    return f"```\n{body}\n```\n`/tree <id>` continues from an entry; `/label <id> <text>` labels one.\n"


async def run_slash(session: AcpSession, text: str) -> bool:
    """Run ``text`` when it is one of our commands (True); the answer goes to the client as the
    agent's message."""
    if not text.startswith("/"):
        return False
    name, _, rest = text[1:].partition(" ")
    if name not in COMMANDS:
        return False
    words = rest.split()
    try:
        answer = await _COMMANDS[name](session, words, rest.strip())
    except (SlashError, CommandError) as error:
        answer = f"{error}\n"
    session.post(message_chunk(answer))
    return True


async def _tree(session: AcpSession, words: list[str], rest: str) -> str:
    if not words:
        return tree_text(session)
    target = _entry(session, words[0])
    flags = set(words[1:])
    unknown = flags - {"summarize", "files"}
    if unknown:
        raise SlashError(
            f"/tree takes an entry id, then summarize and/or files (not {' '.join(sorted(unknown))})"
        )
    answer = await TreeCommands(session).navigate_tree(
        {"targetId": target, "summarize": "summarize" in flags, "restoreFiles": "files" in flags}
    )
    if answer["cancelled"]:
        return "The move was cancelled; the session stays where it was.\n"
    said = f"Continuing from {target}."
    if answer.get("summaryEntryId"):
        said += " The branch left behind was summarised."
    files = answer.get("files")
    if files:
        said += f" Files: {len(files.get('written', []))} written, {len(files.get('deleted', []))} deleted."
    if answer.get("editorText"):
        said += f"\nThe prompt there was:\n> {answer['editorText']}"
    return said + "\n"


async def _label(session: AcpSession, words: list[str], rest: str) -> str:
    manager = session.agent.manager
    if words and manager.get_entry(words[0]) is not None:
        target, label = words[0], rest[len(words[0]) :].strip()
    else:
        messages = [raw["id"] for raw in manager.iter_raw_entries() if raw.get("type") == "message"]
        if not messages:
            raise SlashError("Nothing to label yet.")
        target, label = manager.get_leaf_id() or messages[-1], rest
    if not label and manager.get_label(target) is None:
        raise SlashError(f"{target} has no label to remove.")
    manager.append_label_change(target, label or None)
    manager.sync()
    return f'Labelled {target} "{label}".\n' if label else f"Removed the label of {target}.\n"


async def _branch(session: AcpSession, words: list[str], rest: str) -> str:
    if len(words) != 1:
        raise SlashError("/branch takes the entry id of a prompt (see /tree)")
    entry = user_message_entry(session.agent.manager, _entry(session, words[0]))
    if entry is None:
        raise SlashError(f"{words[0]} is not a prompt of this session (see /tree)")
    answer = await TreeCommands(session).navigate_tree({"targetId": entry.id})
    if answer["cancelled"]:
        return "An extension cancelled the move; the session stays where it was.\n"
    return (
        "The next prompt starts a new branch before that one (the old branch stays in /tree). "
        f"It was:\n> {message_text(entry.message)}\n"
    )


async def _name(session: AcpSession, words: list[str], rest: str) -> str:
    if not rest:
        current = session.agent.manager.get_session_name()
        return f"This session is named {current!r}.\n" if current else "This session has no name.\n"
    session.agent.set_session_name(rest)  # its session_info_changed event tells the editor
    return f"Named this session {rest!r}.\n"


def _entry(session: AcpSession, word: str) -> str:
    manager = session.agent.manager
    if manager.get_entry(word) is not None:
        return word
    matches = [raw["id"] for raw in manager.iter_raw_entries() if str(raw.get("id", "")).startswith(word)]
    if len(matches) == 1:
        return str(matches[0])
    raise SlashError(f"No entry {word} in this session (see /tree)")


_COMMANDS = {"tree": _tree, "label": _label, "branch": _branch, "name": _name}


async def _get_tree(session: AcpSession, params: dict[str, Any]) -> dict[str, Any]:
    # rpc's answer holds raw entries as orjson fragments (written as they are on disk): the
    # SDK's writer wants plain JSON values
    tree: dict[str, Any] = orjson.loads(orjson.dumps(await Pi1Commands(session).get_tree({})))
    return tree


async def _navigate_tree(session: AcpSession, params: dict[str, Any]) -> dict[str, Any]:
    moved: dict[str, Any] = await TreeCommands(session).navigate_tree(params)
    return moved


async def _set_label(session: AcpSession, params: dict[str, Any]) -> dict[str, Any]:
    entry_id, label = params.get("entryId"), params.get("label")
    if not isinstance(entry_id, str) or session.agent.manager.get_entry(entry_id) is None:
        raise CommandError(f"Entry {entry_id} not found")
    if label is not None and not isinstance(label, str):
        raise CommandError('"label" must be a string or null')
    session.agent.manager.append_label_change(entry_id, (label or "").strip() or None)
    session.agent.manager.sync()
    return {}


EXTENSION_METHODS: dict[str, Callable[[AcpSession, dict[str, Any]], Awaitable[dict[str, Any]]]] = {
    "pi/get_tree": _get_tree,  # rpc mode's get_tree
    "pi/navigate_tree": _navigate_tree,  # rpc mode's navigate_tree
    "pi/set_label": _set_label,
}
"""The ``_pi/*`` methods (the SDK strips the leading underscore), in rpc mode's shapes."""
